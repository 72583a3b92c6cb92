"""Training, cross-validation, comparison and evaluation: the command line's jobs through libheurist, each
returning its report (report.json's, docs/contract.md): a dict, a list of them for compare.

Options are the command line's long options (docs/cli.md) as keyword arguments, "-" written "_":
heurist.train("t.csv", "m.h5", model="gbdt", valid_fraction=0.2, config={"rounds": 50}). A list is joined with
commas (models=["gbdt", "reformer"]), a dict is written as JSON (config), True sets a flag (quiet=True), and
False or None leaves the option out. The jobs print as the command does, to the process's stdout and stderr
(quiet=True: warnings only).
"""
import ctypes
import json
import os

from . import _lib
from ._lib import EINVAL, HeuristError, check


def _params(options):
    """The options as the library's params text: name=value pairs, one a line; a value holding a blank is quoted,
    a dict is compact JSON."""
    pairs = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        name = name.replace("_", "-")
        if value is True:
            value = "1"
        elif isinstance(value, dict):
            value = json.dumps(value, separators=(",", ":"))
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        else:
            value = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
        if any(c.isspace() for c in value) and not value.startswith("{"):
            quote = "'" if '"' in value else '"'
            if quote in value:
                raise HeuristError(EINVAL, "option '%s': a value with blanks holds both kinds of quote" % name)
            value = quote + value + quote
        pairs.append("%s=%s" % (name, value))
    return "\n".join(pairs).encode()


def _path(p):
    return os.fsencode(p) if p is not None else None


def _report(fn, *args):
    """Calls fn(*args, &report_json) and returns the report as a dict (freeing the library's text)."""
    report = _lib.void_p()
    check(fn(*args, ctypes.byref(report)))
    try:
        return json.loads(ctypes.string_at(report).decode()) if report.value else {}
    finally:
        _lib.lib.heurist_free(report)


def train(data, model_out, **options):
    """Trains a model on `data` (a find-db, perf-db, benchmark table or dataset cache), writes it to `model_out`
    and returns its report; options as `heurist train`'s (model, task, split, config, seed, threads, ...)."""
    fn = _lib.need("heurist_train", "heurist.train")
    return _report(fn, _path(data), _params(options), _path(model_out))


def cv(data, **options):
    """Cross-validates a family on `data` and returns the report; options as `heurist cv`'s."""
    fn = _lib.need("heurist_cv", "heurist.cv")
    return _report(fn, _path(data), _params(options))


def compare(data, **options):
    """Compares families (models=["gbdt", "reformer"]) and the baselines on the same split or folds of `data`
    (split="random:0.2" or folds=5) and returns the report: a list of report objects, one per model and
    baseline; options as `heurist compare`'s (out=DIR keeps report.md and the figures)."""
    fn = _lib.need("heurist_compare", "heurist.compare")
    return _report(fn, _path(data), _params(options))


def evaluate(model_path, data, **options):
    """Evaluates the saved model `model_path` on `data` and returns the report; options as `heurist eval`'s."""
    fn = _lib.need("heurist_eval", "heurist.evaluate")
    return _report(fn, _path(model_path), _path(data), _params(options))

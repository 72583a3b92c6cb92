"""heurist.Model: a trained model file loaded through libheurist, asked for kernel rankings or tuning parameters.

A problem is the text its model's codec reads (a find-db key, or "M=128,N=4096,K=4096,dtype=bf16" for a table) or a
dict {column: value} of a table model's problem and hardware columns (a categorical value as its string). Candidates
are a list of dicts {configuration column: value} or a float64 array (n, len(config_columns)) of values, a
category as its index in `categories(column)`.
"""
import ctypes
import threading

import numpy as np

from . import _lib
from ._lib import HeuristError, check, text

TASKS = {1: "select", 2: "tune"}


class Model:
    """A loaded model. Its calls may come from any number of Python threads at once: the model is read-only, and
    each concurrent call takes a predictor (the library's reusable workspace) of its own from a pool."""

    def __init__(self, path):
        handle = _lib.void_p()
        check(_lib.lib.heurist_model_load(str(path).encode(), ctypes.byref(handle)))
        self._h = handle
        self.path = str(path)
        self._pool = []  # idle predictors; list.pop and list.append are atomic under the GIL
        self._lock = threading.Lock()
        self._predictors = []  # every predictor created, freed with the model
        lib = _lib.lib
        self.task = TASKS[lib.heurist_model_task(handle)]
        self.kernels = [text(lib.heurist_model_kernel_name(handle, k)) for k in range(lib.heurist_model_kernel_count(handle))]
        self.params = [text(lib.heurist_model_param_name(handle, j)) for j in range(lib.heurist_model_param_count(handle))]
        self._kernel_keys = None

    @classmethod
    def load(cls, path):
        """The model in `path` (a file written by `heurist train` or heurist.train)."""
        return cls(path)

    def close(self):
        """Frees the library's model and its predictors; later calls raise HeuristError."""
        if self._h is None:
            return
        with self._lock:
            for p in self._predictors:
                _lib.lib.heurist_predictor_free(p)
            self._predictors, self._pool = [], []
            _lib.lib.heurist_model_free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            self.close()

    def __repr__(self):
        return "heurist.Model(%r: %s, %d kernels, %d parameters)" % (self.path, self.task, len(self.kernels),
                                                                     len(self.params))

    def _handle(self):
        if self._h is None:
            raise HeuristError(_lib.ESTATE, "heurist.Model: %s is closed" % self.path)
        return self._h

    def _need(self, task, what):
        if self.task != task:
            raise HeuristError(_lib.ESTATE, "%s: %s does the %s task, not %s" % (what, self.path, self.task, task))

    def _problem_text(self, problem):
        if isinstance(problem, str):
            return problem.encode()
        if isinstance(problem, dict):
            return ",".join("%s=%s" % (k, v) for k, v in problem.items()).encode()
        raise TypeError("a problem is a str key or a dict {column: value}, not %s" % type(problem).__name__)

    # Candidates matched to the model's configurations by their values (a table model's kernel names are
    # "column=value,..." of its configuration columns).

    def _kernel_index(self):
        if self._kernel_keys is None:
            keys = {}
            for k, name in enumerate(self.kernels):
                fields = dict(f.split("=", 1) for f in name.split(",") if "=" in f)
                keys.setdefault(_value_key(fields, sorted(fields)), k)
            self._kernel_keys = keys
        return self._kernel_keys

    def _candidate_kernels(self, candidates):
        """Each candidate dict's kernel index, -1 where the model does not know the configuration."""
        index = self._kernel_index()
        out = []
        for i, c in enumerate(candidates):
            if not isinstance(c, dict):
                raise TypeError("candidate %d: a candidate is a dict {configuration column: value}" % i)
            out.append(index.get(_value_key(c, sorted(c)), -1))
        return out

    def rank(self, problem, candidates=None, k=None):
        """The kernels (or candidates) for `problem`, best first: (indices, scores) as numpy arrays, indices into
        `kernels` (candidates None) or into `candidates`, at most k of them (all when k is None)."""
        self._need("select", "rank")
        lib, h = _lib.lib, self._handle()
        K = len(self.kernels)
        idx = np.empty(K, dtype=np.int32)
        score = np.empty(K, dtype=np.float32)
        n = ctypes.c_int(0)
        check(lib.heurist_rank(h, self._problem_text(problem), K, idx.ctypes.data_as(_lib.c_int_p),
                               score.ctypes.data_as(_lib.c_float_p), ctypes.byref(n)))
        idx, score = idx[:n.value], score[:n.value]
        if candidates is not None:
            of_kernel = {}
            for i, kern in enumerate(self._candidate_kernels(candidates)):
                if kern >= 0:
                    of_kernel.setdefault(kern, i)
            keep = [r for r in range(len(idx)) if int(idx[r]) in of_kernel]
            score = score[keep]
            idx = np.array([of_kernel[int(idx[r])] for r in keep], dtype=np.int32)
        if k is not None:
            idx, score = idx[:k], score[:k]
        return idx, score

    def shortlist(self, problem, k, candidates=None):
        """The k best kernel (or candidate) indices for `problem`, best first, as a list."""
        if k < 1:
            raise HeuristError(_lib.EINVAL, "shortlist: k must be at least 1, got %d" % k)
        return [int(i) for i in self.rank(problem, candidates, k)[0]]

    def tune(self, problem):
        """The tuning parameters predicted for `problem`, as {parameter: value}."""
        self._need("tune", "tune")
        v = (ctypes.c_int32 * len(self.params))()
        check(_lib.lib.heurist_tune(self._handle(), self._problem_text(problem), v))
        return dict(zip(self.params, (int(x) for x in v)))

    def _keys(self, problems):
        if isinstance(problems, (str, dict)):
            raise TypeError("a batch is a sequence of problems; for one problem call rank or tune")
        keys = [self._problem_text(p) for p in problems]
        return (ctypes.c_char_p * len(keys))(*keys), len(keys)

    def rank_batch(self, problems, candidates=None, k=1, threads=0):
        """Each problem's k best kernel indices, an int32 array (n, k), -1 past the ranked count; the batch runs
        in the library over `threads` threads (0: all cores)."""
        self._need("select", "rank_batch")
        if k != 1 or candidates is not None:
            raise HeuristError(_lib.ESTATE, "rank_batch with k > 1 or candidates needs heurist_rank_values_batch")
        keys, n = self._keys(problems)
        best = np.empty((n, 1), dtype=np.int32)
        check(_lib.lib.heurist_rank_batch(self._handle(), keys, n, threads, best.ctypes.data_as(_lib.c_int_p)))
        return best

    def tune_batch(self, problems, threads=0):
        """Each problem's predicted parameters, an int32 array (n, len(params))."""
        self._need("tune", "tune_batch")
        keys, n = self._keys(problems)
        out = np.empty((n, len(self.params)), dtype=np.int32)
        check(_lib.lib.heurist_tune_batch(self._handle(), keys, n, threads, out.ctypes.data_as(_lib.c_int32_p)))
        return out


def _value_key(fields, columns):
    """A configuration's values as a hashable key, numbers compared as numbers ("64" == 64 == 64.0)."""
    key = []
    for c in columns:
        v = fields[c]
        try:
            v = float(v)
        except (TypeError, ValueError):
            v = str(v)
        key.append((c, v))
    return tuple(key)

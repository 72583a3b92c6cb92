"""heurist.Model: a trained model file loaded through libheurist, asked for kernel rankings or tuning parameters.

A problem is the text its model's codec reads (a find-db key, or "M=128,N=4096,K=4096,dtype=bf16" for a table), a
dict {column: value} of the model's problem columns (a table's problem and hardware columns; a categorical value as
its string), or a float64 array of the values of `problem_columns` (a category as its index in
`categories(column)`). Candidates, for a table model, are a list of dicts {configuration column: value} or a
float64 array (n, len(config_columns)) of values.
"""
import ctypes

import numpy as np

from . import _lib
from ._lib import EINVAL, ESTATE, HeuristError, check, text

TASKS = {1: "select", 2: "tune"}
_c_int, _c_float = ctypes.c_int, ctypes.c_float
_frombuffer, _int32, _float32 = np.frombuffer, np.dtype(np.int32), np.dtype(np.float32)


class Model:
    """A loaded model. Its calls may come from any number of Python threads at once: the model is read-only, and
    each concurrent call takes a predictor (the library's reusable workspace) of its own from a pool."""

    def __init__(self, path):
        lib = _lib.lib
        handle = _lib.void_p()
        check(lib.heurist_model_load(str(path).encode(), ctypes.byref(handle)))
        self._h = handle
        self.path = str(path)
        self._pool = []        # idle predictors: list.pop and list.append are atomic under the GIL
        self._predictors = []  # every predictor made, freed with the model
        self.task = TASKS[lib.heurist_model_task(handle)]
        self.kernels = [text(lib.heurist_model_kernel_name(handle, k)) for k in range(lib.heurist_model_kernel_count(handle))]
        self._n_kernels = len(self.kernels)
        self.params = [text(lib.heurist_model_param_name(handle, j)) for j in range(lib.heurist_model_param_count(handle))]
        self.problem_columns = [text(lib.heurist_model_problem_name(handle, j))
                                for j in range(lib.heurist_model_problem_count(handle))]
        self.config_columns = [text(lib.heurist_model_config_name(handle, j))
                               for j in range(lib.heurist_model_config_count(handle))]
        # each column's vocabulary (problem columns, then configuration columns), [] for a numeric one
        self._vocab = [[text(lib.heurist_model_category_name(handle, j, v))
                        for v in range(lib.heurist_model_category_count(handle, j))]
                       for j in range(len(self.problem_columns) + len(self.config_columns))]
        self._code = [{name: float(v) for v, name in enumerate(vocab)} for vocab in self._vocab]
        # a tuned parameter that is a categorical configuration column: its vocabulary, to name the value
        cfg = {name: self._vocab[len(self.problem_columns) + j] for j, name in enumerate(self.config_columns)}
        self._param_vocab = [cfg.get(name) or None for name in self.params]

    @classmethod
    def load(cls, path):
        """The model in `path` (a file written by `heurist train` or heurist.train)."""
        return cls(path)

    def close(self):
        """Frees the library's model and its predictors; later calls raise HeuristError. No other thread's call
        may be running on the model meanwhile (its predictor would be freed under it)."""
        if self._h is None:
            return
        for w in self._predictors:
            w.free()
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
        return "heurist.Model(%r: %s, %d kernels, %d problem columns, %d configuration columns)" % (
            self.path, self.task, len(self.kernels), len(self.problem_columns), len(self.config_columns))

    def categories(self, column):
        """A categorical column's values, by the column's name or number (problem columns first, then
        configuration columns); [] for a numeric column."""
        columns = self.problem_columns + self.config_columns
        if isinstance(column, str):
            if column not in columns:
                raise HeuristError(EINVAL, "categories: '%s' is not a column of %s (%s)" %
                                   (column, self.path, ", ".join(columns)))
            column = columns.index(column)
        if not 0 <= column < len(columns):
            raise HeuristError(EINVAL, "categories: column %d is out of range (%d columns)" % (column, len(columns)))
        return list(self._vocab[column])

    def _handle(self):
        if self._h is None:
            raise HeuristError(ESTATE, "heurist.Model: %s is closed" % self.path)
        return self._h

    def _need(self, task, what):
        if self.task != task:
            raise HeuristError(ESTATE, "%s: %s does the %s task, not %s" % (what, self.path, self.task, task))

    def _acquire(self):
        """An idle predictor, made when none is idle."""
        try:
            return self._pool.pop()
        except IndexError:
            w = _Predictor(self._handle())
            self._predictors.append(w)
            return w

    # Problems and candidates as the library takes them.

    @staticmethod
    def _problem_text(problem):
        if isinstance(problem, str):
            return problem.encode()
        if isinstance(problem, dict):
            return ",".join(["%s=%s" % kv for kv in problem.items()]).encode()
        raise TypeError("a problem is a str key, a dict {column: value} or an array of values, not %s" %
                        type(problem).__name__)

    def _matrix(self, rows, columns, offset, what):
        """Dicts {column: value} as a float64 array (len(rows), len(columns)), one column at a time; a category
        by its index in the column's vocabulary."""
        out = np.empty((len(rows), len(columns)), dtype=np.float64)
        for j, name in enumerate(columns):
            code = self._code[offset + j]
            try:
                values = [r[name] for r in rows]
            except KeyError:
                i = next(i for i, r in enumerate(rows) if name not in r)
                raise HeuristError(EINVAL, "%s %d: column '%s' is missing (columns: %s)" %
                                   (what, i, name, ", ".join(columns))) from None
            except TypeError:
                i = next(i for i, r in enumerate(rows) if not isinstance(r, dict))
                raise TypeError("%s %d: a dict {column: value} is needed, not %s" %
                                (what, i, type(rows[i]).__name__)) from None
            if code:
                try:
                    out[:, j] = [code[str(v)] for v in values]
                except KeyError:
                    i, v = next((i, v) for i, v in enumerate(values) if str(v) not in code)
                    raise HeuristError(EINVAL, "%s %d: column '%s': unknown value '%s' (known: %s)" %
                                       (what, i, name, v, ", ".join(code))) from None
            else:
                try:
                    out[:, j] = values
                except (TypeError, ValueError):
                    i, v = next((i, v) for i, v in enumerate(values) if not _is_number(v))
                    raise HeuristError(EINVAL, "%s %d: column '%s': '%s' is not a number" %
                                       (what, i, name, v)) from None
        for i, r in enumerate(rows):
            if len(r) != len(columns):
                extra = sorted(set(r) - set(columns))
                raise HeuristError(EINVAL, "%s %d: %s not a column of this model (columns: %s)" %
                                   (what, i, ", ".join("'%s'" % c for c in extra) + (" is" if len(extra) == 1
                                                                                      else " are"),
                                    ", ".join(columns)))
        return out

    @staticmethod
    def _values(a, width, what):
        a = np.ascontiguousarray(a, dtype=np.float64)
        if a.ndim != 2 or a.shape[1] != width:
            raise HeuristError(EINVAL, "%s: an array (n, %d) is needed, not %s" % (what, width, a.shape))
        return a

    def _candidates(self, candidates):
        """(array or None, count) of the candidates, as heurist_predictor_rank takes them."""
        if candidates is None:
            return None, 0
        if isinstance(candidates, np.ndarray):
            c = self._values(candidates, len(self.config_columns), "candidates")
        else:
            c = self._matrix(list(candidates), self.config_columns, len(self.problem_columns), "candidate")
        return c, len(c)

    def _problems(self, problems):
        """Problems of a batch as values (n, len(problem_columns)): an array as it is, dicts a column at a time,
        text through the library's parser (heurist_model_problem_parse), one problem at a time."""
        if isinstance(problems, np.ndarray):
            return self._values(problems, len(self.problem_columns), "problems")
        if isinstance(problems, (str, dict)):
            raise TypeError("a batch is a sequence of problems; for one problem call rank or tune")
        problems = list(problems)
        if all(isinstance(p, dict) for p in problems):
            return self._matrix(problems, self.problem_columns, 0, "problem")
        h = self._handle()
        out = np.empty((len(problems), len(self.problem_columns)), dtype=np.float64)
        row = out.ctypes.data
        for i, p in enumerate(problems):
            rc = _lib.lib.heurist_model_problem_parse(h, self._problem_text(p), row + i * out.strides[0])
            if rc < 0:
                raise HeuristError(rc, "problem %d: %s" % (i, _lib.last_error()))
        return out

    # Selection and tuning.

    def rank(self, problem, candidates=None, k=None):
        """The kernels (or candidates) for `problem`, best first: (indices, scores) as numpy arrays (int32,
        float32), indices into `kernels` (candidates None: those the problem allows) or into `candidates`, scores
        the model's (higher is better), at most k of them (all when k is None)."""
        # The common case, one problem as text over the model's own kernels, runs the fewest Python steps: a
        # small model ranks in about the time the interpreter takes for a dozen of them.
        if self.task != "select":
            self._need("select", "rank")
        cand = cand_array = None
        n_cand = 0
        capacity = self._n_kernels
        if candidates is not None:
            # the array stays referenced until the call returns: its address alone keeps nothing alive
            cand_array, n_cand = self._candidates(candidates)
            capacity = n_cand
            cand = ctypes.c_void_p(cand_array.ctypes.data)
        if k is not None:
            if k < 1:
                raise HeuristError(EINVAL, "rank: k must be at least 1, got %d" % k)
            if k < capacity:
                capacity = k
        # fresh ctypes arrays that numpy then wraps: cheaper than a numpy array's address
        index = (_c_int * capacity)()
        score = (_c_float * capacity)()
        pool = self._pool
        try:
            w = pool.pop()
        except IndexError:
            w = self._acquire()
        try:
            if problem.__class__ is str:
                rc = _lib.fast.heurist_predictor_rank(w.p, problem.encode(), cand, n_cand, capacity, index, score,
                                                      w.n_p)
            elif isinstance(problem, np.ndarray):
                values = np.ascontiguousarray(problem, dtype=np.float64).reshape(-1)
                if len(values) != len(self.problem_columns):
                    raise HeuristError(EINVAL, "rank: %d problem values, the model has %d problem columns" %
                                       (len(values), len(self.problem_columns)))
                rc = _lib.fast.heurist_predictor_rank_values(w.p, ctypes.c_void_p(values.ctypes.data), cand, n_cand,
                                                             capacity, index, score, w.n_p)
            else:
                rc = _lib.fast.heurist_predictor_rank(w.p, self._problem_text(problem), cand, n_cand, capacity, index,
                                                      score, w.n_p)
            n = w.n.value
        finally:
            pool.append(w)
        if rc < 0:
            raise HeuristError(rc, _lib.last_error())
        if n > capacity:
            n = capacity
        return _frombuffer(index, _int32, n), _frombuffer(score, _float32, n)

    def shortlist(self, problem, k, candidates=None):
        """The k best kernel (or candidate) indices for `problem`, best first, as a list."""
        return self.rank(problem, candidates, k)[0].tolist()

    def rank_batch(self, problems, candidates=None, k=1, threads=0):
        """Each problem's k best kernel (or candidate) indices, an int32 array (n, k), -1 past the ranked count,
        ranked in one library call over `threads` threads (0: all cores): problems as an array of values, dicts or
        text (find-db keys or a table's "column=value,..."; with k > 1 or candidates, each parsed to values by the
        library first)."""
        self._need("select", "rank_batch")
        if k < 1:
            raise HeuristError(EINVAL, "rank_batch: k must be at least 1, got %d" % k)
        h = self._handle()
        if candidates is None and k == 1 and not isinstance(problems, np.ndarray) and \
                all(isinstance(p, str) for p in problems):
            # text keys, best only: parsed and ranked in the library's threads (heurist_rank_batch)
            keys = [p.encode() for p in problems]
            top = np.empty((len(keys), 1), dtype=np.int32)
            check(_lib.lib.heurist_rank_batch(h, (ctypes.c_char_p * len(keys))(*keys), len(keys), threads,
                                              top.ctypes.data))
            return top
        values = self._problems(problems)
        cand, n_cand = self._candidates(candidates)
        top = np.empty((len(values), k), dtype=np.int32)
        check(_lib.lib.heurist_rank_values_batch(h, values.ctypes.data, len(values),
                                                 cand.ctypes.data if cand is not None else None, n_cand, k, threads,
                                                 top.ctypes.data))
        return top

    def tune(self, problem):
        """The tuning parameters predicted for `problem`, as {parameter: value}; a categorical configuration
        column's value as its name (tune_batch gives its index)."""
        self._need("tune", "tune")
        values = (ctypes.c_int32 * len(self.params))()
        w = self._acquire()
        try:
            rc = _lib.fast.heurist_predictor_tune(w.p, self._problem_text(problem), values)
        finally:
            self._pool.append(w)
        check(rc)
        return {name: vocab[v] if vocab else v for name, vocab, v in zip(self.params, self._param_vocab, values)}

    def tune_batch(self, problems, threads=0):
        """Each problem's predicted parameters, an int32 array (n, len(params)) (a categorical value as its index
        in categories(column)), in one library call over `threads` threads (0: all cores)."""
        self._need("tune", "tune_batch")
        if isinstance(problems, (str, dict)):
            raise TypeError("a batch is a sequence of problems; for one problem call tune")
        keys = [self._problem_text(p) for p in problems]
        out = np.empty((len(keys), len(self.params)), dtype=np.int32)
        check(_lib.lib.heurist_tune_batch(self._handle(), (ctypes.c_char_p * len(keys))(*keys), len(keys), threads,
                                          out.ctypes.data))
        return out


class _Predictor:
    """A library predictor and the count its calls write (n_p: the pointer passed to them)."""

    __slots__ = ("p", "n", "n_p")

    def __init__(self, model_handle):
        self.p = _lib.void_p()
        check(_lib.lib.heurist_predictor_create(model_handle, ctypes.byref(self.p)))
        self.n = ctypes.c_int(0)
        self.n_p = ctypes.pointer(self.n)

    def free(self):
        _lib.lib.heurist_predictor_free(self.p)
        self.p = None


def _is_number(v):
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False

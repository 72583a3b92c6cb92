"""A Triton autotuning pruner driven by a heurist table model.

    import heurist, heurist.triton
    model = heurist.Model.load('triton_mm.h5')
    @triton.autotune(configs=CONFIGS, key=['M', 'N', 'K'],
                     prune_configs_by={'early_config_prune': heurist.triton.pruner(model, k=4)})
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, ...): ...

Triton calls the pruner once per new autotuning key with the full config list and the kernel's named arguments;
it returns the model's k best configs, so that only those are compiled and benchmarked.

Mapping. A triton.Config becomes the model's configuration columns: a column named like one of the config's
kwargs takes that value, `num_warps`, `num_stages`, `num_ctas` and `maxnreg` take the config's attributes. The
kernel's named arguments become the problem columns: a column named like an argument takes its value (an
integer such as M, N, K), and a column `dtype` takes the data type of the first tensor argument ("fp16",
"bf16", "fp32", ...: the dtype of A for a matmul). `problem=` (a callable named_args -> {column: value}) replaces
that mapping for kernels whose arguments are named otherwise. A config the model cannot map (a column it lacks,
a categorical value the model never saw) is not ranked: when fewer than k configs are ranked, the rest of the k
are the mapped configs the model left unranked, then the unmapped ones, in the list's order; one warning per
pruner names the columns that failed. A problem column no argument gives raises ValueError
naming it; a problem value the model refuses (a data type it never saw) raises the model's HeuristError.

This module imports neither triton nor torch: configs and tensors are read by their attributes. The candidates
go to Model.shortlist as a float64 matrix of the configuration columns' values, built once per config list.
"""
import warnings

import numpy as np

__all__ = ['pruner', 'config_values', 'problem_values', 'DTYPE_NAMES']

# torch / triton data type names -> the names heurist's tables use (collect/scripts/triton_matmul.py)
DTYPE_NAMES = {
    'float16': 'fp16', 'half': 'fp16', 'fp16': 'fp16',
    'bfloat16': 'bf16', 'bf16': 'bf16',
    'float32': 'fp32', 'float': 'fp32', 'fp32': 'fp32',
    'float64': 'fp64', 'double': 'fp64', 'fp64': 'fp64',
    'float8_e4m3fn': 'fp8e4m3', 'float8_e5m2': 'fp8e5m2',
    'int8': 'int8',
}
_CONFIG_ATTRIBUTES = ('num_warps', 'num_stages', 'num_ctas', 'maxnreg')


def _dtype_name(dtype):
    """'torch.bfloat16' / 'bf16' / a triton dtype -> 'bf16' (the part after the last dot, by DTYPE_NAMES)."""
    name = str(dtype).rsplit('.', 1)[-1]
    return DTYPE_NAMES.get(name, name)


def config_values(config, columns, categories):
    """A triton.Config as {column: value} over the model's configuration columns, or (None, the column that
    fails) when a column is missing or a categorical value is unknown. categories: {column: set of names} of the
    categorical columns."""
    kwargs = getattr(config, 'kwargs', {}) or {}
    out = {}
    for col in columns:
        if col in kwargs:
            v = kwargs[col]
        elif col in _CONFIG_ATTRIBUTES and getattr(config, col, None) is not None:
            v = getattr(config, col)
        else:
            return None, col
        if col in categories:
            v = str(v)
            if v not in categories[col]:
                return None, col
        out[col] = v
    return out, None


def problem_values(named_args, columns):
    """The kernel's named arguments as {column: value} over the model's problem columns: an argument of the
    column's name, else for `dtype` the data type of the first argument that has one. Raises ValueError naming
    a column no argument gives."""
    out = {}
    for col in columns:
        if col in named_args and not hasattr(named_args[col], 'data_ptr'):
            v = named_args[col]
            out[col] = _dtype_name(v) if col == 'dtype' else v
        elif col == 'dtype':
            tensor = next((a for a in named_args.values() if hasattr(a, 'dtype')), None)
            if tensor is None:
                raise ValueError("heurist.triton: problem column 'dtype': no kernel argument has a dtype")
            out[col] = _dtype_name(tensor.dtype)
        else:
            raise ValueError("heurist.triton: problem column '%s': no kernel argument of that name (arguments: %s); "
                             "pass problem= to map them" % (col, ', '.join(sorted(named_args))))
    return out


def pruner(model, k, problem=None):
    """The early_config_prune callable of triton.autotune: (configs, named_args, **kwargs) -> the model's k best
    configs, best first. model: a heurist.Model of a table (its configuration columns name the config's fields);
    k >= 1; problem: None (the mapping of problem_values) or a callable named_args -> {problem column: value}."""
    if k < 1:
        raise ValueError('heurist.triton.pruner: k must be at least 1, got %r' % (k,))
    columns = list(model.config_columns)
    if not columns:
        raise ValueError('heurist.triton.pruner: the model has no configuration columns (a table model is needed)')
    categories, codes = {}, {}
    for col in columns:
        names = list(model.categories(col))
        if names:
            categories[col] = set(names)
            codes[col] = {name: float(i) for i, name in enumerate(names)}
    memo = {}    # id(configs) -> (configs, mapped indices, candidate matrix, unmapped indices)
    warned = []

    def mapped(configs):
        hit = memo.get(id(configs))
        if hit is not None and hit[0] is configs and len(hit[1]) + len(hit[3]) == len(configs):
            return hit[1:]
        index, cands, rest, why = [], [], [], {}
        for i, c in enumerate(configs):
            values, col = config_values(c, columns, categories)
            if values is None:
                rest.append(i)
                why.setdefault(col, c)
            else:
                index.append(i)
                cands.append([codes[col][v] if col in codes else float(v) for col, v in values.items()])
        if why and not warned:
            warned.append(True)
            warnings.warn('heurist.triton: %d of %d configs cannot be ranked by the model (column %s, e.g. %r); '
                          'they are kept only when fewer than k=%d are ranked'
                          % (len(rest), len(configs), ', '.join(sorted(why)), next(iter(why.values())), k),
                          stacklevel=3)
        # the candidates as the model's values (a category as its index), built once per config list: Triton
        # passes the same list for every new key
        cands = np.array(cands, dtype=np.float64).reshape(len(index), len(columns))
        memo[id(configs)] = (configs, index, cands, rest)
        return index, cands, rest

    def prune(configs, named_args, **kwargs):
        configs = list(configs) if not isinstance(configs, list) else configs
        index, cands, rest = mapped(configs)
        prob = problem(named_args) if problem is not None else problem_values(named_args, model.problem_columns)
        picked = []
        if len(index):
            picked = [index[i] for i in model.shortlist(prob, min(k, len(index)), candidates=cands)]
        if len(picked) < k:  # fewer ranked than k: the mapped configs the model left unranked, then the unmapped
            chosen = set(picked)
            picked += [i for i in index + rest if i not in chosen][:k - len(picked)]
        return [configs[i] for i in picked]

    prune.model, prune.k = model, k
    return prune

"""heurist: GPU kernel-selection and tuning heuristics, from Python.

A ctypes binding of libheurist (include/heurist.h): train, cross-validate, compare and evaluate models with the
command line's options, load a model, rank the kernels or configurations for a problem, one or a batch, or predict
its tuning parameters. Every failed call raises HeuristError with the library's message.

    import heurist
    m = heurist.Model.load("gemm.h5")
    top = m.shortlist({"M": 128, "N": 4096, "K": 4096, "dtype": "bf16"}, k=4)
"""
from ._lib import (EFORMAT, EINVAL, EIO, ENOMEM, ESTATE, EVERSION, HeuristError, api_version)
from ._lib import path as library_path
from .jobs import compare, cv, evaluate, train
from .model import Model

__all__ = ["Model", "train", "cv", "compare", "evaluate", "HeuristError", "api_version", "library_path", "EINVAL",
           "EIO", "ENOMEM", "EFORMAT", "EVERSION", "ESTATE"]

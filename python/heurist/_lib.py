"""libheurist through ctypes: finding the library, the prototypes of include/heurist.h, and errors.

ctypes.CDLL releases the GIL around every foreign call, so a long rank_batch or train lets other Python threads
run. Functions of a newer API version than the library found are absent; `has(name)` says which are there.
"""
import ctypes
import ctypes.util
import os
from pathlib import Path

# include/heurist.h's heurist_status
OK = 0
EINVAL = -1
EIO = -2
ENOMEM = -3
EFORMAT = -4
EVERSION = -5
ESTATE = -6

STATUS_NAMES = {EINVAL: "EINVAL", EIO: "EIO", ENOMEM: "ENOMEM", EFORMAT: "EFORMAT", EVERSION: "EVERSION",
                ESTATE: "ESTATE"}

# the oldest library this package speaks to (heurist_api_version()): the predictor calls came with version 2
API_VERSION_MIN = 2


class HeuristError(Exception):
    """A negative heurist_status with the library's message (heurist_last_error()) for the failed call."""

    def __init__(self, status, message):
        super().__init__(status, message)
        self.status = status
        self.message = message

    def __str__(self):
        return "%s (%s)" % (self.message, STATUS_NAMES.get(self.status, self.status))


def _places():
    """Where the library may be, in the order tried, each as (description, path or None when not applicable)."""
    env = os.environ.get("HEURIST_LIBRARY")
    if env:
        # an explicit choice is the only one tried: a test or a user naming a library must get that library
        return [("HEURIST_LIBRARY", env)]
    here = Path(__file__).resolve().parent
    places = []
    try:
        from ._install import LIBRARY  # written by `cmake --install`: the library installed beside this package
        places.append(("the install prefix", LIBRARY))
    except ImportError:
        places.append(("the install prefix", None))
    # the package imported from a checkout: the build tree of that repository (python/heurist -> build/)
    places.append(("the build tree", str(here.parent.parent / "build" / "libheurist.so")))
    places.append(("the system's library path (ctypes.util.find_library)", ctypes.util.find_library("heurist")))
    return places


def _load():
    looked = []
    for where, path in _places():
        if not path:
            looked.append("%s: none" % where)
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            looked.append("%s: %s (%s)" % (where, path, e))
    raise ImportError("heurist: libheurist.so not found; looked in " + "; ".join(looked) +
                      ". Build it (cmake --build build --target heurist_api), install it (cmake --install build), "
                      "or set HEURIST_LIBRARY=/path/to/libheurist.so")


lib, path = _load()

c_int_p = ctypes.POINTER(ctypes.c_int)
c_char_pp = ctypes.POINTER(ctypes.c_char_p)
void_p = ctypes.c_void_p

# name: (restype, argtypes), as include/heurist.h declares them: handles and arrays as void pointers (the
# package passes a numpy array's address, ndarray.ctypes.data, or None for NULL)
_PROTOTYPES = {
    # API version 1
    "heurist_last_error": (ctypes.c_char_p, []),
    "heurist_api_version": (ctypes.c_int, []),
    "heurist_model_load": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(void_p)]),
    "heurist_model_free": (None, [void_p]),
    "heurist_model_task": (ctypes.c_int, [void_p]),
    "heurist_model_kernel_count": (ctypes.c_int, [void_p]),
    "heurist_model_kernel_name": (ctypes.c_char_p, [void_p, ctypes.c_int]),
    "heurist_model_param_count": (ctypes.c_int, [void_p]),
    "heurist_model_param_name": (ctypes.c_char_p, [void_p, ctypes.c_int]),
    "heurist_rank": (ctypes.c_int, [void_p, ctypes.c_char_p, ctypes.c_int, void_p, void_p, c_int_p]),
    "heurist_rank_batch": (ctypes.c_int, [void_p, c_char_pp, ctypes.c_int, ctypes.c_int, void_p]),
    "heurist_tune": (ctypes.c_int, [void_p, ctypes.c_char_p, void_p]),
    "heurist_tune_batch": (ctypes.c_int, [void_p, c_char_pp, ctypes.c_int, ctypes.c_int, void_p]),
    # API version 2
    "heurist_predictor_create": (ctypes.c_int, [void_p, ctypes.POINTER(void_p)]),
    "heurist_predictor_free": (None, [void_p]),
    "heurist_model_problem_count": (ctypes.c_int, [void_p]),
    "heurist_model_problem_name": (ctypes.c_char_p, [void_p, ctypes.c_int]),
    "heurist_model_config_count": (ctypes.c_int, [void_p]),
    "heurist_model_config_name": (ctypes.c_char_p, [void_p, ctypes.c_int]),
    "heurist_model_category_count": (ctypes.c_int, [void_p, ctypes.c_int]),
    "heurist_model_category_name": (ctypes.c_char_p, [void_p, ctypes.c_int, ctypes.c_int]),
    "heurist_model_problem_parse": (ctypes.c_int, [void_p, ctypes.c_char_p, void_p]),
    "heurist_predictor_rank": (ctypes.c_int, [void_p, ctypes.c_char_p, void_p, ctypes.c_int, ctypes.c_int,
                                              void_p, void_p, c_int_p]),
    "heurist_predictor_rank_values": (ctypes.c_int, [void_p, void_p, void_p, ctypes.c_int, ctypes.c_int,
                                                     void_p, void_p, c_int_p]),
    "heurist_rank_values_batch": (ctypes.c_int, [void_p, void_p, ctypes.c_int, void_p, ctypes.c_int,
                                                 ctypes.c_int, ctypes.c_int, void_p]),
    "heurist_predictor_tune": (ctypes.c_int, [void_p, ctypes.c_char_p, void_p]),
    "heurist_train": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(void_p)]),
    "heurist_cv": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(void_p)]),
    "heurist_compare": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(void_p)]),
    "heurist_eval": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(void_p)]),
    "heurist_free": (None, [void_p]),
}

_present = set()
for _name, (_res, _args) in _PROTOTYPES.items():
    try:
        _fn = getattr(lib, _name)
    except AttributeError:
        continue
    _fn.restype = _res
    _fn.argtypes = _args
    _present.add(_name)

# The calls of a single rank or tune without argtypes: ctypes then converts no argument (its conversions cost
# about as much as a small model's ranking), so their callers pass only ctypes objects, bytes, ints and None.
fast = ctypes.CDLL(path)
for _name in ("heurist_predictor_rank", "heurist_predictor_rank_values", "heurist_predictor_tune"):
    if _name in _present:
        getattr(fast, _name).restype = ctypes.c_int

api_version = lib.heurist_api_version()
if api_version < API_VERSION_MIN:
    raise ImportError("heurist: %s has API version %d; this package needs %d or later" %
                      (path, api_version, API_VERSION_MIN))


def has(name):
    """Whether the library found exports heurist function `name`."""
    return name in _present


def need(name, what):
    """The function `name`, or HeuristError(ESTATE) saying that `what` needs a newer library."""
    if name not in _present:
        raise HeuristError(ESTATE, "%s needs %s, which %s (API version %d) does not export" %
                           (what, name, path, api_version))
    return getattr(lib, name)


def last_error():
    msg = lib.heurist_last_error()
    return msg.decode("utf-8", "replace") if msg else "unknown error"


def check(rc):
    """rc unchanged when it is a success (>= 0), else HeuristError with the calling thread's message."""
    if rc < 0:
        raise HeuristError(rc, last_error())
    return rc


def text(s):
    return s.decode("utf-8", "replace") if s is not None else None

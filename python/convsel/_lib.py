"""The C library, loaded with ctypes, and its functions' prototypes.

Where libconvsel.so is looked for, in order: $CONVSEL_LIBRARY (a path), the
package's own directory (a pip install copies it there), and the build/
directory of the source tree the package sits in (PYTHONPATH=python from a
checkout). ctypes releases the GIL around every call into the library, so
threads run convolutions in parallel.
"""
import ctypes
import os

from . import _files

_HERE = os.path.dirname(os.path.abspath(__file__))

# convsel_status_t
SUCCESS, BAD_PARAM, NOT_SUPPORTED, ALLOC_FAILED, INTERNAL = range(5)
LAYOUT_NCHW, LAYOUT_NHWC = 0, 1
FILTER_KCRS, FILTER_KRSC = 0, 1
SOLVER_AUTO = -1
FIND_MODES = ("immediate", "hybrid", "exhaustive")
SOURCES = ("database", "model", "rules", "measured")
SOLUTION_EXTRAPOLATED = 1


class Solution(ctypes.Structure):
    _fields_ = [("solver", ctypes.c_int32), ("name", ctypes.c_char_p),
                ("time_ms", ctypes.c_double), ("workspace_bytes", ctypes.c_size_t),
                ("source", ctypes.c_int), ("flags", ctypes.c_uint32)]


class PerfResult(ctypes.Structure):
    _fields_ = [("solver", ctypes.c_int32), ("name", ctypes.c_char_p),
                ("time_ms", ctypes.c_double), ("time_min_ms", ctypes.c_double),
                ("time_max_ms", ctypes.c_double), ("runs", ctypes.c_int),
                ("workspace_bytes", ctypes.c_size_t)]


def _candidates():
    env = os.environ.get("CONVSEL_LIBRARY")
    if env:
        return [env]
    found = [os.path.join(_HERE, "libconvsel.so")]
    root = os.path.dirname(os.path.dirname(_HERE))  # python/convsel -> the checkout
    found.append(os.path.join(root, "build", "libconvsel.so"))
    return found


def _load():
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            try:
                _files.check_regular(path)  # dlopen would block on a FIFO
                return ctypes.CDLL(path), path
            except OSError as e:
                tried.append(str(e) if path in str(e) else f"{path}: {e}")
        else:
            tried.append(f"{path}: does not exist")
    raise ImportError("convsel: cannot load libconvsel.so (set CONVSEL_LIBRARY to its path): "
                      + "; ".join(tried))


lib, path = _load()

_H = ctypes.c_void_p
_D = ctypes.c_void_p
_I64 = ctypes.c_int64
_P64 = ctypes.POINTER(ctypes.c_int64)


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


version = _proto("convsel_version", ctypes.c_char_p)
status_string = _proto("convsel_status_string", ctypes.c_char_p, ctypes.c_int)
handle_create = _proto("convsel_handle_create", ctypes.c_int, ctypes.POINTER(_H))
handle_destroy = _proto("convsel_handle_destroy", None, _H)
set_num_threads = _proto("convsel_set_num_threads", ctypes.c_int, _H, ctypes.c_int)
get_num_threads = _proto("convsel_get_num_threads", ctypes.c_int, _H,
                         ctypes.POINTER(ctypes.c_int))
set_weights_constant = _proto("convsel_set_weights_constant", ctypes.c_int, _H, ctypes.c_int)
set_find_mode = _proto("convsel_set_find_mode", ctypes.c_int, _H, ctypes.c_int)
get_find_mode = _proto("convsel_get_find_mode", ctypes.c_int, _H, ctypes.POINTER(ctypes.c_int))
error_message = _proto("convsel_get_error_message", ctypes.c_char_p, _H)
tensor_desc_create = _proto("convsel_tensor_desc_create", ctypes.c_int, ctypes.POINTER(_D))
tensor_desc_destroy = _proto("convsel_tensor_desc_destroy", None, _D)
tensor_desc_set_4d_strided = _proto("convsel_tensor_desc_set_4d_strided", ctypes.c_int, _D,
                                    ctypes.c_int, _I64, _I64, _I64, _I64, _I64, _I64, _I64, _I64)
filter_desc_create = _proto("convsel_filter_desc_create", ctypes.c_int, ctypes.POINTER(_D))
filter_desc_destroy = _proto("convsel_filter_desc_destroy", None, _D)
filter_desc_set = _proto("convsel_filter_desc_set", ctypes.c_int, _D, ctypes.c_int, _I64, _I64,
                         _I64, _I64)
conv_desc_create = _proto("convsel_conv_desc_create", ctypes.c_int, ctypes.POINTER(_D))
conv_desc_destroy = _proto("convsel_conv_desc_destroy", None, _D)
conv_desc_set = _proto("convsel_conv_desc_set", ctypes.c_int, _D, _I64, _I64, _I64, _I64, _I64,
                       _I64, _I64)
get_conv_output_shape = _proto("convsel_get_conv_output_shape", ctypes.c_int, _H, _D, _D, _D,
                               _P64, _P64, _P64, _P64)
solver_count = _proto("convsel_solver_count", ctypes.c_int32)
solver_name = _proto("convsel_solver_name", ctypes.c_char_p, ctypes.c_int32)
solver_find = _proto("convsel_solver_find", ctypes.c_int, _H, ctypes.c_char_p,
                     ctypes.POINTER(ctypes.c_int32))
workspace_size = _proto("convsel_get_forward_workspace_size", ctypes.c_int, _H, ctypes.c_int32,
                        _D, _D, _D, _D, ctypes.POINTER(ctypes.c_size_t))
forward = _proto("convsel_convolution_forward", ctypes.c_int, _H, ctypes.c_int32, _D,
                 ctypes.c_void_p, _D, ctypes.c_void_p, _D, _D, ctypes.c_void_p, ctypes.c_void_p,
                 ctypes.c_size_t)
get_solutions = _proto("convsel_get_solutions", ctypes.c_int, _H, _D, _D, _D, _D, ctypes.c_int,
                       ctypes.POINTER(Solution), ctypes.POINTER(ctypes.c_int))
find_forward = _proto("convsel_find_forward", ctypes.c_int, _H, _D, ctypes.c_void_p, _D,
                      ctypes.c_void_p, _D, _D, ctypes.c_void_p, ctypes.POINTER(PerfResult),
                      ctypes.c_int, ctypes.POINTER(ctypes.c_int))
model_status = _proto("convsel_get_model_status", ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                      ctypes.POINTER(ctypes.c_size_t))
database_status = _proto("convsel_get_database_status", ctypes.c_int, ctypes.c_char_p,
                         ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t))
problem_key = _proto("convsel_get_problem_key", ctypes.c_int, _H, _D, _D, _D, _D, ctypes.c_char_p,
                     ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t))

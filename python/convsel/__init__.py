"""convsel: 2-D convolutions on the CPU, the algorithm chosen per problem.

A thin layer over libconvsel.so (ctypes, no compiled extension). Every
thread gets its own handle, made on first use (the C library's rule: one
handle per thread); calls release the GIL, so threads convolve in parallel.

    import numpy as np, convsel
    x = np.random.rand(1, 64, 56, 56).astype(np.float32)
    w = np.random.rand(64, 64, 3, 3).astype(np.float32)
    y = convsel.conv2d(x, w, padding=1)
    convsel.get_solutions(x, w, padding=1)   # the ranking, with estimates

Arrays are NumPy arrays or torch tensors (CPU, float32), logically
N x C x H x W like torch's, in NCHW or channels-last (NHWC) memory, views
included when their strides keep one of those orders; weights are
K x C/groups x R x S, contiguous (KCRS) or channels-last (KRSC).
convsel.torch has torch.nn.functional.conv2d's signature and patches
models. Errors are ConvselError (the library's status and message), or
ValueError / TypeError naming the argument.
"""
import collections
import ctypes
import threading
import weakref

from . import _lib

__all__ = ["conv2d", "get_solutions", "find", "ConvselError", "Solution", "Measured",
           "set_num_threads", "get_num_threads", "set_weights_constant", "set_find_mode",
           "get_find_mode", "model_status", "database_status", "solvers", "version",
           "problem_key", "library_path"]

library_path = _lib.path


class ConvselError(RuntimeError):
    """A call into libconvsel failed: .status (an int), .status_name and
    .message (the library's, naming the field or the reason)."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = _lib.status_string(status).decode()
        self.message = message
        super().__init__(f"convsel: {self.status_name}: {message}")


Solution = collections.namedtuple(
    "Solution", "name solver time_ms source workspace_bytes extrapolated")
Solution.__doc__ = """One entry of a ranking: time_ms is the estimate (None when the source
has none: the rules), source 'database', 'model', 'rules' or 'measured',
extrapolated when the model saw nothing like this problem in training."""
Measured = collections.namedtuple("Measured", "name solver time_ms min_ms max_ms runs")


def version():
    return _lib.version().decode()


def solvers():
    """The solvers' names, in registry order (their ids)."""
    return [_lib.solver_name(i).decode() for i in range(_lib.solver_count())]


# ---------------------------------------------------------------------------
# handles: one per thread, each with its plans


class _Plan:
    """One problem as the C library sees it, set up once per thread: its own
    four descriptors (x, w, conv, y), the output's shape and memory order,
    the solver id and its workspace. Calls that repeat a problem (every
    forward pass of a model) look the plan up by the arguments' shapes,
    strides and types and go straight to convsel_convolution_forward."""

    __slots__ = ("descs", "shape", "layout", "kind", "sid", "ws", "auto")

    def __init__(self):
        self.descs = []
        for create in (_lib.tensor_desc_create, _lib.filter_desc_create,
                       _lib.conv_desc_create, _lib.tensor_desc_create):
            d = ctypes.c_void_p()
            _check(create(ctypes.byref(d)), None)
            self.descs.append(d)

    def __del__(self):
        for d, destroy in zip(self.descs, (_lib.tensor_desc_destroy, _lib.filter_desc_destroy,
                                           _lib.conv_desc_destroy, _lib.tensor_desc_destroy)):
            destroy(d)


_PLANS_PER_THREAD = 256  # a large network has ~200 distinct layers


class _Handle:
    def __init__(self, constant_weights=False):
        self.ptr = ctypes.c_void_p()
        _check(_lib.handle_create(ctypes.byref(self.ptr)), None)
        self.plans = {}
        self.workspace = None
        self.workspace_bytes = 0
        self.find_mode = "immediate"
        # the guarded constant-weights handle (convsel.torch's): its setting
        # is fixed, and `weights` holds what each weights address held
        self.constant_weights = constant_weights
        self.weights = {}
        with _settings_lock:
            settings = dict(_settings)
        for key, value in settings.items():
            _apply(self, key, value)
        if constant_weights:
            _check(_lib.set_weights_constant(self.ptr, 1), self)

    def __del__(self):
        self.plans = {}
        if getattr(self, "ptr", None):
            _lib.handle_destroy(self.ptr)

    def scratch(self, size):
        if size > self.workspace_bytes:
            self.workspace = ctypes.create_string_buffer(size)
            self.workspace_bytes = size
        return ctypes.addressof(self.workspace) if size else None

    def remember(self, key, plan):
        if len(self.plans) >= _PLANS_PER_THREAD:
            self.plans.pop(next(iter(self.plans)))  # the oldest
        self.plans[key] = plan


_local = threading.local()
_settings = {}  # applied to every thread's handle when it is made
_settings_lock = threading.Lock()


def _handle():
    h = getattr(_local, "handle", None)
    if h is None:
        h = _local.handle = _Handle()
    return h


def _handles():
    """The calling thread's handles that exist: the default one (made if
    need be) and the guarded constant-weights one."""
    hs = [_handle()]
    if getattr(_local, "constant_handle", None) is not None:
        hs.append(_local.constant_handle)
    return hs


def _check(status, h):
    if status != _lib.SUCCESS:
        message = _lib.error_message(h.ptr).decode() if h is not None else "(no handle)"
        raise ConvselError(status, message)


def _apply(h, key, value):
    if key == "threads":
        _check(_lib.set_num_threads(h.ptr, value), h)
    elif key == "weights_constant":
        if h.constant_weights:
            return  # fixed, and guarded by forget_weights
        _check(_lib.set_weights_constant(h.ptr, 1 if value else 0), h)
    elif key == "find_mode":
        _check(_lib.set_find_mode(h.ptr, _lib.FIND_MODES.index(value)), h)
        h.find_mode = value
    h.plans = {}  # workspace sizes may depend on the settings


def _set(key, value):
    """Applies to the calling thread's handle now and to every handle made later."""
    with _settings_lock:
        _settings[key] = value
    for h in _handles():
        _apply(h, key, value)


def set_num_threads(n):
    """Threads each convolution may use (1..256; the default: all online CPUs)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"num_threads must be an int, not {type(n).__name__}")
    if not 1 <= n <= 256:
        raise ValueError(f"num_threads = {n}: must be in 1..256")
    _set("threads", n)


def get_num_threads():
    n = ctypes.c_int()
    h = _handle()
    _check(_lib.get_num_threads(h.ptr, ctypes.byref(n)), h)
    return n.value


def set_weights_constant(constant):
    """Promise that the data at a weights address does not change between
    calls (inference): solvers then keep the weights in their own form."""
    if not isinstance(constant, bool):
        raise TypeError(f"constant must be a bool, not {type(constant).__name__}")
    _set("weights_constant", constant)


def set_find_mode(mode):
    """'immediate' (rank, run), 'hybrid' (time the top three where the
    ranking is unsure, once per problem), 'exhaustive' (time all)."""
    if mode not in _lib.FIND_MODES:
        raise ValueError(f"mode = {mode!r}: must be one of {', '.join(_lib.FIND_MODES)}")
    _set("find_mode", mode)


def get_find_mode():
    m = ctypes.c_int()
    h = _handle()
    _check(_lib.get_find_mode(h.ptr, ctypes.byref(m)), h)
    return _lib.FIND_MODES[m.value]


def _status_line(fn):
    buf = ctypes.create_string_buffer(8192)
    fn(buf, len(buf), None)
    return buf.value.decode(errors="replace")


def model_status():
    """The ranking model in use and what its metadata lacks, or why there is none."""
    return _status_line(_lib.model_status)


def database_status():
    """The performance database: its path and records, or why it is not used."""
    return _status_line(_lib.database_status)


# ---------------------------------------------------------------------------
# arrays


class _Array:
    """What convsel needs of an array: a pointer, the logical shape
    (n, c, h, w), element strides in that order, and the memory layout."""

    __slots__ = ("ptr", "shape", "strides", "layout", "kind", "keep")


def _torch():
    import sys
    return sys.modules.get("torch")


def _is_tensor(a):
    torch = _torch()
    return torch is not None and isinstance(a, torch.Tensor)


def _fixed_strides(shape, strides):
    """Size-1 dimensions may carry any stride; give each the smallest one
    that keeps the order of the others (what the library checks)."""
    out = list(strides)
    for i, n in enumerate(shape):
        if n == 1:
            out[i] = None
    return out


def _layout_of(name, shape, strides, filter_like):
    n, c, h, w = shape
    s = _fixed_strides(shape, strides)
    def fill(order):
        # order: dims from innermost to outermost; smallest valid strides for size-1 dims
        got, need = list(s), 1
        for d in order:
            if got[d] is None:
                got[d] = need
            if got[d] < need:
                return None
            need = got[d] * shape[d]
        return got
    if filter_like:  # packed only
        kcrs = fill((3, 2, 1, 0))
        if kcrs == [c * h * w, h * w, w, 1]:
            return _lib.FILTER_KCRS, kcrs
        krsc = fill((1, 3, 2, 0))
        if krsc == [h * w * c, 1, w * c, c]:
            return _lib.FILTER_KRSC, krsc
        raise ValueError(f"{name}: strides {tuple(strides)} are neither contiguous (KCRS) nor "
                         f"channels-last (KRSC); pass a contiguous copy")
    if any(st is not None and st <= 0 for st in s):
        raise ValueError(f"{name}: strides {tuple(strides)} include 0 or negative (a broadcast "
                         f"or flipped view); pass a copy")
    nchw = fill((3, 2, 1, 0))
    if nchw is not None:
        return _lib.LAYOUT_NCHW, nchw
    nhwc = fill((1, 3, 2, 0))
    if nhwc is not None:
        return _lib.LAYOUT_NHWC, nhwc
    raise ValueError(f"{name}: strides {tuple(strides)} keep neither the NCHW nor the NHWC "
                     f"order; pass a contiguous copy")


def _array(a, name, filter_like=False):
    r = _Array()
    if _is_tensor(a):
        if a.device.type != "cpu":
            raise TypeError(f"{name} is on {a.device}: convsel runs on the CPU")
        torch = _torch()
        if a.dtype != torch.float32:
            raise TypeError(f"{name} has dtype {a.dtype}: convsel computes in float32")
        if a.dim() != 4:
            raise ValueError(f"{name} has {a.dim()} dimensions, not 4 ({'K, C/groups, R, S' if filter_like else 'N, C, H, W'})")
        if a.is_sparse or a.is_quantized:
            raise TypeError(f"{name} is sparse or quantized: convsel takes dense float32")
        r.shape, strides = tuple(a.shape), tuple(a.stride())
        r.ptr, r.kind, r.keep = a.data_ptr(), "torch", a
    else:
        try:
            import numpy as np
        except ImportError:
            raise TypeError(f"{name}: a torch tensor or a NumPy array, not {type(a).__name__}")
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{name}: a torch tensor or a NumPy array, not {type(a).__name__}")
        if a.dtype != np.float32:
            raise TypeError(f"{name} has dtype {a.dtype}: convsel computes in float32")
        if a.ndim != 4:
            raise ValueError(f"{name} has {a.ndim} dimensions, not 4 ({'K, C/groups, R, S' if filter_like else 'N, C, H, W'})")
        if any(st % 4 for st in a.strides):
            raise ValueError(f"{name}: strides {a.strides} (bytes) are not whole floats")
        r.shape, strides = tuple(a.shape), tuple(st // 4 for st in a.strides)
        r.ptr, r.kind, r.keep = a.ctypes.data, "numpy", a
    if any(d < 1 for d in r.shape):
        raise ValueError(f"{name} has shape {r.shape}: every dimension must be >= 1")
    r.layout, r.strides = _layout_of(name, r.shape, strides, filter_like)
    return r


def _pair(value, name):
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int or a pair of ints, not bool")
    if isinstance(value, int):
        return value, value
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    raise TypeError(f"{name} must be an int or a pair of ints, not {value!r}")


def _padding(padding, w_shape, dilation, stride):
    """(pad_h, pad_w) for an int, a pair, 'valid' or 'same' (stride 1;
    symmetric only here: convsel.torch pads an even filter's extra row)."""
    if isinstance(padding, str):
        if padding == "valid":
            return 0, 0
        if padding != "same":
            raise ValueError(f"padding = {padding!r}: an int, a pair, 'valid' or 'same'")
        if stride != (1, 1):
            raise ValueError("padding = 'same' needs stride 1 (as in torch)")
        pads = []
        for k, d in zip(w_shape[2:], dilation):
            total = d * (k - 1)
            if total % 2:
                raise ValueError(f"padding = 'same' with a filter of {k} taps and dilation "
                                 f"{d} pads unevenly; convsel.torch.conv2d does it (pads the "
                                 f"input first)")
            pads.append(total // 2)
        return tuple(pads)
    pad = _pair(padding, "padding")
    if min(pad) < 0:
        raise ValueError(f"padding = {padding}: must be >= 0")
    return pad


def _conv_params(w_shape, stride, padding, dilation, groups):
    stride = _pair(stride, "stride")
    dilation = _pair(dilation, "dilation")
    if min(stride) < 1 or min(dilation) < 1:
        raise ValueError(f"stride = {stride}, dilation = {dilation}: each must be >= 1")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"groups = {groups!r}: an int >= 1")
    pad = _padding(padding, w_shape, dilation, stride)
    return stride, pad, dilation, groups


def _new_strides(shape, layout):
    n, k, oh, ow = shape
    if layout == _lib.LAYOUT_NHWC:
        return (oh * ow * k, 1, ow * k, k)
    return (k * oh * ow, oh * ow, ow, 1)


def _make_plan(h, x, w, stride, padding, dilation, groups, solver):
    """Checks everything about a problem once and sets up its plan."""
    if x.kind != w.kind:
        raise TypeError(f"x is a {x.kind} array and w a {w.kind} one: give both of one kind")
    stride, pad, dilation, groups = _conv_params(w.shape, stride, padding, dilation, groups)
    n, c, hh, ww = x.shape
    k, cg, r, s = w.shape
    if c % groups or k % groups:
        raise ValueError(f"groups = {groups} must divide x's {c} channels and w's {k} filters")
    if cg * groups != c:
        raise ValueError(f"w has {cg} input channels per group; x's {c} channels in {groups} "
                         f"group(s) need {c // groups}")
    p = _Plan()
    xd, wd, cd, yd = p.descs
    _check(_lib.tensor_desc_set_4d_strided(xd, x.layout, n, c, hh, ww, *x.strides), h)
    _check(_lib.filter_desc_set(wd, w.layout, k, cg, r, s), h)
    _check(_lib.conv_desc_set(cd, pad[0], pad[1], stride[0], stride[1], dilation[0],
                              dilation[1], groups), h)
    out = [ctypes.c_int64() for _ in range(4)]
    st = _lib.get_conv_output_shape(h.ptr, xd, wd, cd, *[ctypes.byref(v) for v in out])
    if st == _lib.BAD_PARAM:
        raise ValueError(f"convsel: {_lib.error_message(h.ptr).decode()}")
    _check(st, h)
    p.shape = tuple(v.value for v in out)
    p.layout, p.kind = x.layout, x.kind
    _check(_lib.tensor_desc_set_4d_strided(yd, x.layout, *p.shape,
                                           *_new_strides(p.shape, x.layout)), h)
    p.sid = _solver_id(h, solver)
    p.auto = p.sid == _lib.SOLVER_AUTO
    ws = ctypes.c_size_t()
    st = _lib.workspace_size(h.ptr, p.sid, xd, wd, cd, yd, ctypes.byref(ws))
    if st == _lib.NOT_SUPPORTED:
        raise ValueError(f"solver = {solver!r}: {_lib.error_message(h.ptr).decode()}")
    _check(st, h)
    p.ws = ws.value
    return p


def _key(x, w, stride, padding, dilation, groups, solver):
    """What a plan is looked up by; a key is only ever stored after its
    arguments passed every check, so a hit needs no checks again."""
    if type(x) is _np_ndarray:
        xs, ws = (x.shape, x.strides, x.dtype), (w.shape, w.strides, w.dtype)
    else:
        xs, ws = (x.shape, x.stride(), x.dtype, x.device), (w.shape, w.stride(), w.dtype, w.device)
    return (type(x), type(w), xs, ws, stride, padding, dilation, groups, solver)


def _plan(h, x, w, stride, padding, dilation, groups, solver):
    try:
        key = _key(x, w, stride, padding, dilation, groups, solver)
        p = h.plans.get(key)
    except (TypeError, AttributeError):  # not arrays, or unhashable arguments (lists)
        key, p = None, None
    if p is None:
        p = _make_plan(h, _array(x, "x"), _array(w, "w", filter_like=True), stride, padding,
                       dilation, groups, solver)
        if key is not None:
            h.remember(key, p)
    return p


def _new_output(p):
    """An output like x: the same kind, and the same memory order."""
    n, k, oh, ow = p.shape
    if p.kind == "torch":
        torch = _torch()
        fmt = torch.channels_last if p.layout == _lib.LAYOUT_NHWC else torch.contiguous_format
        return torch.empty(p.shape, dtype=torch.float32, memory_format=fmt)
    import numpy as np
    if p.layout == _lib.LAYOUT_NHWC:
        return np.empty((n, oh, ow, k), dtype=np.float32).transpose(0, 3, 1, 2)
    return np.empty(p.shape, dtype=np.float32)


def _checked_out(p, out):
    ya = _array(out, "out")
    if ya.kind != p.kind:
        raise TypeError(f"out is a {ya.kind} array, x a {p.kind} one")
    if ya.shape != p.shape:
        raise ValueError(f"out has shape {ya.shape}, the convolution gives {p.shape}")
    if tuple(ya.strides) != _new_strides(p.shape, p.layout):
        raise ValueError(f"out must be packed in x's memory order "
                         f"({'channels-last' if p.layout == _lib.LAYOUT_NHWC else 'NCHW'})")
    return ya.ptr


def _ptr(a):
    return a.ctypes.data if type(a) is _np_ndarray else a.data_ptr()


def _solver_id(h, solver):
    if solver == "auto":
        return _lib.SOLVER_AUTO
    if not isinstance(solver, str):
        raise TypeError(f"solver must be a name or 'auto', not {type(solver).__name__}")
    sid = ctypes.c_int32()
    st = _lib.solver_find(h.ptr, solver.encode(), ctypes.byref(sid))
    if st == _lib.BAD_PARAM:
        raise ValueError(f"solver = {solver!r}: {_lib.error_message(h.ptr).decode()}")
    _check(st, h)
    return sid.value


def conv2d(x, w, stride=1, padding=0, dilation=1, groups=1, solver="auto", out=None):
    """y = conv2d(x, w): cross-correlation as in deep-learning frameworks.

    x: N x C x H x W, w: K x C/groups x R x S (float32 NumPy arrays or CPU
    torch tensors, both of one kind); stride, dilation: int or pair;
    padding: int, pair, 'valid' or 'same' (even filters: see convsel.torch);
    solver: 'auto' (convsel chooses) or a solver's name (solvers()); out: an
    array to write into, packed in x's memory order (else one is made)."""
    return _run(_handle(), x, w, stride, padding, dilation, groups, solver, out)


_WEIGHTS_TRACKED = 4096  # then forget all: dead entries of temporary weights


def _conv2d_guarded_weights(x, w, stride, padding, dilation, groups, solver="auto"):
    """conv2d with the weights' packed forms kept between calls, for
    convsel.torch: w must be a torch tensor convsel reads as it is (no
    copy). The kept form of an address is valid while the same tensor
    lives there unmodified; torch counts in-place writes in w._version, so
    a changed version, or another tensor at the address, forgets every kept
    form of this thread's handle before the call."""
    h = getattr(_local, "constant_handle", None)
    if h is None:
        h = _local.constant_handle = _Handle(constant_weights=True)
    ptr = w.data_ptr()
    seen = h.weights.get(ptr)
    if seen is None or seen[0]() is not w or seen[1] != w._version:
        if seen is not None or len(h.weights) >= _WEIGHTS_TRACKED:
            _forget(h)
        h.weights[ptr] = (weakref.ref(w), w._version)
    return _run(h, x, w, stride, padding, dilation, groups, solver, None)


def _forget(h):
    _check(_lib.set_weights_constant(h.ptr, 1), h)  # every call forgets the kept forms
    h.weights.clear()


def _forget_guarded_weights():
    """convsel.torch.forget_weights."""
    h = getattr(_local, "constant_handle", None)
    if h is not None:
        _forget(h)


def _run(h, x, w, stride, padding, dilation, groups, solver, out):
    p = _plan(h, x, w, stride, padding, dilation, groups, solver)
    if out is None:
        y = _new_output(p)
        yp = _ptr(y)
    else:
        y, yp = out, _checked_out(p, out)
    xd, wd, cd, yd = p.descs
    ws = p.ws
    if p.auto and h.find_mode != "immediate":
        # once the problem is measured, the fastest may need more workspace
        n = ctypes.c_size_t()
        _check(_lib.workspace_size(h.ptr, p.sid, xd, wd, cd, yd, ctypes.byref(n)), h)
        ws = n.value
    st = _lib.forward(h.ptr, p.sid, xd, _ptr(x), wd, _ptr(w), cd, yd, yp, h.scratch(ws), ws)
    if st:
        _check(st, h)
    return y


def _shaped(a):
    import numpy as np
    if isinstance(a, (tuple, list)):
        if len(a) != 4 or not all(isinstance(d, int) and not isinstance(d, bool) for d in a):
            raise ValueError(f"a shape must be 4 ints, not {a!r}")
        return np.empty(tuple(max(d, 0) for d in a), dtype=np.float32)
    return a


def get_solutions(x, w, stride=1, padding=0, dilation=1, groups=1):
    """The ranking convsel would run from, best first, without running
    anything (x and w may be arrays or their shapes, N C H W and K C R S)."""
    h = _handle()
    p = _plan(h, _shaped(x), _shaped(w), stride, padding, dilation, groups, "auto")
    sols = (_lib.Solution * 64)()
    count = ctypes.c_int()
    _check(_lib.get_solutions(h.ptr, *p.descs, 64, sols, ctypes.byref(count)), h)
    return [Solution(s.name.decode(), s.solver, s.time_ms if s.time_ms >= 0 else None,
                     _lib.SOURCES[s.source] if 0 <= s.source < len(_lib.SOURCES) else "unknown",
                     s.workspace_bytes, bool(s.flags & _lib.SOLUTION_EXTRAPOLATED))
            for s in sols[:count.value]]


def find(x, w, stride=1, padding=0, dilation=1, groups=1):
    """Times every applicable solver on x and w (exhaustive find) and
    returns them fastest first."""
    h = _handle()
    p = _plan(h, x, w, stride, padding, dilation, groups, "auto")
    y = _new_output(p)
    res = (_lib.PerfResult * 64)()
    count = ctypes.c_int()
    xd, wd, cd, yd = p.descs
    _check(_lib.find_forward(h.ptr, xd, _ptr(x), wd, _ptr(w), cd, yd, _ptr(y), res, 64,
                             ctypes.byref(count)), h)
    return [Measured(r.name.decode(), r.solver, r.time_ms, r.time_min_ms, r.time_max_ms, r.runs)
            for r in res[:count.value]]


def problem_key(x, w, stride=1, padding=0, dilation=1, groups=1):
    """The problem's canonical key, the one databases use (x and w may be
    arrays or their shapes)."""
    h = _handle()
    p = _plan(h, _shaped(x), _shaped(w), stride, padding, dilation, groups, "auto")
    buf = ctypes.create_string_buffer(512)
    _check(_lib.problem_key(h.ptr, *p.descs, buf, len(buf), None), h)
    return buf.value.decode()


try:
    from numpy import ndarray as _np_ndarray
except ImportError:  # torch tensors only
    class _np_ndarray:  # noqa: N801 - a type nothing is an instance of
        pass

"""convsel's NumPy-level API: every solver against the float64 reference,
memory orders, out=, the rankings and switches, and bad arguments."""
import ctypes
import threading

import pytest

from conftest import np, reference_conv, rel_err

import convsel
from convsel import _lib

# docs/solvers.md, "tolerance"
TOLERANCE = {"winograd_f4x3": 1e-3, "onednn_winograd": 1e-3, "reference": 1e-6,
             "depthwise": 1e-5}

PROBLEMS = [  # (x shape, w shape, stride, pad, dilation, groups)
    ((2, 8, 13, 11), (16, 8, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 16, 9, 9), (8, 16, 1, 1), (1, 1), (0, 0), (1, 1), 1),
    ((1, 16, 10, 9), (8, 16, 1, 1), (2, 2), (0, 0), (1, 1), 1),
    ((2, 8, 12, 12), (8, 4, 3, 3), (1, 1), (1, 1), (1, 1), 2),
    ((1, 8, 15, 17), (8, 1, 3, 3), (2, 1), (1, 1), (1, 1), 8),
    ((1, 3, 20, 18), (4, 3, 5, 3), (2, 1), (2, 0), (2, 1), 1),
    ((1, 32, 16, 16), (32, 32, 3, 3), (1, 1), (1, 1), (1, 1), 1),
]


def _arrays(rng, xs, ws):
    return (rng.standard_normal(xs).astype(np.float32),
            rng.standard_normal(ws).astype(np.float32))


def test_every_solver_matches_the_reference(rng):
    ran, cpu_lacks = set(), set()
    for xs, ws, stride, pad, dil, g in PROBLEMS:
        x, w = _arrays(rng, xs, ws)
        want = reference_conv(x, w, stride, pad, dil, g)
        for name in convsel.solvers():
            try:
                y = convsel.conv2d(x, w, stride, pad, dil, g, solver=name)
            except ValueError as e:
                assert "solver" in str(e)  # not applicable here, and it says so
                if "needs AVX-512" in str(e):
                    cpu_lacks.add(name)
                continue
            ran.add(name)
            assert y.shape == want.shape
            assert rel_err(y, want) <= TOLERANCE.get(name, 1e-4), (name, xs, ws)
        y = convsel.conv2d(x, w, stride, pad, dil, g)  # auto
        assert rel_err(y, want) <= 1e-3
    # only oneDNN's Winograd may be missing, and only on a CPU without AVX-512
    # (oneDNN 2.6 has it for no other): the refusal said so
    assert cpu_lacks - ran <= {"onednn_winograd"}
    never = set(convsel.solvers()) - ran
    assert never == cpu_lacks - ran, f"never ran: {never}"


def test_channels_last_views_and_out(rng):
    x, w = _arrays(rng, (2, 8, 10, 12), (6, 8, 3, 3))
    want = reference_conv(x, w, pad=(1, 1))
    x_nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    w_krsc = np.ascontiguousarray(w.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    y = convsel.conv2d(x_nhwc, w_krsc, padding=1)
    assert y.transpose(0, 2, 3, 1).flags["C_CONTIGUOUS"]  # the output keeps x's order
    assert rel_err(y, want) <= 1e-4
    out = np.full((2, 6, 10, 12), np.nan, dtype=np.float32)
    assert convsel.conv2d(x, w, padding=1, out=out) is out
    assert rel_err(out, want) <= 1e-4
    # views that keep the NCHW order (a batch slice, every other row) need no copy
    big = rng.standard_normal((4, 8, 20, 12)).astype(np.float32)
    for view in (big[1:3, :, :10], big[1:3, :, ::2]):
        y = convsel.conv2d(view, w, padding=1)
        assert rel_err(y, reference_conv(view, w, pad=(1, 1))) <= 1e-4


def test_repeated_calls_take_new_data(rng):
    """Plans are reused by shape; the data must still be each call's own."""
    x, w = _arrays(rng, (1, 4, 8, 8), (4, 4, 3, 3))
    for _ in range(3):
        x2, w2 = _arrays(rng, (1, 4, 8, 8), (4, 4, 3, 3))
        assert rel_err(convsel.conv2d(x2, w2, padding=1),
                       reference_conv(x2, w2, pad=(1, 1))) <= 1e-4
    y = convsel.conv2d(x, w, padding=1)
    assert rel_err(y, reference_conv(x, w, pad=(1, 1))) <= 1e-4


def test_padding_strings(rng):
    x, w = _arrays(rng, (1, 3, 9, 9), (2, 3, 3, 5))
    assert rel_err(convsel.conv2d(x, w, padding="same"),
                   reference_conv(x, w, pad=(1, 2))) <= 1e-4
    assert convsel.conv2d(x, w, padding="valid").shape == (1, 2, 7, 5)
    with pytest.raises(ValueError, match="unevenly"):
        convsel.conv2d(x, np.ones((2, 3, 2, 2), np.float32), padding="same")
    with pytest.raises(ValueError, match="stride 1"):
        convsel.conv2d(x, w, stride=2, padding="same")


def test_rankings_and_keys():
    sols = convsel.get_solutions((1, 64, 56, 56), (64, 64, 3, 3), padding=1)
    assert sols and len({s.name for s in sols}) == len(sols)
    assert all(s.name in convsel.solvers() for s in sols)
    assert all(s.source in ("database", "model", "rules", "measured") for s in sols)
    assert "reference" not in [s.name for s in sols][:1]
    key = convsel.problem_key((1, 64, 56, 56), (64, 64, 3, 3), padding=1)
    assert key.startswith("64-56-56-3x3-64-56-56-1-1x1-1x1-1x1-g1-NCHW"), key
    x = np.ones((1, 4, 6, 6), np.float32)
    w = np.ones((4, 4, 3, 3), np.float32)
    found = convsel.find(x, w, padding=1)
    assert found and all(m.time_ms > 0 and m.runs >= 1 for m in found)
    assert found == sorted(found, key=lambda m: m.time_ms)


def test_switches():
    assert convsel.get_find_mode() == "immediate"
    convsel.set_find_mode("hybrid")
    try:
        assert convsel.get_find_mode() == "hybrid"
        x = np.ones((1, 4, 6, 6), np.float32)
        w = np.ones((4, 4, 3, 3), np.float32)
        assert rel_err(convsel.conv2d(x, w, padding=1), reference_conv(x, w, pad=(1, 1))) < 1e-4
    finally:
        convsel.set_find_mode("immediate")
    convsel.set_num_threads(1)
    assert convsel.get_num_threads() == 1
    convsel.set_num_threads(2)
    for bad, err in ((0, ValueError), (257, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(err, match="num_threads"):
            convsel.set_num_threads(bad)
    with pytest.raises(ValueError, match="immediate, hybrid, exhaustive"):
        convsel.set_find_mode("fast")
    with pytest.raises(TypeError, match="constant"):
        convsel.set_weights_constant(1)
    assert isinstance(convsel.model_status(), str) and convsel.model_status()
    assert isinstance(convsel.database_status(), str) and convsel.database_status()
    assert convsel.version() == "0.1.0"


@pytest.mark.parametrize("call, err, words", [
    (lambda x, w: convsel.conv2d(x.astype(np.float64), w), TypeError, "x has dtype float64"),
    (lambda x, w: convsel.conv2d(x, w.astype(np.float16)), TypeError, "w has dtype float16"),
    (lambda x, w: convsel.conv2d(x[0], w), ValueError, "x has 3 dimensions"),
    (lambda x, w: convsel.conv2d(x, np.ones((4, 2, 3, 3), np.float32)), ValueError,
     "input channels"),
    (lambda x, w: convsel.conv2d(x, w, groups=3), ValueError, "groups = 3"),
    (lambda x, w: convsel.conv2d(x, w, groups=0), ValueError, "groups"),
    (lambda x, w: convsel.conv2d(x, w, stride=0), ValueError, "stride"),
    (lambda x, w: convsel.conv2d(x, w, padding=-1), ValueError, "padding"),
    (lambda x, w: convsel.conv2d(x, w, padding="full"), ValueError, "padding"),
    (lambda x, w: convsel.conv2d(x, w, stride=(1, 2, 3)), TypeError, "stride"),
    (lambda x, w: convsel.conv2d(x, w, dilation=True), TypeError, "dilation"),
    (lambda x, w: convsel.conv2d(x, w, solver="fastest"), ValueError, "solver = 'fastest'"),
    (lambda x, w: convsel.conv2d(x, w, solver=3), TypeError, "solver"),
    (lambda x, w: convsel.conv2d(x, w, solver="gemm_1x1"), ValueError, "gemm_1x1"),
    (lambda x, w: convsel.conv2d(x.transpose(0, 1, 3, 2), w), ValueError, "x: strides"),
    (lambda x, w: convsel.conv2d(np.broadcast_to(x[:, :1], x.shape), w), ValueError, "x: strides"),
    (lambda x, w: convsel.conv2d(x[:, :, ::-1], w), ValueError, "x: strides"),
    (lambda x, w: convsel.conv2d(x, w.transpose(0, 1, 3, 2)), ValueError, "w: strides"),
    (lambda x, w: convsel.conv2d(x, np.ones((4, 4, 9, 9), np.float32)), ValueError, "convsel"),
    (lambda x, w: convsel.conv2d(x.tolist(), w), TypeError, "x: a torch tensor or a NumPy"),
    (lambda x, w: convsel.conv2d(x, "w"), TypeError, "w: a torch tensor or a NumPy"),
    (lambda x, w: convsel.conv2d(x, w, out=np.empty((1, 4, 8, 8), np.float32)), ValueError,
     "out has shape"),
    (lambda x, w: convsel.conv2d(x, w, out=np.empty((1, 6, 6, 4), np.float32).transpose(0, 3, 1, 2)),
     ValueError, "out must be packed"),
    (lambda x, w: convsel.conv2d(np.empty((0, 4, 8, 8), np.float32), w), ValueError, ">= 1"),
    (lambda x, w: convsel.get_solutions((1, 4, 8), (4, 4, 3, 3)), ValueError, "4 ints"),
])
def test_bad_arguments_name_what_is_wrong(call, err, words):
    x = np.ones((1, 4, 8, 8), np.float32)
    w = np.ones((4, 4, 3, 3), np.float32)
    with pytest.raises(err) as info:
        call(x, w)
    assert words in str(info.value)


def test_library_errors_carry_status_and_message():
    h = convsel._handle()
    status = _lib.set_num_threads(h.ptr, 0)
    assert status == _lib.BAD_PARAM
    with pytest.raises(convsel.ConvselError) as info:
        convsel._check(status, h)
    e = info.value
    assert e.status == _lib.BAD_PARAM and e.status_name == "bad parameter"
    assert "num_threads" in e.message and "bad parameter" in str(e)


def test_threads_have_their_own_handles(rng):
    """Eight threads, started together, each on its own problem: every result
    right, and eight distinct C handles."""
    barrier = threading.Barrier(8)
    handles, errors = set(), []
    lock = threading.Lock()

    def work(i):
        try:
            local = np.random.default_rng(i)
            x = local.standard_normal((1, 4 + i, 9, 9)).astype(np.float32)
            w = local.standard_normal((3, 4 + i, 3, 3)).astype(np.float32)
            barrier.wait()
            for _ in range(20):
                y = convsel.conv2d(x, w, padding=1)
            assert rel_err(y, reference_conv(x, w, pad=(1, 1))) <= 1e-4
            with lock:
                handles.add(convsel._handle().ptr.value)
        except Exception as e:  # reported below, with the thread's index
            errors.append(f"thread {i}: {e!r}")

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert len(handles) == 8


def test_calls_release_the_gil():
    """ctypes drops the GIL around foreign calls: a Python thread keeps
    counting while the main thread is inside one long convolution, at
    about the rate it counts while the main thread sleeps. Were the GIL
    held, it would count for one switch interval (5 ms) of the ~300 ms."""
    import time
    x = np.ones((1, 64, 64, 64), np.float32)
    w = np.ones((64, 64, 3, 3), np.float32)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)

    convsel.set_num_threads(1)  # a core left for the counter
    t = threading.Thread(target=count)
    t.start()
    try:
        convsel.conv2d(x, w, padding=1, solver="reference")  # warm: the plan is made
        before, t0 = len(ticks), time.perf_counter()
        time.sleep(0.2)
        free_rate = (len(ticks) - before) / (time.perf_counter() - t0)
        before, t0 = len(ticks), time.perf_counter()
        convsel.conv2d(x, w, padding=1, solver="reference")  # ~0.3 GFLOP in one C call
        call_rate = (len(ticks) - before) / (time.perf_counter() - t0)
    finally:
        done.set()
        t.join()
        convsel.set_num_threads(2)
    assert call_rate > 0.25 * free_rate, (call_rate, free_rate)


def test_library_path_that_is_not_a_file():
    """CONVSEL_LIBRARY naming a FIFO or a directory: ImportError naming it,
    at once (dlopen would block on the FIFO)."""
    import os
    import subprocess
    import sys
    import tempfile
    from conftest import PYTHON_DIR
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "lib.so")
        os.mkfifo(fifo)
        for path, what in ((fifo, "is a FIFO, not a regular file"),
                           (d, "is a directory, not a regular file"),
                           (os.path.join(d, "none.so"), "does not exist")):
            env = dict(os.environ, CONVSEL_LIBRARY=path, PYTHONPATH=PYTHON_DIR)
            p = subprocess.run([sys.executable, "-c", "import convsel"], env=env,
                               capture_output=True, text=True, timeout=30)
            assert p.returncode == 1 and "ImportError" in p.stderr and f"{path}: {what}" in \
                p.stderr, p.stderr

"""Shared set-up: the package from this checkout (or CONVSEL_LIBRARY's
library), a reference convolution in float64 NumPy, and skips that name
what is missing."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
REPO = os.path.dirname(PYTHON_DIR)
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

np = pytest.importorskip("numpy", reason="python3-numpy is not installed")


def reference_conv(x, w, stride=(1, 1), pad=(0, 0), dilation=(1, 1), groups=1):
    """Cross-correlation in float64, tap by tap: the definition, nothing clever."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    xp = np.zeros((n, c, h + 2 * pad[0], wd + 2 * pad[1]))
    xp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + wd] = x
    oh = (h + 2 * pad[0] - dilation[0] * (r - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dilation[1] * (s - 1) - 1) // stride[1] + 1
    y = np.zeros((n, k, oh, ow))
    kg = k // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(r):
            for j in range(s):
                patch = xs[:, :, i * dilation[0]:i * dilation[0] + stride[0] * (oh - 1) + 1:stride[0],
                           j * dilation[1]:j * dilation[1] + stride[1] * (ow - 1) + 1:stride[1]]
                y[:, g * kg:(g + 1) * kg] += np.einsum("nchw,kc->nkhw", patch,
                                                       w[g * kg:(g + 1) * kg, :, i, j])
    return y


def rel_err(got, want):
    got = np.asarray(got, dtype=np.float64)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def pytest_sessionfinish(session, exitstatus):
    """Every test skipped is not a pass: exit 77, which ctest reports as
    skipped (SKIP_RETURN_CODE), with pytest's reasons above it (-rs)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter else {}
    if exitstatus == 0 and stats.get("skipped") and not stats.get("passed"):
        session.exitstatus = 77


@pytest.fixture(scope="session")
def any_cpu_models(tmp_path_factory):
    """The shipped model (trained for AVX-512) under every ISA's name, each
    metadata's target rewritten to its name, so that the library loads it on
    any CPU: for tests of how models are loaded and cached, not of what they
    rank."""
    shipped = os.path.join(REPO, "models")
    d = tmp_path_factory.mktemp("models")
    with open(os.path.join(shipped, "avx512.tn.model"), "rb") as f:
        net = f.read()
    with open(os.path.join(shipped, "avx512_metadata.tn.model"), encoding="utf-8") as f:
        meta = f.read()
    assert '"target":\t"avx512"' in meta
    for isa in ("generic", "avx2", "avx512"):
        (d / f"{isa}.tn.model").write_bytes(net)
        (d / f"{isa}_metadata.tn.model").write_text(
            meta.replace('"target":\t"avx512"', f'"target":\t"{isa}"'), encoding="utf-8")
    return str(d)

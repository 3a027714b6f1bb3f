"""python3 -m convsel.bench_networks on one small model: the lines it
promises, outputs that agree with torch's, and its flag checks."""
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="python3-torch is not installed")
pytest.importorskip("torchvision", reason="python3-torchvision is not installed")

from conftest import PYTHON_DIR  # noqa: E402


def bench(*args):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-m", "convsel.bench_networks", *args], env=env,
                          capture_output=True, text=True, timeout=600)


def test_one_model_end_to_end():
    p = bench("--models", "shufflenet_v2_x0_5", "--batches", "1,2", "--reps", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = re.findall(r"^network shufflenet_v2_x0_5 batch (\d+): torch ([\d.]+) ms, convsel "
                       r"([\d.]+) ms, speedup ([\d.]+), max rel err ([\d.e+-]+)", p.stdout, re.M)
    assert [b for b, *_ in lines] == ["1", "2"], p.stdout
    for _, t, c, s, e in lines:
        assert float(t) > 0 and float(c) > 0
        assert abs(float(s) - float(t) / float(c)) < 0.02
        assert float(e) < 1e-3
    m = re.search(r"^layers: shufflenet_v2_x0_5: (\d+) checked, worst rel err ([\d.e+-]+)",
                  p.stdout, re.M)
    assert m and int(m.group(1)) == 56 and float(m.group(2)) < 1e-3, p.stdout
    assert re.search(r"^geomean speedup = \d+\.\d\d$", p.stdout, re.M), p.stdout


@pytest.mark.parametrize("args, words", [
    (["--models", "resnet5"], "has no model 'resnet5'"),
    (["--batches", "1,x"], "comma-separated integers"),
    (["--batches", "0"], "must be >= 1"),
    (["--threads", "0"], "must be in 1..256"),
    (["--reps", "0"], "must be >= 1"),
])
def test_bad_flags(args, words):
    p = bench(*args)
    assert p.returncode == 2 and words in p.stderr, p.stderr


def test_constant_weights_arm_agrees_with_torch():
    p = bench("--models", "shufflenet_v2_x0_5", "--batches", "1", "--reps", "1",
              "--constant-weights")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "constant_weights=True" in p.stdout
    m = re.search(r"^network shufflenet_v2_x0_5 batch 1: .* max rel err ([\d.e+-]+)", p.stdout,
                  re.M)
    assert m and float(m.group(1)) < 1e-3, p.stdout

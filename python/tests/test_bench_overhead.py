"""python3 -m convsel.bench_overhead prints its figures (not a timed test)."""
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="python3-torch is not installed")

from conftest import PYTHON_DIR  # noqa: E402


def run(*args):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-m", "convsel.bench_overhead", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_prints_the_overhead_of_each_arm():
    p = run("--rounds", "2", "--calls", "20")
    assert p.returncode == 0, p.stderr
    for arm in ("torch", "numpy", "convsel.torch", "bare C call", "ctypes call"):
        assert re.search(rf"^ *{re.escape(arm)}: +[\d.]+ us", p.stdout, re.M), p.stdout
    assert re.search(r"^overhead per call: torch -?[\d.]+ us, numpy -?[\d.]+ us, convsel.torch "
                     r"-?[\d.]+ us", p.stdout, re.M), p.stdout


@pytest.mark.parametrize("args", [["--shape", "1,2,3"], ["--calls", "0"]])
def test_bad_flags(args):
    p = run(*args)
    assert p.returncode == 2 and "--" in p.stderr

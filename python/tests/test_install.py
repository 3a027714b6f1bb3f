"""`pip install --no-build-isolation ./python` into a fresh virtual
environment (Debian's pip refuses the system one: PEP 668), then a
convolution from outside the checkout with the library the install copied."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import PYTHON_DIR  # noqa: E402


def test_pip_install_into_a_venv(tmp_path):
    pytest.importorskip("ensurepip", reason="python3-venv is not installed")
    pytest.importorskip("setuptools", reason="python3-setuptools is not installed")
    import convsel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, capture_output=True)
    py = str(venv / "bin" / "python")
    src = tmp_path / "src"  # a copy: the in-tree build leaves build/ and egg-info behind
    shutil.copytree(PYTHON_DIR, src, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "tests"))
    env = dict(os.environ, CONVSEL_LIBRARY=os.path.realpath(convsel.library_path))
    env.pop("PYTHONPATH", None)
    p = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                        "--no-index", "--quiet", str(src)], env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    env.pop("CONVSEL_LIBRARY")  # the installed package must find its own copy
    code = ("import convsel, numpy as np; "
            "y = convsel.conv2d(np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 3, 3), np.float32)); "
            "print(convsel.library_path); print(float(y.sum()))")
    p = subprocess.run([py, "-c", code], env=env, cwd=str(tmp_path), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lib, total = p.stdout.split()
    assert lib.startswith(str(venv)) and lib.endswith("convsel/libconvsel.so")
    assert float(total) == 27 * 18  # 3 x 3 x 3 outputs, each a sum of 2 x 3 x 3 ones


def test_install_without_a_library_says_what_to_do(tmp_path):
    pytest.importorskip("setuptools", reason="python3-setuptools is not installed")
    src = tmp_path / "src"
    shutil.copytree(PYTHON_DIR, src, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "tests"))
    env = dict(os.environ, CONVSEL_LIBRARY=str(tmp_path / "missing.so"))
    p = subprocess.run([sys.executable, str(src / "setup.py"), "build", "--build-base",
                        str(tmp_path / "b")], cwd=str(src), env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode != 0
    assert "missing.so does not exist: build the library first" in p.stdout + p.stderr

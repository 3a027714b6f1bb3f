"""bench/torch_compare.py on two small problems: its lines and closing
figures, outputs compared, and problem files refused by line and column."""
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="python3-torch is not installed")

from conftest import PYTHON_DIR, REPO  # noqa: E402

SCRIPT = os.path.join(REPO, "bench", "torch_compare.py")
HEADER = "name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups\n"


def run(tmp_path, text, *args):
    csv = tmp_path / "p.csv"
    csv.write_text(text)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, SCRIPT, "--problems", str(csv), *args], env=env,
                          capture_output=True, text=True, timeout=600)


def test_two_problems(tmp_path):
    p = run(tmp_path, "# a comment\n" + HEADER + "a,1,8,12,12,8,3,3,1,1,1,1,1,1,1\n\n"
            "dw,1,16,10,10,16,3,3,1,1,2,2,1,1,16\n", "--rounds", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = re.findall(r"^problem (\w+): torch ([\d.]+) ms .*, oracle ([\d.]+) ms \((\w+)\).*"
                       r"immediate ([\d.]+) ms \((\w+)\).*oracle/torch ([\d.]+), immediate/torch "
                       r"([\d.]+), max rel err ([\d.e+-]+)$", p.stdout, re.M)
    assert [l[0] for l in lines] == ["a", "dw"], p.stdout
    for name, t, o, oracle, i, picked, ro, ri, err in lines:
        assert abs(float(ro) - float(t) / float(o)) < 0.02 * float(ro) + 0.01
        assert float(err) <= 1e-3 and oracle != "reference"
    assert re.search(r"^geomean oracle/torch = \d+\.\d\d \(2 problems\)$", p.stdout, re.M)
    assert re.search(r"^geomean immediate/torch = \d+\.\d\d \(2 problems\)$", p.stdout, re.M)
    assert re.search(r"^torch faster than convsel's oracle on \d of 2 problems", p.stdout, re.M)


@pytest.mark.parametrize("text, words", [
    ("name,n,c\na,1,2\n", "the header lacks h, w, k"),
    (HEADER + "a,1,8,12,12,8,3,3,1,1,1,1,1,1\n", "line 2: 14 fields, the header has 15"),
    (HEADER + "a,1,8,12,x,8,3,3,1,1,1,1,1,1,1\n", "line 2, column w: 'x' is not an integer"),
    (HEADER + "\n# c\na,1,8,12,12,0,3,3,1,1,1,1,1,1,1\n", "line 4, column k: 0 is out of range"),
    (HEADER, "no problems"),
])
def test_bad_problem_files(tmp_path, text, words):
    p = run(tmp_path, text)
    assert p.returncode == 2 and words in p.stderr, p.stderr


def test_special_files_are_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    for path, what in ((fifo, "fifo.csv: is a FIFO, not a regular file"),
                       (tmp_path / "sub", "no .csv files")):  # a directory: the corpus form
        os.makedirs(tmp_path / "sub", exist_ok=True)
        p = subprocess.run([sys.executable, SCRIPT, "--problems", str(path)], env=env,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and what in p.stderr, p.stderr

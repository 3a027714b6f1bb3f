"""bench/compare_retime.py: its counts and ratios on two small databases
whose answers are known, and refusals that name the file that is wrong."""
import os
import sqlite3
import subprocess
import sys

from conftest import REPO

SCRIPT = os.path.join(REPO, "bench", "compare_retime.py")


def make_db(path, times, kinds):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE perf(problem TEXT, solver TEXT, median_ms REAL)")
    db.execute("CREATE TABLE origin(problem TEXT, network TEXT, family TEXT, kind TEXT)")
    for problem, solvers in times.items():
        for solver, ms in solvers.items():
            db.execute("INSERT INTO perf VALUES (?, ?, ?)", (problem, solver, ms))
    for problem, kind in kinds.items():
        db.execute("INSERT INTO origin VALUES (?, 'net', 'fam', ?)", (problem, kind))
    db.commit()
    db.close()


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_counts_and_ratios(tmp_path):
    kinds = {"a": "layer", "b": "layer"}  # "c" has no origin: a sample
    make_db(tmp_path / "before.db", {"a": {"dw": 4.0, "dnn": 1.0}, "b": {"dw": 2.0, "dnn": 1.0},
                                     "c": {"dw": 1.0, "dnn": 2.0}, "x": {"dw": 9.0}}, kinds)
    make_db(tmp_path / "after.db", {"a": {"dw": 1.0, "dnn": 2.0}, "b": {"dw": 1.0, "dnn": 1.0},
                                    "c": {"dw": 1.0, "dnn": 2.0}, "x": {"dw": 1.0}}, kinds)
    (tmp_path / "p.csv").write_text("name,n\na,1\nb,1\nc,1\n")  # "x" was not re-timed
    p = run(tmp_path / "before.db", tmp_path / "after.db", tmp_path / "p.csv", "dw", "dnn")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "corpus layers: 2 problems"
    # before: dw/fastest 4 and 2 (geomean 2.83), dnn/dw 0.25 and 0.5
    assert lines[1] == "  before: dw fastest on 0, dw/fastest geomean 2.83 max 4.00; dnn/dw geomean 0.35"
    # after: dw is the fastest on both (a tie counts), dnn/dw 2 and 1
    assert lines[2] == "  after: dw fastest on 2, dw/fastest geomean 1.00 max 1.00; dnn/dw geomean 1.41"
    assert lines[3].startswith("  oracle before/after geomean 1.00")
    assert lines[4] == "all: 3 problems"
    assert lines[5].startswith("  before: dw fastest on 1,")


def test_refusals(tmp_path):
    p = run("--help")
    assert p.returncode == 0 and "BEFORE.db AFTER.db PROBLEMS.csv SOLVER RIVAL" in p.stdout
    assert run("a", "b").returncode == 2
    (tmp_path / "p.csv").write_text("name\na\n")
    (tmp_path / "junk.db").write_text("not sqlite at all, and long enough to be read as a header")
    p = run(tmp_path / "junk.db", tmp_path / "junk.db", tmp_path / "p.csv", "dw", "dnn")
    assert p.returncode == 1 and "junk.db: not a convsel performance database" in p.stderr
    p = run(tmp_path / "junk.db", tmp_path / "junk.db", tmp_path / "missing.csv", "dw", "dnn")
    assert p.returncode == 1 and "missing.csv: cannot read the problems' names" in p.stderr

"""bench/ab_conv.sh: its per-case lines (medians, ranges, old/new that is
their ratio), the alternating order, and refusals that name what is wrong."""
import os
import re
import subprocess

import pytest

from conftest import REPO

SCRIPT = os.path.join(REPO, "bench", "ab_conv.sh")
CLI = os.environ.get("CONVSEL_CLI")
pytestmark = pytest.mark.skipif(not CLI, reason="CONVSEL_CLI (the convsel binary) is not set: "
                                "run through ctest, which sets it")
CASES = ("# a comment\n\n"
         "small  -n 1 -c 4 -H 8 -W 8 -k 4 -y 3 -x 3 -S direct -i 3 --threads 1\n"
         "pw     -n 2 -c 8 -H 5 -W 5 -k 8 -y 1 -x 1 -p 0 -q 0 -S gemm_1x1 -i 3 --threads 1\n")
LINE = re.compile(r"^(\w+) +old +([\d.]+) ms \[([\d.]+)-([\d.]+)\]  new +([\d.]+) ms "
                  r"\[([\d.]+)-([\d.]+)\]  old/new +([\d.]+)$", re.M)


def run(*args):
    return subprocess.run(["bash", SCRIPT, *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_lines_and_ratio(tmp_path):
    cases = tmp_path / "cases.txt"
    cases.write_text(CASES)
    p = run(CLI, CLI, cases, 3)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = LINE.findall(p.stdout)
    assert [l[0] for l in lines] == ["small", "pw"], p.stdout
    for _, om, olo, ohi, nm, nlo, nhi, ratio in lines:
        om, olo, ohi, nm, nlo, nhi, ratio = map(float, (om, olo, ohi, nm, nlo, nhi, ratio))
        assert olo <= om <= ohi and nlo <= nm <= nhi and om > 0 and nm > 0
        assert abs(ratio - om / nm) <= 0.006 + 0.01 * ratio
    assert re.search(r"^# .* UTC, 3 rounds, load [\d.]+ at the start$", p.stdout, re.M)


def fake(tmp_path, label, ms):
    """A stand-in for convsel: logs its label and the case's first flag,
    and reports a fixed median."""
    path = tmp_path / label
    path.write_text(f"#!/bin/sh\necho {label} $3 >> {tmp_path / 'calls'}\n"
                    f"echo 'time      median {ms} ms (min {ms}, max {ms}, 1 iterations)'\n")
    path.chmod(0o755)
    return path


def test_order_alternates_and_ratio_is_exact(tmp_path):
    cases = tmp_path / "cases.txt"
    cases.write_text("a  -n 1\nb  -n 2\n")
    p = run(fake(tmp_path, "old", 2.0), fake(tmp_path, "new", 0.5), cases, 3)
    assert p.returncode == 0, p.stdout + p.stderr
    calls = (tmp_path / "calls").read_text().split("\n")[:-1]
    assert calls == ["old 1", "new 1", "old 2", "new 2",   # round 0: old first
                     "new 1", "old 1", "new 2", "old 2",   # round 1: new first
                     "old 1", "new 1", "old 2", "new 2"], calls
    lines = LINE.findall(p.stdout)
    assert [(l[0], l[1], l[4], l[7]) for l in lines] == [
        ("a", "2.0000", "0.5000", "4.00"), ("b", "2.0000", "0.5000", "4.00")], p.stdout


def test_failing_case_is_named(tmp_path):
    cases = tmp_path / "cases.txt"
    cases.write_text("bad  -n 1 -c 4 -H 8 -W 8 -k 4 -S no_such_solver\n")
    p = run(CLI, CLI, cases, 1)
    assert p.returncode == 1 and "bad (old): convsel conv failed" in p.stderr, p.stderr


@pytest.mark.parametrize("args, words", [
    (("/nonexistent/convsel", "CLI", "CASES"), "/nonexistent/convsel: not an executable"),
    (("CLI", "CLI", "/nonexistent/cases"), "/nonexistent/cases: cannot read the cases"),
    (("CLI", "CLI", "CASES", "0"), "ROUNDS must be a positive integer, not '0'"),
    (("CLI", "CLI", "CASES", "x"), "ROUNDS must be a positive integer, not 'x'"),
])
def test_refusals(tmp_path, args, words):
    cases = tmp_path / "cases.txt"
    cases.write_text(CASES)
    args = [CLI if a == "CLI" else str(cases) if a == "CASES" else a for a in args]
    p = run(*args)
    assert p.returncode == 2 and words in p.stderr, p.stderr


def test_help():
    p = run("--help")
    assert p.returncode == 0 and "OLD_BINARY NEW_BINARY CASES [ROUNDS]" in p.stdout, p.stdout
    assert p.stdout.rstrip().endswith("verified by its tests, not here)."), p.stdout  # whole
    assert "set -euo" not in p.stdout, p.stdout
    p = run()
    assert p.returncode == 2 and "expected OLD_BINARY NEW_BINARY CASES [ROUNDS], got 0" in p.stderr

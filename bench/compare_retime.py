#!/usr/bin/python3
"""compare_retime.py -- one solver before and after a change, on the problems
a re-tune timed again: two copies of a performance database (before the
change, and after `convsel tune --problems CSV --remeasure-before T`), the
CSV of problems tune was given, the solver changed and its rival.

    bench/compare_retime.py BEFORE.db AFTER.db PROBLEMS.csv SOLVER RIVAL

Prints, for the corpus's layers (problems with an origin that is not a
sample) and for all of them: on how many SOLVER is the fastest, its time
over the fastest's (geomean, max), RIVAL's time over SOLVER's (geomean),
and the fastest time before over after (geomean, p10, p90)."""
import collections
import csv
import math
import sqlite3
import sys


def load(path, keys):
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        times = collections.defaultdict(dict)
        for problem, solver, ms in db.execute("SELECT problem, solver, median_ms FROM perf"):
            if problem in keys:
                times[problem][solver] = ms
        kind = dict(db.execute("SELECT problem, kind FROM origin"))
    except sqlite3.Error as e:
        sys.exit(f"compare_retime.py: {path}: not a convsel performance database ({e})")
    return times, kind


def geomean(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def main(argv):
    if len(argv) != 6 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) == 2 else 2
    before_db, after_db, problems, solver, rival = argv[1:]
    try:
        with open(problems, newline="") as f:
            keys = {row["name"] for row in csv.DictReader(f)}
    except (OSError, KeyError) as e:
        sys.exit(f"compare_retime.py: {problems}: cannot read the problems' names ({e})")
    before, kind = load(before_db, keys)
    after, _ = load(after_db, keys)
    for name, keep in (("corpus layers", lambda p: kind.get(p, "sample") != "sample"),
                       ("all", lambda p: True)):
        ps = [p for p in keys if keep(p) and solver in before.get(p, {}) and solver in after.get(p, {})]
        print(f"{name}: {len(ps)} problems")
        if not ps:
            continue
        for label, t in (("before", before), ("after", after)):
            ratio = [t[p][solver] / min(t[p].values()) for p in ps]
            rivals = [t[p][rival] / t[p][solver] for p in ps if rival in t[p]]
            fastest = sum(1 for r in ratio if r == 1.0)
            print(f"  {label}: {solver} fastest on {fastest}, {solver}/fastest geomean "
                  f"{geomean(ratio):.2f} max {max(ratio):.2f}; {rival}/{solver} geomean {geomean(rivals):.2f}")
        oracle = sorted(min(before[p].values()) / min(after[p].values()) for p in ps)
        print(f"  oracle before/after geomean {geomean(oracle):.2f}, p10 {oracle[len(oracle) // 10]:.2f} "
              f"p90 {oracle[len(oracle) * 9 // 10]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

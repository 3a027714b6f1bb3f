#!/usr/bin/python3
"""bench/torch_compare.py --problems CSV: PyTorch's conv2d beside convsel's
on the same problems, in the same process, interleaved per problem.

For every problem of a problem list (the suite's CSV, a corpus file, or the
corpus directory: name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,
dil_w,groups in any order, '#' comments) this times, on one set of random
tensors (NCHW, KCRS, float32):
  torch      torch.nn.functional.conv2d
  immediate  convsel.conv2d, solver 'auto' (what a user gets)
  <solver>   convsel.conv2d with each applicable solver but the reference
in ROUNDS rounds, each arm once per round, in a new (seeded) order every
round; a call shorter than 2 ms repeats within its slot. The oracle is the
solver with the lowest median. Every convsel output is compared with
torch's (max|y - y_torch| / max|y_torch|, at most 1e-3: the loosest stated
solver tolerance). Prints one line per problem, then

    geomean oracle/torch = X.XX (N problems)
    geomean immediate/torch = X.XX (N problems)

(ratios of torch's time to convsel's: above 1, convsel is faster) and the
problems where torch is faster than convsel's oracle.

Both use THREADS threads (default 2). Run it on a quiet machine; it prints
the load average before and after. /usr/bin/python3 (Debian's, with torch).
"""
import argparse
import csv
import math
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
from convsel import _files  # noqa: E402 - the package's one way to open a file

COLUMNS = ("name", "n", "c", "h", "w", "k", "r", "s", "pad_h", "pad_w", "stride_h",
           "stride_w", "dil_h", "dil_w", "groups")
TOLERANCE = 1e-3


def read_problems(path):
    """The problem-list format of src/tune/problem_list.h; errors name the
    file, line and column."""
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".csv"))
        if not files:
            raise ValueError(f"{path}: no .csv files")
        rows = []
        for f in files:
            rows += read_problems(f)
        return rows
    rows, header = [], None
    with _files.open_regular(path, newline="") as fh:
        lines = [(i + 1, line) for i, line in enumerate(fh)
                 if line.strip() and not line.startswith("#")]
    for (lineno, _), rec in zip(lines, csv.reader(line for _, line in lines)):
        if header is None:
            header = rec
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise ValueError(f"{path} line {lineno}: the header lacks {', '.join(missing)}")
            continue
        if len(rec) != len(header):
            raise ValueError(f"{path} line {lineno}: {len(rec)} fields, the header has "
                             f"{len(header)}")
        row = dict(zip(header, rec))
        for c in COLUMNS[1:]:
            try:
                row[c] = int(row[c])
            except ValueError:
                raise ValueError(f"{path} line {lineno}, column {c}: {row[c]!r} is not an "
                                 f"integer") from None
            if row[c] < (0 if c.startswith("pad") else 1):
                raise ValueError(f"{path} line {lineno}, column {c}: {row[c]} is out of range")
        row["where"] = f"{os.path.basename(path)}:{lineno}"
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no problems")
    return rows


def gflop(p, oh, ow):
    return 2.0 * p["n"] * p["k"] * oh * ow * (p["c"] // p["groups"]) * p["r"] * p["s"] / 1e9


# Between arms: the last arm's spinning threads (OpenMP's, torch's) go to
# sleep before the next starts. Without it the arm after torch read up to
# 6x slow, and torch after convsel's oneDNN arms up to 9x (rn50_conv1:
# 1.0 and 9.0 ms in two runs).
SETTLE_S = 0.01


def time_arms(arms, rounds):
    """arms: name -> callable. Returns name -> list of per-call ms."""
    reps = {}
    for name, fn in arms.items():  # warm-up, and how many calls fill 2 ms
        fn()
        t0 = time.perf_counter()
        fn()
        once = time.perf_counter() - t0
        reps[name] = max(1, min(1000, math.ceil(0.002 / max(once, 1e-7))))
    times = {name: [] for name in arms}
    names = list(arms)
    order = random.Random(len(names))  # the same orders in every run
    for r in range(rounds):
        # A new order each round: the arm after torch runs while torch's
        # threads still spin, and a fixed neighbour of torch (immediate,
        # in the reversed order of old) read 6x slow in some rounds
        # (rn50_res4_1x1_expand: 10.3-67.6 ms on the oracle's solver).
        order.shuffle(names)
        for name in names:
            time.sleep(SETTLE_S)
            fn, n = arms[name], reps[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            times[name].append((time.perf_counter() - t0) / n * 1e3)
    return times


def spread(v):
    s = sorted(v)
    return statistics.median(s), s[0], s[-1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", required=True,
                    help="a problem-list CSV, or a directory of them (the corpus)")
    ap.add_argument("--threads", type=int, default=2, help="threads for torch and convsel (2)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per problem (5)")
    ap.add_argument("--every", type=int, default=1,
                    help="take every K-th problem of the list (default 1: all)")
    ap.add_argument("--max-gflop", type=float, default=float("inf"),
                    help="skip problems above this many GFLOP (default: none)")
    ap.add_argument("--find-mode", choices=("immediate", "hybrid", "exhaustive"),
                    default="immediate", help="convsel's mode for the 'immediate' arm")
    args = ap.parse_args(argv)
    if not 1 <= args.threads <= 256:
        ap.error(f"--threads {args.threads}: must be in 1..256")
    if args.rounds < 1 or args.every < 1:
        ap.error("--rounds and --every must be >= 1")
    try:
        problems = read_problems(args.problems)[::args.every]
    except (OSError, ValueError) as e:
        ap.error(f"--problems: {e}")

    import torch
    import torch.nn.functional as F
    import convsel

    torch.set_num_threads(args.threads)
    convsel.set_num_threads(args.threads)
    convsel.set_find_mode(args.find_mode)
    solvers = [s for s in convsel.solvers() if s != "reference"]
    print(f"# torch {torch.__version__}, convsel {convsel.version()}, {args.threads} threads, "
          f"{args.rounds} rounds; immediate arm in {args.find_mode} mode; load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"# model: {convsel.model_status()}")
    print(f"# database: {convsel.database_status()}")
    ratios_oracle, ratios_immediate, torch_faster, failures = [], [], [], []
    torch.manual_seed(0)
    for p in problems:
        x = torch.randn(p["n"], p["c"], p["h"], p["w"])
        w = torch.randn(p["k"], p["c"] // p["groups"], p["r"], p["s"])
        kw = dict(stride=(p["stride_h"], p["stride_w"]), padding=(p["pad_h"], p["pad_w"]),
                  dilation=(p["dil_h"], p["dil_w"]), groups=p["groups"])
        if p["c"] % p["groups"] or p["k"] % p["groups"]:
            failures.append(f"{p['name']}: groups do not divide the channels")
            continue
        try:
            want = F.conv2d(x, w, **kw)
        except RuntimeError as e:
            failures.append(f"{p['name']}: torch refuses it: {e}")
            continue
        if gflop(p, want.shape[2], want.shape[3]) > args.max_gflop:
            continue
        arms = {"torch": lambda: F.conv2d(x, w, **kw)}
        arms["immediate"] = lambda: convsel.conv2d(x, w, **kw)
        errs = {"immediate": convsel.conv2d(x, w, **kw)}
        for s in solvers:
            try:
                errs[s] = convsel.conv2d(x, w, solver=s, **kw)
            except ValueError:
                continue  # not applicable
            arms[s] = (lambda s=s: convsel.conv2d(x, w, solver=s, **kw))
        scale = want.abs().max().clamp_min(1e-30)
        worst = max(((y - want).abs().max() / scale).item() for y in errs.values())
        times = time_arms(arms, args.rounds)
        med = {a: spread(v) for a, v in times.items()}
        oracle = min((a for a in arms if a not in ("torch", "immediate")),
                     key=lambda a: med[a][0])
        picked = convsel.get_solutions(x, w, **kw)[0].name if args.find_mode == "immediate" \
            else "auto"
        t, o, i = med["torch"][0], med[oracle][0], med["immediate"][0]
        ratios_oracle.append(t / o)
        ratios_immediate.append(t / i)
        if t < o:
            torch_faster.append((o / t, p["name"], p["where"], oracle))
        if worst > TOLERANCE:
            failures.append(f"{p['name']}: rel err {worst:.1e} > {TOLERANCE}")
        print(f"problem {p['name']}: torch {t:.4f} ms [{med['torch'][1]:.4f}-"
              f"{med['torch'][2]:.4f}], oracle {o:.4f} ms ({oracle}) [{med[oracle][1]:.4f}-"
              f"{med[oracle][2]:.4f}], immediate {i:.4f} ms ({picked}) "
              f"[{med['immediate'][1]:.4f}-{med['immediate'][2]:.4f}], oracle/torch "
              f"{t / o:.2f}, immediate/torch {t / i:.2f}, max rel err {worst:.1e}", flush=True)
    n = len(ratios_oracle)
    if n == 0:
        print("no problems measured")
        return 1
    geo = lambda v: math.exp(sum(math.log(r) for r in v) / len(v))  # noqa: E731
    print(f"# load average {os.getloadavg()[0]:.2f}")
    print(f"geomean oracle/torch = {geo(ratios_oracle):.2f} ({n} problems)")
    print(f"geomean immediate/torch = {geo(ratios_immediate):.2f} ({n} problems)")
    print(f"torch faster than convsel's oracle on {len(torch_faster)} of {n} problems"
          + (":" if torch_faster else ""))
    for ratio, name, where, oracle in sorted(torch_faster, reverse=True):
        print(f"  {name} ({where}): torch {ratio:.2f}x faster than {oracle}"
              f"{'  (> 10 %)' if ratio > 1.1 else ''}")
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

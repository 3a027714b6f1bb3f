"""python3 -m convsel.race: PyTorch's test_cudnn_multiple_threads_same_device,
its body run through convsel.torch, in a fresh process per run.

The test that caught MIOpen's unguarded model cache (a use-after-free when
two threads, one handle each, ran their first convolutions at once):
THREADS threads lined up with threading.Barrier; each starts from
ones(1, 1, SIZE, SIZE) and ITERS times runs conv2d(x, ones(1, 1, 2, 2),
padding=0) then div_(4), so every iteration is a new shape, ranked anew;
TRIALS trials; every thread's final sum must be (SIZE - ITERS)^2. Each run
is a new process, so the model cache starts cold every time.

--variant safe runs the library the package loads; unguarded runs
libconvsel-unguarded.so from the build directory (MIOpen's pre-fix cache,
a test build the shipped library never selects; CONVSEL_UNGUARDED_LIBRARY
names another path), which the command must catch. --delay-us sets CONVSEL_TEST_LOAD_DELAY_US in the children: a sleep
inside the model load that widens the race window. The children run with
MALLOC_PERTURB_ set (glibc then overwrites freed memory), so reading a
freed model fails visibly; --no-perturb leaves glibc's default.

Prints 'race: runs=N crashed=C wrong=W' (crashed: killed by a signal, the
signals counted; wrong: a sum off, or an error raised) and exits 0 only
when both are 0.
"""
import argparse
import collections
import concurrent.futures
import os
import signal
import subprocess
import sys
import threading
import time


def _child(args):
    import torch
    import convsel
    import convsel.torch as ct

    status = convsel.model_status()
    if "tn.model" not in status or status.startswith("not used"):
        print(f"child: no ranking model to race on: {status}", flush=True)
        return 3
    weight = torch.ones((1, 1, 2, 2))
    results = {}
    errors = []
    barrier = threading.Barrier(args.threads)

    def worker(t):
        try:
            convsel.set_num_threads(args.conv_threads)  # this thread's handle
            barrier.wait()
            for _ in range(args.iters):
                results[t] = ct.conv2d(results[t], weight, padding=0)
                results[t].div_(4.0)
        except Exception as e:  # an error is a wrong result, counted by the parent
            errors.append(f"thread {t}: {type(e).__name__}: {e}")

    wrong = 0
    want = float((args.size - args.iters) ** 2)
    for trial in range(args.trials):
        for t in range(args.threads):
            results[t] = torch.ones((1, 1, args.size, args.size))
        threads = [threading.Thread(target=worker, args=(t,)) for t in range(args.threads)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for t in range(args.threads):
            got = results[t].sum().item()
            if got != want:
                wrong += 1
                print(f"child: trial {trial} thread {t}: sum {got}, want {want}", flush=True)
    for e in errors:
        print(f"child: {e}", flush=True)
    return 1 if wrong or errors else 0


def _library(variant):
    from . import _lib  # noqa: F401 - loads the safe library, or fails saying where it looked
    if variant == "safe":
        return _lib.path
    named = os.environ.get("CONVSEL_UNGUARDED_LIBRARY")
    if named:
        if not os.path.exists(named):
            sys.exit(f"convsel.race: CONVSEL_UNGUARDED_LIBRARY={named} does not exist")
        return named
    here = os.path.dirname(os.path.abspath(_lib.path))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for d in (here, os.path.join(root, "build")):
        p = os.path.join(d, "libconvsel-unguarded.so")
        if os.path.exists(p):
            return p
    sys.exit("convsel.race: --variant unguarded needs libconvsel-unguarded.so, a test build "
             f"(cmake target convsel_unguarded); not found in {here} or {root}/build")


def _signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _parent(args):
    lib = _library(args.variant)
    env = dict(os.environ)
    env["CONVSEL_LIBRARY"] = lib
    env["CONVSEL_TEST_LOAD_DELAY_US"] = str(args.delay_us)
    if args.perturb:
        # glibc overwrites memory as it is freed: a use-after-free then reads
        # garbage (a crash, a wrong result) instead of stale bytes that happen
        # to still hold the model.
        env["MALLOC_PERTURB_"] = "165"
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"]
                                      if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "convsel.race", "--child", "--threads", str(args.threads),
           "--size", str(args.size), "--iters", str(args.iters), "--trials", str(args.trials),
           "--conv-threads", str(args.conv_threads)]
    crashed = wrong = 0
    signals = collections.Counter()
    start = time.monotonic()

    def one(run):
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               timeout=args.timeout)
            return run, p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else ""
            return run, "timeout", out

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for run, rc, out in pool.map(one, range(args.runs)):
            if rc == 3:
                sys.exit(f"convsel.race: {out.strip()}")
            if rc == "timeout":
                crashed += 1
                signals[f"hung (> {args.timeout} s)"] += 1
            elif rc < 0:
                crashed += 1
                signals[_signal_name(-rc)] += 1
            elif rc != 0:
                wrong += 1
            if args.verbose or (rc != 0 and crashed + wrong <= 3):
                print(f"run {run}: {'ok' if rc == 0 else rc}" +
                      (f"\n{out.rstrip()}" if rc != 0 and out.strip() else ""), flush=True)
    took = time.monotonic() - start
    detail = ", ".join(f"{k} x{v}" for k, v in sorted(signals.items()))
    print(f"race: runs={args.runs} crashed={crashed} wrong={wrong} (variant={args.variant} "
          f"threads={args.threads} delay_us={args.delay_us} size={args.size} "
          f"iters={args.iters} trials={args.trials} jobs={args.jobs}"
          f"{'' if args.perturb else ' no-perturb'}; {took:.0f} s"
          f"{'; ' + detail if detail else ''})")
    return 0 if crashed == 0 and wrong == 0 else 1


def _positive(name, lo, hi):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, not {text!r}")
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{name} = {v}: must be in {lo}..{hi}")
        return v
    return parse


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m convsel.race",
        description="PyTorch's multi-threaded convolution test body, run through convsel.torch "
                    "in a fresh process per run. Prints 'race: runs=N crashed=C wrong=W'.")
    ap.add_argument("--runs", type=_positive("--runs", 1, 10 ** 6), default=10)
    ap.add_argument("--threads", type=_positive("--threads", 1, 256), default=2,
                    help="threads per run, each with its own handle (default 2, as the test)")
    ap.add_argument("--delay-us", type=_positive("--delay-us", 0, 10 ** 7), default=0,
                    help="sleep inside the model load (CONVSEL_TEST_LOAD_DELAY_US; default 0)")
    ap.add_argument("--variant", choices=("safe", "unguarded"), default="safe")
    ap.add_argument("--size", type=_positive("--size", 2, 65536), default=2048,
                    help="the input's height and width (default 2048, as the test)")
    ap.add_argument("--iters", type=_positive("--iters", 1, 10 ** 6), default=1000,
                    help="convolutions per thread per trial (default 1000; < --size)")
    ap.add_argument("--trials", type=_positive("--trials", 1, 1000), default=3)
    ap.add_argument("--conv-threads", type=_positive("--conv-threads", 1, 256), default=1,
                    help="threads each convolution may use (default 1: THREADS handles share "
                         "the cores)")
    ap.add_argument("--timeout", type=_positive("--timeout", 1, 86400), default=600,
                    help="seconds before a run counts as hung (default 600)")
    ap.add_argument("--jobs", type=_positive("--jobs", 1, 64), default=1,
                    help="runs at once, each its own process (default 1)")
    ap.add_argument("--no-perturb", dest="perturb", action="store_false",
                    help="do not set MALLOC_PERTURB_ in the children (by default glibc "
                         "overwrites freed memory there, so a use-after-free shows)")
    ap.add_argument("--verbose", action="store_true", help="print every run's outcome")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.iters >= args.size:
        ap.error(f"--iters {args.iters} must be below --size {args.size} (each "
                 f"iteration shrinks the input by one)")
    return _child(args) if args.child else _parent(args)


if __name__ == "__main__":
    sys.exit(main())

"""python3 -m convsel.bench_overhead: what a convsel.conv2d call costs over
the C call it makes.

One small problem (default 1 x 16 x 14 x 14, 16 3x3 filters, padding 1),
one convolution thread. In each of ROUNDS rounds, interleaved: N calls of
convsel.conv2d on torch tensors, N on NumPy arrays, N of convsel.torch.conv2d,
and N of the bare convsel_convolution_forward through ctypes on the same
descriptors and buffers (the C call itself, plus ctypes' own cost of
crossing into C, which is measured too: N calls of convsel_version).
Prints medians over the rounds with the p10-p90 spread, and

    overhead per call: torch X us, numpy Y us, convsel.torch Z us

the medians of (Python call - bare C call) per round.
"""
import argparse
import statistics
import sys
import time


def _spread(v):
    s = sorted(v)
    at = lambda q: s[min(len(s) - 1, round(q * (len(s) - 1)))]  # noqa: E731
    return statistics.median(s), at(0.1), at(0.9)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m convsel.bench_overhead",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=2000, help="calls per arm per round (2000)")
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds (9)")
    ap.add_argument("--shape", default="1,16,14,14,16,3",
                    help="N,C,H,W,K,R: the problem (default 1,16,14,14,16,3; padding R//2)")
    args = ap.parse_args(argv)
    try:
        n, c, h, w, k, r = (int(v) for v in args.shape.split(","))
    except ValueError:
        ap.error(f"--shape {args.shape!r}: six comma-separated integers N,C,H,W,K,R")
    if min(n, c, h, w, k, r) < 1 or args.calls < 1 or args.rounds < 1:
        ap.error("--shape values, --calls and --rounds must be >= 1")

    import torch
    import convsel
    import convsel.torch as ct
    from convsel import _lib

    torch.set_num_threads(1)
    convsel.set_num_threads(1)
    x, wt = torch.randn(n, c, h, w), torch.randn(k, c, r, r)
    xn, wn = x.numpy(), wt.numpy()
    pad = r // 2
    y = convsel.conv2d(x, wt, padding=pad)
    convsel.conv2d(xn, wn, padding=pad)
    hd = convsel._handle()
    plan = next(p for p in hd.plans.values() if p.kind == "torch")
    xd, wd, cd, yd = plan.descs
    ws = hd.scratch(plan.ws)
    xp, wp, yp = x.data_ptr(), wt.data_ptr(), y.data_ptr()

    def bare():
        _lib.forward(hd.ptr, plan.sid, xd, xp, wd, wp, cd, yd, yp, ws, plan.ws)

    arms = {
        "torch": lambda: convsel.conv2d(x, wt, padding=pad),
        "numpy": lambda: convsel.conv2d(xn, wn, padding=pad),
        "convsel.torch": lambda: ct.conv2d(x, wt, padding=pad),
        "bare C call": bare,
        "ctypes call": _lib.version,
    }
    times = {a: [] for a in arms}
    for _ in range(args.rounds):
        for name, fn in arms.items():
            t0 = time.perf_counter()
            for _ in range(args.calls):
                fn()
            times[name].append((time.perf_counter() - t0) / args.calls * 1e6)
    print(f"# problem {n}x{c}x{h}x{w}, {k} {r}x{r} filters, padding {pad}; 1 thread; "
          f"{args.rounds} rounds x {args.calls} calls per arm, interleaved")
    for name, v in times.items():
        m, lo, hi = _spread(v)
        print(f"{name:>14}: {m:7.2f} us  [p10-p90 {lo:.2f}-{hi:.2f}]")
    over = {a: _spread([t - b for t, b in zip(times[a], times["bare C call"])])
            for a in ("torch", "numpy", "convsel.torch")}
    print("overhead per call: " + ", ".join(f"{a} {m:.1f} us" for a, (m, _, _) in over.items())
          + "  [p10-p90 " + ", ".join(f"{lo:.1f}-{hi:.1f}" for (_, lo, hi) in over.values())
          + "]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

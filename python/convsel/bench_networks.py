"""python3 -m convsel.bench_networks: whole torchvision networks, torch's own
convolutions against the same model with every nn.Conv2d patched to convsel.

Random weights (no downloads), eval mode, torch.no_grad(), fp32, NCHW.
For each model and batch: a warm-up forward of each arm (convsel's first
calls rank and plan every layer), then REPS rounds, each timing one forward
of torch's model and one of the patched copy, alternating which goes first
(interleaved: load on the machine hits both arms alike). Prints per model

    network NAME batch B: torch X ms, convsel Y ms, speedup Z, max rel err E

(X, Y medians; the spread is the p10-p90 range in brackets; E is
max|y_convsel - y_torch| / max|y_torch| over the outputs) and a closing
'geomean speedup = Z.ZZ'. The layer check (on by default) also runs each
patched convolution of the first batch against torch's on the same input:
'layers: N checked, worst rel err E (layer)', failing above 1e-3, the
loosest tolerance a solver states (docs/solvers.md).

Threads: torch.set_num_threads(T) and convsel.set_num_threads(T), T = 2 by
default. --constant-weights patches with convsel.torch.patch(model,
constant_weights=True): each layer's weights are packed once and kept,
guarded by the weight tensor's version (as a deployed model allows, and as
torch's own eager convolutions do not); off by default.
"""
import argparse
import copy
import math
import statistics
import sys
import time

MODELS = ("resnet50", "mobilenet_v2", "efficientnet_b0", "convnext_tiny", "regnet_y_800mf",
          "densenet121", "inception_v3", "shufflenet_v2_x1_0")
LAYER_TOLERANCE = 1e-3


def _build(name):
    import torchvision
    kwargs = {"weights": None}
    if name == "inception_v3":
        kwargs.update(aux_logits=False, init_weights=True)
    return getattr(torchvision.models, name)(**kwargs).eval()


def _input_size(name):
    return 299 if name == "inception_v3" else 224


def _rel_err(got, want):
    return ((got - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()


def _check_layers(model, x):
    """Runs each patched convolution on its real input against torch's own."""
    import torch
    import torch.nn.functional as F
    worst = (0.0, None)
    count = 0
    hooks = []

    def hook(module, inputs, output):
        nonlocal worst, count
        inp = inputs[0]
        if module.padding_mode != "zeros":
            inp = F.pad(inp, module._reversed_padding_repeated_twice, mode=module.padding_mode)
            ref = F.conv2d(inp, module.weight, module.bias, module.stride, 0, module.dilation,
                           module.groups)
        else:
            ref = F.conv2d(inp, module.weight, module.bias, module.stride, module.padding,
                           module.dilation, module.groups)
        e = _rel_err(output, ref)
        count += 1
        if e > worst[0]:
            worst = (e, f"{name_of[module]} {tuple(inp.shape)} -> {tuple(ref.shape)} "
                        f"k{tuple(module.kernel_size)} s{tuple(module.stride)} g{module.groups}")

    name_of = {m: n for n, m in model.named_modules()}
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            hooks.append(m.register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
    return count, worst


def _quantiles(v):
    s = sorted(v)
    pick = lambda q: s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]  # noqa: E731
    return statistics.median(s), pick(0.1), pick(0.9)


def run(args):
    import torch
    import convsel
    import convsel.torch as ct

    torch.set_num_threads(args.threads)
    convsel.set_num_threads(args.threads)
    print(f"# torch {torch.__version__}, convsel {convsel.version()} ({convsel.library_path}), "
          f"{args.threads} threads, {args.reps} interleaved rounds, constant_weights="
          f"{args.constant_weights}")
    print(f"# model: {convsel.model_status()}")
    print(f"# database: {convsel.database_status()}")
    speedups, failures = [], []
    for name in args.models:
        torch.manual_seed(0)
        ref = _build(name)
        mine = copy.deepcopy(ref)
        n_patched = ct.patch(mine, constant_weights=args.constant_weights)
        for batch in args.batches:
            size = _input_size(name)
            x = torch.randn(batch, 3, size, size)
            with torch.no_grad():
                want = ref(x)
                got = mine(x)  # warm-up: convsel ranks and plans every layer here
                ref(x)
            err = _rel_err(got, want)
            if args.check_layers and batch == args.batches[0]:
                count, (worst, where) = _check_layers(mine, x)
                print(f"layers: {name}: {count} checked, worst rel err {worst:.2e} ({where})")
                if worst > LAYER_TOLERANCE:
                    failures.append(f"{name}: layer rel err {worst:.2e} > {LAYER_TOLERANCE}")
            times = {"torch": [], "convsel": []}
            with torch.no_grad():
                for r in range(args.reps):
                    order = (("torch", ref), ("convsel", mine))
                    for arm, model in (order if r % 2 == 0 else order[::-1]):
                        t0 = time.perf_counter()
                        model(x)
                        times[arm].append((time.perf_counter() - t0) * 1e3)
            tm, t10, t90 = _quantiles(times["torch"])
            cm, c10, c90 = _quantiles(times["convsel"])
            ratios = [a / b for a, b in zip(times["torch"], times["convsel"])]
            sp, s10, s90 = _quantiles(ratios)
            speedups.append(tm / cm)
            print(f"network {name} batch {batch}: torch {tm:.2f} ms, convsel {cm:.2f} ms, "
                  f"speedup {tm / cm:.2f}, max rel err {err:.1e}   "
                  f"[torch {t10:.2f}-{t90:.2f}, convsel {c10:.2f}-{c90:.2f}, "
                  f"per-round speedup {s10:.2f}-{s90:.2f}; {n_patched} convs]", flush=True)
            if err > args.max_err:
                failures.append(f"{name} batch {batch}: output rel err {err:.1e} > {args.max_err}")
    geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
    print(f"geomean speedup = {geo:.2f}")
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m convsel.bench_networks",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS),
                    help=f"comma-separated torchvision model names (default: {','.join(MODELS)})")
    ap.add_argument("--batches", default="1,8", help="comma-separated batch sizes (default 1,8)")
    ap.add_argument("--threads", type=int, default=2, help="threads for torch and convsel (2)")
    ap.add_argument("--reps", type=int, default=7, help="interleaved rounds per model (7)")
    ap.add_argument("--constant-weights", action="store_true",
                    help="patch with constant_weights=True (each layer's weights packed once, "
                         "guarded by the tensor's version)")
    ap.add_argument("--no-check-layers", dest="check_layers", action="store_false",
                    help="skip the per-layer comparison with torch")
    ap.add_argument("--max-err", type=float, default=1e-3,
                    help="largest output rel err accepted (1e-3)")
    args = ap.parse_args(argv)
    try:
        import torchvision  # noqa: F401
    except ImportError:
        ap.error("needs torchvision (Debian: apt install python3-torchvision)")
    import torchvision.models as tvm
    args.models = [m for m in args.models.split(",") if m]
    for m in args.models:
        if not callable(getattr(tvm, m, None)):
            ap.error(f"--models: torchvision {torchvision.__version__} has no model {m!r}")
    try:
        args.batches = [int(b) for b in args.batches.split(",") if b]
    except ValueError:
        ap.error(f"--batches {args.batches!r}: comma-separated integers")
    if not args.batches or min(args.batches) < 1:
        ap.error("--batches: each must be >= 1")
    if not 1 <= args.threads <= 256:
        ap.error(f"--threads {args.threads}: must be in 1..256")
    if args.reps < 1:
        ap.error(f"--reps {args.reps}: must be >= 1")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

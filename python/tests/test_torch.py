"""convsel.torch against torch.nn.functional.conv2d: arguments, memory
formats, gradients (torch's own), patching models, and bad tensors."""
import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
F = torch.nn.functional

import convsel  # noqa: E402
import convsel.torch as ct  # noqa: E402


def close(got, want, tol=1e-4):
    err = ((got - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()
    assert err <= tol, err
    return err


CASES = [
    dict(),
    dict(padding=1),
    dict(padding=(2, 0), stride=(2, 1)),
    dict(padding="same"),
    dict(padding="valid", stride=2),
    dict(padding=1, dilation=2, groups=2),
    dict(padding="same", dilation=(1, 2)),
]


@pytest.mark.parametrize("kw", CASES, ids=[str(c) for c in CASES])
@pytest.mark.parametrize("fmt", ["contiguous", "channels_last"])
@pytest.mark.parametrize("kernel", [(3, 3), (4, 2), (1, 1)])
def test_matches_torch(kw, fmt, kernel):
    torch.manual_seed(0)
    x = torch.randn(2, 6, 13, 11)
    w = torch.randn(8, 6 // kw.get("groups", 1), *kernel)
    b = torch.randn(8)
    if fmt == "channels_last":
        x = x.to(memory_format=torch.channels_last)
    want = F.conv2d(x, w, b, **kw)
    got = ct.conv2d(x, w, b, **kw)
    assert got.shape == want.shape
    close(got, want)
    if fmt == "channels_last":
        assert got.is_contiguous(memory_format=torch.channels_last)
    close(ct.conv2d(x, w, None, **kw), F.conv2d(x, w, None, **kw))


def test_unbatched_and_other_strides():
    torch.manual_seed(1)
    x = torch.randn(3, 9, 9)
    w = torch.randn(4, 3, 3, 3)
    close(ct.conv2d(x, w, padding=1), F.conv2d(x, w, padding=1))
    xt = torch.randn(1, 3, 9, 9).transpose(2, 3)  # neither order: copied, as torch does
    close(ct.conv2d(xt, w), F.conv2d(xt, w))
    wt = torch.randn(4, 3, 3, 3).transpose(2, 3)
    close(ct.conv2d(xt, wt), F.conv2d(xt, wt))


def test_gradients_are_torchs():
    torch.manual_seed(2)
    args = (torch.randn(2, 4, 10, 10), torch.randn(6, 2, 3, 2), torch.randn(6))
    mine = [a.clone().requires_grad_() for a in args]
    ref = [a.clone().requires_grad_() for a in args]
    kw = dict(stride=(1, 2), padding="valid", groups=2)
    (ct.conv2d(*mine, **kw) ** 2).sum().backward()
    (F.conv2d(*ref, **kw) ** 2).sum().backward()
    for m, r in zip(mine, ref):
        close(m.grad, r.grad, 1e-4)
    # padding="same" with an even filter: the extra row goes through F.pad, also differentiated
    x1, x2 = (torch.randn(1, 2, 7, 7).requires_grad_() for _ in range(2))
    x2.data.copy_(x1.data)
    w = torch.randn(3, 2, 2, 2)
    ct.conv2d(x1, w, padding="same").sum().backward()
    F.conv2d(x2, w, padding="same").sum().backward()
    close(x1.grad, x2.grad)


def _net():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1, bias=False),
        torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, groups=8, padding=1, padding_mode="reflect"),
        torch.nn.Conv2d(8, 16, 1, stride=2),
        torch.nn.Conv2d(16, 16, 3, padding=2, dilation=2, padding_mode="circular"),
        torch.nn.Conv2d(16, 4, (1, 5), padding="same", padding_mode="replicate"),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())


def test_patch_runs_every_conv2d_through_convsel(monkeypatch):
    torch.manual_seed(3)
    net = _net().eval()
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        want = net(x)
    calls = []
    real = convsel.conv2d
    monkeypatch.setattr(convsel, "conv2d", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert ct.patch(net) == 5
    assert ct.patch(net) == 0  # already patched
    assert all(ct.is_patched(m) for m in net if isinstance(m, torch.nn.Conv2d))
    with torch.no_grad():
        close(net(x), want)
    assert len(calls) == 5
    assert ct.unpatch(net) == 5
    with torch.no_grad():
        net(x)
    assert len(calls) == 5  # torch's own again


def _twins(seed, **patch_args):
    """torch's net a and the same net b patched, each with an SGD optimizer;
    and a training step for both."""
    torch.manual_seed(seed)
    a, b = _net(), _net()
    b.load_state_dict(a.state_dict())
    patched = ct.patch(b, **patch_args)
    pairs = ((a, torch.optim.SGD(a.parameters(), lr=0.1)),
             (b, torch.optim.SGD(b.parameters(), lr=0.1)))
    x, target = torch.randn(4, 3, 16, 16), torch.randn(4, 4)

    def step():
        for net, opt in pairs:
            opt.zero_grad()
            F.mse_loss(net(x), target).backward()
            opt.step()  # in place: the next forward must not run the old weights
    return a, b, patched, x, step


def test_a_patched_model_still_trains():
    a, b, _, x, step = _twins(4)
    for _ in range(3):
        step()
    for pa, pb in zip(a.parameters(), b.parameters()):
        close(pb.detach(), pa.detach(), 1e-3)


def test_weights_constant_for_inference():
    torch.manual_seed(5)
    conv = torch.nn.Conv2d(16, 16, 3, padding=1).eval()
    x = torch.randn(1, 16, 12, 12)
    with torch.no_grad():
        want = conv(x)
        ct.patch(conv)
        convsel.set_weights_constant(True)
        try:
            close(conv(x), want)
            close(conv(x), want)
        finally:
            convsel.set_weights_constant(False)


def test_patched_layers_fall_back_for_what_convsel_does_not_take():
    conv = torch.nn.Conv2d(2, 3, 3).double()
    ct.patch(conv)
    x = torch.randn(1, 2, 5, 5, dtype=torch.float64)
    y = conv(x)  # torch's own path, in float64
    assert y.dtype == torch.float64


@pytest.mark.parametrize("make, words", [
    (lambda: ct.conv2d(torch.ones(1, 2, 5, 5, dtype=torch.float64), torch.ones(3, 2, 3, 3)),
     "input has dtype torch.float64"),
    (lambda: ct.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3, dtype=torch.int32)),
     "weight has dtype"),
    (lambda: ct.conv2d(torch.ones(1, 2, 5, 5, device="meta"), torch.ones(3, 2, 3, 3)),
     "input is on meta"),
    (lambda: ct.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3), torch.ones(4)),
     "bias has shape (4,)"),
    (lambda: ct.conv2d(torch.ones(2, 5, 5, 1, 1), torch.ones(3, 2, 3, 3)), "input has 5"),
    (lambda: ct.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3)), "weight has 3"),
    (lambda: ct.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 3, 3, 3)), "input channels"),
    (lambda: ct.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3), stride="2"), "stride"),
    (lambda: ct.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3), padding="half"),
     "padding"),
    (lambda: ct.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3), stride=2,
                       padding="same"), "strided"),
    (lambda: ct.conv2d([[1.0]], torch.ones(3, 2, 3, 3)), "input must be a torch.Tensor"),
    (lambda: ct.patch("resnet"), "model must be a torch.nn.Module"),
])
def test_bad_tensors_name_the_argument(make, words):
    with pytest.raises((TypeError, ValueError)) as info:
        make()
    assert words in str(info.value)


def test_mixed_numpy_and_torch_is_refused():
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match="x is a torch array and w a numpy one"):
        convsel.conv2d(torch.ones(1, 2, 5, 5), np.ones((3, 2, 3, 3), np.float32))


def _guarded(x, w, solver):
    return convsel._conv2d_guarded_weights(x, w, (1, 1), (1, 1), (1, 1), 1, solver)


@pytest.mark.parametrize("solver", ["onednn_direct", "winograd_f4x3"])
def test_constant_weights_are_kept_and_guarded_by_the_tensor_version(solver):
    torch.manual_seed(6)
    x = torch.randn(1, 16, 12, 12)
    w = torch.randn(16, 16, 3, 3)
    ct.forget_weights()
    close(_guarded(x, w, solver), F.conv2d(x, w, padding=1))
    # a write torch does not count: the kept form is used, the result stale
    w.data.mul_(2)
    close(_guarded(x, w, solver), F.conv2d(x, w / 2, padding=1))
    ct.forget_weights()
    close(_guarded(x, w, solver), F.conv2d(x, w, padding=1))
    # a counted write (what optimizers and load_state_dict do): seen
    with torch.no_grad():
        w.mul_(-0.5)
    close(_guarded(x, w, solver), F.conv2d(x, w, padding=1))
    # another tensor at the same address: seen
    other = w.data
    other.add_(1.0)
    close(_guarded(x, other, solver), F.conv2d(x, other, padding=1))


def test_patch_with_constant_weights_trains_and_infers():
    a, b, patched, x, step = _twins(7, constant_weights=True)
    assert patched == 5
    for _ in range(3):
        step()
        with torch.no_grad():
            close(b(x), a(x), 1e-3)
    a.load_state_dict(_net().state_dict())
    b.load_state_dict(a.state_dict())
    with torch.no_grad():
        close(b(x), a(x), 1e-3)
    assert ct.patch(b) == 0 and not any(
        m._convsel_constant_weights for m in b.modules() if ct.is_patched(m))
    with pytest.raises(TypeError, match="constant_weights must be a bool"):
        ct.patch(b, constant_weights=1)
    with pytest.raises(TypeError, match="constant_weights must be a bool"):
        ct.conv2d(x, torch.randn(4, 3, 3, 3), constant_weights="yes")

"""convsel for PyTorch: torch.nn.functional.conv2d's signature, and patch()
to run a model's nn.Conv2d layers through convsel.

    import torch, torchvision, convsel.torch
    model = torchvision.models.resnet50().eval()
    convsel.torch.patch(model)          # every nn.Conv2d now runs in convsel
    with torch.no_grad():
        y = model(torch.randn(1, 3, 224, 224))
    convsel.torch.unpatch(model)

What runs where:
- The forward convolution runs in convsel, on CPU float32 tensors in
  contiguous (NCHW) or channels-last memory; other strides are copied to
  contiguous first, as torch does. The bias is added by torch.
- convsel computes no gradients yet: when autograd needs them, the backward
  pass goes to torch's own torch.nn.grad.conv2d_input / conv2d_weight, so a
  patched model still trains (at torch's speed for the backward pass).
- padding="same" with an even filter pads the input first (F.pad, the extra
  row and column at the end, as torch does); padding modes other than
  "zeros" (reflect, replicate, circular) pad with torch's F.pad, then
  convsel convolves without padding: the same as torch's own _conv_forward.
- A patched layer given a tensor convsel does not take (another device,
  another dtype) runs torch's own convolution; convsel.torch.conv2d called
  directly raises TypeError naming the argument instead.
- patch(model, constant_weights=True) (off by default) lets the solvers
  keep each layer's weights in their packed or Winograd form between calls
  instead of transforming them on every call, the way inference engines
  pre-pack. It is guarded: each thread records which tensor and which
  version (tensor._version, what torch counts in-place writes by) it packed
  at each address, and a layer whose weight tensor changed (an optimizer
  step, load_state_dict, a copy_) or whose address now holds another tensor
  forgets the kept forms before it runs. Writes torch does not count,
  through .data or a NumPy view of the weights, are not seen: call
  forget_weights() after them. Weights that are not contiguous, or rebuilt
  on every call (weight norm), gain nothing from it.
- convsel.set_weights_constant is the unguarded C switch for convsel.conv2d
  itself; it does not change what patched layers do.
"""
import torch
import torch.nn.functional as F

import convsel

__all__ = ["conv2d", "patch", "unpatch", "is_patched", "forget_weights"]


def _pair(v, name):
    if isinstance(v, bool):
        raise TypeError(f"{name} must be an int or a tuple of ints, not bool")
    if isinstance(v, int):
        return (v, v)
    if isinstance(v, (tuple, list)) and len(v) == 1 and isinstance(v[0], int):
        return (v[0], v[0])
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(
            isinstance(e, int) and not isinstance(e, bool) for e in v):
        return tuple(v)
    raise TypeError(f"{name} must be an int or a tuple of 2 ints, not {v!r}")


def _same_padding(weight, dilation):
    """torch's padding='same': total d*(k-1) per dimension, the odd one at
    the end. Returns the symmetric part and F.pad's extra [left, right,
    top, bottom] (None when there is none)."""
    sym, extra = [], [0, 0, 0, 0]
    for i, (k, d) in enumerate(zip(weight.shape[2:], dilation)):
        total = d * (k - 1)
        sym.append(total // 2)
        if total % 2:
            extra[3 - 2 * i] = 1  # dim 0 (H) -> bottom (index 3), dim 1 (W) -> right (index 1)
    return tuple(sym), (extra if any(extra) else None)


def _check_tensor(t, name):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, not {type(t).__name__}")
    if t.device.type != "cpu":
        raise TypeError(f"{name} is on {t.device}: convsel runs on the CPU")
    if t.dtype != torch.float32:
        raise TypeError(f"{name} has dtype {t.dtype}: convsel computes in float32")


def _takes(t, channels_last_ok=True):
    """t itself when convsel can read its memory, else a contiguous copy."""
    if t.is_contiguous():
        return t
    if channels_last_ok and t.is_contiguous(memory_format=torch.channels_last):
        return t
    return t.contiguous()


class _Conv2d(torch.autograd.Function):
    """convsel forward, torch backward (torch.nn.grad)."""

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, dilation, groups, constant_weights):
        ctx.save_for_backward(x, weight)
        ctx.conf = (stride, padding, dilation, groups, bias is not None)
        return _forward(x, weight, bias, stride, padding, dilation, groups, constant_weights)

    @staticmethod
    def backward(ctx, grad_y):
        x, weight = ctx.saved_tensors
        stride, padding, dilation, groups, has_bias = ctx.conf
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = torch.nn.grad.conv2d_input(x.shape, weight, grad_y, stride, padding, dilation,
                                            groups)
        if ctx.needs_input_grad[1]:
            gw = torch.nn.grad.conv2d_weight(x, weight.shape, grad_y, stride, padding, dilation,
                                             groups)
        if has_bias and ctx.needs_input_grad[2]:
            gb = grad_y.sum((0, 2, 3))
        return gx, gw, gb, None, None, None, None, None


def _forward(x, weight, bias, stride, padding, dilation, groups, constant_weights):
    if constant_weights and weight.is_contiguous():
        y = convsel._conv2d_guarded_weights(_takes(x), weight, stride, padding, dilation, groups)
    else:
        y = convsel.conv2d(_takes(x), _takes(weight), stride, padding, dilation, groups)
    if bias is not None:
        y.add_(bias.view(1, -1, 1, 1))
    return y


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *,
           constant_weights=False):
    """torch.nn.functional.conv2d, computed by convsel.

    input: (N, C, H, W) or unbatched (C, H, W); weight: (K, C/groups, R, S);
    bias: (K,) or None; stride, dilation: int or tuple; padding: int, tuple,
    'valid' or 'same'. CPU float32 tensors only (TypeError otherwise).
    constant_weights: keep weight's packed form between calls, guarded by
    its version (the module docstring)."""
    if not isinstance(constant_weights, bool):
        raise TypeError(f"constant_weights must be a bool, not {type(constant_weights).__name__}")
    _check_tensor(input, "input")
    _check_tensor(weight, "weight")
    if bias is not None:
        _check_tensor(bias, "bias")
        if bias.dim() != 1 or bias.shape[0] != weight.shape[0]:
            raise ValueError(f"bias has shape {tuple(bias.shape)}; weight's {weight.shape[0]} "
                             f"filters need ({weight.shape[0]},)")
    if weight.dim() != 4:
        raise ValueError(f"weight has {weight.dim()} dimensions, not 4 (K, C/groups, R, S)")
    unbatched = input.dim() == 3
    if unbatched:
        input = input.unsqueeze(0)
    elif input.dim() != 4:
        raise ValueError(f"input has {input.dim()} dimensions: (N, C, H, W) or (C, H, W)")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions "
                                 "(as in torch)")
            padding, extra = _same_padding(weight, dilation)
            if extra is not None:
                input = F.pad(input, extra)
        else:
            raise ValueError(f"padding = {padding!r}: an int, a tuple, 'valid' or 'same'")
    else:
        padding = _pair(padding, "padding")
    if torch.is_grad_enabled() and (input.requires_grad or weight.requires_grad or
                                    (bias is not None and bias.requires_grad)):
        y = _Conv2d.apply(input, weight, bias, stride, padding, dilation, groups,
                          constant_weights)
    else:
        y = _forward(input, weight, bias, stride, padding, dilation, groups, constant_weights)
    return y.squeeze(0) if unbatched else y


# ---------------------------------------------------------------------------
# patching nn.Conv2d


def _conv_forward(module, input, weight, bias):
    """Replaces nn.Conv2d._conv_forward (what its forward calls) on one module."""
    if (input.device.type != "cpu" or input.dtype != torch.float32 or
            weight.device.type != "cpu" or weight.dtype != torch.float32):
        return type(module)._conv_forward(module, input, weight, bias)  # torch's own
    constant = module._convsel_constant_weights
    if module.padding_mode != "zeros":
        input = F.pad(input, module._reversed_padding_repeated_twice, mode=module.padding_mode)
        return conv2d(input, weight, bias, module.stride, 0, module.dilation, module.groups,
                      constant_weights=constant)
    return conv2d(input, weight, bias, module.stride, module.padding, module.dilation,
                  module.groups, constant_weights=constant)


def patch(model, constant_weights=False):
    """Makes every nn.Conv2d in model (itself included) run through convsel;
    returns how many were not patched before. Other layers are untouched.
    constant_weights=True keeps each layer's packed weights between calls,
    guarded by the weight tensor's version (the module docstring); patching
    again sets it anew on every layer."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, not {type(model).__name__}")
    if not isinstance(constant_weights, bool):
        raise TypeError(f"constant_weights must be a bool, not {type(constant_weights).__name__}")
    count = 0
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            count += not is_patched(m)
            m._conv_forward = _conv_forward.__get__(m)
            m._convsel_patched = True
            m._convsel_constant_weights = constant_weights
    return count


def forget_weights():
    """Forgets the packed weights the calling thread's layers keep
    (constant_weights=True): needed only after writes to weights that torch
    does not count, through .data or a NumPy view."""
    convsel._forget_guarded_weights()


def unpatch(model):
    """Undoes patch(): torch's own convolutions again. Returns how many."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, not {type(model).__name__}")
    count = 0
    for m in model.modules():
        if is_patched(m):
            del m._conv_forward
            del m._convsel_patched
            del m._convsel_constant_weights
            count += 1
    return count


def is_patched(module):
    return bool(module.__dict__.get("_convsel_patched", False))

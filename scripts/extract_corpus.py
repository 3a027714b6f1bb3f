#!/usr/bin/python3
"""Extracts the corpus of real convolution layers into data/networks/*.csv.

Every 2-D convolution (and every 1-D one, as an H = 1 problem) that a
network runs is recorded with forward hooks while the network runs on a
random input of its usual size, at batch 1 and at one larger batch. The
networks are built with random weights (nothing is downloaded):

  torchvision.csv     every classification, detection, segmentation and
                      optical-flow model torchvision 0.14 defines
                      (Debian python3-torchvision);
  torchaudio.csv      torchaudio 0.13's convolutional models
                      (Debian python3-torchaudio): wav2vec 2.0 / HuBERT
                      feature encoders, Wav2Letter, Conv-TasNet, Tacotron 2,
                      WaveRNN's upsampler, Hybrid Demucs;
  papers.csv          layers torchvision does not cover, built here from
                      their papers (each network names its paper in the
                      file's header): WaveNet, a temporal convolutional
                      network, QuartzNet, HiFi-GAN, Whisper's stem,
                      SRCNN, FSRCNN, ESPCN, EDSR, Real-ESRGAN, pix2pix,
                      CycleGAN, a DCGAN discriminator, YOLOv5 and
                      EfficientDet's BiFPN neck with its heads.

Columns: those of the benchmark suite (name,n,c,h,w,k,r,s,pad_h,pad_w,
stride_h,stride_w,dil_h,dil_w,groups; NCHW, KCRS) plus network and family.
A family groups networks that share a design (resnet: ResNet and Wide
ResNet; efficientnet: B0-B7 and V2; ...): `convsel eval --corpus` leaves
one family out at a time. Rows are de-duplicated by problem over all the
files: a layer that several networks share is listed once, under the first
network that runs it (torchvision first, in the order below).

What a convolution computes is recorded, not what the module was asked
for: padding="same" with an even filter and padding modes other than zeros
pad the input explicitly and then convolve unpadded, so the row has the
padded input and no padding. Transposed convolutions are not forward
convolutions and are left out (their count is printed).

Usage: /usr/bin/python3 scripts/extract_corpus.py [--out data/networks] [--only NAME ...]
Takes about 40 minutes on 2 cores (detection models at 800x1088 dominate); it is
deterministic (seeded). Needs Debian python3-torchvision and python3-torchaudio.
"""
import argparse
import math
import os
import sys
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F

HEADER = "name,n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups,network,family"
BIG_BATCH = 8  # the larger batch of classification, segmentation and sequence models
DETECTION_BATCH = 2  # detection and optical flow: two images


# --------------------------------------------------------------------------
# Recording


class Recorder:
    """Forward hooks on every Conv1d / Conv2d of a module."""

    def __init__(self):
        self.rows = []  # (module name, problem tuple)
        self.transposed = 0
        self.handles = []

    def attach(self, model):
        for name, mod in model.named_modules():
            if isinstance(mod, (nn.ConvTranspose1d, nn.ConvTranspose2d)):
                self.handles.append(mod.register_forward_hook(self._transposed))
            elif isinstance(mod, nn.Conv2d):
                self.handles.append(mod.register_forward_hook(self._hook(name, 2)))
            elif isinstance(mod, nn.Conv1d):
                self.handles.append(mod.register_forward_hook(self._hook(name, 1)))

    def detach(self):
        for h in self.handles:
            h.remove()
        self.handles = []

    def _transposed(self, mod, inp, out):
        self.transposed += 1

    def _hook(self, name, dims):
        def hook(mod, inp, out):
            self.rows.append((name, problem_of(mod, inp[0], dims)))

        return hook


def axis_padding(size, kernel, stride, dil, pad, mode):
    """(input size, pad) of what the convolution computes along one axis."""
    if isinstance(pad, str):
        if pad == "valid":
            return size, 0
        total = dil * (kernel - 1)  # "same" (stride 1 only)
        if total % 2 == 0:
            return size, total // 2
        return size + total, 0  # torch pads explicitly (asymmetric), then convolves
    if mode != "zeros" and pad > 0:
        return size + 2 * pad, 0
    return size, pad


def problem_of(mod, x, dims):
    """The problem tuple (n,c,h,w,k,r,s,pad_h,pad_w,stride_h,stride_w,dil_h,dil_w,groups)."""
    if dims == 1:
        n, c, length = x.shape
        h, w = 1, length
        r, s = 1, mod.kernel_size[0]
        sh, sw = 1, mod.stride[0]
        dh, dw = 1, mod.dilation[0]
        pad = mod.padding if isinstance(mod.padding, str) else mod.padding[0]
        ph = "valid" if isinstance(pad, str) else 0
        pw = pad
    else:
        n, c, h, w = x.shape
        r, s = mod.kernel_size
        sh, sw = mod.stride
        dh, dw = mod.dilation
        if isinstance(mod.padding, str):
            ph = pw = mod.padding
        else:
            ph, pw = mod.padding
    h, ph = axis_padding(h, r, sh, dh, ph, mod.padding_mode)
    w, pw = axis_padding(w, s, sw, dw, pw, mod.padding_mode)
    return (int(n), int(c), int(h), int(w), int(mod.out_channels), int(r), int(s), int(ph),
            int(pw), int(sh), int(sw), int(dh), int(dw), int(mod.groups))


# --------------------------------------------------------------------------
# torchvision


def tv_classification():
    import torchvision.models as tvm

    families = [
        ("alexnet", "alexnet"), ("vgg", "vgg"), ("resnet", "resnet"), ("wide_resnet", "resnet"),
        ("resnext", "resnext"), ("densenet", "densenet"), ("googlenet", "inception"),
        ("inception", "inception"), ("squeezenet", "squeezenet"), ("mobilenet", "mobilenet"),
        ("mnasnet", "mnasnet"), ("shufflenet", "shufflenet"), ("efficientnet", "efficientnet"),
        ("regnet", "regnet"), ("convnext", "convnext"), ("vit", "vit"), ("swin", "swin"),
        ("maxvit", "maxvit"),
    ]
    for name in sorted(tvm.list_models(module=tvm)):
        family = next(f for prefix, f in families if name.startswith(prefix))
        weights = tvm.get_model_weights(name).DEFAULT
        size = weights.transforms.keywords["crop_size"]
        kwargs = {"weights": None}
        if name.startswith("vit"):
            kwargs["image_size"] = size  # ViT's position embedding fixes the size
        if name in ("googlenet", "inception_v3"):
            kwargs["aux_logits"] = False
            kwargs["init_weights"] = False

        def build(name=name, kwargs=kwargs):
            return tvm.get_model(name, **kwargs)

        def inputs(batch, size=size):
            return (torch.rand(batch, 3, size, size),)

        yield name, family, build, inputs, BIG_BATCH


def tv_detection():
    import torchvision.models.detection as det

    import torchvision.models as tvm

    for name in sorted(tvm.list_models(module=det)):
        family = ("ssd" if name.startswith("ssd") else
                  "retinanet_fcos" if name.startswith(("retinanet", "fcos")) else "rcnn")

        def build(name=name):
            return tvm.get_model(name, weights=None, weights_backbone=None)

        # A 640x480 image, as in COCO and VOC; the model's own transform
        # resizes it to its min_size (800 for most, 300/320 for SSD and the
        # 320 Faster R-CNN) and pads to its size divisor.
        def inputs(batch):
            return ([torch.rand(3, 480, 640) for _ in range(batch)],)

        yield name, family, build, inputs, DETECTION_BATCH


def tv_segmentation():
    import torchvision.models as tvm
    import torchvision.models.segmentation as seg

    for name in sorted(tvm.list_models(module=seg)):
        size = tvm.get_model_weights(name).DEFAULT.transforms.keywords["resize_size"]

        def build(name=name):
            return tvm.get_model(name, weights=None, weights_backbone=None)

        def inputs(batch, size=size):
            return (torch.rand(batch, 3, size, size),)

        yield name, "segmentation", build, inputs, BIG_BATCH


def tv_optical_flow():
    import torchvision.models as tvm
    import torchvision.models.optical_flow as of

    for name in sorted(tvm.list_models(module=of)):

        def build(name=name):
            return tvm.get_model(name, weights=None)

        def inputs(batch):  # a Sintel frame pair (436x1024, padded to 440)
            return (torch.rand(batch, 3, 440, 1024), torch.rand(batch, 3, 440, 1024))

        yield name, "optical_flow", build, inputs, DETECTION_BATCH


# --------------------------------------------------------------------------
# torchaudio


def ta_models():
    import torchaudio.models as tam

    second = 16000  # samples of one second of 16 kHz audio

    def wav(batch, length=second):
        return (torch.rand(batch, length),)

    yield "wav2vec2_base", "speech_encoder", tam.wav2vec2_base, wav, BIG_BATCH
    yield "hubert_large", "speech_encoder", tam.hubert_large, wav, BIG_BATCH
    # Wav2Letter on MFCCs (13 per 10 ms frame, 1 s = 100 frames would be tiny:
    # 10 s, as in speech recognition) and on raw waveforms.
    yield ("wav2letter_mfcc", "wav2letter", lambda: tam.Wav2Letter(input_type="mfcc",
                                                                     num_features=13),
           lambda b: (torch.rand(b, 13, 1000),), BIG_BATCH)
    yield ("wav2letter_waveform", "wav2letter", lambda: tam.Wav2Letter(input_type="waveform"),
           lambda b: (torch.rand(b, 1, second),), BIG_BATCH)
    yield ("conv_tasnet_base", "conv_tasnet", tam.conv_tasnet_base,
           lambda b: (torch.rand(b, 1, 4 * 8000),), BIG_BATCH)  # 4 s at 8 kHz, as in the paper
    # Tacotron 2: its encoder's three 5-tap convolutions over 100 characters
    # and the postnet over 400 mel frames (the decoder is recurrent).
    yield ("tacotron2", "tacotron2", tam.Tacotron2, None, BIG_BATCH)
    yield ("wavernn", "wavernn",
           lambda: tam.WaveRNN(upsample_scales=[5, 5, 11], n_classes=256, hop_length=275,
                               n_freq=80),
           lambda b: (torch.rand(b, 1, 275 * 96), torch.rand(b, 1, 80, 100)), BIG_BATCH)
    yield ("hdemucs_high", "demucs", lambda: tam.hdemucs_high(sources=["drums", "bass", "other",
                                                                      "vocals"]),
           lambda b: (torch.rand(b, 2, 44100 * 3),), 2)  # 3 s of stereo music


def run_tacotron2(model, batch):
    """Tacotron 2's convolutions without its autoregressive decoder."""
    tokens = torch.randint(0, 148, (batch, 100))
    emb = model.embedding(tokens).transpose(1, 2)
    model.encoder(emb, torch.full((batch,), 100, dtype=torch.long))
    model.postnet(torch.rand(batch, 80, 400))


# --------------------------------------------------------------------------
# Networks from papers (layer shapes as published; input sizes as used)


def conv(cin, cout, k, stride=1, pad=None, dil=1, groups=1, dims=2):
    if pad is None:
        pad = dil * (k - 1) // 2
    cls = nn.Conv2d if dims == 2 else nn.Conv1d
    return cls(cin, cout, k, stride, pad, dil, groups)


class Seq(nn.Module):
    """Runs its layers in order; layers are (module, lambda x: x') pairs or modules."""

    def __init__(self, *layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class WaveNet(nn.Module):
    """van den Oord et al. 2016, arXiv:1609.03499: 3 stacks of dilated causal
    2-tap convolutions (dilations 1..512), gated, with 1x1 residual and skip
    convolutions; 64 residual and 256 skip channels, as in common
    implementations; 4000 samples per example (a quarter second at 16 kHz)."""

    def __init__(self, res=64, skip=256, stacks=3):
        super().__init__()
        self.stem = nn.Conv1d(256, res, 1)
        self.dilated = nn.ModuleList()
        self.res = nn.ModuleList()
        self.skip = nn.ModuleList()
        self.dils = [2 ** i for i in range(10)] * stacks
        for d in self.dils:
            self.dilated.append(nn.Conv1d(res, 2 * res, 2, dilation=d))
            self.res.append(nn.Conv1d(res, res, 1))
            self.skip.append(nn.Conv1d(res, skip, 1))
        self.out1 = nn.Conv1d(skip, skip, 1)
        self.out2 = nn.Conv1d(skip, 256, 1)

    def forward(self, x):
        x = self.stem(x)
        total = 0
        for d, dc, rc, sc in zip(self.dils, self.dilated, self.res, self.skip):
            h = dc(F.pad(x, (d, 0)))  # causal: pad on the left
            a, b = h.chunk(2, 1)
            h = torch.tanh(a) * torch.sigmoid(b)
            total = total + sc(h)
            x = x + rc(h)
        return self.out2(F.relu(self.out1(F.relu(total))))


class TCN(nn.Module):
    """Bai, Kolter, Koltun 2018, arXiv:1803.01271: residual blocks of two
    dilated causal 3-tap convolutions (dilations 1..128), 150 channels, on
    sequences of 1000 steps (their polyphonic-music and word-level setups)."""

    def __init__(self, cin=88, ch=150, levels=8):
        super().__init__()
        self.blocks = nn.ModuleList()
        for i in range(levels):
            d = 2 ** i
            self.blocks.append(nn.ModuleList([nn.Conv1d(cin if i == 0 else ch, ch, 3, dilation=d),
                                              nn.Conv1d(ch, ch, 3, dilation=d),
                                              nn.Conv1d(cin, ch, 1) if i == 0 else nn.Identity()]))
        self.dils = [2 ** i for i in range(levels)]

    def forward(self, x):
        for d, (c1, c2, down) in zip(self.dils, self.blocks):
            h = F.relu(c1(F.pad(x, (2 * d, 0))))
            h = F.relu(c2(F.pad(h, (2 * d, 0))))
            x = F.relu(h + down(x))
        return x


def quartznet():
    """Kriman et al. 2020, arXiv:1910.10261, QuartzNet 15x5: time-channel
    separable convolutions (depthwise 1-D, then 1x1), kernels 33..87, on
    10 s of 64 mel features at 10 ms (1000 frames)."""
    layers = [conv(64, 64, 33, stride=2, groups=64, dims=1), conv(64, 256, 1, dims=1)]
    c = 256
    for cout, k in [(256, 33), (256, 39), (512, 51), (512, 63), (512, 75)]:
        for _ in range(5):
            layers += [conv(c, c, k, groups=c, dims=1), conv(c, cout, 1, dims=1)]
            c = cout
    layers += [conv(512, 512, 87, dil=2, groups=512, dims=1), conv(512, 512, 1, dims=1),
               conv(512, 1024, 1, dims=1), conv(1024, 29, 1, dims=1)]
    return Seq(*layers)


class HiFiGAN(nn.Module):
    """Kong, Kim, Bae 2020, arXiv:2010.05646, HiFi-GAN V1 generator: a 7-tap
    convolution from 80 mels to 512 channels, transposed upsampling (left out),
    and multi-receptive-field blocks of kernels 3, 7, 11 with dilations 1, 3, 5,
    on 1 s of audio (86 mel frames at 22 kHz, hop 256)."""

    def __init__(self):
        super().__init__()
        self.pre = nn.Conv1d(80, 512, 7, padding=3)
        self.ups = nn.ModuleList()
        self.mrf = nn.ModuleList()
        ch = 512
        for rate in [8, 8, 2, 2]:
            self.ups.append(nn.ConvTranspose1d(ch, ch // 2, 2 * rate, rate, rate // 2))
            ch //= 2
            blocks = nn.ModuleList()
            for k in [3, 7, 11]:
                blocks.append(nn.ModuleList(
                    [nn.Conv1d(ch, ch, k, dilation=d, padding=d * (k - 1) // 2) for d in [1, 3, 5]] +
                    [nn.Conv1d(ch, ch, k, padding=(k - 1) // 2) for _ in range(3)]))
            self.mrf.append(blocks)
        self.post = nn.Conv1d(ch, 1, 7, padding=3)

    def forward(self, x):
        x = self.pre(x)
        for up, blocks in zip(self.ups, self.mrf):
            x = up(F.leaky_relu(x, 0.1))
            total = 0
            for block in blocks:
                h = x
                for i in range(3):
                    h = h + block[3 + i](F.leaky_relu(block[i](F.leaky_relu(h, 0.1)), 0.1))
                total = total + h
            x = total / 3
        return torch.tanh(self.post(F.leaky_relu(x)))


def whisper_stem(width):
    """Radford et al. 2022, arXiv:2212.04356: Whisper's audio encoder starts
    with two 3-tap convolutions over 30 s of 80 mel features (3000 frames),
    the second with stride 2; width 384 (tiny), 512 (base), 768 (small),
    1024 (medium), 1280 (large)."""
    return Seq(conv(80, width, 3, dims=1), nn.GELU(), conv(width, width, 3, stride=2, dims=1))


def srcnn():
    """Dong et al. 2014, arXiv:1501.00092, SRCNN 9-5-5 (64, 32 filters) on
    the bicubically upscaled image (a 512x512 Y channel)."""
    return Seq(conv(1, 64, 9), nn.ReLU(), conv(64, 32, 5), nn.ReLU(), conv(32, 1, 5))


def fsrcnn():
    """Dong, Loy, Tang 2016, arXiv:1608.00367, FSRCNN(56, 12, 4) on a 256x256
    low-resolution Y channel (its deconvolution is left out)."""
    layers = [conv(1, 56, 5), nn.PReLU(), conv(56, 12, 1), nn.PReLU()]
    for _ in range(4):
        layers += [conv(12, 12, 3), nn.PReLU()]
    layers += [conv(12, 56, 1), nn.PReLU()]
    return Seq(*layers)


def espcn(scale=3):
    """Shi et al. 2016, arXiv:1609.05158, ESPCN: 5x5 64, 3x3 32, 3x3 scale^2
    channels then a pixel shuffle, on a 360x640 low-resolution frame (1080p
    at scale 3)."""
    return Seq(conv(1, 64, 5), nn.Tanh(), conv(64, 32, 3), nn.Tanh(), conv(32, scale * scale, 3),
               nn.PixelShuffle(scale))


class EDSR(nn.Module):
    """Lim et al. 2017, arXiv:1707.02921, EDSR (32 residual blocks of 256
    channels) at scale 2 on a 240x320 low-resolution RGB image, and its
    baseline (16 blocks of 64)."""

    def __init__(self, feats=256, blocks=32, scale=2):
        super().__init__()
        self.head = conv(3, feats, 3)
        self.body = nn.ModuleList([nn.ModuleList([conv(feats, feats, 3), conv(feats, feats, 3)])
                                   for _ in range(blocks)])
        self.body_end = conv(feats, feats, 3)
        self.up = conv(feats, feats * scale * scale, 3)
        self.shuffle = nn.PixelShuffle(scale)
        self.tail = conv(feats, 3, 3)

    def forward(self, x):
        x = h = self.head(x)
        for c1, c2 in self.body:
            h = h + 0.1 * c2(F.relu(c1(h)))
        h = self.body_end(h) + x
        return self.tail(self.shuffle(self.up(h)))


class RRDBNet(nn.Module):
    """Wang et al. 2018/2021, arXiv:1809.00219 and arXiv:2107.10833,
    Real-ESRGAN's RRDB generator (23 blocks, 64 features, growth 32) at
    scale 4 on a 128x128 low-resolution tile, as it is run tiled."""

    def __init__(self, nf=64, gc=32, blocks=23):
        super().__init__()
        self.first = conv(3, nf, 3)
        self.rdbs = nn.ModuleList()
        for _ in range(blocks * 3):
            self.rdbs.append(nn.ModuleList([conv(nf + i * gc, gc if i < 4 else nf, 3)
                                            for i in range(5)]))
        self.trunk = conv(nf, nf, 3)
        self.up1 = conv(nf, nf, 3)
        self.up2 = conv(nf, nf, 3)
        self.hr = conv(nf, nf, 3)
        self.last = conv(nf, 3, 3)

    def forward(self, x):
        x = feat = self.first(x)
        for rdb in self.rdbs:
            feats = [feat]
            for i, c in enumerate(rdb):
                out = c(torch.cat(feats, 1))
                if i < 4:
                    feats.append(F.leaky_relu(out, 0.2))
            feat = feat + 0.2 * out
        feat = x + self.trunk(feat)
        feat = self.up1(F.interpolate(feat, scale_factor=2))
        feat = self.up2(F.interpolate(feat, scale_factor=2))
        return self.last(F.leaky_relu(self.hr(feat)))


class Pix2PixUNet(nn.Module):
    """Isola et al. 2017, arXiv:1611.07004: the U-Net-256 generator's encoder
    (4x4 convolutions at stride 2, 64..512 channels; the decoder's transposed
    convolutions are left out) and the 70x70 PatchGAN discriminator, on
    256x256 images."""

    def __init__(self):
        super().__init__()
        chans = [3, 64, 128, 256, 512, 512, 512, 512, 512]
        self.enc = nn.ModuleList([nn.Conv2d(chans[i], chans[i + 1], 4, 2, 1) for i in range(8)])
        self.disc = nn.ModuleList([nn.Conv2d(6, 64, 4, 2, 1), nn.Conv2d(64, 128, 4, 2, 1),
                                   nn.Conv2d(128, 256, 4, 2, 1), nn.Conv2d(256, 512, 4, 1, 1),
                                   nn.Conv2d(512, 1, 4, 1, 1)])

    def forward(self, x):
        h = x
        for c in self.enc:
            h = F.leaky_relu(c(h), 0.2)
        d = torch.cat([x, x], 1)
        for c in self.disc:
            d = F.leaky_relu(c(d), 0.2)
        return h, d


class CycleGANResNet(nn.Module):
    """Zhu et al. 2017, arXiv:1703.10593: the ResNet generator (a 7x7
    reflection-padded stem, two stride-2 3x3 convolutions, 9 residual blocks
    of 256 channels; the transposed upsampling is left out) on 256x256."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 64, 7, padding=3, padding_mode="reflect")
        self.down1 = nn.Conv2d(64, 128, 3, 2, 1)
        self.down2 = nn.Conv2d(128, 256, 3, 2, 1)
        self.blocks = nn.ModuleList([nn.ModuleList([
            nn.Conv2d(256, 256, 3, padding=1, padding_mode="reflect"),
            nn.Conv2d(256, 256, 3, padding=1, padding_mode="reflect")]) for _ in range(9)])
        self.out = nn.Conv2d(64, 3, 7, padding=3, padding_mode="reflect")

    def forward(self, x):
        h = self.down2(F.relu(self.down1(F.relu(self.stem(x)))))
        for c1, c2 in self.blocks:
            h = h + c2(F.relu(c1(h)))
        return self.out(torch.rand(x.shape[0], 64, x.shape[2], x.shape[3]))


def dcgan_discriminator():
    """Radford, Metz, Chintala 2015, arXiv:1511.06434: the DCGAN
    discriminator on 64x64 images (4x4 convolutions at stride 2)."""
    return Seq(nn.Conv2d(3, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 128, 4, 2, 1),
               nn.LeakyReLU(0.2), nn.Conv2d(128, 256, 4, 2, 1), nn.LeakyReLU(0.2),
               nn.Conv2d(256, 512, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(512, 1, 4, 1, 0))


class YOLOv5(nn.Module):
    """Jocher et al., ultralytics/yolov5 v6 (models/yolov5s.yaml and its
    width multiples): a 6x6/2 stem, C3 blocks of 1x1 and 3x3 convolutions,
    SPPF, the PAN neck and 1x1 detection heads, on a 640x640 image. width:
    0.25 (n), 0.5 (s), 0.75 (m), 1.0 (l); depth 0.33/0.33/0.67/1.0."""

    def __init__(self, width=0.5, depth=0.33, classes=80):
        super().__init__()
        ch = lambda c: max(8, int(math.ceil(c * width / 8) * 8))
        rep = lambda n: max(1, round(n * depth))
        mk = lambda cin, cout, k, s=1: nn.Conv2d(cin, cout, k, s, k // 2)

        def c3(cin, cout, n):
            mid = cout // 2
            return nn.ModuleDict({
                "cv1": mk(cin, mid, 1), "cv2": mk(cin, mid, 1), "cv3": mk(2 * mid, cout, 1),
                "m": nn.ModuleList([nn.ModuleList([mk(mid, mid, 1), mk(mid, mid, 3)])
                                    for _ in range(n)])})

        self.stem = nn.Conv2d(3, ch(64), 6, 2, 2)
        self.d1 = mk(ch(64), ch(128), 3, 2)
        self.c1 = c3(ch(128), ch(128), rep(3))
        self.d2 = mk(ch(128), ch(256), 3, 2)
        self.c2 = c3(ch(256), ch(256), rep(6))
        self.d3 = mk(ch(256), ch(512), 3, 2)
        self.c3_ = c3(ch(512), ch(512), rep(9))
        self.d4 = mk(ch(512), ch(1024), 3, 2)
        self.c4 = c3(ch(1024), ch(1024), rep(3))
        self.sppf1 = mk(ch(1024), ch(512), 1)
        self.sppf2 = mk(ch(512) * 4, ch(1024), 1)
        self.h1 = mk(ch(1024), ch(512), 1)
        self.c5 = c3(ch(1024), ch(512), rep(3))
        self.h2 = mk(ch(512), ch(256), 1)
        self.c6 = c3(ch(512), ch(256), rep(3))
        self.h3 = mk(ch(256), ch(256), 3, 2)
        self.c7 = c3(ch(512), ch(512), rep(3))
        self.h4 = mk(ch(512), ch(512), 3, 2)
        self.c8 = c3(ch(1024), ch(1024), rep(3))
        self.det = nn.ModuleList([nn.Conv2d(ch(c), 3 * (classes + 5), 1) for c in (256, 512, 1024)])

    @staticmethod
    def run_c3(block, x, shortcut=True):
        a = block["cv1"](x)
        for c1, c2 in block["m"]:
            a = a + c2(c1(a)) if shortcut else c2(c1(a))
        return block["cv3"](torch.cat([a, block["cv2"](x)], 1))

    def forward(self, x):
        x = self.run_c3(self.c1, self.d1(self.stem(x)))
        p3 = self.run_c3(self.c2, self.d2(x))
        p4 = self.run_c3(self.c3_, self.d3(p3))
        x = self.run_c3(self.c4, self.d4(p4))
        y = self.sppf1(x)
        pools = [y]
        for _ in range(3):
            pools.append(F.max_pool2d(pools[-1], 5, 1, 2))
        p5 = self.h1(self.sppf2(torch.cat(pools, 1)))
        x = self.run_c3(self.c5, torch.cat([F.interpolate(p5, scale_factor=2), p4], 1), False)
        x4 = self.h2(x)
        o3 = self.run_c3(self.c6, torch.cat([F.interpolate(x4, scale_factor=2), p3], 1), False)
        o4 = self.run_c3(self.c7, torch.cat([self.h3(o3), x4], 1), False)
        o5 = self.run_c3(self.c8, torch.cat([self.h4(o4), p5], 1), False)
        return [d(o) for d, o in zip(self.det, (o3, o4, o5))]


class BiFPN(nn.Module):
    """Tan, Pang, Le 2020, arXiv:1911.09070, EfficientDet-D0's neck and heads:
    BiFPN layers of depthwise-separable 3x3 convolutions (64 channels) over
    levels P3-P7 of a 512x512 image, then class and box heads (3 separable
    layers each, 9 anchors, 90 classes) shared over the levels."""

    def __init__(self, ch=64, layers=3, head_layers=3, classes=90):
        super().__init__()
        sep = lambda: nn.ModuleList([nn.Conv2d(ch, ch, 3, padding=1, groups=ch),
                                     nn.Conv2d(ch, ch, 1)])
        self.inputs = nn.ModuleList([nn.Conv2d(c, ch, 1) for c in (40, 112, 320)])
        self.p6 = nn.Conv2d(320, ch, 1)
        self.layers = nn.ModuleList([nn.ModuleList([sep() for _ in range(8)])
                                     for _ in range(layers)])
        self.cls = nn.ModuleList([sep() for _ in range(head_layers)])
        self.box = nn.ModuleList([sep() for _ in range(head_layers)])
        self.cls_out = nn.ModuleList([nn.Conv2d(ch, ch, 3, padding=1, groups=ch),
                                      nn.Conv2d(ch, 9 * classes, 1)])
        self.box_out = nn.ModuleList([nn.Conv2d(ch, ch, 3, padding=1, groups=ch),
                                      nn.Conv2d(ch, 9 * 4, 1)])

    @staticmethod
    def run_sep(s, x):
        return s[1](s[0](x))

    def forward(self, x):
        n = x.shape[0]
        c3 = torch.rand(n, 40, 64, 64)
        c4 = torch.rand(n, 112, 32, 32)
        c5 = torch.rand(n, 320, 16, 16)
        p = [self.inputs[0](c3), self.inputs[1](c4), self.inputs[2](c5)]
        p6 = F.max_pool2d(self.p6(c5), 3, 2, 1)
        p.append(p6)
        p.append(F.max_pool2d(p6, 3, 2, 1))
        for layer in self.layers:
            td = [None] * 5
            td[4] = p[4]
            for i in range(3, -1, -1):  # top-down: 4 separable convs
                td[i] = self.run_sep(layer[3 - i], p[i] + F.interpolate(td[i + 1], size=p[i].shape[2:]))
            out = [td[0]]
            for i in range(1, 5):  # bottom-up: 4 more
                out.append(self.run_sep(layer[3 + i], p[i] + td[i] +
                                        F.interpolate(out[-1], size=p[i].shape[2:])))
            p = out
        for level in p:
            h = level
            for s in self.cls:
                h = self.run_sep(s, h)
            self.run_sep(self.cls_out, h)
            h = level
            for s in self.box:
                h = self.run_sep(s, h)
            self.run_sep(self.box_out, h)
        return p


def paper_models():
    seq = lambda cin, length: (lambda b: (torch.rand(b, cin, length),))
    img = lambda c, h, w: (lambda b: (torch.rand(b, c, h, w),))
    yield "wavenet", "wavenet", WaveNet, seq(256, 4000), BIG_BATCH
    yield "tcn", "tcn", TCN, seq(88, 1000), BIG_BATCH
    yield "quartznet_15x5", "quartznet", quartznet, seq(64, 1000), BIG_BATCH
    yield "hifigan_v1", "hifigan", HiFiGAN, seq(80, 86), BIG_BATCH
    for size, width in [("tiny", 384), ("base", 512), ("small", 768), ("medium", 1024),
                        ("large", 1280)]:
        yield (f"whisper_{size}_stem", "whisper", lambda w=width: whisper_stem(w),
               seq(80, 3000), BIG_BATCH)
    yield "srcnn_955", "srcnn", srcnn, img(1, 512, 512), BIG_BATCH
    yield "fsrcnn", "srcnn", fsrcnn, img(1, 256, 256), BIG_BATCH
    yield "espcn_x3", "espcn", espcn, img(1, 360, 640), BIG_BATCH
    yield "edsr_x2", "edsr", EDSR, img(3, 240, 320), 2
    yield ("edsr_baseline_x2", "edsr", lambda: EDSR(64, 16), img(3, 240, 320), BIG_BATCH)
    yield "realesrgan_x4", "esrgan", RRDBNet, img(3, 128, 128), 2
    yield "pix2pix", "image_to_image", Pix2PixUNet, img(3, 256, 256), BIG_BATCH
    yield "cyclegan_resnet9", "image_to_image", CycleGANResNet, img(3, 256, 256), BIG_BATCH
    yield "dcgan_discriminator", "image_to_image", dcgan_discriminator, img(3, 64, 64), BIG_BATCH
    for tag, width, depth in [("n", 0.25, 0.33), ("s", 0.5, 0.33), ("m", 0.75, 0.67),
                              ("l", 1.0, 1.0)]:
        yield (f"yolov5{tag}", "yolo", lambda w=width, d=depth: YOLOv5(w, d),
               img(3, 640, 640), BIG_BATCH)
    yield "efficientdet_d0_bifpn", "efficientdet", BiFPN, img(3, 512, 512), BIG_BATCH


# The papers of the networks built from lambdas (their builders have no docstring).
DOCS = {f"whisper_{size}_stem": whisper_stem.__doc__
        for size in ("tiny", "base", "small", "medium", "large")}
DOCS.update({f"yolov5{tag}": YOLOv5.__doc__ for tag in "nsml"})
DOCS.update({"edsr_baseline_x2": EDSR.__doc__})

SOURCES = [
    ("torchvision.csv", "torchvision 0.14.1 (Debian python3-torchvision), weights=None",
     [tv_classification, tv_detection, tv_segmentation, tv_optical_flow]),
    ("torchaudio.csv", "torchaudio 0.13.1 (Debian python3-torchaudio), random weights",
     [ta_models]),
    ("papers.csv", "built by scripts/extract_corpus.py from the papers named below",
     [paper_models]),
]


# --------------------------------------------------------------------------


def record(build, inputs, batch, name):
    """The (module, problem) pairs of one forward pass at `batch`."""
    torch.manual_seed(0)
    model = build().eval()
    rec = Recorder()
    rec.attach(model)
    with torch.no_grad():
        if name == "tacotron2":
            run_tacotron2(model, batch)
        else:
            model(*inputs(batch))
    rec.detach()
    return rec.rows, rec.transposed


def key_of(p):
    return ",".join(str(v) for v in p)


def safe_name(network, module, batch):
    """network/module/nB, at most 63 characters (the problem reader's limit)."""
    text = f"{network}/{module or 'conv'}/n{batch}".replace(",", "_")
    if len(text) > 63:  # keep the end (the layer), and a checksum for uniqueness
        text = f"{zlib.crc32(text.encode()):08x}~{text[-54:]}"
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "data",
                                                  "networks"))
    ap.add_argument("--only", nargs="*", help="extract only these networks (for testing)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    os.makedirs(args.out, exist_ok=True)
    seen = set()
    total = 0
    for filename, origin, generators in SOURCES:
        rows, notes, documented = [], [], set()
        for gen in generators:
            for name, family, build, inputs, big in gen():
                if args.only and name not in args.only:
                    continue
                doc = DOCS.get(name, build.__doc__) if filename == "papers.csv" else None
                if doc and doc not in documented:
                    documented.add(doc)
                    notes.append(f"# {name}: " + " ".join(doc.split()))
                count_before = len(rows)
                transposed = 0
                for batch in (1, big):
                    layers, tr = record(build, inputs, batch, name)
                    transposed += tr
                    for module, p in layers:
                        if p[0] == 0:  # an empty batch (a head that found no boxes): no problem
                            continue
                        k = key_of(p)
                        if k in seen:
                            continue
                        seen.add(k)
                        rows.append(f"{safe_name(name, module, p[0])},{k},{name},{family}")
                print(f"{filename}: {name} ({family}): {len(rows) - count_before} new problems"
                      + (f", {transposed} transposed convolutions left out" if transposed else ""),
                      file=sys.stderr, flush=True)
        path = os.path.join(args.out, filename)
        with open(path, "w") as f:
            f.write(HEADER + "\n")
            f.write(f"# Real convolution layers: {origin}.\n")
            f.write("# Extracted by scripts/extract_corpus.py (see its docstring); batch 1 and "
                    f"{BIG_BATCH} ({DETECTION_BATCH} for detection, optical flow and the largest "
                    "networks).\n")
            f.write("# De-duplicated by problem over data/networks/*.csv; 1-D layers are H = 1.\n")
            for note in notes:
                f.write(note + "\n")
            for row in rows:
                f.write(row + "\n")
        total += len(rows)
        print(f"wrote {path}: {len(rows)} problems", file=sys.stderr)
    print(f"corpus: {total} problems", file=sys.stderr)


if __name__ == "__main__":
    main()

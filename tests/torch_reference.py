#!/usr/bin/python3
"""Writes PyTorch's outputs for the problems of a suite CSV, for
tests/test_torch_reference.c. Each problem keeps its channels, filter,
padding, stride, dilation and groups, with batch 1 and the input cropped
to at most CROP x CROP so the reference solver finishes in seconds.
Inputs come from a seeded generator; x, w and torch's y are written as
little-endian float32 files DIR/<name>.{x,w,y} (NCHW, KCRS), and
DIR/problems.txt lists "name n c h w k r s ph pw sh sw dh dw g".
Usage: torch_reference.py SUITE.csv OUTDIR CROP"""
import csv
import sys

import torch

suite, out, crop = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.manual_seed(1234)
torch.set_num_threads(2)
lines = []
with open(suite) as f:
    for row in csv.DictReader(f):
        v = {k: int(x) for k, x in row.items() if k != "name"}
        h, w = min(v["h"], crop), min(v["w"], crop)
        # keep at least one output: the filter's reach must fit the padded input
        reach_h = (v["r"] - 1) * v["dil_h"] + 1
        reach_w = (v["s"] - 1) * v["dil_w"] + 1
        h = max(h, min(v["h"], reach_h - 2 * v["pad_h"]))
        w = max(w, min(v["w"], reach_w - 2 * v["pad_w"]))
        g = v["groups"]
        x = torch.rand(1, v["c"], h, w) * 2 - 1
        wt = torch.rand(v["k"], v["c"] // g, v["r"], v["s"]) * 2 - 1
        with torch.no_grad():
            y = torch.nn.functional.conv2d(x, wt, None, (v["stride_h"], v["stride_w"]),
                                           (v["pad_h"], v["pad_w"]), (v["dil_h"], v["dil_w"]), g)
        name = row["name"]
        for suffix, t in (("x", x), ("w", wt), ("y", y)):
            t.contiguous().numpy().astype("<f4").tofile(f"{out}/{name}.{suffix}")
        lines.append(f"{name} 1 {v['c']} {h} {w} {v['k']} {v['r']} {v['s']} {v['pad_h']} "
                     f"{v['pad_w']} {v['stride_h']} {v['stride_w']} {v['dil_h']} {v['dil_w']} {g}")
with open(f"{out}/problems.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"torch {torch.__version__}: {len(lines)} problems written")

#!/usr/bin/python3
"""Writes a reduced MobileNetV2 whose BatchNorm statistics spread like a trained network's, for the accuracy passes
(cross-layer equalization, bias correction; tests/quant/equalize_test.cc and README's worked example).

Random weights give every output channel about the same range, so per-tensor int8 weights lose little and CLE has
nothing to fix. Trained MobileNets are different: after BatchNorm folding, depthwise channels differ by 100x and
more. This model gets that spread from its BatchNorms: for each one, in network order, the statistics of its input
are measured on the calibration images, then
    gamma   = log-uniform over three decades (10^-1.5 .. 10^1.5),
    var     = the measured variance times a log-uniform factor over three decades,
    mean    = the measured mean,  beta = N(0.5, 1) times the channel's output scale,
and gamma is rescaled so the layer's output has unit RMS (the network neither explodes nor vanishes with depth).
So each folded Conv has per-output-channel weight scales gamma / sqrt(var) spread over about 4.5 decades.

The network: torchvision's MobileNetV2 (width 1.0) with the blocks reduced to t,c,n,s = (1,16,1,1), (6,24,2,2),
(6,32,2,2), 10 classes, on 3x32x32 images; ReLU6 replaced by ReLU (as AIMET's CLE prepares MobileNetV2: a per-channel
rescale cannot pass a fixed upper bound of 6). About 90k parameters. BatchNormalization nodes are kept, not folded,
so the analytic bias correction can read their statistics. Opset 13, dynamic batch axis.

Run with Debian's python3 (torch 1.13, torchvision 0.14):
    /usr/bin/python3 tests/data/models/make_spread_mobilenet.py
Into tests/data/models/: spread_mobilenet_v2.onnx, spread_mobilenet_v2.input0.npy (32 seeded N(0, 1) images, the
calibration data) and spread_mobilenet_v2.output0.npy (PyTorch's logits for them). Seeded: a rerun writes the same
weights and inputs.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "spread_mobilenet_v2"
DECADES = 3.0


def log_uniform(n, gen):
    return torch.pow(10.0, (torch.rand(n, generator=gen) - 0.5) * DECADES)


def build():
    torch.manual_seed(0)
    setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 2, 2]]
    model = torchvision.models.mobilenet_v2(weights=None, num_classes=10, inverted_residual_setting=setting)
    for parent in list(model.modules()):
        for child_name, child in parent.named_children():
            if isinstance(child, nn.ReLU6):
                setattr(parent, child_name, nn.ReLU(inplace=False))
    model.eval()
    return model


def spread_batch_norms(model, images, gen):
    """Sets each BatchNorm's statistics in network order, measuring its input with the earlier ones already set."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for bn in bns:
        seen = {}
        hook = bn.register_forward_hook(lambda m, inp, out: seen.__setitem__("x", inp[0].detach()))
        with torch.no_grad():
            model(images)
        hook.remove()
        x = seen["x"]
        mean = x.mean(dim=(0, 2, 3))
        var = x.var(dim=(0, 2, 3), unbiased=False) + 1e-6
        c = mean.numel()
        gamma = log_uniform(c, gen)
        var_factor = log_uniform(c, gen)
        out_scale = gamma / torch.sqrt(var_factor)  # the std of each output channel, before rescaling
        rms = torch.sqrt((out_scale ** 2).mean())
        gamma = gamma / rms
        out_scale = out_scale / rms
        with torch.no_grad():
            bn.running_mean.copy_(mean)
            bn.running_var.copy_(var * var_factor)
            bn.weight.copy_(gamma)
            bn.bias.copy_((torch.randn(c, generator=gen) + 0.5) * out_scale)
            bn.eps = 1e-5


def main():
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(20261127)
    model = build()
    images = torch.randn(32, 3, 32, 32, generator=gen)
    spread_batch_norms(model, images, gen)
    with torch.no_grad():
        logits = model(images)
    path = os.path.join(HERE, NAME + ".onnx")
    torch.onnx.export(model, (images[:1],), path, opset_version=13, input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True,
                      training=torch.onnx.TrainingMode.PRESERVE)
    np.save(os.path.join(HERE, NAME + ".input0.npy"), images.numpy().astype(np.float32))
    np.save(os.path.join(HERE, NAME + ".output0.npy"), logits.numpy().astype(np.float32))
    # The spread the model is for: per-output-channel max |w| of each folded depthwise conv, max over min.
    spreads = []
    for m in model.modules():
        if isinstance(m, nn.Sequential) and len(m) >= 2 and isinstance(m[0], nn.Conv2d) and m[0].groups > 1:
            bn = m[1]
            w = m[0].weight * (bn.weight / torch.sqrt(bn.running_var + bn.eps)).view(-1, 1, 1, 1)
            r = w.detach().abs().amax(dim=(1, 2, 3))
            spreads.append(float(r.max() / r.min()))
    print("wrote %s (%d bytes); depthwise per-channel range spread (max/min): %s" %
          (path, os.path.getsize(path), ", ".join("%.0fx" % s for s in spreads)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Writes the "outlier encoder": a pre-LN transformer encoder whose LayerNorm outputs have a few channels 50-100x
the others, as trained LLMs have (the case SmoothQuant and per-token quantization are for; issue 17).

Run with Debian's python3 (torch 1.13, onnx 1.12):
    /usr/bin/python3 tests/data/models/make_outlier_encoder.py            # the small committed model, into this folder
    /usr/bin/python3 tests/data/models/make_outlier_encoder.py --full DIR  # the compare-models size, into DIR

The outliers are float-equivalent: for each LayerNorm, channels OUTLIERS have Scale and B multiplied by FACTORS and
the rows of the following Linear weights that read those channels divided by the same factors, so the model computes
what the model without them does (checked here to 1e-4 relative). Every LayerNorm output feeds only Linear layers
(pre-LN), so nothing else sees the outliers. Exported at opset 13 (LayerNorm and GELU written out), like the
compare-models encoder.

Writes outlier_encoder.onnx (small) or outlier_encoder_full.onnx (--full) with <name>.input0.npy (one input) and
<name>.calib.npy (calibration samples stacked along axis 0, for --calib-batch 1), all seeded.
"""
import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUTLIERS = (3, 7, 12, 20)
FACTORS = (60.0, 100.0, 50.0, 80.0)


class Block(torch.nn.Module):
    """x + Attention(LN1(x)), then x + FFN(LN2(x)), attention written out with MatMul."""

    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads, self.dk = heads, d // heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.ff1, self.ff2 = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).reshape(b, t, 3, self.heads, self.dk).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) / self.dk ** 0.5, dim=-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff2(torch.nn.functional.gelu(self.ff1(self.ln2(x))))


class Encoder(torch.nn.Module):
    def __init__(self, layers, d, heads, ff):
        super().__init__()
        self.blocks = torch.nn.Sequential(*[Block(d, heads, ff) for _ in range(layers)])

    def forward(self, x):
        return self.blocks(x)


def add_outliers(model):
    """Scales LayerNorm channels up and the reading Linear's input columns down by the same factors."""
    with torch.no_grad():
        for block in model.blocks:
            # Trained LayerNorms have non-trivial Scale and B; make them so first, then add the outliers.
            for ln in (block.ln1, block.ln2):
                ln.weight.uniform_(0.5, 1.5)
                ln.bias.uniform_(-0.2, 0.2)
            for ln, linear in ((block.ln1, block.qkv), (block.ln2, block.ff1)):
                for c, f in zip(OUTLIERS, FACTORS):
                    ln.weight[c] *= f
                    ln.bias[c] *= f
                    linear.weight[:, c] /= f


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--full", metavar="DIR", help="the compare-models size (4 blocks, d 256, T 128) into DIR")
    a = p.parse_args()
    torch.set_num_threads(1)
    if a.full:
        out, name, layers, d, heads, ff, t, n_calib = a.full, "outlier_encoder_full", 4, 256, 4, 1024, 128, 8
        os.makedirs(out, exist_ok=True)
    else:
        out, name, layers, d, heads, ff, t, n_calib = HERE, "outlier_encoder", 2, 32, 4, 64, 16, 8
    torch.manual_seed(0)
    model = Encoder(layers, d, heads, ff).eval()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, t, d)).astype(np.float32)
    calib = rng.standard_normal((n_calib, t, d)).astype(np.float32)
    # Without outliers first (Scale / B randomised the same way), to check the float equivalence.
    reference = Encoder(layers, d, heads, ff).eval()
    reference.load_state_dict(model.state_dict())
    torch.manual_seed(1)
    add_outliers(model)
    torch.manual_seed(1)
    with torch.no_grad():
        for block in reference.blocks:
            for ln in (block.ln1, block.ln2):
                ln.weight.uniform_(0.5, 1.5)
                ln.bias.uniform_(-0.2, 0.2)
        y, y_ref = model(torch.from_numpy(x)), reference(torch.from_numpy(x))
    err = float((y - y_ref).abs().max() / y_ref.abs().max())
    if err > 1e-4:
        print(f"outliers are not float-equivalent: max relative difference {err}", file=sys.stderr)
        return 1
    path = os.path.join(out, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, torch.from_numpy(x), path, input_names=["x"], output_names=["y"], opset_version=13,
                          do_constant_folding=True)
    np.save(os.path.join(out, name + ".input0.npy"), x)
    np.save(os.path.join(out, name + ".calib.npy"), calib)
    print(f"wrote {path} (max relative difference to the model without outliers: {err:.2e})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

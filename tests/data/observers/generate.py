#!/usr/bin/python3
"""Generates octet's observer reference data from PyTorch 1.13: tests/data/observers/*.npy and manifest.json.

Run with Debian's python3-torch from the repository root:

    /usr/bin/python3 tests/data/observers/generate.py

Deterministic: inputs come from numpy generators with fixed seeds; torch only computes the expected outputs, with
one thread. The folder's .npy files are rewritten from scratch. tests/observers/pytorch_parity_test.cc reads the
files; torch is never needed to build or test octet.

Each input is a sequence of float32 batches (one .npy per batch). Each case names an observer, octet's options for
it (the names of observers/observer_options.h), an input, and what PyTorch gives after observing every batch in
order: scale and zero_point from calculate_qparams(), and the min_val / max_val buffers. HistogramObserver cases
may also name a .npy holding the final histogram buffer. Variant legacy_1_13 is torch 1.13's own HistogramObserver;
variant upstream (option histogram_variant absent) is UpstreamHistogramObserver below: the current upstream forward
rules written over torch 1.13's operators. Cases that PyTorch rejects at construction record the exception type
instead ("error").

Floats in the manifest are the float32 values written as JSON numbers (the double that holds each float32
exactly), or the strings "inf", "-inf", "nan".

The generator also re-derives every expected scale and zero point from PyTorch's min_val / max_val with its own
numpy model of _calculate_qparams (float32 throughout) and stops if the model and torch disagree, except where the
model documents a known difference (qint32 zero points whose int32 conversion overflows inside PyTorch).
"""

import json
import os
import platform
import sys
import warnings

import numpy as np
import torch
from torch.ao import quantization as tq

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32
TORCH_DTYPES = {"quint8": torch.quint8, "qint8": torch.qint8, "qint32": torch.qint32}
TORCH_QSCHEMES = {
    "per_tensor_affine": torch.per_tensor_affine,
    "per_tensor_symmetric": torch.per_tensor_symmetric,
    "per_channel_affine": torch.per_channel_affine,
    "per_channel_symmetric": torch.per_channel_symmetric,
}


def jf(v):
    """A float32 value for the manifest."""
    v = float(np.float32(v))
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def jfl(t):
    return [jf(v) for v in np.asarray(t, dtype=np.float32).reshape(-1)]


# ---------------------------------------------------------------------------------------------------------------
# Inputs.

class Inputs:
    def __init__(self):
        self.inputs = {}
        self.arrays = {}

    def add(self, name, batches, description, ch_axis=None):
        files = []
        arrays = []
        for i, b in enumerate(batches):
            b = np.ascontiguousarray(np.asarray(b, dtype=np.float32))
            fname = f"in_{name}_{i}.npy"
            np.save(os.path.join(HERE, fname), b, allow_pickle=False)
            files.append(fname)
            arrays.append(b)
        entry = {"files": files, "shapes": [list(a.shape) for a in arrays], "description": description}
        if ch_axis is not None:
            entry["ch_axis"] = ch_axis
        self.inputs[name] = entry
        self.arrays[name] = arrays


def per_tensor_inputs(inp, rng):
    inp.add("normal", [rng.normal(0.3, 1.7, 4099)], "N(0.3, 1.7^2), 4099 values")
    inp.add("uniform", [rng.uniform(-3.7, 5.2, (100, 100))], "U(-3.7, 5.2), 100x100")
    x = rng.lognormal(0.0, 1.5, (8, 16, 7, 7))
    x[rng.random(x.shape) < 0.4] = 0.0
    inp.add("heavy_positive_zeros", [x], "lognormal(0, 1.5) with 40% exact zeros (post-ReLU-like), 8x16x7x7")
    x = rng.normal(0.0, 1.0, 100000)
    x[12345] = 50.0
    inp.add("outlier", [x], "100000 N(0,1) values and one outlier at 50 (numerics.md 2.7)")
    x = rng.normal(0.0, 1.0, 20000)
    x[:3] = [-30.0, 41.5, 29.0]
    inp.add("outliers_two_sided", [x], "20000 N(0,1) values with outliers -30, 41.5, 29")
    inp.add("constant", [np.full(64, 1.25)], "64 copies of 1.25")
    inp.add("constant_negative", [np.full((3, 5), -0.375)], "3x5 copies of -0.375")
    inp.add("all_zero", [np.zeros(33)], "33 zeros")
    inp.add("single_negative", [np.array([-0.7])], "one value, -0.7")
    inp.add("single_positive", [np.array([3.5])], "one value, 3.5")
    inp.add("negative_only", [-rng.uniform(0.5, 3.0, 257)], "U(-3, -0.5), 257 values")
    inp.add("positive_only", [rng.uniform(2.0, 3.0, 255)], "U(2, 3), 255 values")
    inp.add("tiny_range", [rng.uniform(-1e-7, 3e-7, 100)], "U(-1e-7, 3e-7): scales clamp to eps")
    inp.add("large", [rng.normal(0.0, 1e4, 1000)], "N(0, 1e4^2), 1000 values")
    inp.add("doc_example", [np.array([-0.7, 0.1, 0.3, 0.9])], "numerics.md 2.3 table input")
    # min_neg / scale is exactly -36.5 for quint8 affine (scale 2^-4): half-to-even gives zero point 36, half away
    # from zero 37.
    inp.add("rne_tie", [np.array([-2.28125, 13.65625, 0.0, 1.0])], "min/scale = -36.5 exactly (quint8 affine)")
    inp.add("grow_shrink", [
        rng.normal(0.0, 1.0, 1000),
        rng.normal(0.0, 4.0, 3000),
        rng.normal(0.0, 0.5, 2000),
        rng.uniform(-10.0, 1.0, 1500),
        rng.normal(3.0, 0.1, 500),
        rng.normal(0.0, 20.0, 5000),
    ], "six batches whose range grows and shrinks")
    inp.add("with_empty", [rng.normal(0.0, 1.0, 100), np.zeros((0, 4)), rng.normal(1.0, 2.0, 50)],
            "a batch, an empty batch (ignored), a batch")
    inp.add("constant_then_normal", [np.full(10, 0.5), np.full(7, 0.5), rng.normal(0.0, 1.0, 300)],
            "two constant batches, then N(0,1)")


def per_channel_inputs(inp, rng):
    w = rng.normal(0.0, 1.0, (16, 8, 3, 3)) * np.exp(rng.uniform(-7.0, 2.0, (16, 1, 1, 1)))
    w[3] = 0.25        # constant channel
    w[5] = 0.0         # all-zero channel
    w[7] = np.abs(w[7]) + 0.01   # positive-only channel
    w[9] = -np.abs(w[9]) - 0.02  # negative-only channel
    inp.add("conv_weight", [w], "conv weight 16x8x3x3, channel scales 1e-3..7, constant / zero / one-sided "
            "channels", ch_axis=0)
    inp.add("linear_weight", [rng.normal(0.0, 0.05, (10, 33))], "linear weight 10x33", ch_axis=0)
    inp.add("linear_weight_axis1", [rng.normal(0.0, 0.05, (10, 33))], "linear weight 10x33, channels along 1",
            ch_axis=1)
    a = np.maximum(rng.normal(0.0, 1.0, (4, 6, 5, 5)) * np.arange(1, 7).reshape(1, 6, 1, 1), 0.0)
    inp.add("activation_nchw", [a], "post-ReLU activation 4x6x5x5, channels along 1", ch_axis=1)
    inp.add("activation_nhwc", [rng.normal(0.5, 2.0, (2, 5, 5, 6))], "activation 2x5x5x6, channels last",
            ch_axis=-1)
    inp.add("activation_long_rows", [rng.normal(0.0, 1.0, (2, 3, 130))], "2x3x130 (runs of 130), channels along 1",
            ch_axis=1)
    inp.add("per_channel_sequence", [rng.normal(0.0, s, (2, 6, 4, 4)) for s in (1.0, 3.0, 0.5)],
            "three activations 2x6x4x4 with growing then shrinking spread, channels along 1", ch_axis=1)


# ---------------------------------------------------------------------------------------------------------------
# Option sets.

def per_tensor_configs():
    out = []
    for dtype in ("quint8", "qint8", "qint32"):
        for qscheme in ("per_tensor_affine", "per_tensor_symmetric"):
            for rr in (False, True):
                out.append({"dtype": dtype, "qscheme": qscheme, "reduce_range": rr})
    for dtype, lo, hi in (("quint8", 0, 15), ("quint8", 0, 127), ("qint8", -8, 7), ("qint8", -127, 127),
                          ("qint8", -128, 127), ("qint32", -1000, 1000)):
        for qscheme in ("per_tensor_affine", "per_tensor_symmetric"):
            out.append({"dtype": dtype, "qscheme": qscheme, "quant_min": lo, "quant_max": hi})
    out.append({"dtype": "qint8", "qscheme": "per_tensor_affine", "quant_min": -127, "quant_max": 127,
                "reduce_range": True})
    out.append({"dtype": "quint8", "qscheme": "per_tensor_affine", "quant_min": 0, "quant_max": 15,
                "reduce_range": True})
    out.append({"dtype": "qint8", "qscheme": "per_tensor_symmetric", "eps": 2.0 ** -12})
    out.append({"dtype": "quint8", "qscheme": "per_tensor_affine", "eps": 2.0 ** -12})
    return out


def per_channel_configs():
    out = []
    for c in per_tensor_configs():
        c = dict(c)
        c["qscheme"] = c["qscheme"].replace("per_tensor", "per_channel")
        out.append(c)
    return out


def torch_kwargs(opts):
    kw = {}
    for k, v in opts.items():
        if k == "dtype":
            kw["dtype"] = TORCH_DTYPES[v]
        elif k == "qscheme":
            kw["qscheme"] = TORCH_QSCHEMES[v]
        elif k == "skip_non_finite":
            continue
        elif k == "histogram_variant":
            continue
        else:
            kw[k] = v
    return kw


class UpstreamHistogramObserver(tq.HistogramObserver):
    """The upstream HistogramObserver (current PyTorch / torchao, numerics.md 2.7) on torch 1.13's operators.

    1.13 ships only the legacy forward. This class re-states the newer forward rules on top of 1.13's HistogramObserver
    (whose _non_linear_param_search and _calculate_qparams did not change): +-inf dropped, histc over the exact float
    range, the first tensor resets the histogram, and a growing range re-bins the old histogram by up-sampling
    (_upscale_histogram) or, when the old histogram was constant, moves its whole mass into the bin of its value.
    Every number still comes from torch 1.13's kernels (histc, linspace, bucketize, bincount, sum).
    """

    def __init__(self, upsample_rate=16, **kwargs):
        super().__init__(upsample_rate=upsample_rate, **kwargs)

    def _upscale(self, hist, orig_min, orig_max, new_min, new_max):
        up = self.upsample_rate
        mass = hist.repeat_interleave(up) / up
        sub_width = (orig_max - orig_min) / (self.bins * up)
        mids = torch.linspace(float(orig_min), float(orig_max), self.bins * up + 1)[:-1] + 0.5 * sub_width
        edges = torch.linspace(float(new_min), float(new_max), self.bins + 1)
        idx = torch.bucketize(mids, edges, right=True) - 1
        idx = idx.clamp(0, self.bins - 1)
        return torch.bincount(idx, weights=mass, minlength=self.bins)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(torch.float32)
        x_min, x_max = torch.aminmax(x)
        if x_min == -float("inf") or x_max == float("inf"):
            x = x[x.abs() != float("inf")]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = torch.aminmax(x)
        cur_min, cur_max = self.min_val.clone(), self.max_val.clone()
        if cur_min == float("inf") or cur_max == float("-inf"):
            self.min_val.copy_(x_min)
            self.max_val.copy_(x_max)
            self.histogram.copy_(torch.histc(x, self.bins, min=float(x_min), max=float(x_max)))
            return x_orig
        new_min = torch.min(cur_min, x_min)
        new_max = torch.max(cur_max, x_max)
        update = torch.histc(x, self.bins, min=float(new_min), max=float(new_max))
        if new_min == cur_min and new_max == cur_max:
            combined = self.histogram + update
        elif cur_min == cur_max:
            # The newest upstream weights the constant bin by the old histogram's mass (pytorch/pytorch#156414).
            moved = torch.histc(cur_min.reshape(1), self.bins, min=float(new_min), max=float(new_max))
            combined = moved * torch.sum(self.histogram) + update
        else:
            combined = update + self._upscale(self.histogram, cur_min, cur_max, new_min, new_max)
        self.histogram.copy_(combined)
        self.min_val.copy_(new_min)
        self.max_val.copy_(new_max)
        return x_orig


TORCH_CLASSES = {
    "minmax": tq.MinMaxObserver,
    "moving_average_minmax": tq.MovingAverageMinMaxObserver,
    "per_channel_minmax": tq.PerChannelMinMaxObserver,
    "moving_average_per_channel_minmax": tq.MovingAveragePerChannelMinMaxObserver,
    "histogram": tq.HistogramObserver,
}


# ---------------------------------------------------------------------------------------------------------------
# The numpy model of _calculate_qparams (numerics.md 2.3), used to check torch and to give octet's expected value
# where torch overflows.

def qrange(opts):
    dtype = opts["dtype"]
    rr = opts.get("reduce_range", False)
    if "quant_min" in opts:
        lo, hi = opts["quant_min"], opts["quant_max"]
        if rr:
            lo, hi = lo // 2, hi // 2
        return lo, hi, True
    if dtype == "qint8":
        return (-64, 63, False) if rr else (-128, 127, False)
    if dtype == "quint8":
        return (0, 127, False) if rr else (0, 255, False)
    return -(2 ** 31), 2 ** 31 - 1, False


def model_qparams(opts, mn, mx):
    """Returns (scale, zp_exact, zp_torch_int32_emulation) per channel."""
    lo, hi, custom = qrange(opts)
    eps = F32(opts.get("eps", np.finfo(np.float32).eps))
    mn = np.asarray(mn, F32).reshape(-1)
    mx = np.asarray(mx, F32).reshape(-1)
    out = []
    for a, b in zip(mn, mx):
        min_neg = F32(min(a, F32(0)))
        max_pos = F32(max(b, F32(0)))
        if "symmetric" in opts["qscheme"]:
            amax = F32(max(-min_neg, max_pos))
            scale = F32(amax / F32((hi - lo) / 2))
            scale = F32(max(scale, eps))
            zp = 0
            if opts["dtype"] == "quint8":
                zp = (lo + hi) // 2 if custom else 128
            out.append((scale, zp, zp))
        else:
            scale = F32(F32(max_pos - min_neg) / F32(float(hi - lo)))
            scale = F32(max(scale, eps))
            r = float(np.rint(F32(min_neg / scale)))
            zp = int(min(max(lo - int(r), lo), hi))
            # PyTorch converts rne(min_neg / scale) to int32 (wrapping) and subtracts in int32.
            ri = int(r)
            if not (-(2 ** 31) <= ri < 2 ** 31):
                ri = -(2 ** 31)  # x86 cvttss2si / cvttps2dq "integer indefinite"
            t = (lo - ri + 2 ** 31) % 2 ** 32 - 2 ** 31
            zp_torch = int(min(max(t, lo), hi))
            out.append((scale, zp, zp_torch))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Cases.

class Cases:
    def __init__(self, inputs):
        self.inputs = inputs
        self.cases = []
        self.names = set()
        self.known = 0

    def run(self, name, observer, opts, input_name, torch_extra=None, torch_filter=None, hist_file=None):
        assert name not in self.names, name
        self.names.add(name)
        case = {"name": name, "observer": observer, "options": opts, "input": input_name}
        kw = torch_kwargs(opts)
        if torch_extra:
            kw.update(torch_extra)
        cls = TORCH_CLASSES[observer]
        if observer == "histogram" and opts.get("histogram_variant", "upstream") == "upstream":
            cls = UpstreamHistogramObserver
        try:
            ob = cls(**kw)
        except (NotImplementedError, AssertionError) as e:
            case["expect"] = {"error": type(e).__name__, "message": str(e).split("\n")[0][:200]}
            self.cases.append(case)
            return case
        for b in self.inputs.arrays[input_name]:
            if torch_filter is not None:
                b = torch_filter(b)
            ob(torch.from_numpy(b.copy()))
        scale, zp = ob.calculate_qparams()
        scale = scale.numpy().astype(np.float32).reshape(-1)
        zp = zp.numpy().astype(np.int64).reshape(-1)
        expect = {
            "scale": jfl(scale),
            "zero_point": [int(z) for z in zp],
            "min_val": jfl(ob.min_val.numpy()),
            "max_val": jfl(ob.max_val.numpy()),
        }
        if observer != "histogram":
            self.check_model(case, opts, ob.min_val.numpy(), ob.max_val.numpy(), scale, zp, expect)
        elif not np.isinf(ob.min_val.item()):
            new_min, new_max = ob._non_linear_param_search()
            self.check_model(case, opts, new_min.numpy(), new_max.numpy(), scale, zp, expect)
        if hist_file is not None:
            np.save(os.path.join(HERE, hist_file), ob.histogram.numpy().astype(np.float32), allow_pickle=False)
            expect["histogram"] = hist_file
        case["expect"] = expect
        self.cases.append(case)
        return case

    def check_model(self, case, opts, mn, mx, scale, zp, expect):
        mn = np.asarray(mn, F32).reshape(-1)
        if mn.size == 0 or (mn.size == 1 and np.isinf(mn[0])):
            return
        model = model_qparams(opts, mn, mx)
        for c, (s, z_exact, z_torch) in enumerate(model):
            if np.float32(s).tobytes() != np.float32(scale[c]).tobytes():
                raise SystemExit(f"{case['name']}: model scale {s!r} != torch {scale[c]!r} (channel {c})")
            if z_torch != zp[c]:
                raise SystemExit(f"{case['name']}: model zero point {z_torch} != torch {zp[c]} (channel {c})")
            if z_exact != z_torch:
                # PyTorch's int32 overflow: octet computes the zero point in int64 (qparams_math.h).
                expect.setdefault("known_difference", "qint32_zero_point_overflow")
                expect.setdefault("octet_zero_point", [int(m[1]) for m in model])
                self.known += 1


def opt_name(opts):
    parts = [opts["dtype"], opts["qscheme"].replace("per_tensor_", "").replace("per_channel_", "")]
    if opts.get("reduce_range"):
        parts.append("rr")
    if "quant_min" in opts:
        parts.append(f"r{opts['quant_min']}_{opts['quant_max']}")
    if "eps" in opts:
        parts.append("eps")
    return "_".join(parts)


PER_TENSOR_INPUTS = ["normal", "uniform", "heavy_positive_zeros", "outlier", "outliers_two_sided", "constant",
                     "constant_negative", "all_zero", "single_negative", "single_positive", "negative_only",
                     "positive_only", "tiny_range", "large", "doc_example", "rne_tie", "grow_shrink", "with_empty",
                     "constant_then_normal"]
PER_CHANNEL_INPUTS = ["conv_weight", "linear_weight", "linear_weight_axis1", "activation_nchw", "activation_nhwc",
                      "activation_long_rows", "per_channel_sequence"]


def minmax_cases(cs):
    for inp in PER_TENSOR_INPUTS:
        for opts in per_tensor_configs():
            cs.run(f"minmax_{inp}_{opt_name(opts)}", "minmax", opts, inp)
    for inp in ["normal", "grow_shrink", "with_empty", "constant_then_normal", "outlier", "all_zero", "doc_example",
                "negative_only", "large"]:
        for opts in per_tensor_configs():
            cs.run(f"ma_{inp}_{opt_name(opts)}", "moving_average_minmax", opts, inp)
    for c in (0.5, 1.0, 0.1):
        for inp in ["grow_shrink", "constant_then_normal"]:
            opts = {"dtype": "qint8", "qscheme": "per_tensor_affine", "averaging_constant": c}
            cs.run(f"ma_{inp}_c{c}", "moving_average_minmax", opts, inp)
    for inp in PER_CHANNEL_INPUTS:
        ch_axis = cs.inputs.inputs[inp]["ch_axis"]
        for opts in per_channel_configs():
            o = dict(opts)
            o["ch_axis"] = ch_axis
            cs.run(f"pc_{inp}_{opt_name(o)}", "per_channel_minmax", o, inp)
        for opts in per_channel_configs()[:4]:
            o = dict(opts)
            o["ch_axis"] = ch_axis
            cs.run(f"mapc_{inp}_{opt_name(o)}", "moving_average_per_channel_minmax", o, inp)
    for c in (0.5, 1.0):
        o = {"dtype": "qint8", "qscheme": "per_channel_symmetric", "ch_axis": 1, "averaging_constant": c}
        cs.run(f"mapc_per_channel_sequence_c{c}", "moving_average_per_channel_minmax", o, "per_channel_sequence")


def histogram_inputs(inp, rng):
    inp.add("hist_uniform_first", [rng.uniform(-3.7, 5.2, 10000)],
            "U(-3.7, 5.2), 10000 values: 1.13 histograms [-3, 5] and loses the rest (numerics.md 2.7)")
    inp.add("hist_two_normals", [rng.normal(0.0, 2.0, 10000), rng.normal(0.0, 5.0, 10000)],
            "N(0, 2^2) then N(0, 5^2), 10000 each (numerics.md 2.7)")
    inp.add("hist_inside_unit", [rng.uniform(-0.9, 0.9, 3000), rng.uniform(-0.5, 0.95, 2000)],
            "values inside (-1, 1): int() gives 0 for both ends, histc falls back to the exact range")
    inp.add("hist_shifted", [rng.uniform(1.2, 7.9, 4000), rng.uniform(0.3, 9.7, 4000)],
            "values in (1.2, 7.9) then (0.3, 9.7): truncated ranges that lose samples at the top")
    batches = []
    for b in range(12):
        scale = float(np.exp(rng.uniform(-2.0, 2.5)))
        x = rng.normal(rng.uniform(-1.0, 1.0), scale, int(rng.integers(500, 3000)))
        if b % 4 == 3:
            x = np.maximum(x, 0.0)
        batches.append(x)
    inp.add("hist_many_batches", batches, "12 batches with random spread and offset, some rectified")
    inp.add("hist_post_relu", [np.maximum(rng.normal(0.5, 1.0, (8, 16, 14, 14)), 0.0) for _ in range(3)],
            "three post-ReLU activations 8x16x14x14")


HISTOGRAM_INPUTS = PER_TENSOR_INPUTS + ["hist_uniform_first", "hist_two_normals", "hist_inside_unit",
                                        "hist_shifted", "hist_many_batches", "hist_post_relu"]


def histogram_configs():
    q = "per_tensor_affine"
    s = "per_tensor_symmetric"
    return [
        {"dtype": "quint8", "qscheme": q},
        {"dtype": "qint8", "qscheme": s},
        {"dtype": "qint8", "qscheme": q, "reduce_range": True},
        {"dtype": "quint8", "qscheme": q, "reduce_range": True},
        {"dtype": "quint8", "qscheme": q, "quant_min": 0, "quant_max": 15},
        {"dtype": "qint8", "qscheme": s, "quant_min": -127, "quant_max": 127},
        {"dtype": "qint32", "qscheme": q},
        {"dtype": "qint8", "qscheme": s, "eps": 2.0 ** -12},
    ]


def histogram_cases(cs):
    for inp in HISTOGRAM_INPUTS:
        for k, opts in enumerate(histogram_configs()):
            o = dict(opts, histogram_variant="legacy_1_13")
            hist = f"hist_{inp}_b2048_u128.npy" if k == 0 else None
            cs.run(f"hist_{inp}_{opt_name(o)}", "histogram", o, inp, hist_file=hist)
    # Other bin counts and up-sampling rates; 2047 bins put histc's right edge in linspace's vectorised loop.
    for inp in ["normal", "grow_shrink", "hist_two_normals", "hist_many_batches", "outlier", "constant_then_normal"]:
        for bins, up in ((256, 128), (100, 16), (2048, 16), (64, 7), (2047, 128)):
            o = {"dtype": "quint8", "qscheme": "per_tensor_affine", "bins": bins, "upsample_rate": up,
                 "histogram_variant": "legacy_1_13"}
            cs.run(f"hist_{inp}_b{bins}_u{up}", "histogram", o, inp, hist_file=f"hist_{inp}_b{bins}_u{up}.npy")


def upstream_histogram_cases(cs):
    """The upstream variant (UpstreamHistogramObserver above): every input, the option sets, other bin counts and
    up-sampling rates (including b = 2047, whose last linspace edge is computed in the vectorised loop), and
    +-inf / NaN batches (inf dropped by the observer itself, NaN skipped with skip_non_finite)."""
    for inp in HISTOGRAM_INPUTS:
        for k, opts in enumerate(histogram_configs()):
            hist = f"uphist_{inp}_b2048_u16.npy" if k == 0 else None
            cs.run(f"uphist_{inp}_{opt_name(opts)}", "histogram", dict(opts), inp, hist_file=hist)
    for inp in ["normal", "grow_shrink", "hist_two_normals", "hist_many_batches", "outlier", "constant_then_normal",
                "hist_post_relu"]:
        for bins, up in ((256, 128), (100, 16), (2047, 16), (64, 7), (2048, 128)):
            o = {"dtype": "quint8", "qscheme": "per_tensor_affine", "bins": bins, "upsample_rate": up}
            cs.run(f"uphist_{inp}_b{bins}_u{up}", "histogram", o, inp, hist_file=f"uphist_{inp}_b{bins}_u{up}.npy")
    finite = lambda b: b[np.isfinite(b)]  # noqa: E731
    for opts in histogram_configs()[:2]:
        o = dict(opts, skip_non_finite=True)
        cs.run(f"uphist_skip_{opt_name(o)}", "histogram", o, "nonfinite_mix", torch_filter=finite,
               hist_file=f"uphist_skip_{opt_name(o)}.npy")


def primitives(rng):
    """Outputs of the torch operators that observers/torch_numerics.h reproduces."""
    sizes = [1, 5, 8, 9, 31, 32, 33, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1000, 2047, 2048, 2049, 4096,
             5000, 20000]
    parts = []
    sums = []
    for n in sizes:
        x = (rng.standard_normal(n) * np.exp(rng.uniform(-6, 6, n))).astype(F32)
        x[rng.random(n) < 0.2] = 0.0
        parts.append(x)
        sums.append(jf(torch.sum(torch.from_numpy(x)).item()))
    flat = np.concatenate(parts)
    np.save(os.path.join(HERE, "prim_sum_x.npy"), flat, allow_pickle=False)
    c = flat[:5000]
    np.save(os.path.join(HERE, "prim_cumsum_y.npy"), torch.cumsum(torch.from_numpy(c), 0).numpy(), allow_pickle=False)
    a = (rng.standard_normal(4000) * 100).astype(F32)
    b = np.abs(rng.standard_normal(4000) * 3).astype(F32) + F32(1e-3)
    b[::7] = -b[::7]
    a[::11] = b[::11] * F32(3)  # exact multiples
    ab = np.stack([a, b])
    np.save(os.path.join(HERE, "prim_div_floor_ab.npy"), ab, allow_pickle=False)
    np.save(os.path.join(HERE, "prim_div_floor_y.npy"),
            torch.div(torch.from_numpy(a), torch.from_numpy(b), rounding_mode="floor").numpy(), allow_pickle=False)
    spaces = []
    for steps in (2, 3, 15, 16, 17, 31, 32, 33, 47, 48, 100, 101, 257, 2048, 2049, 4096, 32769):
        for _ in range(3):
            lo = F32(rng.standard_normal() * np.exp(rng.uniform(-4, 4)))
            hi = F32(lo + np.abs(rng.standard_normal()) * np.exp(rng.uniform(-4, 4)) + F32(1e-3))
            spaces.append({"start": jf(lo), "end": jf(hi), "steps": steps})
    lin = np.concatenate([torch.linspace(float(c["start"]), float(c["end"]), c["steps"]).numpy() for c in spaces])
    np.save(os.path.join(HERE, "prim_linspace_y.npy"), lin.astype(F32), allow_pickle=False)
    return {
        "linspace": {"cases": spaces, "expected": "prim_linspace_y.npy",
                     "note": "torch.linspace(start, end, steps) of every case, concatenated (one thread)"},
        "sum": {"x": "prim_sum_x.npy", "sizes": sizes, "expected": sums,
                "note": "torch.sum of consecutive slices of x with these sizes"},
        "cumsum": {"x": "prim_sum_x.npy", "n": 5000, "expected": "prim_cumsum_y.npy",
                   "note": "torch.cumsum of the first n values of x"},
        "div_floor": {"ab": "prim_div_floor_ab.npy", "expected": "prim_div_floor_y.npy",
                      "note": "torch.div(a, b, rounding_mode='floor'), a and b the rows of ab"},
    }


def rejected_cases(cs):
    """Combinations PyTorch 1.13 rejects at construction (NotImplementedError or AssertionError)."""
    rejected = [
        ("minmax", {"dtype": "quint8", "qscheme": "per_channel_affine"}),
        ("moving_average_minmax", {"dtype": "qint8", "qscheme": "per_channel_symmetric"}),
        ("per_channel_minmax", {"dtype": "qint8", "qscheme": "per_tensor_affine"}),
        ("moving_average_per_channel_minmax", {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
        ("histogram", {"dtype": "quint8", "qscheme": "per_channel_affine"}),
        ("minmax", {"dtype": "quint8", "qscheme": "per_tensor_symmetric", "reduce_range": True}),
        ("moving_average_minmax", {"dtype": "quint8", "qscheme": "per_tensor_symmetric", "reduce_range": True}),
        ("per_channel_minmax", {"dtype": "quint8", "qscheme": "per_channel_symmetric", "reduce_range": True}),
        ("minmax", {"dtype": "qint8", "qscheme": "per_tensor_affine", "quant_min": 1, "quant_max": 100}),
        ("minmax", {"dtype": "qint8", "qscheme": "per_tensor_affine", "quant_min": -100, "quant_max": -1}),
        ("minmax", {"dtype": "qint8", "qscheme": "per_tensor_affine", "quant_min": 0, "quant_max": 0}),
        ("minmax", {"dtype": "qint8", "qscheme": "per_tensor_affine", "quant_min": -200, "quant_max": 100}),
        ("histogram", {"dtype": "qint8", "qscheme": "per_tensor_affine", "quant_min": -300, "quant_max": 0}),
        ("minmax", {"dtype": "qint32", "qscheme": "per_tensor_affine", "quant_min": -(2 ** 31),
                    "quant_max": 2 ** 31 - 1}),
    ]
    for i, (observer, opts) in enumerate(rejected):
        extra = {"histogram_variant": "legacy_1_13"} if observer == "histogram" else {}
        case = cs.run(f"rejected_{i}_{observer}", observer, dict(opts, **extra), "normal")
        if "error" not in case["expect"]:
            raise SystemExit(f"{case['name']}: torch accepted {opts}")


def skip_non_finite_cases(cs, inp, rng):
    x = rng.normal(0.0, 2.0, 1000).astype(F32)
    x[[3, 100, 500, 501, 999]] = np.nan
    x[[10, 20, 30]] = np.inf
    x[[40, 50]] = -np.inf
    y = rng.normal(1.0, 1.0, 64).astype(F32)
    y[:4] = [np.nan, np.inf, -np.inf, np.nan]
    inp.add("nonfinite_mix", [x, y, np.full(8, np.nan, F32)],
            "batches with NaN, +inf and -inf (the last all NaN); expected from torch on the finite values")
    finite = lambda b: b[np.isfinite(b)]  # noqa: E731
    for observer in ("minmax", "moving_average_minmax"):
        for opts in per_tensor_configs()[:4]:
            o = dict(opts, skip_non_finite=True)
            cs.run(f"skip_{observer}_{opt_name(o)}", observer, o, "nonfinite_mix", torch_filter=finite)


def main():
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    for name in os.listdir(HERE):
        if name.endswith(".npy"):
            os.remove(os.path.join(HERE, name))
    inp = Inputs()
    per_tensor_inputs(inp, np.random.default_rng(20250301))
    per_channel_inputs(inp, np.random.default_rng(20250302))
    cs = Cases(inp)
    minmax_cases(cs)
    histogram_inputs(inp, np.random.default_rng(20250304))
    histogram_cases(cs)
    skip_non_finite_cases(cs, inp, np.random.default_rng(20250303))
    upstream_histogram_cases(cs)
    rejected_cases(cs)
    prims = primitives(np.random.default_rng(20250305))

    per_observer = {}
    for c in cs.cases:
        per_observer[c["observer"]] = per_observer.get(c["observer"], 0) + 1
    manifest = {
        "description": "PyTorch 1.13 reference results for octet's observers (tests/observers/pytorch_parity_test.cc)."
                       " Generated; do not edit by hand.",
        "generator": "tests/data/observers/generate.py",
        "command": "/usr/bin/python3 tests/data/observers/generate.py",
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "conventions": {
            "floats": "float32 values as JSON numbers (exact doubles), or \"inf\", \"-inf\", \"nan\"",
            "options": "octet's option names (observers/observer_options.h); torch got the same keyword arguments",
            "expect": "scale / zero_point from calculate_qparams() after every batch of the input in order, and the "
                      "min_val / max_val buffers; or error = the exception PyTorch raises at construction",
            "known_difference": "qint32_zero_point_overflow: PyTorch converts rne(min_neg / scale) to int32 and "
                                "wraps; octet computes the zero point in int64; octet_zero_point is octet's value",
            "skip_non_finite": "expected values come from torch on the finite elements of each batch",
        },
        "primitives": prims,
        "inputs": inp.inputs,
        "num_cases": len(cs.cases),
        "num_known_differences": cs.known,
        "cases_per_observer": per_observer,
    }
    text = json.dumps(manifest, indent=1)[:-2]
    text += ',\n "cases": [\n' + ",\n".join("  " + json.dumps(c) for c in cs.cases) + "\n ]\n}\n"
    assert len(json.loads(text)["cases"]) == len(cs.cases)
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        f.write(text)
    size = sum(os.path.getsize(os.path.join(HERE, n)) for n in os.listdir(HERE))
    print(f"{len(cs.cases)} cases ({cs.known} known differences), {per_observer}, folder {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

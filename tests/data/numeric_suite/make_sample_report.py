#!/usr/bin/env python3
"""Writes sample_report.json: a numeric-suite report (schema version 1, ../../../../specs/ns_report_schema.md) for a
digits CNN (conv1 -> pool1 -> conv2 -> pool2 -> fc1 -> fc2), used by the HTML report tests and docs/report.png.

The weight entries are computed: seeded Gaussian weights per output channel, quantized per channel (symmetric, s8,
scale = max|w| / 127.5 as PyTorch's per_channel_symmetric qint8), with their SQNR, normalized L2, cosine, max abs
error in LSB, 64-bin float vs dequantized histograms and channel ranges. Activation, shadow, output and sensitivity
figures are hand-picked, plausible values (one layer under 20 dB so every bar colour appears).
Python standard library only:  python3 make_sample_report.py  (rewrites sample_report.json beside it).
"""
import json
import math
import os
import random

BINS = 64


def quantize_per_channel(channels):
    dq, params = [], []
    for w in channels:
        scale = max(abs(min(w)), abs(max(w))) / 127.5
        q = [max(-128, min(127, round(v / scale))) for v in w]
        dq.append([v * scale for v in q])
        params.append({"min": round(min(w), 6), "max": round(max(w), 6), "scale": float(f"{scale:.6g}"),
                       "zero_point": 0})
    return dq, params


def histogram(values, lo, hi):
    counts = [0] * BINS
    for v in values:
        counts[min(BINS - 1, max(0, int((v - lo) / (hi - lo) * BINS)))] += 1
    return counts


def weight_entry(rng, name, node, op, out_channels, fan_in, std):
    channels = [[rng.gauss(0.0, std * rng.uniform(0.5, 1.5)) for _ in range(fan_in)] for _ in range(out_channels)]
    dq, params = quantize_per_channel(channels)
    x = [v for c in channels for v in c]
    y = [v for c in dq for v in c]
    err = math.sqrt(sum((a - b) ** 2 for a, b in zip(x, y)))
    norm_x, norm_y = math.sqrt(sum(a * a for a in x)), math.sqrt(sum(b * b for b in y))
    lsb = max(abs(a - b) / p["scale"] for c, d, p in zip(channels, dq, params) for a, b in zip(c, d))
    lo, hi = min(x), max(x)
    return {
        "name": name, "node": node, "op": op,
        "sqnr_db": round(20 * math.log10(norm_x / err), 2),
        "normalized_l2": float(f"{err / norm_x:.4g}"),
        "cosine": round(sum(a * b for a, b in zip(x, y)) / (norm_x * norm_y), 7),
        "max_abs_error_lsb": round(lsb, 3),
        "qscheme": "per_channel_symmetric", "dtype": "s8", "axis": 0,
        "histogram": {"min": round(lo, 6), "max": round(hi, 6), "float": histogram(x, lo, hi),
                      "quantized": histogram(y, lo, hi)},
        "channels": params,
    }


def metrics(sqnr, cosine, lsb):
    return {"sqnr_db": sqnr, "normalized_l2": float(f"{10 ** (-sqnr / 20):.4g}"), "cosine": cosine,
            "max_abs_error_lsb": lsb}


def main():
    rng = random.Random(20261121)
    weights = [
        weight_entry(rng, "conv1.weight", "conv1", "QConv", 8, 1 * 3 * 3, 0.35),
        weight_entry(rng, "conv2.weight", "conv2", "QConv", 16, 8 * 3 * 3, 0.12),
        weight_entry(rng, "fc1.weight", "fc1", "QGemm", 32, 64, 0.09),
        weight_entry(rng, "fc2.weight", "fc2", "QGemm", 10, 32, 0.2),
    ]
    activations = [
        {"name": "conv1", "value": "conv1_out", "op": "QConv", "shape": [16, 8, 8, 8], **metrics(34.6, 0.99983, 2.0),
         "scale": 0.0213, "zero_point": -128, "clipped_fraction": 0.0004, "accumulator_headroom_bits": 12.4},
        {"name": "conv2", "value": "conv2_out", "op": "QConv", "shape": [16, 16, 4, 4], **metrics(27.9, 0.99919, 4.0),
         "scale": 0.0371, "zero_point": -128, "clipped_fraction": 0.0021, "accumulator_headroom_bits": 8.7},
        {"name": "fc1", "value": "fc1_out", "op": "QGemm", "shape": [16, 32], **metrics(24.3, 0.99815, 6.0),
         "scale": 0.0522, "zero_point": -128, "clipped_fraction": 0.0049, "accumulator_headroom_bits": 9.9},
        {"name": "fc2", "value": "logits", "op": "QGemm", "shape": [16, 10], **metrics(19.4, 0.99427, 9.0),
         "scale": 0.1187, "zero_point": 3, "clipped_fraction": 0.0125, "accumulator_headroom_bits": 10.6},
    ]
    shadow = [
        {"name": "conv1", "op": "QConv", **metrics(36.2, 0.99988, 1.0)},
        {"name": "pool1", "op": "QMaxPool", "sqnr_db": None, "exact": True, "normalized_l2": 0.0, "cosine": 1.0,
         "max_abs_error_lsb": 0.0},
        {"name": "conv2", "op": "QConv", **metrics(31.5, 0.99965, 2.0)},
        {"name": "fc1", "op": "QGemm", **metrics(29.1, 0.99939, 3.0)},
        {"name": "fc2", "op": "QGemm", **metrics(33.0, 0.99975, 2.0)},
    ]
    report = {
        "schema_version": 1,
        "generator": "octet 0.1.0 (sample report, tests/data/numeric_suite/make_sample_report.py)",
        "float_model": "digits_cnn.onnx", "quantized_model": "digits_cnn.octet",
        "inputs": [{"name": "image", "file": "digits_test_x.npy", "shape": [16, 1, 8, 8]}],
        "weights": weights,
        "activations": activations,
        "shadow": shadow,
        "outputs": [{"name": "logits", **metrics(19.4, 0.99427, 9.0)}],
        "sensitivity": {
            "metric": "output_sqnr_db", "target": 25.0, "all_quantized": 19.4, "float": None,
            "nodes": [
                {"name": "fc2", "op": "Gemm", "only_this_quantized": 31.9, "all_but_this_quantized": 26.8,
                 "int8_latency_us": 0.6, "float_latency_us": 0.9, "rank": 1},
                {"name": "fc1", "op": "Gemm", "only_this_quantized": 28.7, "all_but_this_quantized": 23.2,
                 "int8_latency_us": 1.1, "float_latency_us": 2.4, "rank": 2},
                {"name": "conv2", "op": "Conv", "only_this_quantized": 30.2, "all_but_this_quantized": 21.5,
                 "int8_latency_us": 6.8, "float_latency_us": 19.5, "rank": 3},
                {"name": "conv1", "op": "Conv", "only_this_quantized": 34.1, "all_but_this_quantized": 20.1,
                 "int8_latency_us": 4.9, "float_latency_us": 11.2, "rank": 4},
            ],
            "keep_float": ["fc2"], "achieved": 26.8,
        },
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample_report.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

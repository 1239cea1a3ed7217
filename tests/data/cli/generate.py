#!/usr/bin/python3
"""Generates the inputs and expected outputs of tests/cli/cli_test.sh (run with /usr/bin/python3 and numpy).

The expected outputs are an independent NumPy transcription of DESIGN.md §4 (the spec of
ops/reference/quantize_reference.h), all in float32 except where the spec says otherwise:
  quantize:      q = clamp(zp + rne(x * f32(1 / scale)), qmin, qmax), the rounding and clamp in float64 (exact)
  dequantize:    x = f32(q - zp) * scale
  fake-quantize: qval = f32(zp) + rne(x * f32(1 / scale)); y = (clamp(qval, qmin, qmax) - zp) * scale;
                 mask = qmin <= qval <= qmax
Inputs use scales whose reciprocals are exact, so the ties (x.5 after scaling) really are ties.
Usage: /usr/bin/python3 tests/data/cli/generate.py   (writes next to this file)
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32
LIMITS = {"u8": (0, 255, np.uint8), "s8": (-128, 127, np.int8), "s32": (-2**31, 2**31 - 1, np.int32)}


def save(name, array):
    np.save(os.path.join(HERE, name), array)


def channel_view(values, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return np.asarray(values).reshape(shape)


def quantize(x, scales, zps, dtype, axis=None, qmin=None, qmax=None):
    lo, hi, np_type = LIMITS[dtype]
    lo = lo if qmin is None else qmin
    hi = hi if qmax is None else qmax
    scales = np.atleast_1d(np.asarray(scales, dtype=F32))
    zps = np.atleast_1d(np.asarray(zps, dtype=np.int64))
    inv = (F32(1.0) / scales).astype(F32)
    if axis is not None:
        inv = channel_view(inv, axis, x.ndim)
        zps = channel_view(zps, axis, x.ndim)
    with np.errstate(invalid="ignore", over="ignore"):
        v = (x * inv).astype(F32)                    # the float32 product
        r = np.rint(v.astype(np.float64)) + zps     # rne, exact in float64
    r = np.where(np.isnan(r), np.broadcast_to(zps, r.shape).astype(np.float64), r)  # NaN -> zp (permissive)
    return np.clip(r, lo, hi).astype(np_type)


def dequantize(q, scales, zps, axis=None):
    scales = np.atleast_1d(np.asarray(scales, dtype=F32))
    zps = np.atleast_1d(np.asarray(zps, dtype=np.int64))
    if axis is not None:
        scales = channel_view(scales, axis, q.ndim)
        zps = channel_view(zps, axis, q.ndim)
    return ((q.astype(np.int64) - zps).astype(F32) * scales).astype(F32)


def fake_quantize(x, scales, zps, qmin, qmax, axis=None):
    scales = np.atleast_1d(np.asarray(scales, dtype=F32))
    zps = np.atleast_1d(np.asarray(zps, dtype=np.int64))
    inv = (F32(1.0) / scales).astype(F32)
    if axis is not None:
        scales, inv, zps = (channel_view(a, axis, x.ndim) for a in (scales, inv, zps))
    zpf = zps.astype(F32)
    with np.errstate(invalid="ignore", over="ignore"):
        qval = (zpf + np.rint((x * inv).astype(F32))).astype(F32)
        mask = ((qval >= F32(qmin)) & (qval <= F32(qmax))).astype(np.uint8)
        y = ((np.clip(qval, F32(qmin), F32(qmax)) - zpf) * scales).astype(F32)
    nan = np.isnan(qval)
    y[nan] = F32(0.0)
    mask[nan] = 0
    return y, mask


def main():
    # 24 values: ties in both directions, signed zeros, saturation at both ends, ±Inf and huge magnitudes.
    x = np.array([0.25, 0.75, -0.25, -0.75, 1.25, -1.25, 0.0, -0.0,
                  1.0, -1.0, 127.0, -10.0, np.inf, -np.inf, 1e30, -1e30,
                  3.3, -2.2, 0.1, 100.0, 62.0, 62.25, 63.75, -1.75], dtype=F32).reshape(2, 3, 4)
    save("x.npy", x)

    # Per-tensor, scale 0.5 (1/scale = 2 exactly), one file per dtype.
    pt = {"u8": 3, "s8": -3, "s32": 1000}
    for dtype, zp in pt.items():
        q = quantize(x, 0.5, zp, dtype)
        save("q_pt_%s.npy" % dtype, q)
        save("dq_pt_%s.npy" % dtype, dequantize(q, 0.5, zp))
    # A sub-range: quint8 over [10, 200].
    save("q_pt_u8_range.npy", quantize(x, 0.5, 3 + 10, "u8", qmin=10, qmax=200))

    # Per-channel along axis 1 (3 channels), quint8, zero points stored as int64 (as PyTorch writes them).
    pc_scales = np.array([0.5, 0.25, 2.0], dtype=F32)
    pc_zps = np.array([3, 128, 250], dtype=np.int64)
    save("pc_scales.npy", pc_scales)
    save("pc_zps.npy", pc_zps)
    q = quantize(x, pc_scales, pc_zps, "u8", axis=1)
    save("q_pc_u8.npy", q)
    save("dq_pc_u8.npy", dequantize(q, pc_scales, pc_zps, axis=1))

    # Per-channel along the last axis (axis -1 = 2, 4 channels), qint8, zero points int32.
    pc4_scales = np.array([1.0, 0.5, 0.125, 4.0], dtype=F32)
    pc4_zps = np.array([0, -5, 10, 127], dtype=np.int32)
    save("pc4_scales.npy", pc4_scales)
    save("pc4_zps.npy", pc4_zps)
    q = quantize(x, pc4_scales, pc4_zps, "s8", axis=2)
    save("q_pc4_s8.npy", q)
    save("dq_pc4_s8.npy", dequantize(q, pc4_scales, pc4_zps, axis=2))

    # Fake-quantize: per-tensor 4-bit [0, 15] and per-channel (axis 1) over [-8, 7].
    y, mask = fake_quantize(x, 0.5, 3, 0, 15)
    save("fq_pt.npy", y)
    save("fq_pt_mask.npy", mask)
    fq_zps = np.array([0, -2, 5], dtype=np.int64)
    save("fq_pc_zps.npy", fq_zps)
    y, mask = fake_quantize(x, pc_scales, fq_zps, -8, 7, axis=1)
    save("fq_pc.npy", y)
    save("fq_pc_mask.npy", mask)

    # NaN handling: an error by default; with --nan zero-point it quantizes to the zero point.
    xn = np.array([1.0, np.nan, -1.0, 2.0], dtype=F32)
    save("nan.npy", xn)
    save("q_nan_u8.npy", quantize(xn, 0.5, 3, "u8"))
    y, mask = fake_quantize(xn, 0.5, 3, 0, 15)
    save("fq_nan.npy", y)
    save("fq_nan_mask.npy", mask)

    # Inputs of the wrong kind: float64 (unsupported), int32 where float32 is needed, 2-D scales.
    save("x_f64.npy", x.astype(np.float64))
    save("x_s32.npy", np.arange(24, dtype=np.int32).reshape(2, 3, 4))
    save("scales_2d.npy", pc_scales.reshape(1, 3))
    save("pc_zps_short.npy", pc_zps[:2])


if __name__ == "__main__":
    main()

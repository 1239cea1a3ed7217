#!/usr/bin/python3
"""Generates octet's PyTorch reference data: tests/data/pytorch/*.npy and manifest.json.

Run with Debian's python3-torch (PyTorch 1.13) from the repository root:

    /usr/bin/python3 tests/data/pytorch/generate.py

Deterministic: every random draw comes from numpy generators with fixed seeds, and torch is only used to compute
outputs. The folder is rewritten from scratch (old .npy files in it are removed). torch is never needed to build
or test octet; tests/ops/pytorch_reference_test.cc reads the files written here.

Cases (see README.md next to this file):
  * quantize_per_tensor / quantize_per_channel: expected output is `.int_repr()` (uint8 / int8 / int32 .npy).
  * dequantize (per tensor and per channel): input is the integer representation, expected output float32.
  * fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine: expected output float32 and the gradient
    mask (backward with ones as the incoming gradient), stored as uint8 0/1.

Every scale is a float32 value (passed to torch as the double holding exactly that float), so the float32 scale
octet reads from the manifest is the scale torch used.

Equality cases (`"expect_equal": true`) avoid inputs where octet deliberately differs from PyTorch; those inputs
are in the `known_difference` cases (`"expect_equal"` computed by comparing PyTorch with octet's documented rule),
so the test can check octet's own behaviour there. The generator also checks every equality case against octet's
documented formulas computed in numpy (DESIGN.md section 4, numerics.md section 2.1) and stops if one differs.
"""

import hashlib
import json
import os
import platform
import sys
import warnings
from fractions import Fraction

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32
INT_RANGES = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(2**31), 2**31 - 1)}
TORCH_DTYPES = {"quint8": torch.quint8, "qint8": torch.qint8, "qint32": torch.qint32}
NP_DTYPES = {"quint8": np.uint8, "qint8": np.int8, "qint32": np.int32}

# Awkward and ordinary scales, all rounded to float32 first: a decimal that is not a binary fraction, a tiny one, a
# large one, values computed from other floats (0.1/3 and an observer-like 2/255), a power of two and others.
SCALES = [
    F32(0.0123),
    F32(1e-3),
    F32(3.7),
    F32(0.1 / 3),
    F32(0.05),
    F32(2**-7),
    F32(F32(2.0) / F32(255.0)),
    F32(F32(0.9) / F32(127.5)),
    F32(1e-5),
    F32(1234.5),
]
# Sizes around every vector width's tail (8, 16, 32, 64 lanes) plus longer arrays.
SIZES = [1, 7, 15, 17, 31, 33, 63, 65, 127, 129, 1000, 1031, 4099]
ZERO_POINTS = {
    "quint8": [0, 3, 128, 255, 127, 1, 200, 64, 17, 254],
    "qint8": [0, -1, 3, -128, 127, 10, -5, 64, -127, 126],
    "qint32": [0, 3, -7, 12345, -100000, 0, 1, 2**20 + 1, -(2**31), 2**31 - 1],
}
# Octet's equality domain: |x * inv_scale| below this (PyTorch converts through int64 and maps NaN, +-Inf and
# |x/scale| >= 2^63 to quant_min; octet saturates; the brief keeps the equality cases below 2^31).
EQ_BOUND = 2.0**31
# qint32 with a non-zero zero point: PyTorch adds zp to rne(x * inv_scale) in float32 (observed on 1.13), which
# rounds once |zp + rne(x/scale)| >= 2^24; octet adds exactly. Random and edge values for those cases are drawn
# below 2^24 and safe_for_equality removes the rest; the difference itself is a known_difference case.
EQ_BOUND_QINT32_ZP = 2.0**24


def rne(v):
    return np.rint(np.asarray(v, dtype=np.float64))


def inv_of(scale):
    return F32(F32(1.0) / F32(scale))


# ---------------------------------------------------------------------------------------------------------------
# octet's documented formulas in numpy (used to check the equality cases and to decide expect_equal).

def octet_quantize(x, scale, zp, lo, hi):
    """q = clamp(zp + rne(f32(x * f32(1/scale))), lo, hi); exact integer add; +-Inf saturate; NaN -> zp."""
    v = (np.asarray(x, F32) * inv_of(scale)).astype(F32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        r = np.where(np.isnan(v), float(zp), np.clip(rne(v) + zp, lo, hi))
    return r.astype(np.int64)


def octet_dequantize(q, scale, zp):
    """x = f32(float(q - zp) * scale), q - zp exact in int64."""
    return (np.asarray(q, np.int64) - zp).astype(F32) * F32(scale)


def octet_fake_quantize(x, scale, zp, lo, hi):
    """qval = f32(zp) + rne(f32(x * inv)) in float32; y = (clamp(qval) - zp) * scale; mask = lo <= qval <= hi."""
    v = (np.asarray(x, F32) * inv_of(scale)).astype(F32)
    with np.errstate(invalid="ignore"):
        qval = (F32(zp) + np.rint(v)).astype(F32)
        mask = ((qval >= F32(lo)) & (qval <= F32(hi))).astype(np.uint8)
        c = np.clip(qval, F32(lo), F32(hi)).astype(F32)
        y = ((c - F32(zp)).astype(F32) * F32(scale)).astype(F32)
        y = np.where(np.isnan(qval), F32(0), y).astype(F32)
        mask = np.where(np.isnan(qval), np.uint8(0), mask).astype(np.uint8)
    return y, mask


def channel_views(arr, axis):
    """Yields (c, slice index tuple) for each channel along axis."""
    for c in range(arr.shape[axis]):
        idx = [slice(None)] * arr.ndim
        idx[axis] = c
        yield c, tuple(idx)


# ---------------------------------------------------------------------------------------------------------------
# Input construction.

def x_for_v(v, scale):
    """A float32 x with f32(x * inv_scale) == f32(v) exactly when one exists near v*scale, else the nearest try."""
    inv = inv_of(scale)
    target = F32(v)
    x0 = F32(target / inv)
    up = down = x0
    for _ in range(64):
        for cand in (up, down):
            if F32(cand * inv) == target:
                return cand
        up = np.nextafter(up, F32(np.inf))
        down = np.nextafter(down, F32(-np.inf))
    return x0


def exact_ties(scale, ks):
    """x values with f32(x * inv_scale) == k + 0.5 exactly, and their float neighbours (just off the tie)."""
    inv = inv_of(scale)
    out = []
    for k in ks:
        t = F32(k + 0.5)
        if float(t) != k + 0.5:
            continue
        x = x_for_v(t, scale)
        if F32(x * inv) != t:
            continue
        out.append(x)
        out.append(np.nextafter(x, F32(np.inf)))
        out.append(np.nextafter(x, F32(-np.inf)))
    return np.array(out, F32)


def tie_ks(zp, lo, hi, rng):
    """k values whose tie k + 0.5 lands inside, at and just beyond [lo - zp, hi - zp]."""
    a, b = lo - zp, hi - zp
    if b - a <= 300:
        ks = list(range(a - 2, b + 2))
    else:
        ks = list(range(-6, 6)) + [a - 1, a, b - 1, b]
        ks += [int(k) for k in rng.integers(-(2**22), 2**22, 40)]
        ks += [int(k) for k in rng.integers(-1000, 1000, 40)]
    return [k for k in ks if abs(k) < 2**23]


def edge_values(scale, zp, lo, hi, bound):
    """Values at, around and beyond the clamp ends (q = lo and q = hi) in the v = x/scale domain."""
    vs = []
    for end in (lo, hi):
        t = end - zp
        sign = 1 if end == hi else -1
        for dv in (0, -1, 1, -0.5, 0.5, -0.25, 0.25, 2, 10, 100, 1e4, 1e6, 1e9):
            vs.append(t + (sign * dv if dv >= 2 else dv))
    vs += [0.0, -0.0, 0.5, -0.5, 1.5, -1.5]
    xs = []
    for v in vs:
        if abs(v) >= bound * 0.999:
            continue
        x = x_for_v(v, scale)
        xs += [x, np.nextafter(x, F32(np.inf)), np.nextafter(x, F32(-np.inf))]
    # Just inside the equality bound.
    for v in (bound * 0.99, -bound * 0.99, bound / 2, -bound / 2):
        xs.append(x_for_v(v, scale))
    x = np.array(xs, F32)
    keep = np.abs((x * inv_of(scale)).astype(F32).astype(np.float64)) < bound
    return x[keep]


def within(x, scale, bound):
    """Shrinks values whose |x * inv_scale| is not below bound."""
    x = np.asarray(x, F32).copy()
    inv = inv_of(scale)
    for _ in range(200):
        bad = np.abs((x * inv).astype(F32).astype(np.float64)) >= bound
        if not bad.any():
            return x
        x[bad] = (x[bad] * F32(0.5)).astype(F32)
    raise RuntimeError("could not bring values inside the bound")


def random_values(rng, n, scale, zp, lo, hi, bound):
    """Normal data covering [lo, hi] after scaling with some overflow at both ends."""
    span = min(float(hi - lo), 2.0 * bound)
    centre = (lo + hi) / 2.0 - zp
    centre = max(min(centre, bound / 2), -bound / 2)
    v = rng.standard_normal(n) * (span / 5.0) + centre
    x = (v * float(scale)).astype(F32)
    return within(x, scale, bound)


def bound_for(dtype, zp):
    """The |x/scale| bound used to draw values (the equality domain is further narrowed by safe_for_equality)."""
    return EQ_BOUND_QINT32_ZP if (dtype == "qint32" and zp != 0) else EQ_BOUND


def float_add_differs(x, scale, zp, dtype):
    """Elements where clamping PyTorch's float32 sum zp + rne(x/scale) gives another integer than clamping the exact
    sum (qint32 with zp != 0 only; for 8-bit dtypes every sum involved is exact in float32)."""
    if dtype != "qint32" or zp == 0:
        return np.zeros(np.shape(x), bool)
    lo, hi = INT_RANGES[dtype]
    with np.errstate(invalid="ignore"):
        r = rne((np.asarray(x, F32) * inv_of(scale)).astype(F32))
        exact = r + zp  # exact in float64 for |r| < 2^53
        rounded = exact.astype(F32).astype(np.float64)
        return np.clip(rounded, lo, hi) != np.clip(exact, lo, hi)


def safe_for_equality(x, scale, zp, dtype):
    """Halves the elements that fall in the qint32 float-add difference (see QINT32_ZP_REASON) until none do."""
    x = np.asarray(x, F32).copy()
    for _ in range(200):
        bad = float_add_differs(x, scale, zp, dtype)
        if not bad.any():
            return x
        x[bad] = (x[bad] * F32(0.5)).astype(F32)
    raise RuntimeError("could not leave the qint32 float-add domain")


# ---------------------------------------------------------------------------------------------------------------
# Files and manifest.

class Store:
    def __init__(self, folder):
        self.folder = folder
        self.by_hash = {}
        self.names = set()
        self.cases = []

    def save(self, stem, arr):
        arr = np.ascontiguousarray(arr)
        h = hashlib.sha256(str(arr.dtype).encode() + str(arr.shape).encode() + arr.tobytes()).hexdigest()
        if h in self.by_hash:
            return self.by_hash[h]
        name = stem + ".npy"
        i = 1
        while name in self.names:
            i += 1
            name = f"{stem}_{i}.npy"
        np.save(os.path.join(self.folder, name), arr, allow_pickle=False)
        self.names.add(name)
        self.by_hash[h] = name
        return name

    def add(self, case):
        names = {c["name"] for c in self.cases}
        assert case["name"] not in names, case["name"]
        self.cases.append(case)


def tensor(x):
    return torch.from_numpy(np.ascontiguousarray(x))


def check_equal(what, got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    if got.dtype.kind == "f":
        same = got.view(np.uint32) == want.astype(F32).view(np.uint32)
    else:
        same = got.astype(np.int64) == want.astype(np.int64)
    if not same.all():
        i = int(np.argmin(same.reshape(-1)))
        raise SystemExit(f"{what}: PyTorch and octet's documented formula differ at flat index {i}: "
                         f"torch {got.reshape(-1)[i]!r}, formula {want.reshape(-1)[i]!r}")


def same_bits(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype.kind == "f":
        return bool((a.astype(F32).view(np.uint32) == b.astype(F32).view(np.uint32)).all())
    return bool((a.astype(np.int64) == b.astype(np.int64)).all())


def base_case(name, op, dtype, scales, zps, axis, lo, hi, kind):
    return {
        "name": name,
        "op": op,
        "dtype": dtype,
        "scales": [float(s) for s in scales],
        "zero_points": [int(z) for z in zps],
        "axis": axis,
        "quant_min": int(lo),
        "quant_max": int(hi),
        "kind": kind,
    }


def add_case(st, name, op, dtype, scales, zps, axis, lo, hi, kind, expect_equal, reason, inp, expected, mask=None):
    """Saves a case's arrays (inp and expected: (suffix, array); the file NAME.SUFFIX.npy; then the mask) and adds
    its manifest entry."""
    c = base_case(name, op, dtype, scales, zps, axis, lo, hi, kind)
    c["shape"] = list(inp[1].shape)
    c["input"] = st.save(f"{name}.{inp[0]}", inp[1])
    c["expected"] = st.save(f"{name}.{expected[0]}", expected[1])
    if mask is not None:
        c["expected_mask"] = st.save(f"{name}.mask", mask)
    c["expect_equal"] = bool(expect_equal)
    if reason:
        c["reason"] = reason
    st.add(c)


def add_quantize(st, name, kind, x, dtype, scale, zp, expect_equal=True, reason=None):
    lo, hi = INT_RANGES[dtype]
    if expect_equal is True:
        x = safe_for_equality(x, scale, zp, dtype)
    q = torch.quantize_per_tensor(tensor(x), float(scale), int(zp), TORCH_DTYPES[dtype]).int_repr().numpy()
    formula = octet_quantize(x, scale, zp, lo, hi)
    if expect_equal is True:
        check_equal(name, q, formula)
    elif expect_equal is None:
        expect_equal = same_bits(q, formula)
    add_case(st, name, "quantize_per_tensor", dtype, [scale], [zp], None, lo, hi, kind,
             expect_equal, reason, ("x", x.astype(F32)), ("q", q.astype(NP_DTYPES[dtype])))
    return q


def fits_int32_difference(q, zp):
    """q - zp without int32 overflow (PyTorch's qint32 dequantize subtracts in int32 and wraps)."""
    d = np.asarray(q, np.int64) - zp
    return (d >= -(2**31)) & (d <= 2**31 - 1)


def int32_safe(q, zp):
    """Moves the integers whose q - zp overflows int32 to the nearest ones that do not (equality cases only)."""
    return np.clip(np.asarray(q, np.int64), zp - 2**31, zp + 2**31 - 1)


def add_dequantize(st, name, kind, q, dtype, scale, zp, expect_equal=True, reason=None):
    lo, hi = INT_RANGES[dtype]
    if expect_equal is True:
        q = int32_safe(q, zp)
    qt = torch._make_per_tensor_quantized_tensor(tensor(q.astype(NP_DTYPES[dtype])), float(scale), int(zp))
    y = qt.dequantize().numpy()
    if expect_equal is True:
        check_equal(name, y, octet_dequantize(q, scale, zp))
    elif expect_equal is None:
        expect_equal = same_bits(y, octet_dequantize(q, scale, zp))
    add_case(st, name, "dequantize", dtype, [scale], [zp], None, lo, hi, kind,
             expect_equal, reason, ("q", q.astype(NP_DTYPES[dtype])), ("y", y.astype(F32)))


def add_quantize_per_channel(st, name, kind, x, dtype, scales, zps, axis, expect_equal=True, reason=None):
    lo, hi = INT_RANGES[dtype]
    q = torch.quantize_per_channel(tensor(x), torch.tensor([float(s) for s in scales], dtype=torch.float64),
                                   torch.tensor([int(z) for z in zps], dtype=torch.int64), axis,
                                   TORCH_DTYPES[dtype]).int_repr().numpy()
    equal = True
    for c_, idx in channel_views(x, axis):
        if expect_equal is True:
            check_equal(f"{name} channel {c_}", q[idx], octet_quantize(x[idx], scales[c_], zps[c_], lo, hi))
        equal = equal and same_bits(q[idx], octet_quantize(x[idx], scales[c_], zps[c_], lo, hi))
    if expect_equal is None:
        expect_equal = equal
    add_case(st, name, "quantize_per_channel", dtype, scales, zps, axis, lo, hi, kind,
             expect_equal, reason, ("x", x.astype(F32)), ("q", q.astype(NP_DTYPES[dtype])))
    return q


def pc_float_sub_safe(q, scale, zp, dtype):
    """PyTorch's per-channel qint32 dequantize subtracts in float32 ((f32(q) - f32(zp)) * scale); moves the
    integers where that differs from octet's exact difference towards 0 until it does not (equality cases)."""
    q = np.asarray(q, np.int64).copy()
    if dtype != "qint32":
        return q
    for _ in range(8):
        model = ((q.astype(F32) - F32(zp)).astype(F32) * F32(scale)).astype(F32)
        bad = model.view(np.uint32) != octet_dequantize(q, scale, zp).view(np.uint32)
        if not bad.any():
            return q
        q[bad] //= 256
    raise RuntimeError("could not leave the per-channel float-subtraction domain")


def add_dequantize_per_channel(st, name, kind, q, dtype, scales, zps, axis, expect_equal=True, reason=None):
    lo, hi = INT_RANGES[dtype]
    q = np.asarray(q, np.int64).copy()
    if expect_equal is True:
        for c_, idx in channel_views(q, axis):
            q[idx] = pc_float_sub_safe(int32_safe(q[idx], zps[c_]), scales[c_], zps[c_], dtype)
    qt = torch._make_per_channel_quantized_tensor(
        tensor(q.astype(NP_DTYPES[dtype])), torch.tensor([float(s) for s in scales], dtype=torch.float64),
        torch.tensor([int(z) for z in zps], dtype=torch.int64), axis)
    y = qt.dequantize().numpy()
    equal = True
    for c_, idx in channel_views(q, axis):
        if expect_equal is True:
            check_equal(f"{name} channel {c_}", y[idx], octet_dequantize(q[idx], scales[c_], zps[c_]))
        equal = equal and same_bits(y[idx], octet_dequantize(q[idx], scales[c_], zps[c_]))
    if expect_equal is None:
        expect_equal = equal
    add_case(st, name, "dequantize", dtype, scales, zps, axis, lo, hi, kind,
             expect_equal, reason, ("q", q.astype(NP_DTYPES[dtype])), ("y", y.astype(F32)))


def fq_dtype(lo, hi):
    if lo >= 0 and hi <= 255:
        return "quint8"
    if lo >= -128 and hi <= 127:
        return "qint8"
    return "qint32"


def torch_fake_quant(x, scales, zps, axis, lo, hi):
    xt = tensor(x.astype(F32)).clone().requires_grad_(True)
    if axis is None:
        y = torch.fake_quantize_per_tensor_affine(xt, float(scales[0]), int(zps[0]), int(lo), int(hi))
    else:
        y = torch.fake_quantize_per_channel_affine(xt, torch.tensor(np.array(scales, F32)),
                                                   torch.tensor(np.array(zps, np.int32)), axis, int(lo), int(hi))
    y.backward(torch.ones_like(y))
    g = xt.grad.numpy()
    assert set(np.unique(g)).issubset({0.0, 1.0}), np.unique(g)
    return y.detach().numpy().copy(), g.astype(np.uint8)


def add_fake_quantize(st, name, kind, x, scale, zp, lo, hi, expect_equal=True, reason=None):
    y, m = torch_fake_quant(x, [scale], [zp], None, lo, hi)
    fy, fm = octet_fake_quantize(x, scale, zp, lo, hi)
    if expect_equal is True:
        check_equal(name + " output", y, fy)
        check_equal(name + " mask", m, fm)
    elif expect_equal is None:
        expect_equal = same_bits(y, fy) and same_bits(m, fm)
    add_case(st, name, "fake_quantize_per_tensor_affine", fq_dtype(lo, hi), [scale], [zp], None, lo, hi, kind,
             expect_equal, reason, ("x", x.astype(F32)), ("y", y.astype(F32)), mask=m)
    return y, m


def add_fake_quantize_per_channel(st, name, kind, x, scales, zps, axis, lo, hi, expect_equal=True, reason=None):
    y, m = torch_fake_quant(x, scales, zps, axis, lo, hi)
    equal = True
    for c_, idx in channel_views(x, axis):
        fy, fm = octet_fake_quantize(x[idx], scales[c_], zps[c_], lo, hi)
        if expect_equal is True:
            check_equal(f"{name} channel {c_} output", y[idx], fy)
            check_equal(f"{name} channel {c_} mask", m[idx], fm)
        equal = equal and same_bits(y[idx], fy) and same_bits(m[idx], fm)
    if expect_equal is None:
        expect_equal = equal
    add_case(st, name, "fake_quantize_per_channel_affine", fq_dtype(lo, hi), scales, zps, axis, lo, hi, kind,
             expect_equal, reason, ("x", x.astype(F32)), ("y", y.astype(F32)), mask=m)


# ---------------------------------------------------------------------------------------------------------------
# Case groups.

def documented_examples(st):
    """The verified examples of numerics.md section 2.1, asserted verbatim."""
    q = add_quantize(st, "doc_2_1_3_zp_after_rounding", "ties", np.array([2.5, 3.5, -2.5], F32), "quint8",
                     F32(1.0), 3)
    assert q.tolist() == [5, 7, 1], q
    q = add_quantize(st, "doc_2_1_1_half_to_even", "ties", np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], F32),
                     "qint8", F32(1.0), 0)
    assert q.tolist() == [0, 2, 2, 0, -2, -2], q
    y, _ = add_fake_quantize(st, "doc_2_1_1_fake_half_to_even", "ties",
                             np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], F32), F32(1.0), 0, -128, 127)
    assert y.tolist() == [0, 2, 2, 0, -2, -2], y
    _, m = add_fake_quantize(st, "doc_2_1_6_mask", "edges", np.array([-10, -0.5, 0, 0.3, 6.35, 6.4, 10], F32),
                             F32(0.05), 0, -128, 127)
    assert m.tolist() == [0, 1, 1, 1, 1, 0, 0], m


def per_tensor_quantize_cases(st, rng):
    for dtype in ("quint8", "qint8", "qint32"):
        lo, hi = INT_RANGES[dtype]
        zps = ZERO_POINTS[dtype]
        # Exact ties (k + 0.5 after scaling), odd and even zero points, power-of-two and awkward scales.
        tie_configs = [(F32(1.0), zps[1]), (F32(1.0), zps[0]), (F32(0.25), zps[2]), (SCALES[0], zps[1]),
                       (SCALES[3], zps[6]), (SCALES[2], zps[5]), (SCALES[7], zps[4])]
        for i, (s, zp) in enumerate(tie_configs):
            x = exact_ties(s, tie_ks(zp, lo, hi, rng))
            x = within(x, s, bound_for(dtype, zp))
            assert x.size > 0
            add_quantize(st, f"q_{dtype}_ties_{i}", "ties", x, dtype, s, zp)
        # Clamp ends.
        for i, (s, zp) in enumerate([(SCALES[0], zps[0]), (SCALES[1], zps[1]), (SCALES[2], zps[3]),
                                     (SCALES[3], zps[4]), (F32(1.0), zps[2]), (SCALES[9], zps[7])]):
            x = edge_values(s, zp, lo, hi, bound_for(dtype, zp))
            add_quantize(st, f"q_{dtype}_edges_{i}", "edges", x, dtype, s, zp)
        # Random normal data at every scale; each dtype sees every size.
        slots = [(si, SIZES[(si + j * len(SCALES)) % len(SIZES)]) for j in range(2) for si in range(len(SCALES))]
        for si, n in slots:
            s = SCALES[si]
            zp = zps[si]
            x = random_values(rng, n, s, zp, lo, hi, bound_for(dtype, zp))
            add_quantize(st, f"q_{dtype}_random_s{si}_n{n}", "random", x, dtype, s, zp)


def per_tensor_dequantize_cases(st, rng):
    for dtype in ("quint8", "qint8", "qint32"):
        lo, hi = INT_RANGES[dtype]
        zps = ZERO_POINTS[dtype]
        for si, s in enumerate(SCALES):
            zp = zps[si]
            n = SIZES[(si * 3 + 1) % len(SIZES)]
            q = rng.integers(lo, hi, n, endpoint=True, dtype=np.int64)
            special = np.array([lo, hi, zp, max(lo, zp - 1), min(hi, zp + 1)], np.int64)
            q = np.concatenate([special, q])[: max(n, 5)]
            add_dequantize(st, f"dq_{dtype}_s{si}_n{q.size}", "random", q, dtype, s, zp)
        if dtype != "qint32":
            # Every representable value once, at an awkward scale with odd and even zero points.
            for zp in (zps[1], zps[2]):
                q = np.arange(lo, hi + 1, dtype=np.int64)
                add_dequantize(st, f"dq_{dtype}_all_zp{zp}", "edges", q, dtype, SCALES[3], zp)
        else:
            q = np.array([lo, lo + 1, -(2**24) - 1, -(2**24), -1, 0, 1, 2**24, 2**24 + 1, 2**24 + 3,
                          hi - 1, hi], np.int64)
            for zp in (0, 3, -7, 2**31 - 1, -(2**31)):
                add_dequantize(st, f"dq_qint32_extremes_zp{zp}", "edges", q, "qint32", SCALES[0], zp)


def channel_params(rng, dtype, nch, symmetric):
    lo, hi = INT_RANGES[dtype]
    scales = np.exp(rng.uniform(np.log(1e-4), np.log(1.0), nch)).astype(F32)
    scales[0] = F32(0.1 / 3)
    if nch > 1:
        scales[1] = F32(1.0)
    if nch > 2:
        scales[2] = F32(0.0123)
    if symmetric:
        zps = np.zeros(nch, np.int64)
        if dtype == "quint8":
            zps[:] = 128
    elif dtype == "qint32":
        zps = rng.integers(-1000, 1000, nch, endpoint=True)
    else:
        zps = rng.integers(lo, hi, nch, endpoint=True)
        zps[0] = lo + 3  # odd distance from the end
        if nch > 1:
            zps[1] = (lo + hi + 1) // 2
    return [F32(s) for s in scales], [int(z) for z in zps]


def per_channel_input(rng, shape, axis, scales, zps, lo, hi, dtype):
    """Random normal per channel, with a share of exact ties and clamp-edge values in every channel."""
    x = np.empty(shape, F32)
    for c, idx in channel_views(x, axis):
        sub_shape = x[idx].shape
        n = int(np.prod(sub_shape))
        bound = bound_for(dtype, zps[c])
        vals = random_values(rng, n, scales[c], zps[c], lo, hi, bound)
        extra = np.concatenate([exact_ties(scales[c], tie_ks(zps[c], lo, hi, rng)),
                                edge_values(scales[c], zps[c], lo, hi, bound)])
        extra = within(extra, scales[c], bound)
        rng.shuffle(extra)
        k = min(n // 2, extra.size)
        pos = rng.choice(n, size=k, replace=False)
        vals[pos] = extra[:k]
        x[idx] = safe_for_equality(vals, scales[c], zps[c], dtype).reshape(sub_shape)
    return x


PER_CHANNEL_SHAPES = [
    ((4, 33), 0),
    ((3, 5, 7), 1),
    ((2, 3, 6), 2),
    ((2, 3, 4, 5), 1),
    ((2, 3, 4, 8), 3),
    ((16, 1, 3, 3), 0),
    ((1, 3, 17, 2), 2),
    ((9, 65), 1),
]


def per_channel_quantize_cases(st, rng):
    for dtype in ("qint8", "quint8", "qint32"):
        lo, hi = INT_RANGES[dtype]
        for i, (shape, axis) in enumerate(PER_CHANNEL_SHAPES):
            nch = shape[axis]
            symmetric = (i % 3 == 2)
            scales, zps = channel_params(rng, dtype, nch, symmetric)
            x = per_channel_input(rng, shape, axis, scales, zps, lo, hi, dtype)
            stem = f"{dtype}_pc{i}_{'x'.join(map(str, shape))}_axis{axis}"
            q = add_quantize_per_channel(st, "qpc_" + stem, "random", x, dtype, scales, zps, axis)
            # Dequantize the same integers (with the extremes written into channel 0's first slots).
            q2 = q.astype(np.int64).copy()
            flat0 = np.moveaxis(q2, axis, 0)[0].reshape(-1)
            flat0[:2] = [lo, hi][: flat0.size]
            np.moveaxis(q2, axis, 0)[0] = flat0.reshape(np.moveaxis(q2, axis, 0)[0].shape)
            add_dequantize_per_channel(st, "dqpc_" + stem, "random", q2, dtype, scales, zps, axis)


FAKE_RANGES = [(0, 255), (-128, 127), (0, 15), (-8, 7), (0, 127), (-64, 63), (-127, 127), (-32768, 32767)]


def fake_quant_cases(st, rng):
    for ri, (lo, hi) in enumerate(FAKE_RANGES):
        mid = (lo + hi + 1) // 2
        zp_choices = sorted({lo, hi, mid, min(hi, lo + 3), max(lo, hi - 4), 0 if lo <= 0 <= hi else lo})
        # Ties with odd and even zero points.
        for j, (s, zp) in enumerate([(F32(1.0), zp_choices[1]), (F32(0.5), mid), (SCALES[0], zp_choices[-2]),
                                     (SCALES[3], lo), (SCALES[7], hi)]):
            x = within(exact_ties(s, tie_ks(zp, lo, hi, rng)), s, EQ_BOUND)
            add_fake_quantize(st, f"fq_r{lo}_{hi}_ties_{j}", "ties", x, s, zp, lo, hi)
        # Clamp ends (mask boundaries).
        for j, (s, zp) in enumerate([(SCALES[1], zp_choices[0]), (SCALES[2], zp_choices[-1]), (SCALES[5], mid)]):
            x = edge_values(s, zp, lo, hi, EQ_BOUND)
            add_fake_quantize(st, f"fq_r{lo}_{hi}_edges_{j}", "edges", x, s, zp, lo, hi)
        # Random normal data.
        for j in range(3):
            si = (ri * 3 + j) % len(SCALES)
            s = SCALES[si]
            zp = zp_choices[(ri + j) % len(zp_choices)]
            n = SIZES[(ri * 3 + j) % len(SIZES)]
            x = random_values(rng, n, s, zp, lo, hi, EQ_BOUND)
            add_fake_quantize(st, f"fq_r{lo}_{hi}_random_s{si}_n{n}", "random", x, s, zp, lo, hi)

    # Per channel.
    pc = [((4, 33), 0, (-128, 127)), ((3, 5, 7), 1, (0, 255)), ((2, 3, 6), 2, (0, 15)), ((2, 3, 4, 5), 1, (-8, 7)),
          ((2, 3, 4, 8), 3, (0, 127)), ((16, 1, 3, 3), 0, (-127, 127)), ((1, 3, 17, 2), 2, (-128, 127)),
          ((9, 65), 1, (0, 255)), ((5, 7), 0, (-32768, 32767))]
    for i, (shape, axis, (lo, hi)) in enumerate(pc):
        dtype = fq_dtype(lo, hi)
        nch = shape[axis]
        scales = np.exp(rng.uniform(np.log(1e-4), np.log(1.0), nch)).astype(F32)
        scales[0] = F32(0.1 / 3)
        scales[1] = F32(1.0)
        zps = rng.integers(lo, hi, nch, endpoint=True)
        zps[0] = lo + 1
        scales = [F32(s) for s in scales]
        zps = [int(z) for z in zps]
        x = per_channel_input(rng, shape, axis, scales, zps, lo, hi, dtype if dtype != "qint32" else "qint8")
        add_fake_quantize_per_channel(st, f"fqpc{i}_r{lo}_{hi}_{'x'.join(map(str, shape))}_axis{axis}", "random",
                                      x, scales, zps, axis, lo, hi)


NONFINITE_REASON = ("PyTorch converts zp + rne(x/scale) through int64, so NaN, +-Inf and |x/scale| >= 2^63 all "
                    "become quant_min (fake-quant: (quant_min - zp) * scale, mask 0). octet deliberately saturates: "
                    "+Inf -> quant_max, -Inf and huge negatives -> quant_min, huge positives -> quant_max; NaN is an "
                    "error (NanPolicy::kError) or the zero point (NanPolicy::kZeroPoint; fake-quant output 0, mask 0).")
QINT32_ZP_REASON = ("PyTorch's quantize_val adds the zero point to rne(x/scale) in float32 (int64 + float -> float), "
                    "so for qint32 with zp != 0 and |x/scale| >= 2^24 the sum is rounded to a float; octet adds "
                    "exactly in integers.")
QINT32_DQ_REASON = ("PyTorch's qint32 dequantize computes q - zp in int32 and wraps on overflow (e.g. q = -2^31, "
                    "zp = 3 dequantizes to a large positive value); octet subtracts in int64.")
QINT32_PC_DQ_REASON = ("PyTorch's per-channel qint32 dequantize computes (float(q) - float(zp)) * scale, so q and "
                       "the difference are rounded to float32 when |q| >= 2^24; octet converts the exact int64 "
                       "difference once.")
BEYOND_INT32_REASON = ("Finite |x/scale| in [2^31, 2^63): outside the brief's equality domain, but PyTorch saturates "
                       "these like octet does (expect_equal is computed, not assumed).")


def known_difference_cases(st, rng):
    nonfinite = np.array([np.inf, -np.inf, np.nan, 1e30, -1e30, 3.4e38, -3.4e38, 2.0, -2.0], F32)
    beyond = np.array([2.0**31, -(2.0**31) - 256, 3e9, -3e9, 1e12, -1e12, 2.0**62, -(2.0**62), 9.2e18, -9.2e18],
                      F32)
    for dtype in ("quint8", "qint8", "qint32"):
        zp = {"quint8": 3, "qint8": -5, "qint32": 7}[dtype]
        add_quantize(st, f"kd_q_{dtype}_nonfinite", "known_difference", nonfinite, dtype, F32(1.0), zp,
                     expect_equal=None, reason="nonfinite_and_huge")
        add_quantize(st, f"kd_q_{dtype}_huge_scaled", "known_difference", np.array([1e10, -1e10, 5.0, 1e15], F32),
                     dtype, F32(1e-9), zp, expect_equal=None, reason="nonfinite_and_huge")
        add_quantize(st, f"kd_q_{dtype}_beyond_int32", "known_difference", beyond, dtype, F32(1.0), zp,
                     expect_equal=None, reason="beyond_int32")
    # qint32 with a non-zero zero point beyond 2^24.
    x = np.concatenate([np.array([2.0**24 + 1, 2.0**24 + 3, -(2.0**24) - 1, 2.0**30 + 64, 1e8, -1e8], F32),
                        (rng.standard_normal(57) * 1e8).astype(F32)])
    x = within(x, F32(1.0), EQ_BOUND)
    for zp in (3, -1000, 12345):
        add_quantize(st, f"kd_q_qint32_zp{zp}_float_add", "known_difference", x, "qint32", F32(1.0), zp,
                     expect_equal=None, reason="qint32_nonzero_zero_point")
    q = np.array([-(2**31), -(2**31) + 1, -5, 0, 5, 2**31 - 2, 2**31 - 1], np.int64)
    for zp in (3, -3, 2**31 - 1, -(2**31)):
        add_dequantize(st, f"kd_dq_qint32_zp{zp}_int32_wrap", "known_difference", q, "qint32", F32(0.0123), zp,
                       expect_equal=None, reason="qint32_dequantize_overflow")
    # Per channel, qint32: the same float32 zero-point add, and the float32 subtraction in dequantize.
    x = np.stack([np.array([2.0**24 + 1, 2.0**24 + 3, -(2.0**24) - 1, 2.0**30 + 64, 1e8, -1e8, 5.0], F32)] * 3)
    add_quantize_per_channel(st, "kd_qpc_qint32_float_add", "known_difference", x, "qint32",
                             [F32(1.0), F32(0.5), F32(2.0)], [3, -1000, 0], 0, expect_equal=None,
                             reason="qint32_nonzero_zero_point")
    q = np.stack([np.array([-(2**31), -(2**31) + 1, 2**24 + 1, 2**24 + 3, 123456789, 2**31 - 2, 2**31 - 1],
                           np.int64)] * 3)
    add_dequantize_per_channel(st, "kd_dqpc_qint32_float_sub", "known_difference", q, "qint32",
                               [F32(0.0123), F32(1.0), F32(0.1 / 3)], [3, -7, 0], 0, expect_equal=None,
                               reason="qint32_per_channel_dequantize")
    for (lo, hi), zp in (((0, 255), 3), ((-128, 127), -5), ((0, 15), 7), ((-8, 7), 0)):
        add_fake_quantize(st, f"kd_fq_r{lo}_{hi}_nonfinite", "known_difference", nonfinite, F32(0.5), zp, lo, hi,
                          expect_equal=None, reason="nonfinite_and_huge")
        add_fake_quantize(st, f"kd_fq_r{lo}_{hi}_beyond_int32", "known_difference", beyond, F32(1.0), zp, lo, hi,
                          expect_equal=None, reason="beyond_int32")
    x = np.array([[np.inf, -np.inf, np.nan, 1e30], [-1e30, 1.0, np.nan, np.inf]], F32)
    add_fake_quantize_per_channel(st, "kd_fqpc_nonfinite", "known_difference", x, [F32(0.25), F32(0.0123)], [1, -2],
                                  0, -128, 127, expect_equal=None, reason="nonfinite_and_huge")


# ---------------------------------------------------------------------------------------------------------------
# Formula findings: which float expression PyTorch's CPU kernels compute.

def round_fraction_to_f32(v):
    """The float32 nearest to the Fraction v, ties to even (float(Fraction) rounds to double first, so the
    neighbours of that guess are compared exactly)."""
    guess = F32(float(v))
    cands = [np.nextafter(guess, F32(-np.inf)), guess, np.nextafter(guess, F32(np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - v), int(np.array(c, F32).view(np.uint32)) & 1))


def exact_fma_f32(a, b, c):
    """f32(a*b + c) with a single rounding (a fused multiply-add), computed exactly with Fractions."""
    out = np.empty(a.shape, F32)
    for i, (ai, bi, ci) in enumerate(zip(a.tolist(), b.tolist(), c.tolist())):
        out[i] = round_fraction_to_f32(Fraction(ai) * Fraction(bi) + Fraction(ci))
    return out


def formula_findings(rng):
    """Counts, per candidate formula, of elements where it differs from torch (bitwise)."""
    findings = {}
    nfma = 2000  # the exact-FMA emulation uses Fractions: only the first elements of each array

    def dequant_candidates(q, s, zp):
        negzs = np.full(q.shape, F32(-F32(zp) * F32(s)), F32)
        qf = q.astype(F32)  # int -> float32, as a vector conversion would
        return {
            "f32(q - zp) * scale, q - zp exact (int64)": octet_dequantize(q, s, zp),
            "f32(wrap_int32(q - zp)) * scale": (((q - zp + 2**31) % 2**32) - 2**31).astype(F32) * F32(s),
            "(f32(q) - f32(zp)) * scale": ((qf - F32(zp)).astype(F32) * F32(s)).astype(F32),
            "fma(f32(q), scale, f32(-zp * scale)) [one rounding]":
                exact_fma_f32(qf[:nfma], np.full(min(nfma, q.size), F32(s), F32), negzs[:nfma]),
            "f32(q) * scale + f32(-zp * scale) [two roundings]": ((qf * F32(s)).astype(F32) + negzs).astype(F32),
        }

    def tally(group, cands, ref):
        counts = findings.setdefault(group, {})
        for key, val in cands.items():
            e = counts.setdefault(key, {"mismatches": 0, "elements": 0})
            r = ref[: val.size]
            e["mismatches"] += int((val.view(np.uint32) != r.view(np.uint32)).sum())
            e["elements"] += int(val.size)

    for dtype in ("quint8", "qint8", "qint32"):
        lo, hi = INT_RANGES[dtype]
        group = "dequantize_per_tensor_" + ("8bit" if dtype != "qint32" else "qint32")
        for si, s in enumerate(SCALES):
            zp = ZERO_POINTS[dtype][si]
            q = rng.integers(lo, hi, 20000, endpoint=True, dtype=np.int64)
            qt = torch._make_per_tensor_quantized_tensor(tensor(q.astype(NP_DTYPES[dtype])), float(s), int(zp))
            tally(group, dequant_candidates(q, s, zp), qt.dequantize().numpy())
    for dtype in ("quint8", "qint8", "qint32"):
        lo, hi = INT_RANGES[dtype]
        group = "dequantize_per_channel_" + ("8bit" if dtype != "qint32" else "qint32")
        for rep in range(3):
            scales, zps = channel_params(rng, dtype, 8, False)
            if dtype == "qint32" and rep == 2:
                zps = [int(z) for z in rng.integers(lo, hi, 8, endpoint=True)]
            q = rng.integers(lo, hi, (8, 3000), endpoint=True, dtype=np.int64)
            qt = torch._make_per_channel_quantized_tensor(
                tensor(q.astype(NP_DTYPES[dtype])), torch.tensor([float(v) for v in scales], dtype=torch.float64),
                torch.tensor(zps, dtype=torch.int64), 0)
            y = qt.dequantize().numpy()
            for c_ in range(8):
                tally(group, dequant_candidates(q[c_], scales[c_], zps[c_]), y[c_])

    # Fake quantize.
    counts = findings.setdefault("fake_quantize_per_tensor", {})
    for lo, hi in FAKE_RANGES:
        for si, s in enumerate(SCALES):
            zp = int(rng.integers(lo, hi, endpoint=True))
            x = random_values(rng, 20000, s, zp, lo, hi, EQ_BOUND)
            ties = within(exact_ties(s, tie_ks(zp, lo, hi, rng)), s, EQ_BOUND)[:2000]
            x[: ties.size] = ties
            y, m = torch_fake_quant(x, [s], [zp], None, lo, hi)
            inv = inv_of(s)
            cands = {}
            fy, fm = octet_fake_quantize(x, s, zp, lo, hi)
            cands["(clamp(zp + rne(x*inv_scale)) - zp) * scale, inv_scale = f32(1/scale)"] = (fy, fm)
            qv = (F32(zp) + np.rint((x / F32(s)).astype(F32))).astype(F32)
            c = np.clip(qv, F32(lo), F32(hi)).astype(F32)
            cands["(clamp(zp + rne(x/scale)) - zp) * scale [division]"] = (
                ((c - F32(zp)) * F32(s)).astype(F32), ((qv >= lo) & (qv <= hi)).astype(np.uint8))
            qv2 = np.rint((x * inv).astype(F32) + F32(zp)).astype(F32)
            c2 = np.clip(qv2, F32(lo), F32(hi)).astype(F32)
            cands["(clamp(rne(x*inv_scale + zp)) - zp) * scale [zp before rounding]"] = (
                ((c2 - F32(zp)) * F32(s)).astype(F32), ((qv2 >= lo) & (qv2 <= hi)).astype(np.uint8))
            v = (x * inv).astype(F32)
            qv3 = (F32(zp) + np.rint(v)).astype(F32)
            c3 = np.clip(qv3, F32(lo), F32(hi)).astype(F32)
            negzs = F32(-F32(zp) * F32(s))
            m3 = ((qv3 >= lo) & (qv3 <= hi)).astype(np.uint8)
            cands["clamp(...)*scale + (-zp*scale) [two roundings]"] = (
                ((c3 * F32(s)).astype(F32) + negzs).astype(F32), m3)
            cands["fma(clamp(...), scale, -zp*scale) [one rounding]"] = (
                exact_fma_f32(c3[:nfma], np.full(nfma, F32(s), F32), np.full(nfma, negzs, F32)), m3[:nfma])
            for key, (cy, cm) in cands.items():
                e = counts.setdefault(key, {"output_mismatches": 0, "mask_mismatches": 0, "elements": 0})
                e["output_mismatches"] += int((cy.view(np.uint32) != y[: cy.size].view(np.uint32)).sum())
                e["mask_mismatches"] += int((cm != m[: cm.size]).sum())
                e["elements"] += int(cy.size)
    # Per channel fake quantize.
    counts = findings.setdefault("fake_quantize_per_channel", {})
    e = counts.setdefault("per-channel, same formula with scale[c], zp[c]",
                          {"output_mismatches": 0, "mask_mismatches": 0, "elements": 0})
    for lo, hi in FAKE_RANGES:
        scales = [F32(v) for v in np.exp(rng.uniform(np.log(1e-4), 0, 6))]
        zps = [int(v) for v in rng.integers(lo, hi, 6, endpoint=True)]
        x = np.stack([random_values(rng, 3000, scales[c_], zps[c_], lo, hi, EQ_BOUND) for c_ in range(6)])
        y, m = torch_fake_quant(x, scales, zps, 0, lo, hi)
        for c_ in range(6):
            fy, fm = octet_fake_quantize(x[c_], scales[c_], zps[c_], lo, hi)
            e["output_mismatches"] += int((fy.view(np.uint32) != y[c_].view(np.uint32)).sum())
            e["mask_mismatches"] += int((fm != m[c_]).sum())
            e["elements"] += int(fy.size)

    # Quantize: multiply by the float reciprocal vs divide.
    counts = findings.setdefault("quantize_per_tensor_8bit", {})
    for dtype in ("quint8", "qint8"):
        lo, hi = INT_RANGES[dtype]
        for si, s in enumerate(SCALES):
            zp = ZERO_POINTS[dtype][si]
            x = random_values(rng, 50000, s, zp, lo, hi, EQ_BOUND)
            ties = within(exact_ties(s, tie_ks(zp, lo, hi, rng)), s, EQ_BOUND)[:5000]
            x[: ties.size] = ties
            q = torch.quantize_per_tensor(tensor(x), float(s), zp, TORCH_DTYPES[dtype]).int_repr().numpy()
            a = octet_quantize(x, s, zp, lo, hi)
            b = np.clip(rne((x / F32(s)).astype(F32)) + zp, lo, hi)
            c = np.clip(rne((x * inv_of(s)).astype(F32).astype(np.float64) + zp), lo, hi)
            for key, val in (("clamp(zp + rne(x*inv_scale)), inv_scale = f32(1/scale)", a),
                             ("clamp(zp + rne(x/scale)) [division]", b),
                             ("clamp(rne(x*inv_scale + zp)) [zp before rounding]", c)):
                e = counts.setdefault(key, {"mismatches": 0, "elements": 0})
                e["mismatches"] += int((val != q.astype(np.int64)).sum())
                e["elements"] += int(x.size)
    return findings


def cpu_capability():
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    for name in os.listdir(HERE):
        if name.endswith(".npy"):
            os.remove(os.path.join(HERE, name))
    st = Store(HERE)
    documented_examples(st)
    per_tensor_quantize_cases(st, np.random.default_rng(20240101))
    per_tensor_dequantize_cases(st, np.random.default_rng(20240102))
    per_channel_quantize_cases(st, np.random.default_rng(20240103))
    fake_quant_cases(st, np.random.default_rng(20240104))
    known_difference_cases(st, np.random.default_rng(20240105))
    findings = formula_findings(np.random.default_rng(20240106))

    equal = [c for c in st.cases if c["expect_equal"]]
    ops = {}
    for c in st.cases:
        ops[c["op"]] = ops.get(c["op"], 0) + 1
    manifest = {
        "description": "PyTorch reference outputs for octet's quantize / dequantize / fake-quantize "
                       "(tests/ops/pytorch_reference_test.cc). Generated; do not edit by hand.",
        "generator": "tests/data/pytorch/generate.py",
        "command": "/usr/bin/python3 tests/data/pytorch/generate.py",
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "torch_cpu_capability": cpu_capability(),
        "conventions": {
            "scales": "float32 values (the JSON double is exactly the float32); torch got the same value",
            "quantize": "expected = .int_repr() of torch.quantize_per_tensor / quantize_per_channel; "
                        "quant_min/quant_max = the dtype limits (PyTorch clamps quantize to the dtype)",
            "dequantize": "input = integer representation, expected = float32 torch .dequantize()",
            "fake_quantize": "expected = float32 output, expected_mask = uint8 0/1 gradient of "
                             "backward(ones) (the straight-through mask); dtype = the smallest dtype holding "
                             "[quant_min, quant_max]",
            "axis": "null for per-tensor ops",
            "expect_equal": "true: octet must equal torch bit for bit. false: a known, intentional difference "
                            "(reason: a key of known_differences); the test checks octet's documented behaviour",
            "reason": "known_difference cases name a key of known_differences; their expect_equal is computed "
                      "by comparing torch with octet's documented rule",
        },
        "known_differences": {
            "nonfinite_and_huge": NONFINITE_REASON,
            "qint32_nonzero_zero_point": QINT32_ZP_REASON,
            "qint32_dequantize_overflow": QINT32_DQ_REASON,
            "qint32_per_channel_dequantize": QINT32_PC_DQ_REASON,
            "beyond_int32": BEYOND_INT32_REASON,
            "equality_domain": "equality cases contain no NaN or Inf, keep |x * inv_scale| < 2^31, avoid qint32 "
                               "inputs where the float32 zp + rne(x/scale) rounds to another clamped integer, "
                               "and qint32 dequantize inputs where q - zp overflows int32",
        },
        "findings": findings,
        "num_cases": len(st.cases),
        "num_equal_cases": len(equal),
        "num_known_difference_cases": len(st.cases) - len(equal),
        "cases_per_op": ops,
        "cases": st.cases,
    }
    # One line per case keeps the manifest small and its diffs readable.
    cases = manifest.pop("cases")
    text = json.dumps(manifest, indent=1)[:-2]
    text += ',\n "cases": [\n' + ",\n".join("  " + json.dumps(c) for c in cases) + "\n ]\n}\n"
    assert json.loads(text)["cases"] == cases
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        f.write(text)
    size = sum(os.path.getsize(os.path.join(HERE, n)) for n in os.listdir(HERE))
    print(f"{len(st.cases)} cases ({len(equal)} equality), {len(st.names)} .npy files, folder {size} bytes")
    print(json.dumps(findings, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

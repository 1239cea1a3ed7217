#!/usr/bin/python3
"""Runs cases of ONNX's backend node tests (Debian's libonnx-testdata) through `octet run` and compares the outputs
with the reference .pb outputs. Each case is a folder with model.onnx and test_data_set_*/{input,output}_N.pb.

Usage:
  backend_node_test.py OCTET [CASE...]   the cases listed below (or those named); exits 1 on any failure
  backend_node_test.py OCTET --survey    every case whose ops octet registers (read from ops/float/*.cc), each at
                                         its own opset; prints one line per case and the pass count, exits 0
Exits 77 (skipped) when the test data or python3-onnx is missing. CASES are raised to opset 13 when their operators
are unchanged between the two versions, so that the check is about the op; OLD_OPSET_CASES run at the opset they
were written for, so that the check is also about io/onnx/opset_adapters.cc.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

DATA = "/usr/share/libonnx-testdata/data/node"
# ConvTranspose is unchanged from opset 11 to 13. output_shape cases: a larger output_shape pads with zeros (the
# bias); kernel_shape and with_kernel combine it with output_padding. test_constant has no graph inputs.
CASES = [
    "test_constant",
    "test_convtranspose", "test_convtranspose_1d", "test_convtranspose_autopad_same", "test_convtranspose_dilations",
    "test_convtranspose_kernel_shape", "test_convtranspose_output_shape", "test_convtranspose_pad",
    "test_convtranspose_pads", "test_convtranspose_with_kernel",
]
# Cases at opsets below 13, run as written (opsets 1, 6, 11, 12; the older forms of other ops are checked by
# tests/onnx/opset_adapters_test.cc on generated models, as the suite holds only each op's newest form).
OLD_OPSET_CASES = [
    "test_averagepool_1d_default", "test_averagepool_2d_ceil", "test_averagepool_2d_default",
    "test_averagepool_2d_pads", "test_averagepool_2d_pads_count_include_pad", "test_averagepool_2d_precomputed_pads",
    "test_averagepool_2d_precomputed_pads_count_include_pad", "test_averagepool_2d_precomputed_same_upper",
    "test_averagepool_2d_precomputed_strides", "test_averagepool_2d_same_lower", "test_averagepool_2d_same_upper",
    "test_averagepool_2d_strides",
    "test_basic_conv_with_padding", "test_basic_conv_without_padding", "test_conv_with_autopad_same",
    "test_conv_with_strides_and_asymmetric_padding", "test_conv_with_strides_no_padding",
    "test_conv_with_strides_padding",
    "test_dropout_default_old", "test_dropout_random_old",
    "test_globalaveragepool", "test_globalaveragepool_precomputed", "test_globalmaxpool",
    "test_globalmaxpool_precomputed",
    "test_hardsigmoid", "test_hardsigmoid_default", "test_hardsigmoid_example",
    "test_maxpool_1d_default", "test_maxpool_2d_ceil", "test_maxpool_2d_default", "test_maxpool_2d_dilations",
    "test_maxpool_2d_pads", "test_maxpool_2d_precomputed_pads", "test_maxpool_2d_precomputed_same_upper",
    "test_maxpool_2d_precomputed_strides", "test_maxpool_2d_same_lower", "test_maxpool_2d_same_upper",
    "test_maxpool_2d_strides",
    "test_unsqueeze_axis_3",
]
# Issue 22's float ops (ops/float/compare.cc, variadic.cc, binary_math.cc, expand.cc, range.cc, unary.cc). Models
# at opset 1 to 11 use operator versions unchanged up to 13 (And/Or/Xor 7, Not 1, Sin/Cos 7, Elu/Selu 6, Softplus 1,
# Round 11, Range 11). Left out: the float16, float64, int16, uint16, uint32 and uint64 variants (dtypes octet does
# not hold), and the *_expanded Range cases (their Loop is not an octet op). int64 cases run as octet's s32.
FLOAT_OPS_CASES = [
    "test_equal", "test_equal_bcast", "test_greater", "test_greater_bcast", "test_greater_equal",
    "test_greater_equal_bcast", "test_greater_equal_bcast_expanded", "test_greater_equal_expanded", "test_less",
    "test_less_bcast", "test_less_equal", "test_less_equal_bcast", "test_less_equal_bcast_expanded",
    "test_less_equal_expanded",
    "test_not_2d", "test_not_3d", "test_not_4d",
    "test_and2d", "test_and3d", "test_and4d", "test_and_bcast3v1d", "test_and_bcast3v2d", "test_and_bcast4v2d",
    "test_and_bcast4v3d", "test_and_bcast4v4d",
    "test_or2d", "test_or3d", "test_or4d", "test_or_bcast3v1d", "test_or_bcast3v2d", "test_or_bcast4v2d",
    "test_or_bcast4v3d", "test_or_bcast4v4d",
    "test_xor2d", "test_xor3d", "test_xor4d", "test_xor_bcast3v1d", "test_xor_bcast3v2d", "test_xor_bcast4v2d",
    "test_xor_bcast4v3d", "test_xor_bcast4v4d",
    "test_where_example", "test_where_long_example",
    "test_max_example", "test_max_float32", "test_max_int32", "test_max_int64", "test_max_int8", "test_max_uint8",
    "test_max_one_input", "test_max_two_inputs",
    "test_min_example", "test_min_float32", "test_min_int32", "test_min_int64", "test_min_int8", "test_min_uint8",
    "test_min_one_input", "test_min_two_inputs",
    "test_sum_example", "test_sum_one_input", "test_sum_two_inputs",
    "test_mean_example", "test_mean_one_input", "test_mean_two_inputs",
    "test_prelu_broadcast", "test_prelu_example",
    "test_floor", "test_floor_example", "test_ceil", "test_ceil_example", "test_round", "test_sign",
    "test_sin", "test_sin_example", "test_cos", "test_cos_example", "test_softplus", "test_softplus_example",
    "test_elu", "test_elu_default", "test_elu_example", "test_selu", "test_selu_default", "test_selu_example",
    "test_mod_broadcast", "test_mod_int64_fmod", "test_mod_mixed_sign_float32", "test_mod_mixed_sign_int32",
    "test_mod_mixed_sign_int64", "test_mod_mixed_sign_int8", "test_mod_uint8",
    "test_expand_dim_changed", "test_expand_dim_unchanged", "test_tile", "test_tile_precomputed",
    "test_range_float_type_positive_delta", "test_range_int32_type_negative_delta",
]
CASES += FLOAT_OPS_CASES
# Graph inputs that fix an output shape (Expand's shape, Tile's repeats, Range's scalars): octet needs them at compile
# time, so the check turns them into initializers holding the case's input values (the op is still what is tested).
COMPILE_TIME_INPUTS = ("Expand", "Tile", "Range")
OPSET = 13
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def registered_ops():
    """The default-domain ops octet's float registry names (ops/float/*.cc), read from the registration calls."""
    ops = set()
    for path in glob.glob(os.path.join(SOURCE, "ops", "float", "*.cc")):
        with open(path) as f:
            text = f.read()
        ops.update(re.findall(r'Register\(\s*""\s*,\s*"([A-Za-z]+)"', text))
        ops.update(re.findall(r'Register[A-Za-z]*\(\s*registry\s*,\s*"([A-Za-z]+)"', text))
        ops.update(re.findall(r'Entry\{\s*"([A-Za-z]+)"', text))
        ops.update(re.findall(r'"(Reduce[A-Za-z]+)"', text))
    return ops


def run_case(octet, case, tmp, raise_opset, np, onnx, load_pb):
    """Returns a list of (ok, message), one per test data set and output."""
    folder = os.path.join(DATA, case)
    m = onnx.load(os.path.join(folder, "model.onnx"))
    if raise_opset:
        for os_ in m.opset_import:
            if os_.domain in ("", "ai.onnx") and os_.version < OPSET:
                os_.version = OPSET
        m.ir_version = max(m.ir_version, 7)
    model = os.path.join(tmp, case + ".onnx")
    onnx.save(m, model)
    results = []
    sets = sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_"))
    frozen = set()
    for n in m.graph.node:
        if n.op_type in COMPILE_TIME_INPUTS:
            frozen.update(n.input[1:] if n.op_type != "Range" else n.input)
    frozen &= {vi.name for vi in m.graph.input}
    for s in sets:
        if frozen:
            mm = onnx.ModelProto()
            mm.CopyFrom(m)
            for k, vi in enumerate(m.graph.input):
                if vi.name in frozen:
                    t = load_pb(os.path.join(folder, s, "input_%d.pb" % k))
                    mm.graph.initializer.append(onnx.numpy_helper.from_array(t, vi.name))
            keep = [vi for vi in mm.graph.input if vi.name not in frozen]
            del mm.graph.input[:]
            mm.graph.input.extend(keep)
            model = os.path.join(tmp, "%s_%s.onnx" % (case, s))
            onnx.save(mm, model)
        args = [octet, "run", model, "--output-dir", os.path.join(tmp, case, s)]
        for k, vi in enumerate(m.graph.input):
            if vi.name in frozen:
                continue
            pb = os.path.join(folder, s, "input_%d.pb" % k)
            if not os.path.exists(pb):
                break  # an optional input the case leaves out
            npy = os.path.join(tmp, "%s_%s_%d.npy" % (case, s, k))
            x = load_pb(pb)
            # octet holds BOOL as u8 0/1 and reads bool only from uint8 .npy files.
            np.save(npy, x.astype(np.uint8) if x.dtype == np.bool_ else x)
            args += ["--input", "%s=%s" % (vi.name, npy)]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            results.append((False, "%s/%s: octet run exited %d: %s" % (case, s, r.returncode, r.stderr.strip())))
            continue
        for k, vo in enumerate(m.graph.output):
            want = load_pb(os.path.join(folder, s, "output_%d.pb" % k))
            got = np.load(os.path.join(tmp, case, s, vo.name + ".npy"))
            # Integer and bool results (comparisons, Mod, Max/Min of ints) must be exact; floats within 1e-4.
            if want.dtype.kind in "biu":
                same = np.array_equal(got.astype(np.int64), want.astype(np.int64))
            else:
                same = np.allclose(got, want, rtol=1e-4, atol=1e-4)
            if got.shape != want.shape or not same:
                results.append((False, "%s/%s output %s: got %s %s, want %s %s" %
                                (case, s, vo.name, got.shape, got.ravel()[:8], want.shape, want.ravel()[:8])))
            else:
                results.append((True, "%s/%s %s %s" % (case, s, vo.name, list(got.shape))))
    return results


def main():
    octet = sys.argv[1]
    survey = "--survey" in sys.argv[2:]
    named = [a for a in sys.argv[2:] if a != "--survey"]
    try:
        import numpy as np
        import onnx
        from onnx import numpy_helper
    except ImportError as e:
        print("SKIPPED: %s (install python3-onnx)" % e)
        return 77
    if not os.path.isdir(DATA):
        print("SKIPPED: %s is missing (install libonnx-testdata)" % DATA)
        return 77

    def load_pb(path):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)

    if survey:
        ops = registered_ops()
        passed = total = 0
        with tempfile.TemporaryDirectory() as tmp:
            for case in sorted(os.listdir(DATA)):
                m = onnx.load(os.path.join(DATA, case, "model.onnx"))
                if not {n.op_type for n in m.graph.node} <= ops:
                    continue
                opset = max([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] or [0])
                try:
                    results = run_case(octet, case, tmp, False, np, onnx, load_pb)
                except Exception as e:  # an output octet did not write, a timeout: the case fails
                    results = [(False, "%s: %s" % (case, e))]
                ok = bool(results) and all(r[0] for r in results)
                total += 1
                passed += ok
                first = next((r[1] for r in results if not r[0]), "")
                print("%s opset %d %s%s" % ("pass" if ok else "FAIL", opset, case, "" if ok else ": " + first[:300]))
        print("survey: %d of %d cases whose ops octet registers pass (%d registered ops)" % (passed, total, len(ops)))
        return 0

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = [(c, c in CASES or c not in OLD_OPSET_CASES) for c in named] or \
               [(c, True) for c in CASES] + [(c, False) for c in OLD_OPSET_CASES]
        for case, raise_opset in work:
            for ok, msg in run_case(octet, case, tmp, raise_opset, np, onnx, load_pb):
                print(("ok: " if ok else "FAILED: ") + msg)
                failures += not ok
    if failures:
        print("FAILED: %d case(s)" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

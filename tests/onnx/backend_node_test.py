#!/usr/bin/python3
"""Runs cases of ONNX's backend node tests (Debian's libonnx-testdata) through `octet run` and compares the outputs
with the reference .pb outputs. Each case is a folder with model.onnx and test_data_set_*/{input,output}_N.pb.

Usage:
  backend_node_test.py OCTET [CASE...]   the cases listed below (or those named); exits 1 on any failure
  backend_node_test.py OCTET --survey    every case whose ops octet registers (read from ops/float/*.cc), each at
                                         its own opset; prints one line per case, a per-op table and the pass
                                         count, exits 0
Exits 77 (skipped) when the test data or python3-onnx is missing. CASES are raised to opset 13 when their operators
are unchanged between the two versions, so that the check is about the op; OLD_OPSET_CASES and AS_WRITTEN_CASES run
at the opset they were written for, so that the check is also about io/onnx/opset_adapters.cc. Every graph input is
fed at run time, those that fix a shape (Reshape's shape, Slice's starts) included.
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
# Issue 22, second part, run at the opset they were written for: inputs that fix a shape fed at run time (Reshape's
# shape, Slice's starts/ends/axes/steps, Pad's pads, Split's sizes, Squeeze/Unsqueeze/ReduceSum axes,
# ConstantOfShape's shape, Clip's bounds), the ops added with them (Resize, ArgMax/ArgMin, TopK, GatherElements,
# GatherND, ScatterElements, ScatterND, DepthToSpace, SpaceToDepth, InstanceNormalization, integer Clip, Pow of mixed
# dtypes, u8 arithmetic, Dropout's mask and zero-ratio training mode), the opset-1
# and 6 forms of Not, Selu, Elu, Softplus, and the *_expanded functions these make runnable.
AS_WRITTEN_CASES = [
    "test_dropout_default_mask", "test_dropout_default_mask_ratio", "test_training_dropout_zero_ratio",
    "test_training_dropout_zero_ratio_mask", "test_pow_types_float", "test_pow_types_float32_int32",
    "test_pow_types_float32_int64", "test_pow_types_int", "test_pow_types_int32_float32",
    "test_pow_types_int32_int32", "test_pow_types_int64_float32", "test_pow_types_int64_int64", "test_add_uint8",
    "test_sub_uint8", "test_mul_uint8", "test_div_uint8",
    "test_upsample_nearest", "test_argmax_default_axis_example", "test_argmax_default_axis_example_select_last_index",
    "test_argmax_default_axis_random", "test_argmax_default_axis_random_select_last_index",
    "test_argmax_keepdims_example", "test_argmax_keepdims_example_select_last_index", "test_argmax_keepdims_random",
    "test_argmax_keepdims_random_select_last_index", "test_argmax_negative_axis_keepdims_example",
    "test_argmax_negative_axis_keepdims_example_select_last_index", "test_argmax_negative_axis_keepdims_random",
    "test_argmax_negative_axis_keepdims_random_select_last_index", "test_argmax_no_keepdims_example",
    "test_argmax_no_keepdims_example_select_last_index", "test_argmax_no_keepdims_random",
    "test_argmax_no_keepdims_random_select_last_index", "test_argmin_default_axis_example",
    "test_argmin_default_axis_example_select_last_index", "test_argmin_default_axis_random",
    "test_argmin_default_axis_random_select_last_index", "test_argmin_keepdims_example",
    "test_argmin_keepdims_example_select_last_index", "test_argmin_keepdims_random",
    "test_argmin_keepdims_random_select_last_index", "test_argmin_negative_axis_keepdims_example",
    "test_argmin_negative_axis_keepdims_example_select_last_index", "test_argmin_negative_axis_keepdims_random",
    "test_argmin_negative_axis_keepdims_random_select_last_index", "test_argmin_no_keepdims_example",
    "test_argmin_no_keepdims_example_select_last_index", "test_argmin_no_keepdims_random",
    "test_argmin_no_keepdims_random_select_last_index", "test_blackmanwindow_expanded",
    "test_blackmanwindow_symmetric_expanded", "test_clip", "test_clip_default_int8_inbounds",
    "test_clip_default_int8_max", "test_clip_default_int8_min", "test_clip_default_max", "test_clip_default_min",
    "test_clip_example", "test_clip_inbounds", "test_clip_outbounds", "test_clip_splitbounds", "test_constant_pad",
    "test_constantofshape_float_ones", "test_constantofshape_int_shape_zero", "test_constantofshape_int_zeros",
    "test_depthtospace_crd_mode", "test_depthtospace_crd_mode_example", "test_depthtospace_dcr_mode",
    "test_depthtospace_example", "test_edge_pad", "test_elu", "test_elu_default", "test_elu_example",
    "test_gather_elements_0", "test_gather_elements_1", "test_gather_elements_negative_indices",
    "test_gathernd_example_float32", "test_gathernd_example_int32", "test_gathernd_example_int32_batch_dim1",
    "test_hammingwindow_expanded", "test_hammingwindow_symmetric_expanded", "test_hannwindow_expanded",
    "test_hannwindow_symmetric_expanded", "test_instancenorm_epsilon", "test_instancenorm_example",
    "test_nllloss_NC_expanded", "test_nllloss_NCd1_expanded", "test_nllloss_NCd1_ii_expanded",
    "test_nllloss_NCd1_mean_weight_negative_ii_expanded", "test_nllloss_NCd1_weight_expanded",
    "test_nllloss_NCd1_weight_ii_expanded", "test_nllloss_NCd1d2_expanded",
    "test_nllloss_NCd1d2_no_weight_reduction_mean_ii_expanded", "test_nllloss_NCd1d2_reduction_mean_expanded",
    "test_nllloss_NCd1d2_reduction_sum_expanded", "test_nllloss_NCd1d2_with_weight_expanded",
    "test_nllloss_NCd1d2_with_weight_reduction_mean_expanded", "test_nllloss_NCd1d2_with_weight_reduction_sum_expanded",
    "test_nllloss_NCd1d2_with_weight_reduction_sum_ii_expanded",
    "test_nllloss_NCd1d2d3_none_no_weight_negative_ii_expanded", "test_nllloss_NCd1d2d3_sum_weight_high_ii_expanded",
    "test_nllloss_NCd1d2d3d4d5_mean_weight_expanded", "test_nllloss_NCd1d2d3d4d5_none_no_weight_expanded",
    "test_not_2d", "test_not_3d", "test_not_4d", "test_reduce_sum_default_axes_keepdims_example",
    "test_reduce_sum_default_axes_keepdims_random", "test_reduce_sum_do_not_keepdims_example",
    "test_reduce_sum_do_not_keepdims_random", "test_reduce_sum_empty_axes_input_noop_example",
    "test_reduce_sum_empty_axes_input_noop_random", "test_reduce_sum_keepdims_example",
    "test_reduce_sum_keepdims_random", "test_reduce_sum_negative_axes_keepdims_example",
    "test_reduce_sum_negative_axes_keepdims_random", "test_reflect_pad", "test_reshape_allowzero_reordered",
    "test_reshape_extended_dims", "test_reshape_negative_dim", "test_reshape_negative_extended_dims",
    "test_reshape_one_dim", "test_reshape_reduced_dims", "test_reshape_reordered_all_dims",
    "test_reshape_reordered_last_dims", "test_reshape_zero_and_negative_dim", "test_reshape_zero_dim",
    "test_resize_downsample_scales_cubic", "test_resize_downsample_scales_cubic_A_n0p5_exclude_outside",
    "test_resize_downsample_scales_cubic_align_corners", "test_resize_downsample_scales_linear",
    "test_resize_downsample_scales_linear_align_corners", "test_resize_downsample_scales_nearest",
    "test_resize_downsample_sizes_cubic", "test_resize_downsample_sizes_linear_pytorch_half_pixel",
    "test_resize_downsample_sizes_nearest", "test_resize_downsample_sizes_nearest_tf_half_pixel_for_nn",
    "test_resize_tf_crop_and_resize", "test_resize_upsample_scales_cubic",
    "test_resize_upsample_scales_cubic_A_n0p5_exclude_outside", "test_resize_upsample_scales_cubic_align_corners",
    "test_resize_upsample_scales_cubic_asymmetric", "test_resize_upsample_scales_linear",
    "test_resize_upsample_scales_linear_align_corners", "test_resize_upsample_scales_nearest",
    "test_resize_upsample_sizes_cubic", "test_resize_upsample_sizes_nearest",
    "test_resize_upsample_sizes_nearest_ceil_half_pixel", "test_resize_upsample_sizes_nearest_floor_align_corners",
    "test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric", "test_scatter_elements_with_axis",
    "test_scatter_elements_with_duplicate_indices", "test_scatter_elements_with_negative_indices",
    "test_scatter_elements_without_axis", "test_scatternd", "test_scatternd_add", "test_scatternd_multiply",
    "test_selu", "test_selu_default", "test_selu_example", "test_slice", "test_slice_default_axes",
    "test_slice_default_steps", "test_slice_end_out_of_bounds", "test_slice_neg", "test_slice_neg_steps",
    "test_slice_negative_axes", "test_slice_start_out_of_bounds", "test_softplus", "test_softplus_example",
    "test_spacetodepth", "test_spacetodepth_example", "test_split_variable_parts_1d", "test_split_variable_parts_2d",
    "test_split_variable_parts_default_axis", "test_split_zero_size_splits", "test_squeeze",
    "test_squeeze_negative_axes", "test_top_k", "test_top_k_negative_axis", "test_top_k_smallest",
    "test_unsqueeze_axis_0", "test_unsqueeze_axis_1", "test_unsqueeze_axis_2", "test_unsqueeze_negative_axes",
    "test_unsqueeze_three_axes", "test_unsqueeze_two_axes", "test_unsqueeze_unsorted_axes"
]
# Issue 23: ONNX's quantized operators with run-time scales and zero points (ops/float/quantize_linear.cc,
# integer_linear.cc), at the opsets they were written for (10, 11, 13). Integer outputs must be exact.
QUANTIZED_CASES = [
    "test_quantizelinear", "test_quantizelinear_axis", "test_dequantizelinear", "test_dequantizelinear_axis",
    "test_dynamicquantizelinear", "test_dynamicquantizelinear_max_adjusted",
    "test_dynamicquantizelinear_min_adjusted", "test_dynamicquantizelinear_expanded",
    "test_dynamicquantizelinear_max_adjusted_expanded", "test_dynamicquantizelinear_min_adjusted_expanded",
    "test_qlinearconv", "test_qlinearmatmul_2D", "test_qlinearmatmul_3D",
    "test_convinteger_with_padding", "test_convinteger_without_padding", "test_basic_convinteger",
    "test_matmulinteger",
]
AS_WRITTEN_CASES += QUANTIZED_CASES
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
    if "Resize" in ops:
        ops.add("Upsample")  # io/onnx/opset_adapters.cc reads it as Resize
    return ops


def tested_ops(case, model_ops):
    """The ops a case tests: those whose name (lower case, no underscores) starts its name, else all its ops."""
    name = case[len("test_"):].replace("_", "")
    named = [op for op in model_ops if name.startswith(op.lower())]
    if named:
        longest = max(len(op) for op in named)
        return [op for op in named if len(op) == longest]
    return sorted(model_ops)


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
    for s in sets:
        # Inputs that fix an output shape (Reshape's shape, Expand's, Tile's repeats, Range's scalars) are fed like
        # any other: octet computes those shapes at run time.
        args = [octet, "run", model, "--output-dir", os.path.join(tmp, case, s)]
        for k, vi in enumerate(m.graph.input):
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
        per_op = {}  # op -> [passed, total]
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
                for op in tested_ops(case, {n.op_type for n in m.graph.node}):
                    counts = per_op.setdefault(op, [0, 0])
                    counts[0] += ok
                    counts[1] += 1
                first = next((r[1] for r in results if not r[0]), "")
                print("%s opset %d %s%s" % ("pass" if ok else "FAIL", opset, case, "" if ok else ": " + first[:300]))
        print("per-op table (a case counts for the ops its name starts with, else for all its ops):")
        for op in sorted(per_op):
            p, t = per_op[op]
            print("  %-24s %4d of %4d  %5.1f%%" % (op, p, t, 100.0 * p / t))
        print("survey: %d of %d cases whose ops octet registers pass (%d registered ops)" % (passed, total, len(ops)))
        return 0

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        as_written = OLD_OPSET_CASES + AS_WRITTEN_CASES
        work = [(c, c in CASES or c not in as_written) for c in named] or \
               [(c, True) for c in CASES] + [(c, False) for c in as_written]
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

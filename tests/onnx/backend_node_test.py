#!/usr/bin/python3
"""Runs ONNX's backend node tests (Debian's libonnx-testdata) through `octet run` and compares the outputs with the
reference .pb outputs. Each case is a folder with model.onnx and test_data_set_*/{input,output}_N.pb.

Usage:
  backend_node_test.py OCTET [--table FILE] [--jobs N]
      The conformance run: every case of node/, at the opset it was written for, in N parallel processes (default:
      the CPU count). Each case ends as pass, refused (octet exits 1 or 2 with a message), wrong (an output differs
      or is missing), crash (a signal, an internal error, another exit code) or hang (over $OCTET_HANG_S seconds,
      default 30); cases whose inputs or outputs have no .npy form (sequences, optionals, strings) are counted as
      excepted. Writes the per-op table (markdown) to FILE and prints it. The curated lists below must pass outright (CASES raised to
      opset 13, the others as written). Exits 1 on any wrong result, crash, hang or curated case that does not pass;
      a refusal elsewhere is counted, not failed.
  backend_node_test.py OCTET CASE...   the cases named; exits 1 on any that does not pass
Exits 77 (skipped) when the test data or python3-onnx is missing. CASES are raised to opset 13 when their operators
are unchanged between the two versions, so that the check is about the op; OLD_OPSET_CASES and AS_WRITTEN_CASES run
at the opset they were written for, so that the check is also about io/onnx/opset_adapters.cc. Every graph input is
fed at run time, those that fix a shape (Reshape's shape, Slice's starts) included.
"""
import argparse
import glob
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time

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
# Issue 22's registered ops that were under 95%: Cast to and from BFLOAT16 (held as f32), 3-D ConvTranspose
# (ops/float/conv_nd.cc) and training-mode Dropout with a seed (numpy's MT19937 draws, as ONNX's reference).
AS_WRITTEN_CASES += [
    "test_cast_BFLOAT16_to_FLOAT", "test_cast_FLOAT_to_BFLOAT16", "test_convtranspose_3d", "test_training_dropout",
    "test_training_dropout_default", "test_training_dropout_default_mask", "test_training_dropout_mask",
]
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
        ops.update(re.findall(r'"(Reduce[A-Za-z0-9]+)"', text))
        ops.update(re.findall(r'\{\s*"([A-Z][A-Za-z]+)",\s*\[\]\(float', text))  # tables of lambdas
    if "Resize" in ops:
        ops.add("Upsample")  # io/onnx/opset_adapters.cc reads it as Resize
    return ops


# The ops issue 22 lists as common in real models; the table marks them (and the ops octet registers).
ISSUE_OPS = set("""Resize Where Expand Equal Less Greater LessOrEqual GreaterOrEqual Not And Or Range PRelu
InstanceNormalization ArgMax ArgMin Max Min Sum Mean Tile Einsum TopK Softplus Elu Selu DepthToSpace SpaceToDepth
GatherElements GatherND ScatterND CumSum Floor Ceil Round Sign Sin Cos Size Mod ReduceProd ReduceL2 ReduceSumSquare
If Loop Upsample""".split())
HANG_S = int(os.environ.get("OCTET_HANG_S", "30"))
SCHEMA_OPS = set()  # filled by main before the worker processes fork
STATES = ("pass", "refused", "wrong", "crash", "hang", "excepted")


# Case-name prefixes that abbreviate the op they test.
CASE_ALIASES = {"basicconvinteger": "ConvInteger", "sce": "SoftmaxCrossEntropyLoss",
                "nllloss": "NegativeLogLikelihoodLoss", "lrn": "LRN", "basicconv": "Conv", "convwith": "Conv",
                "upsample": "Upsample", "training": "Dropout", "bitshift": "BitShift", "expand": "Expand",
                "greaterequal": "GreaterOrEqual", "lessequal": "LessOrEqual"}


def onnx_op_names():
    import onnx
    return {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain in ("", "ai.onnx")}


def tested_ops(case, model_ops, schema_ops):
    """The op a case tests: the ONNX op (or alias) whose name, lower case without underscores, is the longest prefix
    of the case's name (an *_expanded case tests the function op it expands); else every op of its model."""
    name = case[len("test_"):].replace("_", "")
    for alias, op in CASE_ALIASES.items():
        if name.startswith(alias):
            return [op]
    named = [op for op in schema_ops | model_ops if name.startswith(op.lower())]
    if named:
        return [max(named, key=len)]
    return sorted(model_ops)


def load_pb(path):
    """A TensorProto file as a numpy array; None when it holds no tensor with a .npy form (a sequence, a string)."""
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type in (0, onnx.TensorProto.STRING):
        return None
    return numpy_helper.to_array(t)


def bfloat16_bits_to_f32(bits):
    """BFLOAT16 values (their bits, as python3-onnx reads them) as float32."""
    import numpy as np
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def npy_form(m):
    """Why the model's inputs or outputs have no .npy form, or "" when they all do."""
    for vi in list(m.graph.input) + list(m.graph.output):
        if not vi.type.HasField("tensor_type"):
            return "%s is a %s" % (vi.name, vi.type.WhichOneof("value"))
        if vi.type.tensor_type.elem_type == 8:  # STRING
            return "%s is a string tensor" % vi.name
    return ""


def run_case(octet, case, tmp, raise_opset):
    """Runs one case; returns (state, message, ops it tests)."""
    import numpy as np
    import onnx
    folder = os.path.join(DATA, case)
    m = onnx.load(os.path.join(folder, "model.onnx"))
    ops = tested_ops(case, {n.op_type for n in m.graph.node}, SCHEMA_OPS)
    why = npy_form(m)
    if why:
        return "excepted", "%s: %s" % (case, why), ops
    if raise_opset:
        for os_ in m.opset_import:
            if os_.domain in ("", "ai.onnx") and os_.version < OPSET:
                os_.version = OPSET
        m.ir_version = max(m.ir_version, 7)
    tag = case + ("_raised" if raise_opset else "")
    model = os.path.join(tmp, tag + ".onnx")
    onnx.save(m, model)
    sets = sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_"))
    for s in sets:
        # Inputs that fix an output shape (Reshape's shape, Expand's, Tile's repeats, Range's scalars) are fed like
        # any other: octet computes those shapes at run time.
        out_dir = os.path.join(tmp, tag, s)
        args = [octet, "run", model, "--output-dir", out_dir]
        for k, vi in enumerate(m.graph.input):
            pb = os.path.join(folder, s, "input_%d.pb" % k)
            if not os.path.exists(pb):
                break  # an optional input the case leaves out
            x = load_pb(pb)
            if x is None:
                return "excepted", "%s/%s: input %d has no .npy form" % (case, s, k), ops
            npy = os.path.join(tmp, "%s_%s_%d.npy" % (tag, s, k))
            # octet holds BOOL as u8 0/1 and reads bool only from uint8 .npy files; it reads DOUBLE and FLOAT16
            # models as f32 and their inputs from float32 .npy files (as its message for float64 files says), and
            # INT16, UINT16, UINT32 and UINT64 as int32.
            if vi.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16:
                x = bfloat16_bits_to_f32(x)  # python3-onnx gives the bits as uint16; octet reads BFLOAT16 as f32
            elif x.dtype == np.bool_:
                x = x.astype(np.uint8)
            elif x.dtype in (np.float64, np.float16):
                x = x.astype(np.float32)
            elif x.dtype in (np.int16, np.uint16, np.uint32, np.uint64) and \
                    np.all(x.astype(np.int64) <= np.iinfo(np.int32).max):
                x = x.astype(np.int32)  # octet holds these as int32, like int64
            np.save(npy, x)
            args += ["--input", "%s=%s" % (vi.name, npy)]
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=HANG_S)
        except subprocess.TimeoutExpired:
            return "hang", "%s/%s: octet run took over %d s" % (case, s, HANG_S), ops
        err = r.stderr.strip().replace("\n", " ")[:300]
        if r.returncode < 0 or r.returncode not in (0, 1, 2) or "internal error" in r.stderr or "Sanitizer" in r.stderr:
            return "crash", "%s/%s: octet run exited %d: %s" % (case, s, r.returncode, err), ops
        if r.returncode != 0:
            return "refused", "%s/%s: %s" % (case, s, err), ops
        for k, vo in enumerate(m.graph.output):
            want = load_pb(os.path.join(folder, s, "output_%d.pb" % k))
            path = os.path.join(out_dir, vo.name + ".npy")
            if not os.path.exists(path):
                return "wrong", "%s/%s: no output %s" % (case, s, vo.name), ops
            got = np.load(path)
            bf16 = vo.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
            if bf16:
                want = bfloat16_bits_to_f32(want)
            # Integer and bool results (comparisons, Mod, Max/Min of ints) must be exact; floats within 1e-4, and
            # FLOAT16 ones, which the reference rounded to half precision while octet computes in f32, within
            # half a half-precision step (2^-11 relative). BFLOAT16 ones within one bfloat16 step (2^-7 relative):
            # the suite's data (ONNX 1.12) truncates to bfloat16, while octet rounds to nearest as later ONNX
            # references and ONNX Runtime do.
            if want.dtype.kind in "biu":
                same = got.shape == want.shape and np.array_equal(got.astype(np.int64), want.astype(np.int64))
            else:
                tol = 2.0**-7 if bf16 else 1e-3 if want.dtype == np.float16 else 1e-4
                same = got.shape == want.shape and np.allclose(got.astype(np.float64), want.astype(np.float64),
                                                               rtol=tol, atol=tol, equal_nan=True)
                if bf16 and got.dtype == np.float32:  # and every value is a bfloat16 value (low 16 bits zero)
                    same = same and not np.any(got.view(np.uint32) & 0xffff)
            if not same:
                return "wrong", "%s/%s output %s: got %s %s, want %s %s" % (
                    case, s, vo.name, got.shape, got.ravel()[:6], want.shape, want.ravel()[:6]), ops
    return "pass", "%s (%d data sets)" % (case, len(sets)), ops


def _work(item):
    octet, case, tmp, raise_opset = item
    try:
        return (case, raise_opset) + run_case(octet, case, tmp, raise_opset)
    except Exception as e:  # an unreadable case file: the case fails as wrong, with the reason
        return case, raise_opset, "wrong", "%s: %s: %s" % (case, type(e).__name__, e), []


def per_op_table(results, registered, wall_s, jobs):
    """The markdown table: one row per op the suite tests, with the counts of each state."""
    rows = {}
    for case, raised, state, _, ops in results:
        if raised:
            continue
        for op in ops:
            rows.setdefault(op, dict.fromkeys(STATES, 0))[state] += 1
    for op in (ISSUE_OPS | registered) - set(rows):
        rows[op] = dict.fromkeys(STATES, 0)
    lines = ["# ONNX backend node tests through `octet run`", "",
             "Every case of %s at the opset it was written for; %d processes, %.0f s wall. A case counts for the ops "
             "its name starts with, else for all its ops. `pass %%` is of the cases with a .npy form (excepted: "
             "sequences, optionals, strings). Marks: R = octet registers the op, I = listed in issue 22." %
             (DATA, jobs, wall_s), "",
             "| op | mark | tests | passed | refused | wrong | crash | hang | excepted | pass % |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    total = dict.fromkeys(STATES, 0)
    for op in sorted(rows):
        c = rows[op]
        n = sum(c.values())
        runnable = n - c["excepted"]
        pct = "%.1f" % (100.0 * c["pass"] / runnable) if runnable else "-"
        mark = ("R" if op in registered else "") + ("I" if op in ISSUE_OPS else "")
        lines.append("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %s |" % (
            op, mark, n, c["pass"], c["refused"], c["wrong"], c["crash"], c["hang"], c["excepted"], pct))
    for _, raised, state, _, _ in results:
        if not raised:
            total[state] += 1
    n = sum(total.values())
    lines += ["", "Cases: %d; passed %d, refused %d, wrong %d, crash %d, hang %d, excepted %d (%.1f%% of the %d "
              "with a .npy form pass)." % (n, total["pass"], total["refused"], total["wrong"], total["crash"],
                                           total["hang"], total["excepted"],
                                           100.0 * total["pass"] / max(1, n - total["excepted"]),
                                           n - total["excepted"])]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("octet")
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--table", help="write the per-op table (markdown) here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        print("SKIPPED: %s (install python3-onnx)" % e)
        return 77
    if not os.path.isdir(DATA):
        print("SKIPPED: %s is missing (install libonnx-testdata)" % DATA)
        return 77

    SCHEMA_OPS.update(onnx_op_names())
    curated = {(c, True) for c in CASES} | {(c, False) for c in OLD_OPSET_CASES + AS_WRITTEN_CASES}
    if a.cases:
        as_written = OLD_OPSET_CASES + AS_WRITTEN_CASES
        work = [(c, c in CASES or c not in as_written) for c in a.cases]
    else:
        work = sorted({(c, False) for c in os.listdir(DATA)} | curated)
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        items = [(a.octet, c, tmp, raised) for c, raised in work]
        with multiprocessing.Pool(max(1, a.jobs)) as pool:
            results = sorted(pool.imap_unordered(_work, items, chunksize=4))
    wall_s = time.monotonic() - start

    failures = 0
    for case, raised, state, msg, _ in results:
        must_pass = bool(a.cases) or (case, raised) in curated
        bad = state in ("wrong", "crash", "hang") or (must_pass and state != "pass")
        failures += bad
        label = ("FAILED (%s)" % state) if bad else state
        print("%s: %s%s" % (label, msg, " [raised to opset %d]" % OPSET if raised else ""))
    if not a.cases:
        table = per_op_table(results, registered_ops(), wall_s, a.jobs)
        print(table)
        if a.table:
            with open(a.table, "w") as f:
                f.write(table)
            print("per-op table written to %s" % a.table)
    print("%d case runs in %.1f s on %d processes" % (len(results), wall_s, a.jobs))
    if failures:
        print("FAILED: %d case(s)" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

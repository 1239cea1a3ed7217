#!/usr/bin/python3
"""Writes the malformed-model corpus in tests/data/models/malformed/ (run with /usr/bin/python3, onnx 1.12).

Each file breaks one rule octet's importer or compiler must enforce; tests/onnx/onnx_malformed_test.cc lists the
error each must produce. It also writes two valid models: ../odd_output_names.onnx, whose output names need
sanitising as file names, and ../constant_only.onnx, which has no graph inputs; and ../dynamic_batch/, a Conv model
with a symbolic batch and its broken twin. The files start from one small valid
model (base.onnx: Gemm, Relu, Softmax; conv_valid.onnx for the Conv and MaxPool files) and are built with
onnx.helper, so ONNX's own checker is not a gate (several of them pass it).
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "malformed")


def base_parts():
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4) / 10.0, "fc.weight")
    b = numpy_helper.from_array(np.array([0.1, -0.2, 0.3], dtype=np.float32), "fc.bias")
    nodes = [
        helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["h"], name="fc", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=-1),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])]
    return nodes, [w, b], inputs, outputs


def model(nodes, inits, inputs, outputs, opset=13, ir=8):
    g = helper.make_graph(nodes, "base", inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="octet-tests")
    m.ir_version = ir
    return m


def save(m, name):
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        f.write(m.SerializeToString() if isinstance(m, onnx.ModelProto) else m)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    nodes, inits, inputs, outputs = base_parts()
    base = model(nodes, inits, inputs, outputs)
    onnx.checker.check_model(base)
    save(base, "base.onnx")
    data = base.SerializeToString()

    # Bytes that are not a whole model.
    save(data[: len(data) // 2], "truncated.onnx")
    save(b"", "empty.onnx")
    save(b"\x93NUMPY\x01\x00v\x00{'descr': '<f4'}", "not_onnx.onnx")

    def variant(name, edit, opset=13, ir=8):
        n, i, ins, outs = base_parts()
        edit(n, i, ins, outs)
        save(model(n, i, ins, outs, opset, ir), name)

    # Tensor data.
    def short_raw(n, i, ins, outs):
        i[0].raw_data = i[0].raw_data[:-4]
    variant("raw_data_short.onnx", short_raw)

    def long_raw(n, i, ins, outs):
        i[1].raw_data = i[1].raw_data + b"\0\0\0\0"
    variant("raw_data_long.onnx", long_raw)

    def negative_dim(n, i, ins, outs):
        i[1].dims[0] = -3
    variant("negative_dim.onnx", negative_dim)

    def huge_dims(n, i, ins, outs):
        del i[0].dims[:]
        i[0].dims.extend([1 << 31, 1 << 31, 1 << 31])
    variant("huge_dims.onnx", huge_dims)

    # 2^34 elements (64 GiB) declared, 48 bytes present: refused before anything is allocated.
    def large_dims_little_data(n, i, ins, outs):
        del i[0].dims[:]
        i[0].dims.extend([1 << 17, 1 << 17])
    variant("large_dims_little_data.onnx", large_dims_little_data)

    def large_typed_little_data(n, i, ins, outs):
        i[1].ClearField("raw_data")
        del i[1].dims[:]
        i[1].dims.extend([1 << 34])
        i[1].float_data.extend([1.0, 2.0, 3.0])
    variant("large_typed_little_data.onnx", large_typed_little_data)

    def float_data_count(n, i, ins, outs):
        i[1].ClearField("raw_data")
        i[1].float_data.extend([1.0, 2.0])
    variant("float_data_count.onnx", float_data_count)

    def double_init(n, i, ins, outs):
        i[1].CopyFrom(numpy_helper.from_array(np.zeros(3, dtype=np.float64), "fc.bias"))
    variant("double_initializer.onnx", double_init)

    def two_sources(n, i, ins, outs):
        i[1].float_data.extend([1.0, 2.0, 3.0])
    variant("two_data_sources.onnx", two_sources)

    def input_negative(n, i, ins, outs):
        ins[0].type.tensor_type.shape.dim[1].dim_value = -4
    variant("input_negative_dim.onnx", input_negative)

    # External data.
    def external(location):
        def edit(n, i, ins, outs):
            t = i[1]
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            e = t.external_data.add()
            e.key, e.value = "location", location
        return edit
    variant("external_escape.onnx", external("../base.onnx"))
    variant("external_absolute.onnx", external("/etc/hostname"))
    variant("external_missing.onnx", external("no_such_file.bin"))

    # Structure.
    def cycle(n, i, ins, outs):
        n[0].input[0] = "r"  # fc reads relu's output, relu reads fc's
    variant("cycle.onnx", cycle)

    def missing_input(n, i, ins, outs):
        n[1].input[0] = "nowhere"
    variant("missing_input.onnx", missing_input)

    def undefined_output(n, i, ins, outs):
        outs[0].name = "ghost"
    variant("undefined_output.onnx", undefined_output)

    def duplicate_value(n, i, ins, outs):
        n[1].output[0] = "h"
    variant("duplicate_value.onnx", duplicate_value)

    def duplicate_node(n, i, ins, outs):
        n[2].name = "fc"
    variant("duplicate_node_name.onnx", duplicate_node)

    def unsupported(n, i, ins, outs):
        n[1].op_type = "Frobnicate"
        n.append(helper.make_node("NonMaxSuppression", ["y"], ["nms"], name="nms"))
        n.append(helper.make_node("Relu", ["nms"], ["y2"], name="tail", domain="com.example"))
    variant("unsupported_ops.onnx", unsupported)

    def subgraph(n, i, ins, outs):
        body = helper.make_graph([helper.make_node("Identity", ["r"], ["o"])], "body", [],
                                 [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1, 3])])
        n[2] = helper.make_node("If", ["r"], ["y"], name="branch", then_branch=body, else_branch=body)
    variant("subgraph_if.onnx", subgraph)

    # Attributes.
    def attr_type(n, i, ins, outs):
        a = n[0].attribute[0]  # transB, declared INT
        a.ClearField("i")
        a.f = 1.0
    variant("attribute_wrong_field.onnx", attr_type)

    def attr_dup(n, i, ins, outs):
        n[2].attribute.extend([helper.make_attribute("axis", 0)])
    variant("attribute_duplicate.onnx", attr_dup)

    def attr_kind(n, i, ins, outs):
        n[2].attribute[0].CopyFrom(helper.make_attribute("axis", 1.5))
    variant("attribute_wrong_type.onnx", attr_kind)

    # Semantics checked at compile.
    def bad_axis(n, i, ins, outs):
        n[2].attribute[0].i = 4
    variant("bad_axis_softmax.onnx", bad_axis)

    def bad_concat(n, i, ins, outs):
        n[2] = helper.make_node("Concat", ["r", "r"], ["y"], name="concat", axis=-3)
    variant("bad_axis_concat.onnx", bad_concat)

    def bad_gemm(n, i, ins, outs):
        n[0].attribute[0].i = 0  # transB 0: W [3, 4] against x [1, 4]
    variant("gemm_shape_mismatch.onnx", bad_gemm)

    def bad_reshape(n, i, ins, outs):
        i.append(numpy_helper.from_array(np.array([5, -1], dtype=np.int64), "shape"))
        n[2] = helper.make_node("Reshape", ["r", "shape"], ["y"], name="reshape")
    variant("reshape_mismatch.onnx", bad_reshape)

    def gather_oob(n, i, ins, outs):
        i.append(numpy_helper.from_array(np.array([7], dtype=np.int64), "idx"))
        n[2] = helper.make_node("Gather", ["fc.weight", "idx"], ["g"], name="gather")
        n.append(helper.make_node("Add", ["g", "r"], ["y"], name="add"))
    variant("gather_out_of_range.onnx", gather_oob)

    def gemm_bias(n, i, ins, outs):
        i[1].CopyFrom(numpy_helper.from_array(np.array([0.1, -0.2], dtype=np.float32), "fc.bias"))  # [2] vs [1, 3]
    variant("gemm_bias_broadcast.onnx", gemm_bias)

    def flatten_axis(n, i, ins, outs):
        n[2] = helper.make_node("Flatten", ["r"], ["y"], name="flatten", axis=3)  # rank 2 allows [-2, 2]
    variant("bad_axis_flatten.onnx", flatten_axis)

    def transpose_perm(n, i, ins, outs):
        n[2] = helper.make_node("Transpose", ["r"], ["y"], name="transpose", perm=[1, 1])
    variant("transpose_bad_perm.onnx", transpose_perm)

    def split_sizes(n, i, ins, outs):
        i.append(numpy_helper.from_array(np.array([1, 1], dtype=np.int64), "sizes"))  # sum 2, axis 1 has 3
        n[2] = helper.make_node("Split", ["r", "sizes"], ["y", "y2"], name="split", axis=1)
    variant("split_sizes_sum.onnx", split_sizes)

    # Conv and MaxPool attributes, on a small convolution: x [1, 2, 5, 5], W [4, 2, 3, 3], B [4].
    def conv_variant(name, edit, out=OUT, batch=1):
        w = numpy_helper.from_array(np.linspace(-1, 1, 72, dtype=np.float32).reshape(4, 2, 3, 3), "conv.weight")
        b = numpy_helper.from_array(np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32), "conv.bias")
        nodes = [helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"], name="conv",
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1])]
        inits = [w, b]
        edit(nodes, inits)
        nodes.append(helper.make_node("Relu", [nodes[0].output[0]], ["y"], name="relu"))
        ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 2, 5, 5])]
        outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
        with open(os.path.join(out, name), "wb") as f:
            f.write(model(nodes, inits, ins, outs).SerializeToString())

    def set_attr(name, value):
        def edit(n, i):
            attrs = [a for a in n[0].attribute if a.name != name]
            del n[0].attribute[:]
            n[0].attribute.extend(attrs + [helper.make_attribute(name, value)])
        return edit

    conv_variant("conv_valid.onnx", lambda n, i: None)  # the base the conv files vary; runs
    conv_variant("conv_negative_pads.onnx", set_attr("pads", [-1, 0, 0, 0]))
    conv_variant("conv_pads_length.onnx", set_attr("pads", [1, 1]))
    conv_variant("conv_stride_zero.onnx", set_attr("strides", [0, 1]))
    conv_variant("conv_dilation_zero.onnx", set_attr("dilations", [1, 0]))
    conv_variant("conv_kernel_shape_mismatch.onnx", set_attr("kernel_shape", [2, 2]))
    conv_variant("conv_float_strides.onnx", set_attr("strides", [1.0, 1.0]))
    conv_variant("conv_group_not_dividing.onnx", set_attr("group", 3))

    def channel_mismatch(n, i):
        i[0].CopyFrom(numpy_helper.from_array(np.zeros((4, 3, 3, 3), dtype=np.float32), "conv.weight"))
    conv_variant("conv_channel_mismatch.onnx", channel_mismatch)

    def missing_weight(n, i):
        del n[0].input[1:]
        del i[:]
    conv_variant("conv_missing_weight.onnx", missing_weight)

    # With a symbolic batch, in ../dynamic_batch/: octet inspect accepts the first and refuses the second.
    dyn = os.path.join(HERE, "dynamic_batch")
    os.makedirs(dyn, exist_ok=True)
    conv_variant("conv.onnx", lambda n, i: None, dyn, "batch")
    conv_variant("conv_stride_zero.onnx", set_attr("strides", [0, 1]), dyn, "batch")

    def maxpool(n, i):
        n[0] = helper.make_node("MaxPool", ["x"], ["c"], name="pool", strides=[1, 1])
        del i[:]
    conv_variant("maxpool_no_kernel_shape.onnx", maxpool)

    # A training-domain model (as in ONNX's backend tests): no default-domain opset, an Adagrad node.
    def training():
        t_inputs = ["r", "t", "x", "g", "h"]
        g = helper.make_graph(
            [helper.make_node("Adagrad", t_inputs, ["x_new", "h_new"], domain="ai.onnx.preview.training")], "adagrad",
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, [] if n == "r" else [2]) for n in t_inputs[:1]] +
            [helper.make_tensor_value_info("t", TensorProto.INT64, [])] +
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in t_inputs[2:]],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ["x_new", "h_new"]])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("ai.onnx.preview.training", 1)],
                                 producer_name="octet-tests", ir_version=8)
    save(training(), "training_domain.onnx")

    # Versions.
    variant("opset_too_old.onnx", lambda *a: None, opset=5)  # Gemm-1 and Relu-1: forms before opset 7
    variant("opset_too_new.onnx", lambda *a: None, opset=22)
    variant("ir_version_2.onnx", lambda *a: None, ir=2)

    # A valid model whose output names are not file names (octet run must sanitise them); kept outside malformed/.
    n, i, ins, outs = base_parts()
    n[1].output[0] = "../logits/y:0"
    n[2].input[0] = "../logits/y:0"
    n[2].output[0] = ".hidden"
    outs[0].name = ".hidden"
    outs.append(helper.make_tensor_value_info("../logits/y:0", TensorProto.FLOAT, [1, 3]))
    odd = model(n, i, ins, outs)
    onnx.checker.check_model(odd)
    with open(os.path.join(HERE, "odd_output_names.onnx"), "wb") as f:
        f.write(odd.SerializeToString())

    # A valid model without graph inputs (octet run must run it with no --input); kept outside malformed/.
    c = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "c")
    nodes = [helper.make_node("Constant", [], ["k"], name="k", value=c),
             helper.make_node("Mul", ["k", "k"], ["y"], name="square")]
    const = model(nodes, [], [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.checker.check_model(const)
    with open(os.path.join(HERE, "constant_only.onnx"), "wb") as f:
        f.write(const.SerializeToString())

    def no_graph():
        m = onnx.ModelProto()
        m.ir_version = 8
        m.opset_import.add().version = 13
        return m
    save(no_graph(), "no_graph.onnx")
    print("wrote %d files to %s" % (len(os.listdir(OUT)), OUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())

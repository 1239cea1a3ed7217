#!/usr/bin/python3
"""Writes quantized ONNX models as other tools make them, for tests/onnx/qdq_import_test.cc (issue 23):

  qdq_cnn.onnx   the QDQ form of ONNX Runtime's quantize_static (its documented QDQ layout): QuantizeLinear /
                 DequantizeLinear pairs around Conv (s8 weights per output channel, int32 bias through
                 DequantizeLinear, Relu folded into the group), MaxPool, Conv with u8 per-tensor weights, Add,
                 Conv + Clip(0, 6), GlobalAveragePool, Flatten and Gemm; u8 activations.
  qdq_misc.onnx  QDQ groups of Concat (inputs of other qparams), Sigmoid, LeakyRelu and Mul.
  qop_cnn.onnx   the QOperator form (ONNX Runtime's documented layout): QuantizeLinear, QLinearConv (s8 weights
                 per channel with int32 bias, then u8 weights per tensor), DequantizeLinear, Flatten,
                 QuantizeLinear, QLinearMatMul, DequantizeLinear.

Run with Debian's python3 (python3-onnx, numpy; no torch): /usr/bin/python3 tests/data/models/make_quantized.py
Into tests/data/models/quantized/: the two models and NAME.input0.npy (seeded: a rerun writes the same files). The
reference outputs NAME.output0.npy come from ONNX Runtime with graph optimizations off:
  node tests/data/models/quantized/ort_reference.js tests/data/models/quantized   (onnxruntime-node 1.30, as
  tests/onnx/ort_qdq/run_ort_qdq_test.sh installs it; NODE_PATH set to its node_modules)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "quantized")
rng = np.random.default_rng(2311)


class Builder:
    def __init__(self):
        self.nodes, self.inits = [], []

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op, inputs, outputs, name, **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, **attrs))
        return outputs[0]

    def q(self, x, scale, zp, name, dtype=np.uint8):
        s = self.const(name + "_scale", np.array(scale, np.float32))
        z = self.const(name + "_zero_point", np.array(zp, dtype))
        return self.node("QuantizeLinear", [x, s, z], [name], name + "_QuantizeLinear")

    def dq(self, xq, scale, zp, name, dtype=np.uint8, axis=None):
        s = self.const(name + "_scale", np.asarray(scale, np.float32))
        z = self.const(name + "_zero_point", np.asarray(zp, dtype))
        attrs = {} if axis is None else {"axis": axis}
        return self.node("DequantizeLinear", [xq, s, z], [name], name + "_DequantizeLinear", **attrs)

    def qdq(self, x, scale, zp, name):
        """An activation quantized and dequantized again (ONNX Runtime's QDQ pair on every tensor)."""
        return self.dq(self.q(x, scale, zp, name + "_q"), scale, zp, name + "_dq")

    def weight_s8(self, name, shape, per_channel_axis=None):
        w = rng.normal(0, 0.3, shape).astype(np.float32)
        if per_channel_axis is None:
            scale = np.float32(np.abs(w).max() / 127)
            q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
            return self.dq(self.const(name + "_quantized", q), scale, np.int8(0), name, np.int8), scale
        red = tuple(i for i in range(len(shape)) if i != per_channel_axis)
        scale = (np.abs(w).max(axis=red) / 127).astype(np.float32)
        bshape = [1] * len(shape)
        bshape[per_channel_axis] = shape[per_channel_axis]
        q = np.clip(np.rint(w / scale.reshape(bshape)), -127, 127).astype(np.int8)
        return self.dq(self.const(name + "_quantized", q), scale, np.zeros_like(scale, np.int8), name, np.int8,
                       per_channel_axis), scale

    def bias_s32(self, name, n, x_scale, w_scale):
        b = rng.normal(0, 0.2, n).astype(np.float32)
        scale = (np.float32(x_scale) * np.asarray(w_scale, np.float32)).astype(np.float32)
        q = np.rint(b / scale).astype(np.int32)
        axis = 0 if np.ndim(scale) == 1 and scale.size > 1 else None
        return self.dq(self.const(name + "_quantized", q), scale if axis == 0 else scale.reshape(()),
                       np.zeros(scale.shape, np.int32) if axis == 0 else np.int32(0), name, np.int32, axis)


def model(b, inputs, outputs, name):
    graph = helper.make_graph(b.nodes, name, inputs, outputs, b.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_quantized.py")
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def qdq_cnn():
    b = Builder()
    s_x, z_x = 0.02, 128
    x = b.qdq("x", s_x, z_x, "x")
    w1, s_w1 = b.weight_s8("conv1_w", (8, 3, 3, 3), 0)
    b1 = b.bias_s32("conv1_b", 8, s_x, s_w1)
    c1 = b.node("Conv", [x, w1, b1], ["conv1"], "conv1", pads=[1, 1, 1, 1])
    r1 = b.node("Relu", [c1], ["relu1"], "relu1")
    s_r1 = 0.03
    r1 = b.qdq(r1, s_r1, 0, "relu1")
    m1 = b.node("MaxPool", [r1], ["pool1"], "pool1", kernel_shape=[2, 2], strides=[2, 2])
    m1 = b.qdq(m1, s_r1, 0, "pool1")
    # A u8 weight with a zero point (quantize_static's weight_type=QUInt8), per tensor.
    w2 = rng.normal(0, 0.2, (8, 8, 3, 3)).astype(np.float32)
    s_w2 = np.float32((w2.max() - w2.min()) / 255)
    z_w2 = np.uint8(np.clip(np.rint(-w2.min() / s_w2), 0, 255))
    w2q = np.clip(np.rint(w2 / s_w2) + z_w2, 0, 255).astype(np.uint8)
    w2d = b.dq(b.const("conv2_w_quantized", w2q), s_w2, z_w2, "conv2_w", np.uint8)
    b2 = b.bias_s32("conv2_b", 8, s_r1, s_w2)
    c2 = b.node("Conv", [m1, w2d, b2], ["conv2"], "conv2", pads=[1, 1, 1, 1])
    c2 = b.qdq(c2, 0.05, 110, "conv2")
    a = b.node("Add", [m1, c2], ["add"], "add")
    s_a = 0.06
    a = b.qdq(a, s_a, 100, "add")
    w3, s_w3 = b.weight_s8("conv3_w", (8, 8, 1, 1), 0)
    b3 = b.bias_s32("conv3_b", 8, s_a, s_w3)
    c3 = b.node("Conv", [a, w3, b3], ["conv3"], "conv3")
    lo = b.const("clip_min", np.array(0, np.float32))
    hi = b.const("clip_max", np.array(6, np.float32))
    c3 = b.node("Clip", [c3, lo, hi], ["clip3"], "clip3")
    s_c3 = 6.0 / 255
    c3 = b.qdq(c3, s_c3, 0, "clip3")
    g = b.node("GlobalAveragePool", [c3], ["gap"], "gap")
    g = b.qdq(g, 0.01, 0, "gap")
    f = b.node("Flatten", [g], ["flatten"], "flatten")
    f = b.qdq(f, 0.01, 0, "flatten")
    w4, s_w4 = b.weight_s8("fc_w", (10, 8))
    b4 = b.bias_s32("fc_b", 10, 0.01, s_w4)
    y = b.node("Gemm", [f, w4, b4], ["fc"], "fc", transB=1)
    y = b.dq(b.q(y, 0.02, 128, "fc_q"), 0.02, 128, "y")
    return model(b, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])], "qdq_cnn")


def qop_cnn():
    b = Builder()
    c = b.const
    s_x, z_x = 0.02, 128
    xq = b.q("x", s_x, z_x, "x_q")
    w1 = rng.normal(0, 0.3, (6, 3, 3, 3)).astype(np.float32)
    s_w1 = (np.abs(w1).max(axis=(1, 2, 3)) / 127).astype(np.float32)
    w1q = np.clip(np.rint(w1 / s_w1[:, None, None, None]), -127, 127).astype(np.int8)
    b1 = np.rint(rng.normal(0, 0.2, 6) / (np.float32(s_x) * s_w1)).astype(np.int32)
    s_y1, z_y1 = 0.04, 10
    y1 = b.node("QLinearConv", [xq, c("x_q_scale_", np.array(s_x, np.float32)), c("x_q_zp_", np.array(z_x, np.uint8)),
                                c("conv1_w", w1q), c("conv1_w_scale", s_w1), c("conv1_w_zp", np.zeros(6, np.int8)),
                                c("conv1_y_scale", np.array(s_y1, np.float32)),
                                c("conv1_y_zp", np.array(z_y1, np.uint8)), c("conv1_b", b1)],
                ["conv1"], "conv1", pads=[1, 1, 1, 1], strides=[2, 2])
    w2q = rng.integers(0, 256, (4, 6, 3, 3)).astype(np.uint8)
    s_y2, z_y2 = 0.5, 128
    y2 = b.node("QLinearConv", [y1, c("conv2_x_scale", np.array(s_y1, np.float32)),
                                c("conv2_x_zp", np.array(z_y1, np.uint8)), c("conv2_w", w2q),
                                c("conv2_w_scale", np.array(0.004, np.float32)),
                                c("conv2_w_zp", np.array(127, np.uint8)),
                                c("conv2_y_scale", np.array(s_y2, np.float32)),
                                c("conv2_y_zp", np.array(z_y2, np.uint8))], ["conv2"], "conv2", pads=[1, 1, 1, 1])
    d = b.dq(y2, s_y2, z_y2, "conv2_dq")
    f = b.node("Flatten", [d], ["flatten"], "flatten")
    s_f, z_f = 0.5, 128
    fq = b.q(f, s_f, z_f, "flatten_q")
    w3q = rng.integers(-127, 128, (64, 5)).astype(np.int8)
    s_y3, z_y3 = 2.0, 120
    y3 = b.node("QLinearMatMul", [fq, c("fc_a_scale", np.array(s_f, np.float32)), c("fc_a_zp", np.array(z_f, np.uint8)),
                                  c("fc_w", w3q), c("fc_w_scale", np.array(0.003, np.float32)),
                                  c("fc_w_zp", np.array(0, np.int8)), c("fc_y_scale", np.array(s_y3, np.float32)),
                                  c("fc_y_zp", np.array(z_y3, np.uint8))], ["fc"], "fc")
    b.dq(y3, s_y3, z_y3, "y")
    return model(b, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], "qop_cnn")


def qdq_misc():
    """Concat of differently quantized inputs, Sigmoid and LeakyRelu (table lookups), Mul of two activations."""
    b = Builder()
    x = b.qdq("x", 0.02, 128, "x")
    sg = b.node("Sigmoid", [x], ["sigmoid"], "sigmoid")
    sg = b.qdq(sg, 1.0 / 256, 0, "sigmoid")
    cat = b.node("Concat", [x, sg], ["concat"], "concat", axis=1)
    cat = b.qdq(cat, 0.025, 100, "concat")
    lr = b.node("LeakyRelu", [cat], ["leaky"], "leaky", alpha=0.1)
    lr = b.qdq(lr, 0.015, 20, "leaky")
    mul = b.node("Mul", [lr, cat], ["mul"], "mul")
    b.dq(b.q(mul, 0.04, 64, "mul_q"), 0.04, 64, "y")
    return model(b, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 6, 8, 8])], "qdq_misc")


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, make in (("qdq_cnn", qdq_cnn), ("qop_cnn", qop_cnn), ("qdq_misc", qdq_misc)):
        onnx.save(make(), os.path.join(OUT, name + ".onnx"))
        x = rng.uniform(-2.5, 2.5, (4, 3, 8, 8)).astype(np.float32)
        np.save(os.path.join(OUT, name + ".input0.npy"), x)
    print("wrote", OUT)


if __name__ == "__main__":
    main()

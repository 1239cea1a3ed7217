#!/usr/bin/env python3
"""Writes a deep residual CNN as ONNX with seeded random weights (onnx + numpy, no torch), and calibration data.

    python3 make_deep_model.py OUT_DIR [BLOCKS]

OUT_DIR/deep.onnx: input "x" [N, 16, 8, 8]; BLOCKS residual blocks (default 100) of
Conv3x3 -> BatchNorm -> Relu -> Conv3x3 -> BatchNorm -> Add(skip) -> Relu, then GlobalAveragePool, Flatten and a
Gemm to 10 logits ("y"). With 100 blocks the int8 model has about 300 compared layers (two QConv and one QAdd per
block), the size of the model whose `octet compare --html` report had to stay readable (issue 21).
OUT_DIR/deep_calib.npy: 64 samples of N(0, 1); OUT_DIR/deep_input.npy: 16 more.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(21)
    c = 16
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv_bn(prefix, x, gain):
        # He-scaled weights, shrunk by `gain` on the second conv so the residual sum stays bounded over depth.
        w = rng.normal(0.0, gain * np.sqrt(2.0 / (c * 9)), (c, c, 3, 3))
        nodes.append(helper.make_node("Conv", [x, const(prefix + ".weight", w)], [prefix + ".conv"],
                                      name=prefix + "/Conv", pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node(
            "BatchNormalization",
            [prefix + ".conv", const(prefix + ".bn.weight", rng.uniform(0.8, 1.2, c)),
             const(prefix + ".bn.bias", rng.uniform(-0.1, 0.1, c)),
             const(prefix + ".bn.running_mean", rng.uniform(-0.1, 0.1, c)),
             const(prefix + ".bn.running_var", rng.uniform(0.8, 1.2, c))],
            [prefix + ".bn"], name=prefix + "/BatchNormalization"))
        return prefix + ".bn"

    x = "x"
    for b in range(blocks):
        p = f"blocks.{b}"
        h = conv_bn(p + ".conv1", x, 1.0)
        nodes.append(helper.make_node("Relu", [h], [p + ".relu1"], name=p + ".conv1/Relu"))
        h = conv_bn(p + ".conv2", p + ".relu1", 0.3)
        nodes.append(helper.make_node("Add", [h, x], [p + ".add"], name=p + "/Add"))
        nodes.append(helper.make_node("Relu", [p + ".add"], [p + ".out"], name=p + "/Relu"))
        x = p + ".out"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="pool/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten/Flatten"))
    nodes.append(helper.make_node("Gemm", ["flat", const("fc.weight", rng.normal(0, 0.3, (10, c))),
                                           const("fc.bias", rng.normal(0, 0.1, 10))], ["y"],
                                  name="fc/Gemm", transB=1))
    graph = helper.make_graph(nodes, "deep_resnet",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", c, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_deep_model")
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "deep.onnx"))
    np.save(os.path.join(out, "deep_calib.npy"), rng.normal(0, 1, (64, c, 8, 8)).astype(np.float32))
    np.save(os.path.join(out, "deep_input.npy"), rng.normal(0, 1, (16, c, 8, 8)).astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Builds digits_dw_cnn.onnx: the digits CNN with a depthwise-separable block added, trained by octet itself.

The structure (opset 13, dynamic batch axis, input "image" [N, 1, 8, 8], output "logits" [N, 10]):
    Conv(1->16, 3x3, pad 1)-BN-ReLU, depthwise Conv(16, 3x3, pad 1, group 16)-BN-ReLU,
    pointwise Conv(16->32, 1x1)-BN-ReLU, MaxPool 2x2, Flatten, Gemm(512->10)
is written here with onnx.helper (placeholder weights); `octet train --reset-parameters` then draws PyTorch's default
initialisation and trains it on the first 1437 digits images (the split of generate.py), so the weights come from
octet's training engine, not from PyTorch. Issue #18 asks for this model to show AdaRound at 4-bit weights
(tests/onnx/adaround_digits_test.cc); measured, 4-bit rounding to nearest keeps its float accuracy.

Run from the repository root with Debian's python3 (onnx 1.12, numpy) after building octet:
    /usr/bin/python3 tests/data/models/make_digits_dw_cnn.py build/release/tools/octet/octet
"""
import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def load_digits():
    with gzip.open(os.path.join(HERE, "digits.csv.gz"), "rt") as f:
        rows = np.loadtxt(f, delimiter=",", dtype=np.float32)
    return rows[:, :64] / 16.0, rows[:, 64].astype(np.int32)


def conv_bn_relu(nodes, inits, name, x, cin, cout, k, group):
    # Placeholder values: --reset-parameters replaces weights and biases; BN starts at gamma 1, beta 0, mean 0, var 1.
    inits.append(numpy_helper.from_array(np.zeros((cout, cin // group, k, k), np.float32), name + ".weight"))
    inits.append(numpy_helper.from_array(np.zeros((cout,), np.float32), name + ".bias"))
    for suffix, value in (("scale", 1.0), ("B", 0.0), ("mean", 0.0), ("var", 1.0)):
        inits.append(numpy_helper.from_array(np.full((cout,), value, np.float32), f"bn_{name}.{suffix}"))
    pad = k // 2
    nodes.append(helper.make_node("Conv", [x, name + ".weight", name + ".bias"], [name], name=name,
                                  kernel_shape=[k, k], pads=[pad] * 4, group=group))
    nodes.append(helper.make_node("BatchNormalization", [name] + [f"bn_{name}.{s}" for s in ("scale", "B", "mean", "var")],
                                  ["bn_" + name], name="bn_" + name, epsilon=1e-5, momentum=0.9))
    nodes.append(helper.make_node("Relu", ["bn_" + name], ["relu_" + name], name="relu_" + name))
    return "relu_" + name


def build():
    nodes, inits = [], []
    h = conv_bn_relu(nodes, inits, "conv1", "image", 1, 16, 3, 1)
    h = conv_bn_relu(nodes, inits, "dwconv", h, 16, 16, 3, 16)
    h = conv_bn_relu(nodes, inits, "pwconv", h, 16, 32, 1, 1)
    nodes.append(helper.make_node("MaxPool", [h], ["pool"], name="pool", kernel_shape=[2, 2], strides=[2, 2]))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1))
    inits.append(numpy_helper.from_array(np.zeros((10, 512), np.float32), "fc.weight"))
    inits.append(numpy_helper.from_array(np.zeros((10,), np.float32), "fc.bias"))
    nodes.append(helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(nodes, "digits_dw_cnn", [helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                                                                     ["N", 1, 8, 8])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="octet")
    onnx.checker.check_model(model)
    return model


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    octet = sys.argv[1]
    x, y = load_digits()
    with tempfile.TemporaryDirectory() as tmp:
        untrained = os.path.join(tmp, "untrained.onnx")
        onnx.save(build(), untrained)
        files = {}
        for name, value in (("x", x[:1437]), ("y", y[:1437]), ("tx", x[1437:]), ("ty", y[1437:])):
            files[name] = os.path.join(tmp, name + ".npy")
            np.save(files[name], value)
        # The recipe of the digits CNN in quant/training/digits_models.h, with the seed of the committed model.
        subprocess.run([octet, "train", untrained, "--reset-parameters", "--seed", "1", "--data", files["x"],
                        "--labels", files["y"], "--test-data", files["tx"], "--test-labels", files["ty"],
                        "--epochs", "15", "--lr", "0.05", "--momentum", "0.9", "--weight-decay", "0.01",
                        "--batch", "32", "--schedule", "cosine", "-o", os.path.join(HERE, "digits_dw_cnn.onnx")],
                       check=True)


if __name__ == "__main__":
    main()

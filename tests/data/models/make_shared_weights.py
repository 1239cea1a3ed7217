#!/usr/bin/python3
"""Writes a model whose weights arrive as converters emit them, for tests/onnx/shared_weights_test.cc: BatchNorm
parameters shared through Identity nodes (torch 1.13 deduplicates equal initializers, e.g. the ones and zeros of
fresh BatchNorms, and reads them through Identity), an Identity of an Identity, and a Conv weight in a Constant node.

Run with Debian's python3 (python3-onnx 1.12, numpy; no torch):
    /usr/bin/python3 tests/data/models/make_shared_weights.py
Into tests/data/models/shared_weights/: bn_identity.onnx, bn_identity.input0.npy, bn_identity.output0.npy (computed
here with numpy from the ops' definitions). Seeded: a rerun writes the same files.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "shared_weights")
rng = np.random.default_rng(20261127)


def conv3x3(x, w):
    """NCHW convolution, stride 1, pads 1, no bias."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd), np.float64)
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return y


def batchnorm(x, gamma, beta, mean, var, eps=1e-5):
    s = (gamma / np.sqrt(var + eps))[None, :, None, None]
    return (x - mean[None, :, None, None]) * s + beta[None, :, None, None]


def main():
    os.makedirs(OUT, exist_ok=True)
    c = 4
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    w1 = (0.3 * rng.standard_normal((c, 3, 3, 3))).astype(np.float32)
    w2 = (0.3 * rng.standard_normal((c, c, 3, 3))).astype(np.float32)
    ones = np.ones(c, np.float32)  # shared by both BatchNorms' scale (through Identity), like torch's dedup
    zeros = np.zeros(c, np.float32)  # both biases
    mean1 = (0.1 * rng.standard_normal(c)).astype(np.float32)
    var1 = rng.uniform(0.5, 2.0, c).astype(np.float32)
    mean2 = (0.1 * rng.standard_normal(c)).astype(np.float32)
    var2 = rng.uniform(0.5, 2.0, c).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w1, "conv1.weight"), (ones, "bn1.weight"), (zeros, "bn1.bias"), (mean1, "bn1.running_mean"),
              (var1, "bn1.running_var"), (mean2, "bn2.running_mean"), (var2, "bn2.running_var")]]
    nodes = [
        helper.make_node("Identity", ["bn1.weight"], ["bn2.weight"], name="Identity_0"),
        helper.make_node("Identity", ["bn1.bias"], ["onnx::Identity_7"], name="Identity_1"),
        helper.make_node("Identity", ["onnx::Identity_7"], ["bn2.bias"], name="Identity_2"),
        helper.make_node("Constant", [], ["conv2.weight"], name="Constant_3", value=numpy_helper.from_array(w2)),
        helper.make_node("Conv", ["x", "conv1.weight"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn1.weight", "bn1.bias", "bn1.running_mean",
                                                "bn1.running_var"], ["b1"], name="bn1"),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "conv2.weight"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "bn2.weight", "bn2.bias", "bn2.running_mean",
                                                "bn2.running_var"], ["y"], name="bn2"),
    ]
    g = helper.make_graph(nodes, "bn_identity", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, c, 6, 6))], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="octet-tests")
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    with open(os.path.join(OUT, "bn_identity.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    y = batchnorm(conv3x3(np.maximum(batchnorm(conv3x3(x, w1), ones, zeros, mean1, var1), 0), w2), ones, zeros,
                  mean2, var2)
    np.save(os.path.join(OUT, "bn_identity.input0.npy"), x)
    np.save(os.path.join(OUT, "bn_identity.output0.npy"), y.astype(np.float32))
    print("wrote %s" % OUT)


if __name__ == "__main__":
    main()

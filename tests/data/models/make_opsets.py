#!/usr/bin/python3
"""Writes small models in the older (and newer) forms of ONNX operators, for tests/onnx/opset_adapters_test.cc.

Run with Debian's python3 (python3-onnx 1.12, numpy; no torch):
    /usr/bin/python3 tests/data/models/make_opsets.py
Into tests/data/models/opsets/: NAME.onnx, NAME.input<k>.npy and NAME.output<k>.npy, the outputs computed here with
numpy from each op's definition at the model's opset (ONNX 1.12 has no reference evaluator); refused_*.onnx are
models octet must refuse, with no outputs. Seeded: a rerun writes the same files.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "opsets")
rng = np.random.default_rng(20240611)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def save(name, nodes, inputs, outputs, opset, inits=(), ir=None):
    """inputs: [(name, array)], outputs: [(name, array or None)]; a None output has its shape left unknown."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None if a is None else list(a.shape))
         for n, a in outputs],
        initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="octet-tests")
    m.ir_version = ir if ir is not None else (3 if opset < 8 else 4 if opset < 9 else 5 if opset < 11 else 6 if
                                              opset < 13 else 7 if opset < 15 else 8 if opset < 18 else 9)
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())
    if name.startswith("refused_"):
        return
    for k, (_, a) in enumerate(inputs):
        np.save(os.path.join(OUT, "%s.input%d.npy" % (name, k)), np.ascontiguousarray(a))
    for k, (_, a) in enumerate(outputs):
        if a is not None:
            np.save(os.path.join(OUT, "%s.output%d.npy" % (name, k)), np.ascontiguousarray(a, dtype=np.float32))


def softmax_rows(x2):
    e = np.exp(x2 - x2.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def coerced(x, axis, log=False):
    """Softmax/LogSoftmax before opset 13: over the input flattened to 2-D at `axis`."""
    rows = x.reshape(int(np.prod(x.shape[:axis])), -1)
    y = softmax_rows(rows)
    return (np.log(y) if log else y).reshape(x.shape)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))

    # Softmax-11 at axis 1 of a 3-D input normalizes over dims 1 and 2 together; LogSoftmax-1 (opset 9) defaults to
    # axis 1; Softmax-11 at axis -1 is opset 13's.
    x = f32(2, 3, 4)
    save("softmax_axis1_o11", [helper.make_node("Softmax", ["x"], ["y"], axis=1)], [("x", x)],
         [("y", coerced(x, 1))], 11)
    save("logsoftmax_default_o9", [helper.make_node("LogSoftmax", ["x"], ["y"])], [("x", x)],
         [("y", coerced(x, 1, log=True))], 9)
    save("softmax_last_o12", [helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [("x", x)],
         [("y", coerced(x, 2))], 12)
    x4 = f32(2, 2, 3, 2)
    save("softmax_axis2_o7", [helper.make_node("Softmax", ["x"], ["y"], axis=2)], [("x", x4)],
         [("y", coerced(x4, 2))], 7)

    # Attributes that became inputs.
    x = f32(3, 4)
    save("clip_o9", [helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25)], [("x", x)],
         [("y", np.clip(x, -0.5, 0.25))], 9)
    save("clip_min_only_o6", [helper.make_node("Clip", ["x"], ["y"], min=0.1)], [("x", x)],
         [("y", np.maximum(x, 0.1))], 6)
    x = f32(1, 2, 3, 3)
    pads = [0, 0, 1, 2, 0, 0, 2, 1]
    np_pads = [(pads[i], pads[i + 4]) for i in range(4)]
    save("pad_constant_o9", [helper.make_node("Pad", ["x"], ["y"], pads=pads, value=1.5)], [("x", x)],
         [("y", np.pad(x, np_pads, mode="constant", constant_values=1.5))], 9)
    save("pad_reflect_o10", [helper.make_node("Pad", ["x"], ["y"], pads=pads, mode="reflect")], [("x", x)],
         [("y", np.pad(x, np_pads, mode="reflect"))], 10)
    x = f32(4, 5, 6)
    save("slice_o9", [helper.make_node("Slice", ["x"], ["y"], starts=[1, -4], ends=[100, -1], axes=[0, 2])],
         [("x", x)], [("y", x[1:, :, -4:-1])], 9)
    save("slice_no_axes_o7", [helper.make_node("Slice", ["x"], ["y"], starts=[0, 1], ends=[2, 3])], [("x", x)],
         [("y", x[0:2, 1:3])], 7)
    x = f32(2, 4, 3)
    save("split_o11", [helper.make_node("Split", ["x"], ["a", "b"], axis=1, split=[1, 3])], [("x", x)],
         [("a", x[:, :1]), ("b", x[:, 1:])], 11)
    save("split_equal_o12", [helper.make_node("Split", ["x"], ["a", "b"], axis=-1)], [("x", f32(2, 4, 2))],
         [("a", None), ("b", None)], 12)
    xs = np.load(os.path.join(OUT, "split_equal_o12.input0.npy"))
    for k, part in enumerate(np.split(xs, 2, axis=-1)):
        np.save(os.path.join(OUT, "split_equal_o12.output%d.npy" % k), part)
    save("split_num_outputs_o18", [helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)],
         [("x", x)], [("a", x[:, :2]), ("b", x[:, 2:])], 18)
    x = f32(3, 4)
    save("unsqueeze_squeeze_o11", [helper.make_node("Unsqueeze", ["x"], ["u"], axes=[0, -1]),
                                   helper.make_node("Squeeze", ["u"], ["y"], axes=[0])],
         [("x", x)], [("y", x[:, :, None])], 11)
    x = f32(2, 3, 4)
    save("reducesum_o11", [helper.make_node("ReduceSum", ["x"], ["y"], axes=[-1, 0], keepdims=0)], [("x", x)],
         [("y", x.sum(axis=(0, 2)))], 11)
    axes = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")
    save("reducemean_axes_input_o18", [helper.make_node("ReduceMean", ["x", "axes"], ["y"])], [("x", x)],
         [("y", x.mean(axis=1, keepdims=True))], 18, inits=[axes])
    save("reducemax_constant_axes_o18",
         [helper.make_node("Constant", [], ["ax"], value=numpy_helper.from_array(np.array([0, 2], np.int64))),
          helper.make_node("ReduceMax", ["x", "ax"], ["y"], keepdims=0)],
         [("x", x)], [("y", x.max(axis=(0, 2)))], 18)

    # Changed defaults and training-only parts: BatchNormalization-7 with spatial=1, Dropout-10 with its ratio and
    # an unread mask, in a small classifier at opset 9 whose Softmax uses the old default axis.
    x = f32(2, 3, 4, 4)
    scale, bias, mean = f32(3), f32(3), f32(3)
    var = (np.abs(f32(3)) + 0.5).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in ((scale, "s"), (bias, "b"), (mean, "m"), (var, "v"))]
    bn = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5) * scale[None, :, None, None] + \
        bias[None, :, None, None]
    save("batchnorm_spatial_o7",
         [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=1, momentum=0.8)],
         [("x", x)], [("y", bn)], 7, inits=inits)
    w1, b1 = f32(6, 5), f32(6)
    x = f32(3, 5)
    h = np.maximum(x @ w1.T + b1, 0)
    save("classifier_o9",
         [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
          helper.make_node("Relu", ["h"], ["r"]),
          helper.make_node("Dropout", ["r"], ["d", "mask"], ratio=0.3),
          helper.make_node("Softmax", ["d"], ["y"])],
         [("x", x)], [("y", softmax_rows(h))], 9,
         inits=[numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1")])
    # Opset 6: HardSigmoid-6 is opset 7's, so it is read.
    x = f32(2, 3)
    save("hardsigmoid_o6", [helper.make_node("HardSigmoid", ["x"], ["y"], alpha=0.3, beta=0.4)], [("x", x)],
         [("y", np.clip(0.3 * x + 0.4, 0, 1))], 6)
    # IR version 10 (ONNX 1.16) at opset 21.
    save("relu_ir10_o21", [helper.make_node("Relu", ["x"], ["y"])], [("x", x)], [("y", np.maximum(x, 0))], 21,
         ir=10)

    # Refused, with the difference named.
    x = f32(2, 3, 4, 4)
    save("refused_batchnorm_spatial0_o7",
         [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=0)],
         [("x", x)], [("y", None)], 7, inits=inits)
    save("refused_add_broadcast_o6", [helper.make_node("Add", ["x", "x"], ["y"], name="add", broadcast=1)],
         [("x", f32(2, 3))], [("y", None)], 6)
    save("refused_reducemean_runtime_axes_o18",
         [helper.make_node("Shape", ["x"], ["s"]),
          helper.make_node("Slice", ["s", "zero", "one"], ["ax"]),
          helper.make_node("ReduceMean", ["x", "ax"], ["y"], name="mean")],
         [("x", f32(2, 3))], [("y", None)], 18,
         inits=[numpy_helper.from_array(np.array([0], np.int64), "zero"),
                numpy_helper.from_array(np.array([1], np.int64), "one")])
    # Upsample (opsets 7-9): asymmetric coordinates x_in = x_out / scale; nearest rounds down, linear weighs the two
    # neighbours (the last index repeating past the edge).
    x = f32(1, 1, 2, 2)
    save("upsample_nearest_o9",
         [helper.make_node("Upsample", ["x", "scales"], ["y"], name="up", mode="nearest")],
         [("x", x)], [("y", x[:, :, [0, 0, 1, 1]][:, :, :, [0, 0, 0, 1, 1, 1]])], 9,
         inits=[numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "scales")])
    x = f32(1, 2, 3)
    pos = np.arange(6) / 2.0
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, 2)
    y = x[:, :, lo] * (1 - (pos - lo)) + x[:, :, hi] * (pos - lo)
    save("upsample_linear_o7",
         [helper.make_node("Upsample", ["x"], ["y"], name="up", mode="linear", scales=[1.0, 1.0, 2.0])],
         [("x", x)], [("y", y)], 7)
    save("refused_opset22", [helper.make_node("Relu", ["x"], ["y"])], [("x", f32(2))], [("y", None)], 22)
    save("refused_ir11", [helper.make_node("Relu", ["x"], ["y"])], [("x", f32(2))], [("y", None)], 21, ir=11)
    print("wrote %d files to %s" % (len(os.listdir(OUT)), OUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())

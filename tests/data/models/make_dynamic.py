#!/usr/bin/python3
"""Writes small models with dynamic input dims into tests/data/models/dynamic/ (run with /usr/bin/python3, onnx 1.12).

tests/onnx/run_command_test.sh checks the symbolic shapes `octet inspect` prints for them and that `octet bench model`
runs them with each dynamic dim assumed 1. Built with onnx.helper (no torch); the weights are seeded.
  cnn_named.onnx     x [batch, 1, 8, 8]: Conv (pad 1), Relu, MaxPool 2x2, Flatten, Gemm -> y [batch, 10]
  cnn_unnamed.onnx   the same with the batch dim unnamed (neither dim_value nor dim_param)
  cnn_minus1.onnx    the same with the batch dim written as dim_value -1, as some exporters do
  seq_named.onnx     x [batch, seq, 16]: MatMul, Relu, Reshape to [-1, 8] -> y [batch*seq, 8]; and a stride-2
                     Conv over a dynamic height h: z [1, 2, ?, 4]
  lstm_unnamed.onnx  tokens [35, ?] (int64): Gather (embedding), LSTM with initial states h0, c0 [1, ?, 12],
                     Squeeze, MatMul -> logits [35, ?, 50], h, c [1, ?, 12]
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "dynamic")
RNG = np.random.default_rng(25)


def weight(name, *shape):
    return numpy_helper.from_array((RNG.standard_normal(shape) * 0.3).astype(np.float32), name)


def save(nodes, inits, inputs, outputs, name, opset=13):
    g = helper.make_graph(nodes, name.split(".")[0], inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="octet-tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


def cnn(batch):
    """The CNN with `batch` as its batch dim: a dim_param string, None (unnamed) or -1."""
    nodes = [
        helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["y"], name="fc", transB=1),
    ]
    inits = [weight("conv.w", 4, 1, 3, 3), weight("conv.b", 4), weight("fc.w", 10, 64), weight("fc.b", 10)]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 1, 8, 8])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])]
    return nodes, inits, inputs, outputs


def seq():
    nodes = [
        helper.make_node("MatMul", ["x", "proj.w"], ["m"], name="proj"),
        helper.make_node("Relu", ["m"], ["r"], name="relu"),
        helper.make_node("Reshape", ["r", "rows"], ["y"], name="rows"),
        helper.make_node("Conv", ["img", "conv.w"], ["z"], name="conv", strides=[2, 1], pads=[1, 1, 1, 1]),
    ]
    inits = [weight("proj.w", 16, 8), numpy_helper.from_array(np.array([-1, 8], np.int64), "rows"),
             weight("conv.w", 2, 1, 3, 3)]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 16]),
              helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 1, "h", 4])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 8]),
               helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 2, None, 4])]
    return nodes, inits, inputs, outputs


def lstm():
    hidden, embed, vocab = 12, 10, 50
    nodes = [
        helper.make_node("Gather", ["embedding", "tokens"], ["e"], name="embed"),
        helper.make_node("LSTM", ["e", "lstm.w", "lstm.r", "lstm.b", "", "h0", "c0"], ["seq", "h", "c"], name="lstm",
                         hidden_size=hidden),
        helper.make_node("Squeeze", ["seq", "axis1"], ["s"], name="squeeze"),
        helper.make_node("MatMul", ["s", "decoder.w"], ["logits"], name="decoder"),
    ]
    inits = [weight("embedding", vocab, embed), weight("lstm.w", 1, 4 * hidden, embed),
             weight("lstm.r", 1, 4 * hidden, hidden), weight("lstm.b", 1, 8 * hidden),
             numpy_helper.from_array(np.array([1], np.int64), "axis1"), weight("decoder.w", hidden, vocab)]
    inputs = [helper.make_tensor_value_info("tokens", TensorProto.INT64, [35, None]),
              helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, None, hidden]),
              helper.make_tensor_value_info("c0", TensorProto.FLOAT, [1, None, hidden])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [35, None, vocab]),
               helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, None, hidden]),
               helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, None, hidden])]
    return nodes, inits, inputs, outputs


def main():
    os.makedirs(OUT, exist_ok=True)
    save(*cnn("batch"), "cnn_named.onnx")
    save(*cnn(None), "cnn_unnamed.onnx")
    nodes, inits, inputs, outputs = cnn(None)
    for vi in inputs + outputs:
        vi.type.tensor_type.shape.dim[0].dim_value = -1
    save(nodes, inits, inputs, outputs, "cnn_minus1.onnx")
    save(*seq(), "seq_named.onnx")
    save(*lstm(), "lstm_unnamed.onnx")


if __name__ == "__main__":
    main()

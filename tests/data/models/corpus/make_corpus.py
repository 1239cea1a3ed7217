#!/usr/bin/python3
"""Generates the third-party-style model corpus (issue 22): small models of the kinds users bring, exported by torch
1.13 at old and new opsets or hand-built with python3-onnx at opsets 7 to 21 and IR versions 3 to 10, as converters
emit them (NHWC inputs with Transposes, weights in Constant nodes, initializers shared through Identity, unused
initializers, names that are not identifiers, dynamic batch and sequence axes).

Run with Debian's python3 (torch 1.13, onnx 1.12), then write ONNX Runtime's outputs with ort_reference.js:
    /usr/bin/python3 tests/data/models/corpus/make_corpus.py
    ORT_NODE=/path/to/node_modules/onnxruntime-node node tests/data/models/corpus/ort_reference.js \
        tests/data/models/corpus
For each model NAME it writes NAME.onnx and NAME.input<k>.npy (graph-input order), and manifest.json (the inputs'
and outputs' names per model); ort_reference.js adds NAME.ort<k>.npy (graph-output order). Everything is seeded.
tests/onnx/corpus_test.py compares `octet run` with the ORT outputs (relative L2 within 1e-4); ORT is not needed then.
"""
import json
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
T = onnx.TensorProto


class Detector(nn.Module):
    """A small detector: conv backbone at two scales, the deep one upsampled (Resize, or Upsample at opset 9) and
    concatenated with the shallow one, box and score heads concatenated per anchor."""

    def __init__(self, mode):
        super().__init__()
        self.mode = mode
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.deep = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.LeakyReLU(0.1))
        self.fuse = nn.Conv2d(24, 12, 1)
        self.box = nn.Conv2d(12, 4, 3, 1, 1)
        self.score = nn.Conv2d(12, 2, 3, 1, 1)

    def forward(self, x):
        s = self.stem(x)
        d = self.deep(s)
        if self.mode == "nearest":
            up = F.interpolate(d, scale_factor=2.0, mode="nearest")
        else:
            up = F.interpolate(d, size=s.shape[2:], mode="bilinear", align_corners=False)
        f = F.relu(self.fuse(torch.cat([s, up], 1)))
        box = self.box(f).flatten(2).transpose(1, 2)
        score = torch.sigmoid(self.score(f)).flatten(2).transpose(1, 2)
        return torch.cat([box, score], 2)


class TextRecognizer(nn.Module):
    """CRNN-style text recognizer: conv features over the height, a bidirectional LSTM (or GRU) over the width,
    per-column class log-probabilities."""

    def __init__(self, rnn):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, 1, 1), nn.ReLU(), nn.MaxPool2d((2, 2)),
                                  nn.Conv2d(8, 16, 3, 1, 1), nn.ReLU(), nn.MaxPool2d((4, 1)))
        cell = nn.LSTM if rnn == "lstm" else nn.GRU
        self.rnn = cell(16 * 2, 24, bidirectional=True, batch_first=False)
        self.fc = nn.Linear(48, 11)

    def forward(self, x):  # x [N, 1, 16, W]
        f = self.conv(x)  # [N, 16, 2, W/2]
        n, c, h, w = f.shape
        f = f.reshape(n, c * h, w).permute(2, 0, 1)  # [W/2, N, 32]
        y, _ = self.rnn(f)
        return F.log_softmax(self.fc(y), dim=-1)


class AudioFrontEnd(nn.Module):
    """A log-mel front end: framing and a real DFT as a strided Conv1d with fixed cos/sin kernels, power, mel
    projection (MatMul), log, then a small conv classifier."""

    def __init__(self):
        super().__init__()
        n_fft, hop, bins, mels = 64, 32, 33, 10
        t = np.arange(n_fft)
        k = np.arange(bins)[:, None]
        window = 0.5 - 0.5 * np.cos(2 * np.pi * t / n_fft)
        cos = (np.cos(2 * np.pi * k * t / n_fft) * window).astype(np.float32)
        sin = (-np.sin(2 * np.pi * k * t / n_fft) * window).astype(np.float32)
        self.dft = nn.Conv1d(1, 2 * bins, n_fft, hop, bias=False)
        self.dft.weight.data = torch.from_numpy(np.concatenate([cos, sin])[:, None, :])
        rng = np.random.default_rng(3)
        self.register_buffer("mel", torch.from_numpy(np.abs(rng.standard_normal((bins, mels))).astype(np.float32)))
        self.bins = bins
        self.cls = nn.Sequential(nn.Conv1d(mels, 16, 3, 1, 1), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(),
                                 nn.Linear(16, 5))

    def forward(self, wav):  # [N, 1, samples]
        spec = self.dft(wav)
        re, im = spec[:, :self.bins], spec[:, self.bins:]
        power = re * re + im * im  # [N, bins, frames]
        mel = torch.matmul(power.transpose(1, 2), self.mel)  # [N, frames, mels]
        logmel = torch.log(mel + 1e-6).transpose(1, 2)
        return self.cls(logmel), logmel


class KeywordSpotter(nn.Module):
    """A DS-CNN keyword spotter on MFCC-like features: conv, depthwise-separable blocks, average pool, Linear,
    Softmax."""

    def __init__(self):
        super().__init__()
        layers = [nn.Conv2d(1, 16, (5, 3), (2, 1), (2, 1)), nn.BatchNorm2d(16), nn.ReLU()]
        for _ in range(2):
            layers += [nn.Conv2d(16, 16, 3, 1, 1, groups=16), nn.BatchNorm2d(16), nn.ReLU(),
                       nn.Conv2d(16, 16, 1), nn.BatchNorm2d(16), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(16, 6)

    def forward(self, x):  # [N, 1, 24 frames, 10 coefficients]
        f = F.avg_pool2d(self.body(x), (12, 10))
        return F.softmax(self.fc(f.flatten(1)), dim=1)


class Vad(nn.Module):
    """A voice-activity detector: per-frame Linear features, a GRU with its state as an input and an output,
    per-frame speech probability."""

    def __init__(self):
        super().__init__()
        self.feat = nn.Linear(20, 16)
        self.gru = nn.GRU(16, 16, batch_first=True)
        self.out = nn.Linear(16, 1)

    def forward(self, x, h):  # x [N, T, 20], h [1, N, 16]
        y, h2 = self.gru(torch.tanh(self.feat(x)), h)
        return torch.sigmoid(self.out(y)), h2


class ResidualNet(nn.Module):
    """A ResNet-style net exported as torch 1.13 does with training=PRESERVE from eval mode: the BatchNormalization
    nodes stay, and their equal parameters (fresh BatchNorms' ones and zeros) become one initializer read through
    Identity nodes, as in the issue's ResNet-18 export. octet must fold every one of them."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.a = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 8, 3, 1, 1),
                               nn.BatchNorm2d(8))
        self.down = nn.Sequential(nn.Conv2d(8, 16, 1, 2), nn.BatchNorm2d(16))
        self.b = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        s = self.stem(x)
        s = F.relu(s + self.a(s))
        t = self.b(s) + self.down(s)
        return self.fc(F.adaptive_avg_pool2d(t, 1).flatten(1))


def torch_models(rng):
    """(name, module, example inputs, input names, output names, opset, dynamic axes)."""
    img = rng.standard_normal((2, 3, 32, 32)).astype(np.float32)
    text = rng.standard_normal((2, 1, 16, 24)).astype(np.float32)
    wav = rng.standard_normal((2, 1, 544)).astype(np.float32)
    mfcc = rng.standard_normal((2, 1, 24, 10)).astype(np.float32)
    frames = rng.standard_normal((2, 7, 20)).astype(np.float32)
    h0 = (0.1 * rng.standard_normal((1, 2, 16))).astype(np.float32)
    batch = {0: "batch"}
    return [
        ("detector_upsample_op9", Detector("nearest"), [img], ["images"], ["detections"], 9, {"images": batch}),
        ("detector_resize_op11", Detector("bilinear"), [img], ["images"], ["detections"], 11, {"images": batch}),
        ("text_lstm_op12", TextRecognizer("lstm"), [text], ["image"], ["log_probs"], 12,
         {"image": {0: "batch", 3: "width"}}),
        ("text_gru_op10", TextRecognizer("gru"), [text], ["image"], ["log_probs"], 10, None),
        ("audio_logmel_op17", AudioFrontEnd(), [wav], ["wav"], ["logits", "logmel"], 17, {"wav": batch}),
        ("kws_dscnn_op8", KeywordSpotter(), [mfcc], ["mfcc"], ["probs"], 8, None),
        ("vad_gru_op14", Vad(), [frames, h0], ["frames", "state"], ["speech", "state_out"], 14,
         {"frames": {0: "batch", 1: "time"}, "state": {1: "batch"}}),
        ("resnet_shared_bn_op13", ResidualNet(), [np.random.default_rng(13).standard_normal((1, 3, 16, 16))
                                                  .astype(np.float32)], ["input"], ["logits"], 13, None),
    ]


def nhwc_model(rng):
    """Hand-built at opset 7, IR 3, as TF converters emit: an NHWC input with Transposes around each Conv, weights
    in Constant nodes, a bias shared through an Identity, an unused initializer (initializers listed as graph inputs
    too, as IR 3 requires), names with '/' and ':'."""
    w1 = (0.3 * rng.standard_normal((8, 3, 3, 3))).astype(np.float32)
    w2 = (0.3 * rng.standard_normal((8, 8, 1, 1))).astype(np.float32)
    b = (0.1 * rng.standard_normal(8)).astype(np.float32)
    nodes = [
        helper.make_node("Constant", [], ["model/conv1/W:0"], value=numpy_helper.from_array(w1, "w1")),
        helper.make_node("Constant", [], ["model/conv2/W:0"], value=numpy_helper.from_array(w2, "w2")),
        helper.make_node("Identity", ["model/bias:0"], ["model/conv2/bias:0"]),
        helper.make_node("Transpose", ["input:0"], ["model/t0"], perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["model/t0", "model/conv1/W:0", "model/bias:0"], ["model/c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["model/c1"], ["model/r1"]),
        helper.make_node("Transpose", ["model/r1"], ["model/t1"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["model/t1"], ["model/t2"], perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["model/t2", "model/conv2/W:0", "model/conv2/bias:0"], ["model/c2"]),
        helper.make_node("Sigmoid", ["model/c2"], ["model/s2"]),
        helper.make_node("Transpose", ["model/s2"], ["output:0"], perm=[0, 2, 3, 1]),
    ]
    # IR 3 lists the initializers among the graph inputs too (their values are defaults there).
    g = helper.make_graph(
        nodes, "tf2onnx-style", [helper.make_tensor_value_info("input:0", T.FLOAT, ["N", 12, 12, 3]),
                                 helper.make_tensor_value_info("model/bias:0", T.FLOAT, [8]),
                                 helper.make_tensor_value_info("model/unused:0", T.FLOAT, [5])],
        [helper.make_tensor_value_info("output:0", T.FLOAT, ["N", 12, 12, 8])],
        [numpy_helper.from_array(b, "model/bias:0"),
         numpy_helper.from_array(np.ones(5, np.float32), "model/unused:0")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 7)], producer_name="corpus")
    m.ir_version = 3
    return m, [rng.standard_normal((2, 12, 12, 3)).astype(np.float32)]


def new_opset_model(rng, opset, ir):
    """Hand-built at a new opset and IR version (python3-onnx 1.12 knows up to opset 17 / IR 8, so the versions are
    set by hand on ops whose form is the same there): Gemm, ReduceMean (axes an input from opset 18),
    Softmax, Mul of a shared initializer through Identity, an If on the mean's sign with a Constant in a branch."""
    w = (0.3 * rng.standard_normal((6, 8))).astype(np.float32)
    c = (0.1 * rng.standard_normal(8)).astype(np.float32)
    then_g = helper.make_graph(
        [helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.float32(2.0), "k")),
         helper.make_node("Mul", ["p", "k"], ["y_then"])],
        "then", [], [helper.make_tensor_value_info("y_then", T.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Sub", ["p", "bias2"], ["y_else"])], "else", [],
                               [helper.make_tensor_value_info("y_else", T.FLOAT, None)])
    nodes = [
        helper.make_node("Gemm", ["x", "w", "c"], ["g"]),
        helper.make_node("Identity", ["c"], ["bias2"]),
        helper.make_node("Softmax", ["g"], ["p"], axis=-1),
        # axes: an input from opset 18, an attribute before.
        helper.make_node("ReduceMean", ["g", "axes"], ["m"], keepdims=0) if opset >= 18 else
        helper.make_node("ReduceMean", ["g"], ["m"], keepdims=0, axes=[1]),
        helper.make_node("ReduceSum", ["m"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["cond"]),
        helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
    ]
    g = helper.make_graph(
        nodes, "new_opset", [helper.make_tensor_value_info("x", T.FLOAT, ["batch", 6])],
        [helper.make_tensor_value_info("y", T.FLOAT, ["batch", 8]),
         helper.make_tensor_value_info("m", T.FLOAT, ["batch"])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(c, "c"),
         numpy_helper.from_array(np.array([1], np.int64), "axes"),
         numpy_helper.from_array(np.float32(0.0), "zero")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="corpus")
    m.ir_version = ir
    return m, [rng.standard_normal((3, 6)).astype(np.float32)]


def postprocess_if_model(rng):
    """Detector post-processing as converters write it, at opset 11 / IR 6: a data-dependent If whose branches read
    outer-scope tensors and hold their weights in Constant nodes, and a Clip whose minimum is computed at run time."""
    w_then = rng.standard_normal((6, 4)).astype(np.float32)
    w_else = rng.standard_normal((6, 4)).astype(np.float32)
    then_g = helper.make_graph(
        [helper.make_node("Constant", [], ["w_t"], value=numpy_helper.from_array(w_then, "w_t")),
         helper.make_node("MatMul", ["feats", "w_t"], ["branch_out_t"])], "then_branch", [],
        [helper.make_tensor_value_info("branch_out_t", T.FLOAT, None)])
    else_g = helper.make_graph(
        [helper.make_node("Constant", [], ["w_e"], value=numpy_helper.from_array(w_else, "w_e")),
         helper.make_node("MatMul", ["feats", "w_e"], ["mm_e"]),
         helper.make_node("Neg", ["mm_e"], ["branch_out_e"])], "else_branch", [],
        [helper.make_tensor_value_info("branch_out_e", T.FLOAT, None)])
    nodes = [
        helper.make_node("ReduceMax", ["scores"], ["best"], keepdims=0),
        helper.make_node("Greater", ["best", "zero"], ["positive"]),
        helper.make_node("If", ["positive"], ["picked"], then_branch=then_g, else_branch=else_g),
        helper.make_node("ReduceMean", ["picked"], ["floor"], keepdims=0),
        helper.make_node("Clip", ["picked", "floor", "ceiling"], ["clipped"]),
    ]
    g = helper.make_graph(
        nodes, "postprocess", [helper.make_tensor_value_info("scores", T.FLOAT, [1, 6]),
                               helper.make_tensor_value_info("feats", T.FLOAT, [1, 6])],
        [helper.make_tensor_value_info("clipped", T.FLOAT, None)],
        [numpy_helper.from_array(np.float32(0.0), "zero"), numpy_helper.from_array(np.float32(2.5), "ceiling")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)], producer_name="corpus")
    m.ir_version = 6
    return m, [rng.standard_normal((1, 6)).astype(np.float32), rng.standard_normal((1, 6)).astype(np.float32)]


def segmenter_model(rng):
    """A segmentation head as tf2onnx writes it, at opset 13 / IR 7: an NHWC input transposed to NCHW, ReLU6 as a
    Clip with its bounds as inputs, the upsampling size computed at run time from the input's Shape (Shape, Slice,
    Concat into Resize's sizes), Squeeze/Unsqueeze with axes as inputs, a per-pixel ArgMax and a TopK."""
    w = (0.5 * rng.standard_normal((4, 3, 3, 3))).astype(np.float32)
    b = rng.uniform(-0.2, 0.2, 4).astype(np.float32)
    nodes = [
        helper.make_node("Transpose", ["x"], ["nchw"], perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["nchw", "w", "b"], ["c"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["c", "zero", "six"], ["r6"]),
        helper.make_node("Shape", ["nchw"], ["in_shape"]),
        helper.make_node("Slice", ["in_shape", "hw_start", "hw_end"], ["hw"]),
        helper.make_node("Concat", ["nc_sizes", "hw"], ["sizes"], axis=0),
        helper.make_node("Resize", ["r6", "", "", "sizes"], ["up"], mode="linear",
                         coordinate_transformation_mode="half_pixel"),
        helper.make_node("ArgMax", ["up"], ["labels64"], axis=1, keepdims=1),
        helper.make_node("Squeeze", ["labels64", "axis1"], ["labels_sq"]),
        helper.make_node("Cast", ["labels_sq"], ["labels"], to=T.FLOAT),
        helper.make_node("ReduceMax", ["up"], ["peak"], axes=[2, 3], keepdims=0),
        helper.make_node("TopK", ["peak", "two"], ["top", "top_idx"], axis=1),
        helper.make_node("Unsqueeze", ["top", "axis0"], ["top_u"]),
    ]
    inits = [("w", w), ("b", b), ("zero", np.float32(0)), ("six", np.float32(6)),
             ("hw_start", np.array([2], np.int64)), ("hw_end", np.array([4], np.int64)),
             ("nc_sizes", np.array([1, 4], np.int64)), ("axis1", np.array([1], np.int64)),
             ("axis0", np.array([0], np.int64)), ("two", np.array([2], np.int64))]
    g = helper.make_graph(
        nodes, "segmenter", [helper.make_tensor_value_info("x", T.FLOAT, [1, 12, 10, 3])],
        [helper.make_tensor_value_info(n, T.FLOAT, None) for n in ("labels", "top_u", "up")],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="corpus")
    m.ir_version = 7
    return m, [rng.standard_normal((1, 12, 10, 3)).astype(np.float32)]


def encoder_block_model(rng):
    """A transformer block in today's ONNX, at opset 21 / IR 10: LayerNormalization (17), Split with num_outputs
    (18), Gelu with the tanh approximation (20), ReduceMean with its axes as an input (18)."""
    t, d = 8, 16
    wqkv = (rng.standard_normal((d, 3 * d)) / np.sqrt(d)).astype(np.float32)
    w1 = (rng.standard_normal((d, 2 * d)) / np.sqrt(d)).astype(np.float32)
    w2 = (rng.standard_normal((2 * d, d)) / np.sqrt(2 * d)).astype(np.float32)
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g1", "b1"], ["n1"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["n1", "wqkv"], ["qkv"]),
        helper.make_node("Split", ["qkv"], ["q", "k", "v"], axis=2, num_outputs=3),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["a"]),
        helper.make_node("Add", ["x", "a"], ["r1"]),
        helper.make_node("LayerNormalization", ["r1", "g2", "b2"], ["n2"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["n2", "w1"], ["h"]),
        helper.make_node("Gelu", ["h"], ["gh"], approximate="tanh"),
        helper.make_node("MatMul", ["gh", "w2"], ["f"]),
        helper.make_node("Add", ["r1", "f"], ["y"]),
        helper.make_node("ReduceMean", ["y", "axes"], ["pooled"], keepdims=0),
    ]
    inits = [("g1", rng.uniform(0.5, 1.5, d)), ("b1", rng.uniform(-.2, .2, d)), ("g2", rng.uniform(0.5, 1.5, d)),
             ("b2", rng.uniform(-.2, .2, d)), ("wqkv", wqkv), ("w1", w1), ("w2", w2), ("scale", 1 / np.sqrt(d))]
    g = helper.make_graph(
        nodes, "encoder_block", [helper.make_tensor_value_info("x", T.FLOAT, [1, t, d])],
        [helper.make_tensor_value_info("y", T.FLOAT, None), helper.make_tensor_value_info("pooled", T.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(a, np.float32), n) for n, a in inits] +
        [numpy_helper.from_array(np.array([1], np.int64), "axes")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], producer_name="corpus")
    m.ir_version = 10
    return m, [rng.standard_normal((1, t, d)).astype(np.float32)]


def resize_model(rng):
    """Resize at opset 19 / IR 9 (the antialias era) in linear and nearest modes, as segmentation heads use it."""
    nodes = [
        helper.make_node("Resize", ["x", "", "", "sizes"], ["up"], mode="linear",
                         coordinate_transformation_mode="half_pixel"),
        helper.make_node("Resize", ["x", "", "scales"], ["near"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    ]
    g = helper.make_graph(
        nodes, "resize", [helper.make_tensor_value_info("x", T.FLOAT, [1, 2, 5, 7])],
        [helper.make_tensor_value_info("up", T.FLOAT, None), helper.make_tensor_value_info("near", T.FLOAT, None)],
        [numpy_helper.from_array(np.array([1, 2, 9, 12], np.int64), "sizes"),
         numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], producer_name="corpus")
    m.ir_version = 9
    return m, [rng.standard_normal((1, 2, 5, 7)).astype(np.float32)]


def main():
    torch.manual_seed(22)
    rng = np.random.default_rng(22)
    manifest = {}

    def save(name, model, inputs):
        path = os.path.join(HERE, name + ".onnx")
        onnx.save(model, path)
        for k, x in enumerate(inputs):
            np.save(os.path.join(HERE, "%s.input%d.npy" % (name, k)), x)
        g = onnx.load(path).graph
        inits = {t.name for t in g.initializer}
        manifest[name] = {"inputs": [i.name for i in g.input if i.name not in inits],
                          "outputs": [o.name for o in g.output]}

    for name, module, inputs, in_names, out_names, opset, dyn in torch_models(rng):
        module.eval()
        shared = isinstance(module, ResidualNet)
        # Random BatchNorm statistics, so that folding them is checked on non-trivial values; ResidualNet keeps fresh
        # weights, biases and variances (equal, so torch shares them) and random means only.
        for mod in module.modules():
            if isinstance(mod, nn.BatchNorm2d) and shared:
                mod.running_mean.uniform_(-0.5, 0.5)
            elif isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.data.uniform_(0.5, 1.5)
                mod.bias.data.uniform_(-0.2, 0.2)
        path = os.path.join(HERE, name + ".onnx")
        with torch.no_grad():
            torch.onnx.export(module, tuple(torch.from_numpy(x) for x in inputs), path, opset_version=opset,
                              input_names=in_names, output_names=out_names, dynamic_axes=dyn,
                              training=torch.onnx.TrainingMode.PRESERVE if shared else torch.onnx.TrainingMode.EVAL)
        save(name, onnx.load(path), inputs)
    model, inputs = nhwc_model(rng)
    save("nhwc_constants_op7_ir3", model, inputs)
    for opset, ir in [(18, 8), (21, 10), (15, 8), (16, 8), (19, 9), (20, 10)]:
        model, inputs = new_opset_model(rng, opset, ir)
        save("gemm_if_op%d_ir%d" % (opset, ir), model, inputs)
    # Added after the models above, so that their seeded weights and inputs stay as they were.
    for name, make in [("postprocess_if_op11_ir6", postprocess_if_model), ("segmenter_runtime_shapes_op13_ir7",
                        segmenter_model), ("encoder_block_op21_ir10", encoder_block_model),
                       ("resize_op19_ir9", resize_model)]:
        model, inputs = make(rng)
        save(name, model, inputs)
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote %d models to %s" % (len(manifest), HERE))
    return 0


if __name__ == "__main__":
    sys.exit(main())

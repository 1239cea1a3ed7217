#!/usr/bin/python3
"""Writes the third-party-style corpus for tests/onnx/corpus_models_test.cc (issue 22): small models of the kinds
users bring (a detector with an upsampling neck, a CRNN text recognizer, an audio front end, a keyword spotter, a
voice-activity detector, post-processing with control flow), exported by torch 1.13's exporter at opsets 7 to 14 or
built by hand at opsets 11 to 21 and IR versions up to 10, with an input for each.

    /usr/bin/python3 tests/data/models/corpus/make_corpus.py         # Debian's python3-torch and python3-onnx
    node tests/data/models/corpus/ort_reference.js                    # the reference outputs, from ONNX Runtime

Writes NAME.onnx and NAME.input<k>.npy here; ort_reference.js then writes NAME.output<k>.npy with ONNX Runtime 1.30
(graph optimizations off). Seeded: a rerun writes the same models and inputs.
"""
import io
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261127)
rng = np.random.default_rng(20261127)


def save_inputs(name, arrays):
    for k, a in enumerate(arrays):
        np.save(os.path.join(HERE, "%s.input%d.npy" % (name, k)), np.ascontiguousarray(a))


def export(name, model, args, opset, input_names, output_names, dynamic_axes=None):
    """Exports `model` in eval mode with torch's exporter at `opset` (BatchNorm folded, as users' exports are)."""
    model.eval()
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, args, buf, opset_version=opset, input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes, do_constant_folding=True)
    with open(os.path.join(HERE, name + ".onnx"), "wb") as f:
        f.write(buf.getvalue())
    save_inputs(name, [a.numpy() for a in (args if isinstance(args, tuple) else (args,))])


def randomize_bn(model):
    """Non-trivial BatchNorm statistics, so that folding them is visible in the outputs."""
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.3, 0.3)
    return model


class TinyDetector(nn.Module):
    """A detector-shaped convnet: two strided stages, a top-down neck (nearest upsampling, concatenation) and a head
    that decodes boxes (sigmoid centres, exponential sizes) and class scores."""

    def __init__(self, classes=3):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1))
        self.c2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.LeakyReLU(0.1))
        self.lateral = nn.Conv2d(16, 8, 1)
        self.head = nn.Conv2d(16, 4 + classes, 1)

    def forward(self, x):
        p1 = self.stem(x)
        p2 = self.c2(p1)
        up = F.interpolate(self.lateral(p2), scale_factor=2.0, mode="nearest")
        f = torch.cat([p1, up], dim=1)
        h = self.head(f)
        xy = torch.sigmoid(h[:, 0:2])
        wh = torch.exp(h[:, 2:4].clamp(max=4.0))
        cls = torch.softmax(h[:, 4:], dim=1)
        return torch.cat([xy, wh], dim=1), cls


class Crnn(nn.Module):
    """A CRNN text recognizer: a conv feature extractor over a text-line image, the height pooled away, a
    bidirectional LSTM over the width, per-column class log-probabilities (for CTC decoding)."""

    def __init__(self, classes=12):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, 1, 1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d((2, 1)))
        self.rnn = nn.LSTM(16 * 4, 24, bidirectional=True, batch_first=False)
        self.fc = nn.Linear(48, classes)

    def forward(self, x):
        f = self.conv(x)  # [N, 16, 4, W/2]
        n, c, h, w = f.shape
        seq = f.permute(3, 0, 1, 2).reshape(w, n, c * h)
        out, _ = self.rnn(seq)
        return F.log_softmax(self.fc(out), dim=2)


class AudioFrontEnd(nn.Module):
    """A log-mel front end: framing and a real DFT as a strided Conv1d with windowed cosine and sine kernels, the
    power spectrum, a mel filterbank matmul, log, then per-utterance mean/variance normalization."""

    def __init__(self, n_fft=64, hop=32, mels=16):
        super().__init__()
        bins = n_fft // 2 + 1
        t = np.arange(n_fft)
        window = 0.5 - 0.5 * np.cos(2 * np.pi * t / n_fft)
        k = np.arange(bins)[:, None]
        cos = (np.cos(2 * np.pi * k * t / n_fft) * window).astype(np.float32)
        sin = (-np.sin(2 * np.pi * k * t / n_fft) * window).astype(np.float32)
        self.dft = nn.Conv1d(1, 2 * bins, n_fft, stride=hop, bias=False)
        self.dft.weight.data = torch.from_numpy(np.concatenate([cos, sin])[:, None, :])
        self.bins = bins
        fb = np.maximum(0, 1 - np.abs(np.linspace(0, mels + 1, bins)[None, :] - np.arange(1, mels + 1)[:, None]))
        self.register_buffer("mel", torch.from_numpy(fb.astype(np.float32)))

    def forward(self, wav):
        spec = self.dft(wav.unsqueeze(1))
        power = spec[:, :self.bins].pow(2) + spec[:, self.bins:].pow(2)
        logmel = torch.log(torch.matmul(self.mel, power) + 1e-6)
        mean = logmel.mean(dim=2, keepdim=True)
        std = torch.sqrt(((logmel - mean) ** 2).mean(dim=2, keepdim=True) + 1e-5)
        return (logmel - mean) / std


class DsCnnKws(nn.Module):
    """A DS-CNN keyword spotter over MFCC-like features: a strided stem, depthwise-separable blocks, global average
    pooling, a classifier and softmax."""

    def __init__(self, keywords=6):
        super().__init__()
        layers = [nn.Conv2d(1, 16, (5, 3), (2, 1), (2, 1)), nn.BatchNorm2d(16), nn.ReLU()]
        for _ in range(2):
            layers += [nn.Conv2d(16, 16, 3, 1, 1, groups=16), nn.BatchNorm2d(16), nn.ReLU(),
                       nn.Conv2d(16, 16, 1), nn.BatchNorm2d(16), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(16, keywords)

    def forward(self, x):
        f = F.adaptive_avg_pool2d(self.features(x), 1).flatten(1)
        return F.softmax(self.fc(f), dim=1)


class GruVad(nn.Module):
    """A streaming voice-activity detector: a GRU over feature frames with the state carried in and out, per-frame
    speech probabilities and a 0/1 decision from a threshold."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.gru = nn.GRU(16, 16, batch_first=True)
        self.out = nn.Linear(16, 1)

    def forward(self, x, h0):
        y, h = self.gru(torch.tanh(self.proj(x)), h0)
        p = torch.sigmoid(self.out(y)).squeeze(2)
        decision = torch.where(p > 0.5, torch.ones_like(p), torch.zeros_like(p))
        return p, decision, h


def torch_models():
    det = randomize_bn(TinyDetector())
    img = torch.rand(1, 3, 32, 32)
    export("detector_opset11", det, img, 11, ["image"], ["boxes", "scores"])
    export("detector_opset9", det, img, 9, ["image"], ["boxes", "scores"])  # Upsample with a scales input

    export("crnn_opset12", randomize_bn(Crnn()), torch.rand(1, 1, 16, 40), 12, ["line"], ["log_probs"])

    wav = torch.from_numpy(rng.standard_normal((2, 1056)).astype(np.float32) * 0.3)
    export("audio_frontend_opset13", AudioFrontEnd(), wav, 13, ["wav"], ["features"])

    kws = randomize_bn(DsCnnKws())
    mfcc = torch.randn(1, 1, 40, 12)
    export("kws_dscnn_opset10", kws, mfcc, 10, ["mfcc"], ["probs"])
    export("kws_dscnn_opset7", kws, mfcc, 7, ["mfcc"], ["probs"])  # opset 7: BatchNorm and pooling in old forms

    vad = GruVad()
    frames = torch.randn(1, 20, 16)
    h0 = torch.randn(1, 1, 16) * 0.5
    export("vad_gru_opset14", vad, (frames, h0), 14, ["frames", "h0"], ["speech_prob", "decision", "hn"])


def hand_model(name, nodes, inputs, outputs, opset, ir, inits=()):
    """A model written node by node (the exporters of other frameworks write such graphs); inputs: [(name, array)],
    outputs: [(name, elem_type)] with shapes left to inference."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs], initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="octet-corpus")
    m.ir_version = ir
    with open(os.path.join(HERE, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())
    save_inputs(name, [a for _, a in inputs])


def init(name, a):
    return numpy_helper.from_array(np.ascontiguousarray(a), name)


def postprocess_if_opset11():
    """Detector post-processing as converters write it: a data-dependent If whose branches read outer-scope tensors
    and hold their weights in Constant nodes, and a Clip whose minimum is computed at run time."""
    scores = rng.standard_normal((1, 6)).astype(np.float32)
    feats = rng.standard_normal((1, 6)).astype(np.float32)
    w_then = rng.standard_normal((6, 4)).astype(np.float32)
    w_else = rng.standard_normal((6, 4)).astype(np.float32)
    then_g = helper.make_graph(
        [helper.make_node("Constant", [], ["w_t"], value=numpy_helper.from_array(w_then)),
         helper.make_node("MatMul", ["feats", "w_t"], ["branch_out_t"])], "then_branch", [],
        [helper.make_tensor_value_info("branch_out_t", TensorProto.FLOAT, None)])
    else_g = helper.make_graph(
        [helper.make_node("Constant", [], ["w_e"], value=numpy_helper.from_array(w_else)),
         helper.make_node("MatMul", ["feats", "w_e"], ["mm_e"]),
         helper.make_node("Neg", ["mm_e"], ["branch_out_e"])], "else_branch", [],
        [helper.make_tensor_value_info("branch_out_e", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("ReduceMax", ["scores"], ["best"], keepdims=0),
        helper.make_node("Greater", ["best", "zero"], ["positive"]),
        helper.make_node("If", ["positive"], ["picked"], then_branch=then_g, else_branch=else_g),
        helper.make_node("ReduceMean", ["picked"], ["floor"], keepdims=0),
        helper.make_node("Clip", ["picked", "floor", "ceiling"], ["clipped"]),
    ]
    hand_model("postprocess_if_opset11", nodes, [("scores", scores), ("feats", feats)],
               [("clipped", TensorProto.FLOAT)], 11, 6,
               [init("zero", np.array(0, np.float32)), init("ceiling", np.array(2.5, np.float32))])


def encoder_block_opset21():
    """A transformer block in today's ONNX: LayerNormalization (17), Gelu (20), ReduceMean with its axes as an input
    (18), Split with num_outputs (18), at opset 21 and IR version 10."""
    t, d = 8, 16
    x = rng.standard_normal((1, t, d)).astype(np.float32)
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
    inits = [init("g1", rng.uniform(0.5, 1.5, d).astype(np.float32)), init("b1", rng.uniform(-.2, .2, d).astype(np.float32)),
             init("g2", rng.uniform(0.5, 1.5, d).astype(np.float32)), init("b2", rng.uniform(-.2, .2, d).astype(np.float32)),
             init("wqkv", wqkv), init("w1", w1), init("w2", w2),
             init("scale", np.array(1 / np.sqrt(d), np.float32)), init("axes", np.array([1], np.int64))]
    hand_model("encoder_block_opset21", nodes, [("x", x)], [("y", TensorProto.FLOAT), ("pooled", TensorProto.FLOAT)],
               21, 10, inits)


def resize_opset19():
    """Resize at opset 19 (the antialias and keep_aspect_ratio_policy era) with linear and nearest modes, as
    segmentation heads use it, at IR version 9."""
    x = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
    nodes = [
        helper.make_node("Resize", ["x", "", "", "sizes"], ["up"], mode="linear",
                         coordinate_transformation_mode="half_pixel"),
        helper.make_node("Resize", ["x", "", "scales"], ["near"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    ]
    hand_model("resize_opset19", nodes, [("x", x)], [("up", TensorProto.FLOAT), ("near", TensorProto.FLOAT)], 19, 9,
               [init("sizes", np.array([1, 2, 9, 12], np.int64)), init("scales", np.array([1, 1, 2, 2], np.float32))])


def tf_style_segmenter_opset13():
    """A segmentation head in the style tf2onnx writes: an NHWC input transposed to NCHW, ReLU6 as a Clip with its
    bounds as inputs, the upsampling size computed at run time from the input's Shape (Shape, Slice, Mul, Concat),
    Squeeze/Unsqueeze with axes as inputs, per-pixel ArgMax and a TopK over the class scores."""
    x = rng.standard_normal((1, 12, 10, 3)).astype(np.float32)
    w = (rng.standard_normal((4, 3, 3, 3)) * 0.5).astype(np.float32)
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
        helper.make_node("Cast", ["labels_sq"], ["labels"], to=TensorProto.FLOAT),
        helper.make_node("ReduceMax", ["up"], ["peak"], axes=[2, 3], keepdims=0),
        helper.make_node("TopK", ["peak", "two"], ["top", "top_idx"], axis=1),
        helper.make_node("Unsqueeze", ["top", "axis0"], ["top_u"]),
    ]
    inits = [init("w", w), init("b", b), init("zero", np.array(0, np.float32)), init("six", np.array(6, np.float32)),
             init("hw_start", np.array([2], np.int64)), init("hw_end", np.array([4], np.int64)),
             init("nc_sizes", np.array([1, 4], np.int64)), init("axis1", np.array([1], np.int64)),
             init("axis0", np.array([0], np.int64)), init("two", np.array([2], np.int64))]
    hand_model("tf_style_segmenter_opset13", nodes, [("x", x)],
               [("labels", TensorProto.FLOAT), ("top_u", TensorProto.FLOAT), ("up", TensorProto.FLOAT)], 13, 7, inits)


def main():
    torch_models()
    postprocess_if_opset11()
    tf_style_segmenter_opset13()
    encoder_block_opset21()
    resize_opset19()


if __name__ == "__main__":
    main()

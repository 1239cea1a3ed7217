#!/usr/bin/python3
"""Generates octet's ONNX test models with PyTorch, and PyTorch's outputs for them.

Run with Debian's python3 (torch 1.13, torchvision 0.14, onnx 1.12):
    /usr/bin/python3 tests/data/models/generate.py            # the small committed models, into this folder
    /usr/bin/python3 tests/data/models/generate.py --large DIR  # ResNet-18 and MobileNetV2, into DIR (tests do this)

For each model NAME it writes NAME.onnx, NAME.input<k>.npy (the inputs, in graph-input order) and NAME.output<k>.npy
(PyTorch's outputs, in graph-output order). Everything is seeded: a rerun writes the same weights and inputs
(the .onnx bytes may differ in producer metadata only).

Small models (committed):
  digits_mlp   Linear-ReLU-Linear trained on the digits data, dynamic batch axis, opset 13
               (both digits models train on the first 1437 images; digits_test_x/labels.npy are the last 360,
               digits_calib_x.npy the first 256, for the quantization tests)
  digits_cnn   Conv-BN-ReLU-MaxPool x2, Flatten, Linear trained on the digits data, dynamic batch axis, opset 13 (BatchNormalization
               nodes kept, not folded into the convolutions)
  lstm_lm      the numeric-suite tutorial's LSTM language model (Embedding, 2-layer LSTM, Linear decoder), opset 14
  gru_bidir    a bidirectional GRU with initial state, opset 13
  transformer  a pre-LN transformer encoder block (LayerNorm, MatMul attention, Softmax, GELU), opset 17
  transformer13 the same block at opset 13 (LayerNorm decomposed into ReduceMean/Sub/Pow/Sqrt/Div)
  convs        grouped, dilated, depthwise and transposed convolutions, Pad, pools with ceil_mode and
               count_include_pad=False, HardSwish, Clip, LeakyRelu, opset 15
Large models (--large, random seeded weights, batch 1, opset 13): resnet18, mobilenet_v2.
"""
import argparse
import gzip
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


def load_digits():
    """The digits data set (1797 8x8 images, 16 grey levels), from digits.csv.gz beside this script."""
    with gzip.open(os.path.join(HERE, "digits.csv.gz"), "rt") as f:
        rows = np.loadtxt(f, delimiter=",", dtype=np.float32)
    x = rows[:, :64] / 16.0
    y = rows[:, 64].astype(np.int64)
    return x, y


def train(model, x, y, epochs, lr):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    model.train()
    g = torch.Generator().manual_seed(1)
    for _ in range(epochs):
        perm = torch.randperm(len(xt), generator=g)
        for i in range(0, len(xt), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            loss = F.cross_entropy(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
    model.eval()


def export(model, name, inputs, out_dir, opset, input_names, output_names, dynamic_axes=None, keep_bn=False):
    model.eval()
    with torch.no_grad():
        outputs = model(*inputs)
    if not isinstance(outputs, tuple):
        outputs = (outputs,)
    path = os.path.join(out_dir, name + ".onnx")
    # The exporter folds BatchNorm into the preceding Conv in eval mode; PRESERVE (with the model in eval mode)
    # keeps BatchNormalization nodes, with their running statistics, in the graph.
    training = torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, tuple(inputs), path, opset_version=opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=True,
                      training=training)
    for k, t in enumerate(inputs):
        a = t.numpy()
        if a.dtype == np.int64:
            a = a.astype(np.int32)  # octet holds ONNX int64 as int32
        np.save(os.path.join(out_dir, "%s.input%d.npy" % (name, k)), a)
    flat = []
    for o in outputs:
        flat.extend(o if isinstance(o, tuple) else (o,))
    for k, t in enumerate(flat):
        np.save(os.path.join(out_dir, "%s.output%d.npy" % (name, k)), t.detach().numpy().astype(np.float32))
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))


class DigitsMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = x.view(-1, 1, 8, 8)
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(torch.flatten(x, 1))


class CNNInput(nn.Module):
    """The CNN fed images [N, 1, 8, 8] directly (what is exported)."""

    def __init__(self, cnn):
        super().__init__()
        self.cnn = cnn

    def forward(self, x):
        return self.cnn(x)


class LSTMModel(nn.Module):
    """The numeric-suite tutorial's language model: encoder (Embedding), LSTM, decoder (Linear)."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.init_weights()
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        self.encoder.weight.data.uniform_(-initrange, initrange)
        self.decoder.bias.data.zero_()
        self.decoder.weight.data.uniform_(-initrange, initrange)

    def forward(self, input, h0, c0):
        emb = self.drop(self.encoder(input))
        output, (h, c) = self.rnn(emb, (h0, c0))
        output = self.drop(output)
        decoded = self.decoder(output)
        return decoded, h, c


class GRUModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(6, 5, num_layers=1, bidirectional=True)
        self.head = nn.Linear(10, 3)

    def forward(self, x, h0):
        y, h = self.gru(x, h0)
        return self.head(y), h


class EncoderBlock(nn.Module):
    """Pre-LN transformer encoder block written out with MatMul attention."""

    def __init__(self, d=32, heads=4, ff=64):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ff)
        self.act = nn.GELU()
        self.ff2 = nn.Linear(ff, d)

    def forward(self, x):  # x [batch, seq, d]
        b, s, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q = q.reshape(b, s, h, d // h).transpose(1, 2)
        k = k.reshape(b, s, h, d // h).transpose(1, 2)
        v = v.reshape(b, s, h, d // h).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / float(np.sqrt(d // h)), dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(y)
        return x + self.ff2(self.act(self.ff1(self.ln2(x))))


class Convs(nn.Module):
    """Convolution variants the CNN zoo uses, in one small graph."""

    def __init__(self):
        super().__init__()
        self.grouped = nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2)
        self.dilated = nn.Conv2d(6, 6, 3, padding=2, dilation=2, bias=False)
        self.depthwise = nn.Conv2d(6, 6, 3, padding=1, groups=6)
        self.up = nn.ConvTranspose2d(6, 3, 3, stride=2, padding=1, output_padding=1)
        self.asym = nn.Conv2d(3, 4, 2)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        x = F.hardswish(self.grouped(x))
        x = F.relu6(self.dilated(x))
        x = torch.sigmoid(self.depthwise(x)) * x
        x = F.leaky_relu(self.up(x), 0.2)
        x = F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)
        x = self.bn(self.asym(F.pad(x, (0, 1, 1, 0))))
        return F.avg_pool2d(torch.tanh(x), 2, ceil_mode=True) + F.max_pool2d(x, 2, ceil_mode=True)


def small(out_dir):
    x, y = load_digits()
    torch.manual_seed(0)
    test_x = torch.from_numpy(x[:32])
    np.save(os.path.join(out_dir, "digits_labels.npy"), y[:32].astype(np.int32))

    # The split the QAT issue fixes: the first 1437 images train, the last 360 test. The quantization tests calibrate
    # on the first 256 training images and measure accuracy on the test images.
    train_x, train_y = x[:1437], y[:1437]
    np.save(os.path.join(out_dir, "digits_calib_x.npy"), x[:256])
    np.save(os.path.join(out_dir, "digits_test_x.npy"), x[1437:])
    np.save(os.path.join(out_dir, "digits_test_labels.npy"), y[1437:].astype(np.int32))

    mlp = DigitsMLP()
    train(mlp, train_x, train_y, epochs=20, lr=0.05)
    export(mlp, "digits_mlp", [test_x], out_dir, 13, ["x"], ["logits"], dynamic_axes={"x": {0: "batch"}})

    cnn = DigitsCNN()
    train(cnn, train_x, train_y, epochs=8, lr=0.05)
    export(CNNInput(cnn), "digits_cnn", [test_x.reshape(32, 1, 8, 8)], out_dir, 13, ["image"], ["logits"],
           keep_bn=True, dynamic_axes={"image": {0: "batch"}})

    torch.manual_seed(1)
    lm = LSTMModel(ntoken=50, ninp=24, nhid=20, nlayers=2)
    tokens = torch.randint(0, 50, (7, 3))
    h0 = torch.randn(2, 3, 20) * 0.5
    c0 = torch.randn(2, 3, 20) * 0.5
    export(lm, "lstm_lm", [tokens, h0, c0], out_dir, 14, ["tokens", "h0", "c0"], ["logits", "h", "c"])

    torch.manual_seed(2)
    gru = GRUModel()
    export(gru, "gru_bidir", [torch.randn(5, 2, 6), torch.randn(2, 2, 5)], out_dir, 13, ["x", "h0"], ["y", "h"])

    torch.manual_seed(3)
    block = EncoderBlock()
    tx = torch.randn(2, 8, 32)
    export(block, "transformer", [tx], out_dir, 17, ["x"], ["y"])
    export(block, "transformer13", [tx], out_dir, 13, ["x"], ["y"])

    torch.manual_seed(4)
    convs = Convs()
    with torch.no_grad():
        convs.bn.running_mean.uniform_(-0.5, 0.5)
        convs.bn.running_var.uniform_(0.5, 1.5)
    export(convs, "convs", [torch.randn(2, 4, 11, 9)], out_dir, 15, ["x"], ["y"])


def seeded_large_model(name):
    """torchvision's `name` ("resnet18", "mobilenet_v2") with seeded random weights, in eval mode (also used by
    bench/resnet18_int8_pytorch.py, so PyTorch's side of that benchmark has the same weights)."""
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    # Non-trivial BatchNorm statistics, so folding them is exercised.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 2.0)
    model.eval()
    return model


def large(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name in ("resnet18", "mobilenet_v2"):
        model = seeded_large_model(name)
        export(model, name, [torch.randn(1, 3, 224, 224)], out_dir, 13, ["image"], ["logits"], keep_bn=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--large", metavar="DIR", help="write ResNet-18 and MobileNetV2 into DIR instead")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.large:
        large(args.large)
    else:
        small(HERE)
    return 0


if __name__ == "__main__":
    sys.exit(main())

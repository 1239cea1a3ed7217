#!/usr/bin/python3
"""Writes a QDQ model made by PyTorch 1.13's ONNX exporter, for tests/onnx/qdq_import_test.cc (issue 23):
quantized/torch_qdq_cnn.onnx, a small CNN quantized in eager mode (qnnpack qconfig: u8 activations, s8 per-tensor
weights) and exported at opset 13. The exporter's own layout: scales, zero points, weights and biases as Constant
nodes, a Cast after every QuantizeLinear, biases dequantized with a zero point of Cast(ConstantOfShape(...)).

Run with Debian's python3 and python3-torch 1.13 (the test itself needs no torch):
    /usr/bin/python3 tests/data/models/make_quantized_torch.py
Into tests/data/models/quantized/: torch_qdq_cnn.onnx and torch_qdq_cnn.input0.npy (seeded). The reference output
torch_qdq_cnn.output0.npy comes from ONNX Runtime with graph optimizations off (quantized/ort_reference.js, see
make_quantized.py).
"""
import os

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "quantized")


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.add = nn.quantized.FloatFunctional()
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)
        self.dequant = torch.ao.quantization.DeQuantStub()

    def forward(self, x):
        x = self.pool(self.relu1(self.conv1(self.quant(x))))
        x = self.add.add(x, self.conv2(x))
        x = torch.flatten(self.gap(x), 1)
        return self.dequant(self.fc(x))


def main():
    torch.manual_seed(23)
    torch.backends.quantized.engine = "qnnpack"
    m = Cnn().eval()
    m.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    torch.ao.quantization.fuse_modules(m, [["conv1", "relu1"]], inplace=True)
    prepared = torch.ao.quantization.prepare(m)
    with torch.no_grad():
        for _ in range(8):
            prepared(torch.rand(4, 3, 8, 8) * 4 - 2)
    quantized = torch.ao.quantization.convert(prepared)
    x = (torch.rand(4, 3, 8, 8) * 5 - 2.5).contiguous()
    os.makedirs(OUT, exist_ok=True)
    torch.onnx.export(quantized, x, os.path.join(OUT, "torch_qdq_cnn.onnx"), opset_version=13, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
    np.save(os.path.join(OUT, "torch_qdq_cnn.input0.npy"), x.numpy().astype(np.float32))
    print("wrote", OUT)


if __name__ == "__main__":
    main()

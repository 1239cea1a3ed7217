#!/usr/bin/python3
"""PyTorch 1.13's numeric suite on the digits CNN and the LSTM language model, for octet's comparison test.

Run with Debian's python3 (torch 1.13):  /usr/bin/python3 tests/data/numeric_suite/generate.py
Writes pytorch_ns.json beside this script: per-layer SQNRs (dB) from torch.ao.ns._numeric_suite, which
tests/onnx/numeric_suite_pytorch_test.cc compares with octet's suite on the same models, weights and data.

The models are rebuilt in PyTorch from the committed ONNX files (tests/data/models/generate.py made them), so both
sides start from the same float weights, and quantized with the choices octet makes too:
  digits_cnn  static, eager mode, onednn engine (this torch build has no FBGEMM; onednn adds the bias in float
              like FBGEMM, numerics.md): Conv+BN+ReLU fused (BN folded), MinMaxObserver quint8
              per_tensor_affine activations without reduce_range, PerChannelMinMaxObserver qint8
              per_channel_symmetric weights, calibrated on digits_calib_x.npy (256 images); compared on
              digits_test_x.npy (360 images, one batch). octet: the same qconfig, profile pytorch-fbgemm.
  lstm_lm     dynamic (quantize_dynamic, default_dynamic_qconfig: MinMaxObserver qint8 per_tensor_symmetric weights),
              qnnpack engine, which ignores reduce_range (8-bit activations, [0, 255] per call, octet's default),
              on lstm_lm.input{0,1,2}.npy. The 2-layer nn.LSTM is built as two
              1-layer LSTMs (rnn0, rnn1) so that each layer is a module, as each is a node (/rnn/LSTM, /rnn/LSTM_1) in
              the ONNX graph; the decoder's bias is 0, so nn.Linear's output equals the ONNX MatMul's.
For every layer it records:
  weight      compare_weights (dequantized vs float weight); LSTM weights are read from the packed params
              (compare_weights keeps only weight_hh of each LSTM layer: it overwrites the weight_ih entry).
  activation  compare_model_outputs (error propagated through the quantized model).
  shadow_first_sample  compare_model_stub with ShadowLogger: PyTorch 1.13 logs x[0] of a batched tensor, the first
              sample only (for an LSTM's (output, (h, c)) tuple it logs the whole output sequence).
  shadow      the same Shadow computation over the whole batch (forward hooks on the quantized modules feed the
              dequantized inputs to the float module), what octet's ShadowLogger keeps.
SQNR is torch.ao.ns.fx.utils.compute_sqnr: 20 log10(|x| / |x - y|), x the float tensor.
"""
import copy
import json
import os

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.ao.quantization as tq
import torch.ao.ns._numeric_suite as ns
import torch.nn.intrinsic as nni
from torch.ao.ns.fx.utils import compute_sqnr

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")


def initializers(name):
    model = onnx.load(os.path.join(MODELS, name + ".onnx"))
    return {t.name: torch.from_numpy(onnx.numpy_helper.to_array(t).copy()) for t in model.graph.initializer}


def sqnr(x, y):
    x = x.dequantize() if x.is_quantized else x
    y = y.dequantize() if y.is_quantized else y
    return float(compute_sqnr(x.float(), y.float()))


def dequant(t):
    return t.dequantize() if isinstance(t, torch.Tensor) and t.is_quantized else t


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.relu2 = nn.ReLU()
        self.pool2 = nn.MaxPool2d(2)
        self.fc = nn.Linear(64, 10)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.pool1(self.relu1(self.bn1(self.conv1(self.quant(x)))))
        x = self.pool2(self.relu2(self.bn2(self.conv2(x))))
        return self.dequant(self.fc(torch.flatten(x, 1)))


class LSTMLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(50, 24)
        self.rnn0 = nn.LSTM(24, 20, 1)
        self.rnn1 = nn.LSTM(20, 20, 1)
        self.decoder = nn.Linear(20, 50)

    def forward(self, tokens, h0, c0):
        emb = self.encoder(tokens)
        out0, (h_0, c_0) = self.rnn0(emb, (h0[0:1], c0[0:1]))
        out1, (h_1, c_1) = self.rnn1(out0, (h0[1:2], c0[1:2]))
        return self.decoder(out1), torch.cat([h_0, h_1]), torch.cat([c_0, c_1])


def load_cnn():
    w = initializers("digits_cnn")
    m = DigitsCNN()
    sd = {k[len("cnn."):]: v for k, v in w.items() if k.startswith("cnn.")}
    missing = m.load_state_dict(sd, strict=False)
    assert not [k for k in missing.missing_keys if "num_batches_tracked" not in k], missing
    return m.eval()


def onnx_gates_to_torch(t):
    # ONNX orders the LSTM gates i, o, f, c; PyTorch i, f, g(c), o.
    i, o, f, c = torch.chunk(t, 4, dim=0)
    return torch.cat([i, f, c, o], dim=0)


def load_lstm():
    w = initializers("lstm_lm")
    m = LSTMLM()
    m.encoder.weight.data.copy_(w["encoder.weight"])
    m.decoder.weight.data.copy_(w["onnx::MatMul_205"].t())
    m.decoder.bias.data.copy_(w["decoder.bias"])
    for rnn, (wi, ri, bi) in ((m.rnn0, ("onnx::LSTM_182", "onnx::LSTM_183", "onnx::LSTM_184")),
                              (m.rnn1, ("onnx::LSTM_202", "onnx::LSTM_203", "onnx::LSTM_204"))):
        rnn.weight_ih_l0.data.copy_(onnx_gates_to_torch(w[wi][0]))
        rnn.weight_hh_l0.data.copy_(onnx_gates_to_torch(w[ri][0]))
        b = w[bi][0]
        rnn.bias_ih_l0.data.copy_(onnx_gates_to_torch(b[:80]))
        rnn.bias_hh_l0.data.copy_(onnx_gates_to_torch(b[80:]))
    return m.eval()


def full_batch_shadows(float_model, q_model, names, *inputs):
    """SQNR of each quantized module's output against its float module run on the same (dequantized) inputs."""
    out = {}
    hooks = []

    def hook(name):
        def fn(module, args, result):
            fargs = [tuple(dequant(a) for a in x) if isinstance(x, tuple) else dequant(x) for x in args]
            with torch.no_grad():
                ref = getattr(float_model, name)(*fargs)
            if isinstance(result, tuple):  # LSTM: (output, (h, c))
                out[name] = sqnr(ref[0], result[0])
                out[name + ":1"] = sqnr(ref[1][0], result[1][0])
                out[name + ":2"] = sqnr(ref[1][1], result[1][1])
            else:
                out[name] = sqnr(ref, result)
        return fn

    for name in names:
        hooks.append(getattr(q_model, name).register_forward_hook(hook(name)))
    with torch.no_grad():
        q_model(*inputs)
    for h in hooks:
        h.remove()
    return out


def stub_first_sample(float_model, q_model, swap, *inputs):
    result = ns.compare_model_stub(copy.deepcopy(float_model), copy.deepcopy(q_model), swap, *inputs)
    return {k[:-len(".stats")]: sqnr(v["float"][0], v["quantized"][0]) for k, v in result.items()}


def cnn_figures():
    torch.backends.quantized.engine = "onednn"
    float_model = load_cnn()
    fused = tq.fuse_modules(copy.deepcopy(float_model), [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"]])
    prepared = copy.deepcopy(fused)
    prepared.qconfig = tq.QConfig(
        activation=tq.MinMaxObserver.with_args(dtype=torch.quint8, qscheme=torch.per_tensor_affine,
                                               reduce_range=False),
        weight=tq.PerChannelMinMaxObserver.with_args(dtype=torch.qint8, qscheme=torch.per_channel_symmetric))
    tq.prepare(prepared, inplace=True)
    calib = torch.from_numpy(np.load(os.path.join(MODELS, "digits_calib_x.npy"))).reshape(-1, 1, 8, 8)
    with torch.no_grad():
        for i in range(0, len(calib), 32):
            prepared(calib[i:i + 32])
    q = tq.convert(prepared)
    test = torch.from_numpy(np.load(os.path.join(MODELS, "digits_test_x.npy"))).reshape(-1, 1, 8, 8)

    weights = ns.compare_weights(fused.state_dict(), q.state_dict())
    outputs = ns.compare_model_outputs(copy.deepcopy(fused), copy.deepcopy(q), test)
    first = stub_first_sample(fused, q, [nni.ConvReLU2d, nn.Linear], test)
    full = full_batch_shadows(fused, q, ["conv1", "conv2", "fc"], test)
    with torch.no_grad():
        logits = sqnr(fused(test), q(test))
    # octet's node names (the ONNX export's) for PyTorch's modules.
    nodes = {"conv1": "/cnn/conv1/Conv", "conv2": "/cnn/conv2/Conv", "fc": "/cnn/fc/Gemm"}
    wkey = {"conv1": "conv1.weight", "conv2": "conv2.weight", "fc": "fc._packed_params._packed_params"}
    layers = []
    for mod, node in nodes.items():
        layers.append({
            "module": mod, "node": node,
            "weight": sqnr(weights[wkey[mod]]["float"], weights[wkey[mod]]["quantized"]),
            "activation": sqnr(outputs[mod + ".stats"]["float"][0], outputs[mod + ".stats"]["quantized"][0]),
            "shadow_first_sample": first[mod],
            "shadow": full[mod],
        })
    return {"engine": "onednn", "layers": layers, "outputs": {"logits": logits}}


def cnn_dynamic_lstm_weights(q):
    """Dequantized weights of the dynamic LSTM layers, by PyTorch name."""
    out = {}
    for mod in ("rnn0", "rnn1"):
        wb = getattr(q, mod)._weight_bias()["weight"]
        for k, v in wb.items():
            out[mod + "." + k] = v.dequantize()
    return out


def lstm_figures():
    torch.backends.quantized.engine = "qnnpack"
    float_model = load_lstm()
    q = tq.quantize_dynamic(copy.deepcopy(float_model), {nn.LSTM, nn.Linear}, dtype=torch.qint8)
    inputs = [torch.from_numpy(np.load(os.path.join(MODELS, "lstm_lm.input%d.npy" % i))) for i in range(3)]
    inputs[0] = inputs[0].long()

    weights = ns.compare_weights(float_model.state_dict(), q.state_dict())
    lstm_w = cnn_dynamic_lstm_weights(q)
    outputs = ns.compare_model_outputs(copy.deepcopy(float_model), copy.deepcopy(q), *inputs)
    first = stub_first_sample(float_model, q, [nn.LSTM, nn.Linear], *inputs)
    full = full_batch_shadows(float_model, q, ["rnn0", "rnn1", "decoder"], *inputs)
    with torch.no_grad():
        fo, qo = float_model(*inputs), q(*inputs)
    nodes = {"rnn0": "/rnn/LSTM", "rnn1": "/rnn/LSTM_1", "decoder": "/decoder/MatMul"}
    layers = []
    for mod, node in nodes.items():
        entry = {"module": mod, "node": node}
        if mod == "decoder":
            entry["weight"] = sqnr(weights["decoder._packed_params._packed_params"]["float"],
                                   weights["decoder._packed_params._packed_params"]["quantized"])
            entry["activation"] = sqnr(outputs["decoder.stats"]["float"][0], outputs["decoder.stats"]["quantized"][0])
        else:
            lstm = getattr(float_model, mod)
            entry["weight_ih"] = sqnr(lstm.weight_ih_l0, lstm_w[mod + ".weight_ih_l0"])
            entry["weight_hh"] = sqnr(lstm.weight_hh_l0, lstm_w[mod + ".weight_hh_l0"])
            # compare_weights' own entry for the layer (weight_hh_l0 only, see above).
            entry["compare_weights_hh"] = sqnr(weights[mod + "._all_weight_values.0.param"]["float"],
                                               weights[mod + "._all_weight_values.0.param"]["quantized"])
            fv, qv = outputs[mod + ".stats"]["float"][0], outputs[mod + ".stats"]["quantized"][0]
            entry["activation"] = sqnr(fv[0], qv[0])
            entry["activation_h"] = sqnr(fv[1][0], qv[1][0])
            entry["activation_c"] = sqnr(fv[1][1], qv[1][1])
            entry["shadow_h"] = full[mod + ":1"]
            entry["shadow_c"] = full[mod + ":2"]
        entry["shadow_first_sample"] = first[mod]
        entry["shadow"] = full[mod]
        layers.append(entry)
    outs = {name: sqnr(f, qq) for name, f, qq in zip(["logits", "h", "c"], fo, qo)}
    return {"engine": "qnnpack", "reduce_range": False, "layers": layers, "outputs": outs}


def main():
    torch.manual_seed(0)
    result = {
        "generator": "tests/data/numeric_suite/generate.py",
        "torch": torch.__version__,
        "digits_cnn": cnn_figures(),
        "lstm_lm": lstm_figures(),
    }
    with open(os.path.join(HERE, "pytorch_ns.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(result, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()

"""octet: an int8 quantization engine, from numpy and PyTorch workflows.

Load ONNX or .octet models and run them on numpy arrays, quantize from any Python iterable of calibration batches,
observe tensors with PyTorch's observers, and compare a quantized model with its float model layer by layer
(octet.ns). Errors raise octet.Error with octet's message.
"""

from octet._octet import (
    Error,
    Model,
    ObserverSpec,
    QConfig,
    QConfigMapping,
    dequantize,
    fake_quantize_per_channel_affine,
    fake_quantize_per_tensor_affine,
    get_default_dynamic_qconfig,
    get_default_qconfig,
    get_default_qconfig_mapping,
    kernel_info,
    load,
    quantize_per_channel,
    quantize_per_tensor,
    replay_vectors,
    write_vectors,
)
from octet._octet import __version__
from octet import _octet
from octet import ns
from octet.observers import (
    EntropyObserver,
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    MseObserver,
    PercentileObserver,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
    observer_from_state,
)


def quantize(model, calib=None, mode="static", backend="x86", profile="reference", qconfig_mapping=None,
             per_channel=True, skip=()):
    """Quantizes a float model (an octet.Model or the path of an ONNX model); returns the int8 octet.Model.

    calib: any iterable of batches (static mode: calibration, each batch run once, in order): a dict
      {input name: array}, or for a one-input model an array, a torch tensor, or an (inputs, labels) pair as a
      torch DataLoader yields.
    mode: "static", "dynamic" or "weight-only".
    backend: the QConfig preset when qconfig_mapping is not given ("x86", "fbgemm", "qnnpack", "onednn",
      "symmetric"), as torch.ao.quantization.get_default_qconfig.
    profile: numerics profile ("reference", "tflite", "pytorch-fbgemm", "pytorch-qnnpack").
    qconfig_mapping: an octet.QConfigMapping (set_global / set_object_type / set_module_name; None keeps float).
    per_channel: dynamic mode without a mapping: per-channel weights (default) or per-tensor.
    skip: node names (or name prefixes) to keep float.
    Save the result with Model.save("x.octet") or Model.save_onnx("x.onnx") (QDQ).
    """
    if isinstance(model, str):
        model = load(model)
    return _octet.quantize(model, calib, mode, backend, profile, qconfig_mapping, per_channel, list(skip))


__all__ = [name for name in dir() if not name.startswith("_")]

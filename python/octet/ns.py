"""The numeric suite, after torch.ao.ns._numeric_suite, on octet's real int8 kernels.

Results are dicts of numpy arrays shaped like PyTorch's:
  compare_weights(float_model, quantized_model)
      {weight name: {"float": array, "quantized": dequantized array, ...}}
  compare_model_outputs(float_model, quantized_model, batches)
      {node name: {"float": [array per batch], "quantized": [dequantized array per batch]}}: activations with the
      error propagated through the int8 model (OutputLogger)
  compare_model_stub(float_model, quantized_model, batches)
      the same for shadows: each int8 node against its float twin on the same inputs (ShadowLogger; whole batches)
  compare(float_model, quantized_model, batches)
      the figures of `octet compare`: {"weights": {node: SQNR}, "activations" / "shadow" / "outputs": {name: {...}}}
  compute_error(x, y)
      SQNR in dB, 20 log10(|x| / |x - y|)
`batches` is an iterable of batches (a dict {input name: array}, or an array for a one-input model); a single dict
or array is one batch.
"""

import numpy as _np

from octet import _octet

compute_error = _octet.compute_error


def _batches(batches):
    if isinstance(batches, (dict, _np.ndarray)):
        return [batches]
    return batches


def compare_weights(float_model, quantized_model):
    return _octet.compare_weights(float_model, quantized_model)


def compare_model_outputs(float_model, quantized_model, batches):
    return _octet.compare_model_outputs(float_model, quantized_model, _batches(batches))


def compare_model_stub(float_model, quantized_model, batches):
    return _octet.compare_model_stub(float_model, quantized_model, _batches(batches))


def compare(float_model, quantized_model, batches):
    return _octet.compare(float_model, quantized_model, _batches(batches))


def sensitivity(float_model, calib, eval, backend="x86", qconfig_mapping=None, target=None, labels=None,
                latency_runs=0, nodes=()):
    """Sensitivity analysis: each node quantized alone and all but it, ranked; with `target` (output SQNR in dB,
    or top-1 accuracy when `labels` (int32, one per evaluation sample) are given) the nodes to keep float.
    Returns {"metric", "float_value", "all_quantized", "nodes": [...by rank], "keep_float", "achieved", ...}."""
    return _octet.sensitivity(float_model, _batches(calib), _batches(eval), backend, qconfig_mapping, target,
                              labels, latency_runs, list(nodes))

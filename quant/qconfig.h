// QConfig: how one node is quantized (torch.ao.quantization.QConfig): an observer for its activations and one for
// its weights, each a factory (kind + options) so every observed value gets an observer of its own. The backend
// presets reproduce PyTorch 1.13's get_default_qconfig / get_default_dynamic_qconfig and the XNNPACKQuantizer's
// symmetric config.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "observers/observer.h"
#include "observers/observer_options.h"

namespace octet {

// An observer factory: PyTorch's `SomeObserver.with_args(...)`.
struct ObserverSpec {
  ObserverKind kind = ObserverKind::kMinMax;
  ObserverOptions options;

  // A new observer; for per-channel kinds `ch_axis` (when given) replaces options.ch_axis, because the channel
  // axis of a weight depends on the operator (Conv: 0, MatMul: the last).
  Result<std::unique_ptr<Observer>> Make(std::optional<int> ch_axis = std::nullopt) const;
  bool per_channel() const { return IsPerChannelKind(kind); }
  // "HistogramObserver(dtype=quint8, reduce_range=True)": the kind and the options that differ from defaults.
  std::string ToString() const;
  bool operator==(const ObserverSpec& other) const;
};

struct QConfig {
  ObserverSpec activation;
  ObserverSpec weight;
  // True when the activation observer is a PlaceholderObserver: qparams are chosen per call (dynamic).
  bool is_dynamic() const { return activation.kind == ObserverKind::kPlaceholder; }
  // Fails naming the first option that the observer factory rejects.
  Status Validate() const;
  std::string ToString() const;
  bool operator==(const QConfig& other) const = default;
};

// The backends of get_default_qconfig: "x86", "fbgemm", "qnnpack", "onednn"; plus "symmetric" (XNNPACKQuantizer).
std::vector<std::string_view> QConfigBackendNames();

// PyTorch 1.13's get_default_qconfig(backend), version 0:
//   fbgemm, x86: HistogramObserver(reduce_range=True)  + PerChannelMinMaxObserver(qint8, per_channel_symmetric)
//   onednn:      HistogramObserver(reduce_range=False) + PerChannelMinMaxObserver(qint8, per_channel_symmetric)
//   qnnpack:     HistogramObserver(reduce_range=False) + MinMaxObserver(qint8, per_tensor_symmetric)
// Activations are quint8 per_tensor_affine. The HistogramObserver is the legacy_1_13 variant, so the preset gives
// 1.13's numbers; set activation.options.histogram_variant to kUpstream for the current algorithm.
// "symmetric" is XNNPACKQuantizer's get_symmetric_quantization_config(is_per_channel=True):
//   activations HistogramObserver(qint8, [-128, 127], per_tensor_affine, eps=2^-12),
//   weights PerChannelMinMaxObserver(qint8, [-127, 127], per_channel_symmetric, ch_axis=0, eps=2^-12).
Result<QConfig> GetDefaultQConfig(std::string_view backend);

// PyTorch 1.13's dynamic qconfigs: activation PlaceholderObserver(quint8) (qparams per call) and weights
// MinMaxObserver(qint8, per_tensor_symmetric) (default_dynamic_qconfig) or, with per_channel,
// PerChannelMinMaxObserver(qint8, per_channel_symmetric) (per_channel_dynamic_qconfig). FBGEMM's dynamic linear
// computes the activation qparams with reduce_range=True; that is the op's choice, not the observer's.
QConfig GetDefaultDynamicQConfig(bool per_channel = true);

}  // namespace octet

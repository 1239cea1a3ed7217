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

// Where the one bit that the activation observer's reduce_range gives up is taken from (Prepare applies it).
//   kEveryActivation  PyTorch: every observed activation has 7 bits ([0, 127] for quint8).
//   kWeights          the weights instead: each Conv / Gemm / MatMul weight is narrowed to [-64, 63] (a range given
//                     by the weight observer's quant_min/quant_max is clamped into it), and every activation keeps
//                     8 bits except input B of a MatMul of two activations (QBatchMatMul shifts it into [-64, 63]).
//                     reduce_range exists because AVX2's vpmaddubsw saturates a pair sum a0*w0 + a1*w1 at int16:
//                     with a in [0, 255] and w in [-64, 63] it stays within 2 * 255 * 64 = 32640, so the fast
//                     kernels stay exact, for octet and for ONNX Runtime's u8 x s8 kernels on the QDQ export. A
//                     weight loses less than an activation to the missing bit (per-channel scales, ~48 dB at 8 bits).
enum class ReduceRangeScope { kEveryActivation, kWeights };

struct QConfig {
  ObserverSpec activation;
  ObserverSpec weight;
  // Ignored unless activation.options.reduce_range is set.
  ReduceRangeScope reduce_range_scope = ReduceRangeScope::kEveryActivation;
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
//     x86 (octet's default) takes that bit from the weights (ReduceRangeScope::kWeights): on the compare-models
//     encoder static int8 goes from 22.7 dB (7-bit activations) to 28.2 dB, as onednn's 8-bit activations with
//     8-bit weights; 7 bits only on the values no row op reads gave 24.3 dB. fbgemm keeps PyTorch's blanket
//     reduce_range, bit for bit.
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

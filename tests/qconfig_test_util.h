// Quantization configs the tests quantize their models with, spelled once.
#pragma once

#include <cstdint>

#include "quant/qconfig.h"
#include "quant/qconfig_mapping.h"

namespace octet::testing {

// PyTorch's usual static config: MinMax quint8 activations (narrowed to [0, 2^bits - 1] when `activation_bits` < 8)
// and per-channel symmetric qint8 weights.
inline QConfig MinMaxPerChannelQConfig(int activation_bits = 8) {
  QConfig qc;
  qc.activation = ObserverSpec{ObserverKind::kMinMax, {}};
  if (activation_bits != 8) {
    qc.activation.options.quant_min = 0;
    qc.activation.options.quant_max = (int64_t{1} << activation_bits) - 1;
  }
  qc.weight.kind = ObserverKind::kPerChannelMinMax;
  qc.weight.options.dtype = DType::kS8;
  qc.weight.options.qscheme = QScheme::kPerChannelSymmetric;
  return qc;
}

// qnnpack's preset (per-tensor symmetric weights) with MinMax activations for the whole model: fast to calibrate.
inline QConfigMapping QnnpackMinMaxMapping() {
  QConfig q = GetDefaultQConfig("qnnpack").value();
  q.activation = ObserverSpec{ObserverKind::kMinMax, {}};
  QConfigMapping m;
  m.SetGlobal(q);
  return m;
}

// The x86 preset as PyTorch has it (Histogram reduce_range activations, 7 bits on every one:
// ReduceRangeScope::kEveryActivation; per-channel weights), with its activation observer replaced by `activation`
// (keeping the 7-bit activations) unless that is Histogram.
inline QConfig X86QConfig(ObserverKind activation = ObserverKind::kMinMax) {
  QConfig q = GetDefaultQConfig("x86").value();
  q.reduce_range_scope = ReduceRangeScope::kEveryActivation;
  if (activation != ObserverKind::kHistogram) {
    q.activation = ObserverSpec{activation, {}};
    q.activation.options.reduce_range = true;
  }
  return q;
}

// X86QConfig(activation) for the whole model.
inline QConfigMapping X86Mapping(ObserverKind activation = ObserverKind::kMinMax) {
  QConfigMapping m;
  m.SetGlobal(X86QConfig(activation));
  return m;
}

}  // namespace octet::testing

// QConfig, observer factories and the backend presets (values from PyTorch 1.13 torch/ao/quantization/qconfig.py
// and torch/ao/quantization/quantizer/xnnpack_quantizer.py).
#include "quant/qconfig.h"

#include <fmt/format.h>

#include "observers/observer_factory.h"

namespace octet {

Result<std::unique_ptr<Observer>> ObserverSpec::Make(std::optional<int> ch_axis) const {
  ObserverOptions o = options;
  if (ch_axis.has_value() && per_channel()) o.ch_axis = *ch_axis;
  return MakeObserver(kind, o);
}

std::string ObserverSpec::ToString() const {
  // The resolved options with defaults filled in, so two specs print alike exactly when they behave alike.
  auto resolved = ResolveObserverOptions(kind, options);
  if (!resolved.ok()) return fmt::format("{}(invalid: {})", ObserverClassName(kind), resolved.status().message());
  return fmt::format("{}({})", ObserverClassName(kind), OptionsToJson(*resolved).dump());
}

bool ObserverSpec::operator==(const ObserverSpec& other) const {
  if (kind != other.kind) return false;
  auto a = ResolveObserverOptions(kind, options);
  auto b = ResolveObserverOptions(other.kind, other.options);
  if (!a.ok() || !b.ok()) return false;
  return *a == *b;
}

Status QConfig::Validate() const {
  if (auto r = ResolveObserverOptions(activation.kind, activation.options); !r.ok()) {
    return InvalidArgument("invalid activation observer {}: {}", ObserverClassName(activation.kind),
                           r.status().message());
  }
  if (auto r = ResolveObserverOptions(weight.kind, weight.options); !r.ok()) {
    return InvalidArgument("invalid weight observer {}: {}", ObserverClassName(weight.kind), r.status().message());
  }
  if (weight.options.dtype != DType::kS8) {
    // Every int8 kernel (ops/qgemm) packs s8 weights; DESIGN.md §4.
    return InvalidArgument("invalid weight observer {}: weights must be qint8, got {}", ObserverClassName(weight.kind),
                           ObserverDTypeName(weight.options.dtype));
  }
  return OkStatus();
}

std::string QConfig::ToString() const {
  const bool scoped = activation.options.reduce_range && reduce_range_scope == ReduceRangeScope::kWeights;
  return fmt::format("QConfig(activation={}, weight={}{})", activation.ToString(), weight.ToString(),
                     scoped ? ", reduce_range taken from the weights" : "");
}

std::vector<std::string_view> QConfigBackendNames() { return {"x86", "fbgemm", "qnnpack", "onednn", "symmetric"}; }

namespace {

ObserverSpec HistogramActivation(bool reduce_range) {
  ObserverSpec s{ObserverKind::kHistogram, {}};
  s.options.dtype = DType::kU8;
  s.options.reduce_range = reduce_range;
  s.options.histogram_variant = HistogramVariant::kLegacy113;
  return s;
}

// default_per_channel_weight_observer
ObserverSpec PerChannelWeight() {
  ObserverSpec s{ObserverKind::kPerChannelMinMax, {}};
  s.options.dtype = DType::kS8;
  s.options.qscheme = QScheme::kPerChannelSymmetric;
  return s;
}

// default_weight_observer
ObserverSpec PerTensorWeight() {
  ObserverSpec s{ObserverKind::kMinMax, {}};
  s.options.dtype = DType::kS8;
  s.options.qscheme = QScheme::kPerTensorSymmetric;
  return s;
}

}  // namespace

Result<QConfig> GetDefaultQConfig(std::string_view backend) {
  if (backend == "x86") {
    // The 7th bit comes off the weights (qconfig.h).
    return QConfig{HistogramActivation(true), PerChannelWeight(), ReduceRangeScope::kWeights};
  }
  if (backend == "fbgemm") return QConfig{HistogramActivation(true), PerChannelWeight()};
  if (backend == "onednn") return QConfig{HistogramActivation(false), PerChannelWeight()};
  if (backend == "qnnpack") return QConfig{HistogramActivation(false), PerTensorWeight()};
  if (backend == "symmetric") {
    QConfig q;
    q.activation = ObserverSpec{ObserverKind::kHistogram, {}};
    q.activation.options.dtype = DType::kS8;
    q.activation.options.qscheme = QScheme::kPerTensorAffine;
    q.activation.options.quant_min = -128;
    q.activation.options.quant_max = 127;
    q.activation.options.eps = 1.0 / 4096.0;
    q.weight = PerChannelWeight();
    q.weight.options.quant_min = -127;
    q.weight.options.quant_max = 127;
    q.weight.options.ch_axis = 0;
    q.weight.options.eps = 1.0 / 4096.0;
    return q;
  }
  return InvalidArgument("unknown quantization backend '{}': expected one of {}", backend,
                         fmt::join(QConfigBackendNames(), ", "));
}

QConfig GetDefaultDynamicQConfig(bool per_channel) {
  QConfig q;
  q.activation = ObserverSpec{ObserverKind::kPlaceholder, {}};
  q.activation.options.dtype = DType::kU8;
  q.weight = per_channel ? PerChannelWeight() : PerTensorWeight();
  return q;
}

}  // namespace octet

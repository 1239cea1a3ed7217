// Observer names, option defaults and validation.
#include "observers/observer_options.h"

#include <cmath>
#include <limits>

namespace octet {
namespace {

struct KindNames {
  ObserverKind kind;
  const char* name;
  const char* class_name;
};

constexpr KindNames kKindNames[] = {
    {ObserverKind::kMinMax, "minmax", "MinMaxObserver"},
    {ObserverKind::kMovingAverageMinMax, "moving_average_minmax", "MovingAverageMinMaxObserver"},
    {ObserverKind::kPerChannelMinMax, "per_channel_minmax", "PerChannelMinMaxObserver"},
    {ObserverKind::kMovingAveragePerChannelMinMax, "moving_average_per_channel_minmax",
     "MovingAveragePerChannelMinMaxObserver"},
    {ObserverKind::kHistogram, "histogram", "HistogramObserver"},
    {ObserverKind::kPercentile, "percentile", "PercentileObserver"},
    {ObserverKind::kEntropy, "entropy", "EntropyObserver"},
    {ObserverKind::kMse, "mse", "MseObserver"},
    {ObserverKind::kPlaceholder, "placeholder", "PlaceholderObserver"},
    {ObserverKind::kPow2Histogram, "pow2_histogram", "Pow2HistogramObserver"},
};

bool IsMovingAverage(ObserverKind k) {
  return k == ObserverKind::kMovingAverageMinMax || k == ObserverKind::kMovingAveragePerChannelMinMax;
}
bool UsesGrid(ObserverKind k) {
  return k == ObserverKind::kPercentile || k == ObserverKind::kEntropy || k == ObserverKind::kMse ||
         k == ObserverKind::kPow2Histogram;
}

// "failed to create <Class>: option '<name>' does not apply ..." when an option is set for a kind it is not for.
Status CheckApplies(ObserverKind kind, bool set, bool applies, std::string_view option, std::string_view owners) {
  if (set && !applies) {
    return InvalidArgument("failed to create {}: option '{}' does not apply to this observer (it is an option of {})",
                           ObserverClassName(kind), option, owners);
  }
  return OkStatus();
}

}  // namespace

const char* ObserverKindName(ObserverKind kind) {
  for (const auto& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "?";
}

const char* ObserverClassName(ObserverKind kind) {
  for (const auto& k : kKindNames) {
    if (k.kind == kind) return k.class_name;
  }
  return "?";
}

Result<ObserverKind> ParseObserverKind(std::string_view name) {
  for (const auto& k : kKindNames) {
    if (name == k.name || name == k.class_name) return k.kind;
  }
  return InvalidArgument(
      "failed to parse observer '{}': expected minmax, moving_average_minmax, per_channel_minmax, "
      "moving_average_per_channel_minmax, histogram, percentile, entropy, mse, placeholder or pow2_histogram",
      name);
}

bool IsPerChannelKind(ObserverKind kind) {
  return kind == ObserverKind::kPerChannelMinMax || kind == ObserverKind::kMovingAveragePerChannelMinMax;
}

const char* HistogramVariantName(HistogramVariant variant) {
  return variant == HistogramVariant::kUpstream ? "upstream" : "legacy_1_13";
}

Result<HistogramVariant> ParseHistogramVariant(std::string_view name) {
  if (name == "upstream") return HistogramVariant::kUpstream;
  if (name == "legacy_1_13") return HistogramVariant::kLegacy113;
  return InvalidArgument("failed to parse histogram variant '{}': expected upstream or legacy_1_13", name);
}

const char* ObserverDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kU8: return "quint8";
    case DType::kS8: return "qint8";
    case DType::kS32: return "qint32";
    case DType::kF32: break;
  }
  return "f32";
}

QParamsSpec ResolvedObserverOptions::Spec(int axis) const {
  QParamsSpec spec;
  spec.qscheme = qscheme;
  spec.dtype = dtype;
  spec.range = range;
  spec.eps = eps;
  spec.axis = axis;
  return spec;
}

Result<ResolvedObserverOptions> ResolveObserverOptions(ObserverKind kind, const ObserverOptions& o) {
  const char* cls = ObserverClassName(kind);
  ResolvedObserverOptions r;
  r.kind = kind;
  OCTET_RETURN_IF_ERROR(CheckApplies(kind, o.averaging_constant.has_value(), IsMovingAverage(kind),
                                     "averaging_constant",
                                     "moving_average_minmax and moving_average_per_channel_minmax"));
  OCTET_RETURN_IF_ERROR(CheckApplies(kind, o.ch_axis.has_value(), IsPerChannelKind(kind), "ch_axis",
                                     "per_channel_minmax and moving_average_per_channel_minmax"));
  OCTET_RETURN_IF_ERROR(CheckApplies(kind, o.bins.has_value(), kind == ObserverKind::kHistogram || UsesGrid(kind),
                                     "bins", "histogram, percentile, entropy, mse and pow2_histogram"));
  OCTET_RETURN_IF_ERROR(CheckApplies(kind, o.upsample_rate.has_value(), kind == ObserverKind::kHistogram,
                                     "upsample_rate", "histogram"));
  OCTET_RETURN_IF_ERROR(CheckApplies(kind, o.histogram_variant.has_value(), kind == ObserverKind::kHistogram,
                                     "histogram_variant", "histogram"));
  OCTET_RETURN_IF_ERROR(
      CheckApplies(kind, o.percentile.has_value(), kind == ObserverKind::kPercentile, "percentile", "percentile"));

  if (!IsIntegerDType(o.dtype)) {
    return InvalidArgument("failed to create {}: dtype must be quint8, qint8 or qint32, got {}", cls, o.dtype);
  }
  r.dtype = o.dtype;
  const bool per_channel = IsPerChannelKind(kind);
  r.qscheme = o.qscheme.value_or(per_channel ? QScheme::kPerChannelAffine : QScheme::kPerTensorAffine);
  if (per_channel && !IsPerChannel(r.qscheme)) {
    return InvalidArgument(
        "failed to create {}: qscheme must be per_channel_affine or per_channel_symmetric, got {}", cls,
        QSchemeName(r.qscheme));
  }
  if (!per_channel && IsPerChannel(r.qscheme)) {
    return InvalidArgument(
        "failed to create {}: qscheme must be per_tensor_affine or per_tensor_symmetric, got {}", cls,
        QSchemeName(r.qscheme));
  }
  r.reduce_range = o.reduce_range;
  if (IsSymmetric(r.qscheme) && r.reduce_range && r.dtype == DType::kU8) {
    return InvalidArgument(
        "failed to create {}: cannot reduce range for symmetric quantization with quint8 (PyTorch raises "
        "NotImplementedError; its symmetric zero point 128 would lie outside [0, 127])",
        cls);
  }
  r.quant_min = o.quant_min;
  r.quant_max = o.quant_max;
  OCTET_ASSIGN_OR_RETURN(r.range, CalculateQMinQMax(r.dtype, o.quant_min, o.quant_max, r.reduce_range, cls));

  if (o.eps.has_value()) {
    const double e = *o.eps;
    const float ef = static_cast<float>(e);
    if (!(std::isfinite(e) && e > 0.0 && ef > 0.0f && std::isfinite(1.0f / ef))) {
      return InvalidArgument(
          "failed to create {}: eps must be a positive float32 whose reciprocal is finite (>= 2.9e-39), got {}", cls,
          e);
    }
    r.eps = ef;
  }
  if (o.averaging_constant.has_value()) {
    const double c = *o.averaging_constant;
    if (!(c > 0.0 && c <= 1.0)) {
      return InvalidArgument("failed to create {}: averaging_constant must be in (0, 1], got {}", cls, c);
    }
    r.averaging_constant = static_cast<float>(c);
  }
  if (o.ch_axis.has_value()) {
    if (*o.ch_axis < -64 || *o.ch_axis >= 64) {
      return InvalidArgument("failed to create {}: ch_axis must be in [-64, 64), got {}", cls, *o.ch_axis);
    }
    r.ch_axis = *o.ch_axis;
  }
  if (kind == ObserverKind::kHistogram) {
    r.histogram_variant = o.histogram_variant.value_or(HistogramVariant::kUpstream);
    r.upsample_rate = o.upsample_rate.value_or(r.histogram_variant == HistogramVariant::kUpstream ? 16 : 128);
    r.bins = o.bins.value_or(2048);
    if (r.bins < 1 || r.bins > (int64_t{1} << 20)) {
      return InvalidArgument("failed to create {}: bins must be in [1, 2^20], got {}", cls, r.bins);
    }
    if (r.upsample_rate < 1 || r.upsample_rate > (int64_t{1} << 16) || r.bins * r.upsample_rate > (int64_t{1} << 28)) {
      return InvalidArgument(
          "failed to create {}: upsample_rate must be in [1, 2^16] with bins * upsample_rate <= 2^28, got {} "
          "(bins {})",
          cls, r.upsample_rate, r.bins);
    }
  } else if (UsesGrid(kind)) {
    r.bins = o.bins.value_or(2048);
    if (r.bins < 16 || r.bins > (int64_t{1} << 20)) {
      return InvalidArgument("failed to create {}: bins must be in [16, 2^20], got {}", cls, r.bins);
    }
  }
  if (kind == ObserverKind::kEntropy) {
    const int64_t levels = r.range.quant_max - r.range.quant_min + 1;
    if (levels > r.bins) {
      return InvalidArgument(
          "failed to create {}: the KL search needs at most as many quantization levels as bins, got {} levels "
          "([{}, {}]) and {} bins",
          cls, levels, r.range.quant_min, r.range.quant_max, r.bins);
    }
  }
  if (kind == ObserverKind::kPercentile) {
    r.percentile = o.percentile.value_or(99.99);
    if (!(r.percentile >= 50.0 && r.percentile <= 100.0)) {
      return InvalidArgument("failed to create {}: percentile must be in [50, 100], got {}", cls, r.percentile);
    }
  }
  r.skip_non_finite = o.skip_non_finite;
  return r;
}

nlohmann::json OptionsToJson(const ResolvedObserverOptions& r) {
  nlohmann::json j;
  j["dtype"] = ObserverDTypeName(r.dtype);
  j["qscheme"] = QSchemeName(r.qscheme);
  j["reduce_range"] = r.reduce_range;
  if (r.quant_min.has_value()) j["quant_min"] = *r.quant_min;
  if (r.quant_max.has_value()) j["quant_max"] = *r.quant_max;
  j["eps"] = static_cast<double>(r.eps);
  if (IsMovingAverage(r.kind)) j["averaging_constant"] = static_cast<double>(r.averaging_constant);
  if (IsPerChannelKind(r.kind)) j["ch_axis"] = r.ch_axis;
  if (r.kind == ObserverKind::kHistogram || UsesGrid(r.kind)) j["bins"] = r.bins;
  if (r.kind == ObserverKind::kHistogram) {
    j["upsample_rate"] = r.upsample_rate;
    j["histogram_variant"] = HistogramVariantName(r.histogram_variant);
  }
  if (r.kind == ObserverKind::kPercentile) j["percentile"] = r.percentile;
  j["skip_non_finite"] = r.skip_non_finite;
  return j;
}

Result<ObserverOptions> OptionsFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("failed to read observer options: expected a JSON object");
  auto type_error = [](const std::string& key, const char* want) {
    return InvalidArgument("failed to read observer options: option '{}' must be {}", key, want);
  };
  ObserverOptions o;
  for (const auto& [key, value] : j.items()) {
    const bool is_int = value.is_number_integer();
    const bool is_number = value.is_number();
    if (key == "dtype" || key == "qscheme" || key == "histogram_variant") {
      if (!value.is_string()) return type_error(key, "a string");
      const std::string text = value.get<std::string>();
      if (key == "dtype") {
        OCTET_ASSIGN_OR_RETURN(o.dtype, ParseDType(text));
      } else if (key == "qscheme") {
        OCTET_ASSIGN_OR_RETURN(o.qscheme, ParseQScheme(text));
      } else {
        OCTET_ASSIGN_OR_RETURN(o.histogram_variant, ParseHistogramVariant(text));
      }
    } else if (key == "reduce_range" || key == "skip_non_finite") {
      if (!value.is_boolean()) return type_error(key, "true or false");
      (key == "reduce_range" ? o.reduce_range : o.skip_non_finite) = value.get<bool>();
    } else if (key == "quant_min" || key == "quant_max" || key == "bins" || key == "upsample_rate" ||
               key == "ch_axis") {
      if (!is_int) return type_error(key, "an integer");
      const int64_t v = value.get<int64_t>();
      if (key == "quant_min") o.quant_min = v;
      if (key == "quant_max") o.quant_max = v;
      if (key == "bins") o.bins = v;
      if (key == "upsample_rate") o.upsample_rate = v;
      if (key == "ch_axis") {
        if (v < -64 || v >= 64) return InvalidArgument("failed to read observer options: ch_axis {} out of range", v);
        o.ch_axis = static_cast<int>(v);
      }
    } else if (key == "eps" || key == "averaging_constant" || key == "percentile") {
      if (!is_number) return type_error(key, "a number");
      const double v = value.get<double>();
      if (key == "eps") o.eps = v;
      if (key == "averaging_constant") o.averaging_constant = v;
      if (key == "percentile") o.percentile = v;
    } else {
      return InvalidArgument("failed to read observer options: unknown option '{}'", key);
    }
  }
  return o;
}

}  // namespace octet

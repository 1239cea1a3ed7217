// Target specs: parsing, validation, built-in targets, power-of-two scales (see target_spec.h).
#include "quant/target_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <type_traits>

namespace octet {
namespace {

const char* const kPow2Int8 = R"({
  "name": "pow2-int8",
  "activation": {"dtype": "int8", "symmetric": true, "bits": 8, "observer": "minmax"},
  "weight": {"dtype": "int8", "symmetric": true, "per_channel": false, "bits": 8},
  "power_of_two_scales": true,
  "bias_bits": 32
})";

// Fails naming `key` (a dotted path) when `j` has a key outside `allowed`.
Status TargetOnlyKeys(const nlohmann::json& j, std::string_view source, const std::string& where,
                      const std::set<std::string>& allowed) {
  if (!j.is_object()) return InvalidArgument("target '{}': {}: must be a JSON object", source, where);
  for (const auto& [key, value] : j.items()) {
    if (allowed.count(key) == 0) {
      return InvalidArgument("target '{}': {}{}: unknown key (known: {})", source, where.empty() ? "" : where + ".",
                             key, fmt::join(allowed, ", "));
    }
  }
  return OkStatus();
}

template <typename T>
Result<T> TargetGet(const nlohmann::json& j, const std::string& key, T fallback, std::string_view source,
                    const std::string& path) {
  if (!j.contains(key)) return fallback;
  const nlohmann::json& v = j.at(key);
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean())
      return InvalidArgument("target '{}': {}: must be true or false, got {}", source, path, v.dump());
  } else if constexpr (std::is_same_v<T, int64_t>) {
    if (!v.is_number_integer())
      return InvalidArgument("target '{}': {}: must be an integer, got {}", source, path, v.dump());
  } else {
    if (!v.is_string()) return InvalidArgument("target '{}': {}: must be a string, got {}", source, path, v.dump());
  }
  return v.get<T>();
}

// One tensor kind's rule as an observer factory.
Result<ObserverSpec> ParseTargetRule(const nlohmann::json& spec, const std::string& kind, std::string_view source) {
  const bool weight = kind == "weight";
  if (!spec.contains(kind)) return InvalidArgument("target '{}': {}: missing", source, kind);
  const nlohmann::json& j = spec.at(kind);
  OCTET_RETURN_IF_ERROR(
      TargetOnlyKeys(j, source, kind,
                     weight ? std::set<std::string>{"dtype", "symmetric", "per_channel", "bits", "observer"}
                            : std::set<std::string>{"dtype", "symmetric", "bits", "observer"}));
  OCTET_ASSIGN_OR_RETURN(const std::string dtype, TargetGet<std::string>(j, "dtype", "int8", source, kind + ".dtype"));
  OCTET_ASSIGN_OR_RETURN(const bool symmetric, TargetGet<bool>(j, "symmetric", weight, source, kind + ".symmetric"));
  OCTET_ASSIGN_OR_RETURN(const bool per_channel,
                         TargetGet<bool>(j, "per_channel", false, source, kind + ".per_channel"));
  OCTET_ASSIGN_OR_RETURN(const int64_t bits, TargetGet<int64_t>(j, "bits", 8, source, kind + ".bits"));
  if (dtype != "int8" && dtype != "uint8") {
    return InvalidArgument("target '{}': {}.dtype: must be int8 or uint8, got '{}'", source, kind, dtype);
  }
  if (weight && dtype != "int8") {
    return InvalidArgument("target '{}': weight.dtype: octet's int8 kernels take int8 weights, got '{}'", source,
                           dtype);
  }
  if (bits < 2 || bits > 8) return InvalidArgument("target '{}': {}.bits: must be 2..8, got {}", source, kind, bits);
  ObserverSpec s;
  s.kind = per_channel ? ObserverKind::kPerChannelMinMax : ObserverKind::kMinMax;
  if (j.contains("observer")) {
    OCTET_ASSIGN_OR_RETURN(const std::string name,
                           TargetGet<std::string>(j, "observer", "", source, kind + ".observer"));
    auto parsed = ParseObserverKind(name);
    if (!parsed.ok()) return InvalidArgument("target '{}': {}.observer: {}", source, kind, parsed.status().message());
    if (IsPerChannelKind(*parsed) != per_channel) {
      return InvalidArgument("target '{}': {}.observer: '{}' is {}per-channel but {}.per_channel is {}", source, kind,
                             name, IsPerChannelKind(*parsed) ? "" : "not ", kind, per_channel);
    }
    s.kind = *parsed;
  }
  const bool is_signed = dtype == "int8";
  s.options.dtype = is_signed ? DType::kS8 : DType::kU8;
  s.options.quant_min = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
  s.options.quant_max = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
  if (per_channel) {
    s.options.qscheme = symmetric ? QScheme::kPerChannelSymmetric : QScheme::kPerChannelAffine;
  } else {
    s.options.qscheme = symmetric ? QScheme::kPerTensorSymmetric : QScheme::kPerTensorAffine;
  }
  return s;
}

}  // namespace

QConfigMapping TargetSpec::Mapping() const {
  QConfigMapping m;
  m.SetGlobal(qconfig);
  for (const std::string& op : keep_float) m.SetObjectType(op, std::nullopt);
  return m;
}

std::vector<std::string> BuiltinTargetNames() {
  std::vector<std::string> names = {"pow2-int8"};
  for (std::string_view b : QConfigBackendNames()) names.emplace_back(b);
  return names;
}

Result<TargetSpec> ParseTargetSpec(const nlohmann::json& spec, std::string_view source) {
  OCTET_RETURN_IF_ERROR(TargetOnlyKeys(
      spec, source, "", {"name", "activation", "weight", "power_of_two_scales", "bias_bits", "keep_float"}));
  TargetSpec t;
  OCTET_ASSIGN_OR_RETURN(t.name, TargetGet<std::string>(spec, "name", std::string(source), source, "name"));
  OCTET_ASSIGN_OR_RETURN(t.qconfig.activation, ParseTargetRule(spec, "activation", source));
  OCTET_ASSIGN_OR_RETURN(t.qconfig.weight, ParseTargetRule(spec, "weight", source));
  if (IsPerChannelKind(t.qconfig.activation.kind)) {
    return InvalidArgument("target '{}': activation.observer: activations are quantized per tensor", source);
  }
  OCTET_ASSIGN_OR_RETURN(t.power_of_two_scales,
                         TargetGet<bool>(spec, "power_of_two_scales", false, source, "power_of_two_scales"));
  OCTET_ASSIGN_OR_RETURN(const int64_t bias_bits, TargetGet<int64_t>(spec, "bias_bits", 32, source, "bias_bits"));
  if (bias_bits != 32) {
    return InvalidArgument("target '{}': bias_bits: octet's kernels accumulate and add the bias in int32, got {}",
                           source, bias_bits);
  }
  if (spec.contains("keep_float")) {
    const nlohmann::json& k = spec.at("keep_float");
    if (!k.is_array()) return InvalidArgument("target '{}': keep_float: must be a list of op types", source);
    for (const nlohmann::json& op : k) {
      if (!op.is_string())
        return InvalidArgument("target '{}': keep_float: must hold op type strings, got {}", source, op.dump());
      t.keep_float.push_back(op.get<std::string>());
    }
  }
  if (Status s = t.qconfig.Validate(); !s.ok()) {
    return InvalidArgument("target '{}': activation/weight: {}", source, s.message());
  }
  return t;
}

Result<TargetSpec> LoadTargetSpec(const std::string& name_or_path) {
  if (name_or_path == "pow2-int8") return ParseTargetSpec(nlohmann::json::parse(kPow2Int8), "pow2-int8");
  for (std::string_view b : QConfigBackendNames()) {
    if (name_or_path != b) continue;
    TargetSpec t;
    t.name = name_or_path;
    OCTET_ASSIGN_OR_RETURN(t.qconfig, GetDefaultQConfig(b));
    return t;
  }
  std::ifstream in(name_or_path);
  if (!in) {
    return NotFound("target '{}': no built-in target of that name ({}) and no file to read", name_or_path,
                    fmt::join(BuiltinTargetNames(), ", "));
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("target '{}': not valid JSON", name_or_path);
  return ParseTargetSpec(j, name_or_path);
}

Result<QParams> RoundScaleToPowerOfTwo(const QParams& q) {
  std::vector<float> scales = q.scales();
  for (float& s : scales) s = std::exp2(std::ceil(std::log2(s)));
  return QParams::Create(q.scheme(), q.dtype(), q.quant_min(), q.quant_max(), std::move(scales), q.zero_points(),
                         q.axis());
}

Status RoundScalesToPowerOfTwo(PreparedGraph& prepared) {
  for (ObserverSlot& slot : prepared.mutable_slots()) {
    QParams q;
    if (slot.fixed_qparams) {
      q = *slot.fixed_qparams;
    } else {
      if (!slot.observer->has_observations()) continue;  // Convert names the value if it needs it
      OCTET_ASSIGN_OR_RETURN(q, slot.observer->CalculateQParams());
    }
    OCTET_ASSIGN_OR_RETURN(slot.fixed_qparams, RoundScaleToPowerOfTwo(q));
  }
  return OkStatus();
}

}  // namespace octet

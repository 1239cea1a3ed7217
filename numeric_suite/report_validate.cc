// Validation of numeric-suite report JSON, schema version 1 (numeric_suite/report_validate.h).
#include "numeric_suite/report_validate.h"

#include <cmath>
#include <string>
#include <string_view>

namespace octet {
namespace {

using nlohmann::json;

enum class Kind { kString, kNumber, kFiniteNumber, kNumberOrNull, kInteger, kIntegerOrNull, kBool, kArray, kObject };

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kString: return "a string";
    case Kind::kNumber: return "a number";
    case Kind::kFiniteNumber: return "a finite number";
    case Kind::kNumberOrNull: return "a number or null";
    case Kind::kInteger: return "an integer";
    case Kind::kIntegerOrNull: return "an integer or null";
    case Kind::kBool: return "true or false";
    case Kind::kArray: return "an array";
    case Kind::kObject: return "an object";
  }
  return "?";
}

bool IsKind(const json& value, Kind kind) {
  switch (kind) {
    case Kind::kString: return value.is_string();
    case Kind::kNumber: return value.is_number();
    case Kind::kFiniteNumber: return value.is_number() && std::isfinite(value.get<double>());
    case Kind::kNumberOrNull: return value.is_number() || value.is_null();
    case Kind::kInteger: return value.is_number_integer();
    case Kind::kIntegerOrNull: return value.is_number_integer() || value.is_null();
    case Kind::kBool: return value.is_boolean();
    case Kind::kArray: return value.is_array();
    case Kind::kObject: return value.is_object();
  }
  return false;
}

// "string \"abc\"", "array [1,2,...]": the JSON type and a short excerpt of the offending value.
std::string Describe(const json& value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {  // dump() would write null
    const double v = value.get<double>();
    return std::string("number ") + (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
  }
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(value.type_name()) + " " + text;
}

Status WrongType(const std::string& path, Kind kind, const json& value) {
  return InvalidArgument("invalid report: '{}' must be {}, got {}", path, KindName(kind), Describe(value));
}

std::string Child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string Index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// Checks `object[key]`: its presence when `required`, and its kind when present.
Status Check(const json& object, const std::string& path, std::string_view key, Kind kind, bool required) {
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) return InvalidArgument("invalid report: '{}' is missing", Child(path, key));
    return OkStatus();
  }
  if (!IsKind(*it, kind)) return WrongType(Child(path, key), kind, *it);
  return OkStatus();
}
Status Required(const json& o, const std::string& path, std::string_view key, Kind kind) {
  return Check(o, path, key, kind, true);
}
Status Optional(const json& o, const std::string& path, std::string_view key, Kind kind) {
  return Check(o, path, key, kind, false);
}

// Every element of the array `object[key]` (already checked to be an array when present) has `kind`.
Status CheckElements(const json& object, const std::string& path, std::string_view key, Kind kind) {
  const auto it = object.find(key);
  if (it == object.end()) return OkStatus();
  for (size_t i = 0; i < it->size(); ++i) {
    if (!IsKind((*it)[i], kind)) return WrongType(Index(Child(path, key), i), kind, (*it)[i]);
  }
  return OkStatus();
}

// The keys every comparison entry (weights, activations, shadow, outputs) shares.
Status CheckComparison(const json& entry, const std::string& path) {
  if (!entry.is_object()) return WrongType(path, Kind::kObject, entry);
  OCTET_RETURN_IF_ERROR(Required(entry, path, "name", Kind::kString));
  OCTET_RETURN_IF_ERROR(Required(entry, path, "sqnr_db", Kind::kNumberOrNull));
  OCTET_RETURN_IF_ERROR(Optional(entry, path, "exact", Kind::kBool));
  OCTET_RETURN_IF_ERROR(Optional(entry, path, "op", Kind::kString));
  for (std::string_view key : {"normalized_l2", "cosine", "max_abs_error_lsb"}) {
    OCTET_RETURN_IF_ERROR(Optional(entry, path, key, Kind::kNumberOrNull));
  }
  return OkStatus();
}

Status CheckHistogram(const json& histogram, const std::string& path) {
  if (!histogram.is_object()) return WrongType(path, Kind::kObject, histogram);
  OCTET_RETURN_IF_ERROR(Required(histogram, path, "min", Kind::kFiniteNumber));
  OCTET_RETURN_IF_ERROR(Required(histogram, path, "max", Kind::kFiniteNumber));
  OCTET_RETURN_IF_ERROR(Required(histogram, path, "float", Kind::kArray));
  OCTET_RETURN_IF_ERROR(Required(histogram, path, "quantized", Kind::kArray));
  if (!(histogram["min"].get<double>() <= histogram["max"].get<double>())) {
    return InvalidArgument("invalid report: '{}' must not exceed '{}', got {} > {}", Child(path, "min"),
                           Child(path, "max"), histogram["min"].dump(), histogram["max"].dump());
  }
  const size_t bins = histogram["float"].size();
  if (bins == 0) return InvalidArgument("invalid report: '{}' must not be empty", Child(path, "float"));
  if (histogram["quantized"].size() != bins) {
    return InvalidArgument("invalid report: '{}' must have as many bins as '{}' ({}), got {}",
                           Child(path, "quantized"), Child(path, "float"), bins, histogram["quantized"].size());
  }
  for (std::string_view key : {"float", "quantized"}) {
    const json& counts = histogram[std::string(key)];
    for (size_t i = 0; i < counts.size(); ++i) {
      const std::string element = Index(Child(path, key), i);
      if (!IsKind(counts[i], Kind::kFiniteNumber)) return WrongType(element, Kind::kFiniteNumber, counts[i]);
      if (!(counts[i].get<double>() >= 0)) {
        return InvalidArgument("invalid report: '{}' must be a count >= 0, got {}", element, counts[i].dump());
      }
    }
  }
  return OkStatus();
}

Status CheckWeight(const json& entry, const std::string& path) {
  OCTET_RETURN_IF_ERROR(CheckComparison(entry, path));
  for (std::string_view key : {"node", "qscheme", "dtype"}) {
    OCTET_RETURN_IF_ERROR(Optional(entry, path, key, Kind::kString));
  }
  OCTET_RETURN_IF_ERROR(Optional(entry, path, "axis", Kind::kIntegerOrNull));
  if (entry.contains("histogram")) OCTET_RETURN_IF_ERROR(CheckHistogram(entry["histogram"], Child(path, "histogram")));
  OCTET_RETURN_IF_ERROR(Optional(entry, path, "channels", Kind::kArray));
  if (entry.contains("channels")) {
    const json& channels = entry["channels"];
    for (size_t i = 0; i < channels.size(); ++i) {
      const std::string c = Index(Child(path, "channels"), i);
      if (!channels[i].is_object()) return WrongType(c, Kind::kObject, channels[i]);
      for (std::string_view key : {"min", "max", "scale"}) {
        OCTET_RETURN_IF_ERROR(Required(channels[i], c, key, Kind::kFiniteNumber));
      }
      OCTET_RETURN_IF_ERROR(Optional(channels[i], c, "zero_point", Kind::kInteger));
    }
  }
  return OkStatus();
}

Status CheckActivation(const json& entry, const std::string& path) {
  OCTET_RETURN_IF_ERROR(CheckComparison(entry, path));
  OCTET_RETURN_IF_ERROR(Optional(entry, path, "value", Kind::kString));
  OCTET_RETURN_IF_ERROR(Optional(entry, path, "shape", Kind::kArray));
  OCTET_RETURN_IF_ERROR(CheckElements(entry, path, "shape", Kind::kInteger));
  OCTET_RETURN_IF_ERROR(Optional(entry, path, "scale", Kind::kFiniteNumber));
  OCTET_RETURN_IF_ERROR(Optional(entry, path, "zero_point", Kind::kInteger));
  OCTET_RETURN_IF_ERROR(Optional(entry, path, "clipped_fraction", Kind::kNumberOrNull));
  OCTET_RETURN_IF_ERROR(Optional(entry, path, "accumulator_headroom_bits", Kind::kNumberOrNull));
  return OkStatus();
}

Status CheckSensitivity(const json& sensitivity, const std::string& path) {
  if (!sensitivity.is_object()) return WrongType(path, Kind::kObject, sensitivity);
  OCTET_RETURN_IF_ERROR(Required(sensitivity, path, "metric", Kind::kString));
  for (std::string_view key : {"target", "all_quantized", "float", "achieved"}) {
    OCTET_RETURN_IF_ERROR(Optional(sensitivity, path, key, Kind::kNumberOrNull));
  }
  OCTET_RETURN_IF_ERROR(Optional(sensitivity, path, "keep_float", Kind::kArray));
  OCTET_RETURN_IF_ERROR(CheckElements(sensitivity, path, "keep_float", Kind::kString));
  OCTET_RETURN_IF_ERROR(Required(sensitivity, path, "nodes", Kind::kArray));
  const json& nodes = sensitivity["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string n = Index(Child(path, "nodes"), i);
    if (!nodes[i].is_object()) return WrongType(n, Kind::kObject, nodes[i]);
    OCTET_RETURN_IF_ERROR(Required(nodes[i], n, "name", Kind::kString));
    OCTET_RETURN_IF_ERROR(Optional(nodes[i], n, "op", Kind::kString));
    for (std::string_view key :
         {"only_this_quantized", "all_but_this_quantized", "int8_latency_us", "float_latency_us"}) {
      OCTET_RETURN_IF_ERROR(Optional(nodes[i], n, key, Kind::kNumberOrNull));
    }
    OCTET_RETURN_IF_ERROR(Optional(nodes[i], n, "rank", Kind::kInteger));
  }
  return OkStatus();
}

// Checks the array `report[key]` (present when `required`) and each entry with `check_entry`.
template <typename CheckEntry>
Status CheckSection(const json& report, std::string_view key, bool required, CheckEntry check_entry) {
  OCTET_RETURN_IF_ERROR(Check(report, "", key, Kind::kArray, required));
  if (!report.contains(key)) return OkStatus();
  const json& entries = report[std::string(key)];
  for (size_t i = 0; i < entries.size(); ++i) {
    OCTET_RETURN_IF_ERROR(check_entry(entries[i], Index(std::string(key), i)));
  }
  return OkStatus();
}

}  // namespace

Status ValidateReportJson(const json& report) {
  if (!report.is_object()) return InvalidArgument("invalid report: the report must be a JSON object, got {}",
                                                  Describe(report));
  OCTET_RETURN_IF_ERROR(Required(report, "", "schema_version", Kind::kInteger));
  if (report["schema_version"] != kReportSchemaVersion) {
    return InvalidArgument("invalid report: 'schema_version' must be {} (the version this octet reads), got {}",
                           kReportSchemaVersion, report["schema_version"].dump());
  }
  for (std::string_view key : {"generator", "float_model", "quantized_model"}) {
    OCTET_RETURN_IF_ERROR(Optional(report, "", key, Kind::kString));
  }
  OCTET_RETURN_IF_ERROR(CheckSection(report, "inputs", false, [](const json& input, const std::string& path) {
    if (!input.is_object()) return WrongType(path, Kind::kObject, input);
    OCTET_RETURN_IF_ERROR(Required(input, path, "name", Kind::kString));
    OCTET_RETURN_IF_ERROR(Optional(input, path, "file", Kind::kString));
    OCTET_RETURN_IF_ERROR(Optional(input, path, "shape", Kind::kArray));
    return CheckElements(input, path, "shape", Kind::kInteger);
  }));
  OCTET_RETURN_IF_ERROR(CheckSection(report, "weights", true, CheckWeight));
  OCTET_RETURN_IF_ERROR(CheckSection(report, "activations", true, CheckActivation));
  OCTET_RETURN_IF_ERROR(CheckSection(report, "shadow", true, CheckComparison));
  OCTET_RETURN_IF_ERROR(CheckSection(report, "outputs", false, CheckComparison));
  if (report.contains("sensitivity")) {
    OCTET_RETURN_IF_ERROR(CheckSensitivity(report["sensitivity"], "sensitivity"));
  }
  return OkStatus();
}

}  // namespace octet

// JSON helpers for observer state.
#include "observers/state_json.h"

#include <cmath>
#include <limits>
#include <string>

namespace octet {

nlohmann::json FloatToJson(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return static_cast<double>(v);
}

nlohmann::json FloatsToJson(std::span<const float> v) {
  nlohmann::json a = nlohmann::json::array();
  for (float f : v) a.push_back(FloatToJson(f));
  return a;
}

bool JsonToFloat(const nlohmann::json& v, float* out) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "inf") {
      *out = std::numeric_limits<float>::infinity();
    } else if (s == "-inf") {
      *out = -std::numeric_limits<float>::infinity();
    } else if (s == "nan") {
      *out = std::numeric_limits<float>::quiet_NaN();
    } else {
      return false;
    }
    return true;
  }
  if (!v.is_number()) return false;
  const double d = v.get<double>();
  const float f = static_cast<float>(d);
  if (static_cast<double>(f) != d) return false;
  *out = f;
  return true;
}

Result<float> ReadJsonFloat(const nlohmann::json& j, std::string_view key, std::string_view what) {
  const auto it = j.find(std::string(key));
  if (it == j.end()) return InvalidArgument("failed to load {}: missing '{}'", what, key);
  float f = 0.0f;
  if (!JsonToFloat(*it, &f)) {
    return InvalidArgument("failed to load {}: '{}' must be a float32 value (a number, \"inf\", \"-inf\" or \"nan\")",
                           what, key);
  }
  return f;
}

Result<std::vector<float>> ReadJsonFloats(const nlohmann::json& j, std::string_view key, std::string_view what) {
  const auto it = j.find(std::string(key));
  if (it == j.end()) return InvalidArgument("failed to load {}: missing '{}'", what, key);
  if (!it->is_array()) return InvalidArgument("failed to load {}: '{}' must be a list", what, key);
  std::vector<float> out;
  out.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    float f = 0.0f;
    if (!JsonToFloat((*it)[i], &f)) {
      return InvalidArgument("failed to load {}: '{}'[{}] must be a float32 value", what, key, i);
    }
    out.push_back(f);
  }
  return out;
}

Result<int64_t> ReadJsonInt(const nlohmann::json& j, std::string_view key, std::string_view what) {
  const auto it = j.find(std::string(key));
  if (it == j.end()) return InvalidArgument("failed to load {}: missing '{}'", what, key);
  if (!it->is_number_integer()) return InvalidArgument("failed to load {}: '{}' must be an integer", what, key);
  return it->get<int64_t>();
}

Result<std::vector<int64_t>> ReadJsonInts(const nlohmann::json& j, std::string_view key, std::string_view what) {
  const auto it = j.find(std::string(key));
  if (it == j.end()) return InvalidArgument("failed to load {}: missing '{}'", what, key);
  if (!it->is_array()) return InvalidArgument("failed to load {}: '{}' must be a list", what, key);
  std::vector<int64_t> out;
  out.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_number_integer()) {
      return InvalidArgument("failed to load {}: '{}'[{}] must be an integer", what, key, i);
    }
    out.push_back((*it)[i].get<int64_t>());
  }
  return out;
}

}  // namespace octet

// JSON helpers for observer state: float32 values that survive a round trip bit for bit (±Inf and NaN as the
// strings "inf", "-inf", "nan", which JSON numbers cannot hold) and typed reads with clear errors.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace octet {

// A finite float as a JSON number (the double holding it exactly, written with enough digits to read back the
// same double); a non-finite one as "inf", "-inf" or "nan".
nlohmann::json FloatToJson(float v);
nlohmann::json FloatsToJson(std::span<const float> v);

// Reads `key` of the object `j`; `what` names the state in messages ("failed to load <what>: ...").
Result<float> ReadJsonFloat(const nlohmann::json& j, std::string_view key, std::string_view what);
Result<std::vector<float>> ReadJsonFloats(const nlohmann::json& j, std::string_view key, std::string_view what);
Result<int64_t> ReadJsonInt(const nlohmann::json& j, std::string_view key, std::string_view what);
Result<std::vector<int64_t>> ReadJsonInts(const nlohmann::json& j, std::string_view key, std::string_view what);
// Converts one JSON value (a number or one of the three strings) to a float32; false if it is neither, or a number
// that is not exactly a float32 value (state written by FloatToJson always is).
bool JsonToFloat(const nlohmann::json& v, float* out);

}  // namespace octet

// JSON forms of qparams and attributes in the test vectors' manifest (see vectors_json.h).
#include "io/vectors/vectors_json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace octet::vectors {

using nlohmann::json;

json QParamsToJson(const QParams& qp) {
  return {{"scheme", QSchemeName(qp.scheme())},
          {"dtype", DTypeName(qp.dtype())},
          {"quant_min", qp.quant_min()},
          {"quant_max", qp.quant_max()},
          {"scales", qp.scales()},
          {"zero_points", qp.zero_points()},
          {"axis", qp.axis()}};
}

Result<QParams> QParamsFromJson(const json& j) {
  try {
    OCTET_ASSIGN_OR_RETURN(const QScheme scheme, ParseQScheme(j.at("scheme").get<std::string>()));
    OCTET_ASSIGN_OR_RETURN(const DType dtype, ParseDType(j.at("dtype").get<std::string>()));
    return QParams::Create(scheme, dtype, j.at("quant_min").get<int64_t>(), j.at("quant_max").get<int64_t>(),
                           j.at("scales").get<std::vector<float>>(), j.at("zero_points").get<std::vector<int32_t>>(),
                           j.at("axis").get<int>());
  } catch (const json::exception& e) {
    return InvalidArgument("malformed qparams {}: {}", j.dump(), e.what());
  }
}

namespace {
// Floats as JSON numbers (shortest round-trip form); non-finite ones as the strings "inf", "-inf", "nan".
json FloatToJson(float f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  return f;
}
Result<float> FloatFromJson(const json& j) {
  if (j.is_number()) return j.get<float>();
  if (j == "inf") return std::numeric_limits<float>::infinity();
  if (j == "-inf") return -std::numeric_limits<float>::infinity();
  if (j == "nan") return std::numeric_limits<float>::quiet_NaN();
  return InvalidArgument("expected a float, got {}", j.dump());
}
bool IsNonFiniteText(const json& j) { return j == "inf" || j == "-inf" || j == "nan"; }
}  // namespace

json AttributesToJson(const AttributeMap& attributes) {
  json out = json::object();
  for (const auto& [name, a] : attributes.items()) {
    switch (a.type()) {
      case AttrType::kInt: out[name] = a.i(); break;
      case AttrType::kFloat: out[name] = FloatToJson(a.f()); break;
      case AttrType::kString: out[name] = a.s(); break;
      case AttrType::kTensor:
        out[name] = {{"tensor", {{"dtype", DTypeName(a.t().dtype())}, {"shape", a.t().shape().dims()}}}};
        break;
      case AttrType::kInts: out[name] = a.ints(); break;
      case AttrType::kFloats: {
        json list = json::array();
        for (float f : a.floats()) list.push_back(FloatToJson(f));
        out[name] = std::move(list);
        break;
      }
      case AttrType::kStrings: out[name] = a.strings(); break;
    }
  }
  return out;
}

Result<AttributeMap> AttributesFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("attributes must be an object, got {}", j.dump());
  AttributeMap map;
  for (const auto& [name, value] : j.items()) {
    if (value.is_number_integer()) {
      map.Set(name, value.get<int64_t>());
    } else if (value.is_number_float() || IsNonFiniteText(value)) {
      OCTET_ASSIGN_OR_RETURN(const float f, FloatFromJson(value));
      map.Set(name, f);
    } else if (value.is_string()) {
      map.Set(name, value.get<std::string>());
    } else if (value.is_array() &&
               std::all_of(value.begin(), value.end(), [](const json& e) { return e.is_number_integer(); })) {
      map.Set(name, value.get<std::vector<int64_t>>());
    } else if (value.is_array() && std::all_of(value.begin(), value.end(),
                                               [](const json& e) { return e.is_number() || IsNonFiniteText(e); })) {
      std::vector<float> floats;
      for (const json& e : value) {
        OCTET_ASSIGN_OR_RETURN(const float f, FloatFromJson(e));
        floats.push_back(f);
      }
      map.Set(name, std::move(floats));
    } else if (value.is_array() &&
               std::all_of(value.begin(), value.end(), [](const json& e) { return e.is_string(); })) {
      map.Set(name, value.get<std::vector<std::string>>());
    } else if (!(value.is_object() && value.contains("tensor"))) {  // tensor attributes are described, not stored
      return InvalidArgument("attribute '{}' has an unsupported form {}", name, value.dump());
    }
  }
  return map;
}

}  // namespace octet::vectors

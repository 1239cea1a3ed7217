// JSON forms of qparams and attributes, shared by the writer and the reader of the test vectors' manifest.json
// (docs/test_vectors.md). Floats are JSON numbers in their shortest round-trip form; non-finite ones the strings
// "inf", "-inf" and "nan". Tensor attributes are described (dtype and shape), not stored.
#pragma once

#include <nlohmann/json.hpp>

#include "core/graph_attribute.h"
#include "core/qparams.h"
#include "core/status.h"

namespace octet::vectors {

nlohmann::json QParamsToJson(const QParams& qp);
Result<QParams> QParamsFromJson(const nlohmann::json& j);
nlohmann::json AttributesToJson(const AttributeMap& attributes);
Result<AttributeMap> AttributesFromJson(const nlohmann::json& j);

}  // namespace octet::vectors

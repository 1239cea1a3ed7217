// Checks that a numeric-suite report is JSON schema version 1 (../specs/ns_report_schema.md, docs/report_schema.md)
// before anything reads it, so that readers can index it without checking each access.
#pragma once

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace octet {

// The report schema version this code reads and writes.
inline constexpr int kReportSchemaVersion = 1;

// OK when `report` is a schema-version-1 report: "schema_version" == 1 and arrays "weights", "activations" and
// "shadow" are required; "generator", "float_model", "quantized_model", "inputs", "outputs" and "sensitivity" are
// optional. Each entry needs a string "name" and (comparisons) "sqnr_db", a number or null (null = exact, +inf);
// every other documented key, when present, must have its documented type (metrics may be null: JSON has no NaN),
// histograms need finite "min" <= "max" and equally long, non-empty "float"/"quantized" arrays of finite counts >= 0,
// channel ranges finite "min", "max" and "scale" (a writer may put inf or NaN in a C++ json value). Unknown keys
// are allowed (newer writers may add some). Otherwise InvalidArgument naming the key by its path, e.g.
// "invalid report: 'weights[1].histogram.float' must be an array, got string \"x\"".
Status ValidateReportJson(const nlohmann::json& report);

}  // namespace octet

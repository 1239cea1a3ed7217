// Calibration state as a file (issue 19): every observer of a prepared graph saved as one JSON document, so that
// calibration can run in shards (processes, machines, MPI ranks), be merged exactly, and be converted later without
// the data. The document is versioned and carries the model's fingerprint, so a state cannot be applied to another
// model.
//
// Layout (keys sorted, so equal states are equal bytes):
//   {"format": "octet calibration state", "format_version": 1, "model_fingerprint": "fnv1a64:...",
//    "config": {...how the observers were configured (the command's flags)...}, "num_samples": N,
//    "shards": {"count": C, "covered": [i, ...]}   (only while some shards of C are missing),
//    "observers": [{"values": [...], "role": "activation" | "weight", "owner": NODE, "observer": SaveState()}]}
//
// Merging adds the activation observers' states (Observer::Merge) and keeps the weight observers, which every
// shard computes alike from the model (they must be equal). Exact, and independent of shard count and order, for
// MinMax, per-channel MinMax, Percentile, Entropy, MSE and Pow2Histogram; moving averages and HistogramObserver are
// refused (ShardingRefusal says why): their results depend on the order of the batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "observers/observer_options.h"
#include "quant/prepare.h"

namespace octet {

inline constexpr int kCalibrationStateVersion = 1;

struct CalibrationStateInfo {
  std::string model_fingerprint;  // ModelFingerprint of the model file
  nlohmann::json config = nlohmann::json::object();
  int64_t num_samples = 0;
  // Shards of the data: this state covers `covered` of `shard_count` (every shard when covered is empty).
  int64_t shard_count = 1;
  std::vector<int64_t> covered;
};

// "fnv1a64:<16 hex digits>:<size>" of the model file's bytes.
std::string ModelFingerprint(std::span<const std::byte> model_bytes);

// Why observers of `kind` cannot be calibrated in shards and merged exactly, with the fix; std::nullopt when they
// can.
std::optional<std::string> ShardingRefusal(ObserverKind kind);
// The first activation observer of `prepared` that ShardingRefusal refuses, as an error naming its value.
Status CheckShardable(const PreparedGraph& prepared);

nlohmann::json SaveCalibrationState(const PreparedGraph& prepared, const CalibrationStateInfo& info);
// The header of a state document (format, version, fingerprint, config, samples, shards), validated; `what` names
// the file in messages.
Result<CalibrationStateInfo> ReadCalibrationStateInfo(const nlohmann::json& state, std::string_view what);
// Loads a complete state into `prepared`'s observers. Refuses a state of another model (its fingerprint differs
// from `fingerprint`), a partial one (missing shards), one whose observers do not match the prepared graph's
// (values, kinds, options: other quantization flags), naming the file and the fix.
Status LoadCalibrationState(PreparedGraph& prepared, const nlohmann::json& state, std::string_view fingerprint,
                            std::string_view what);
// Merges states of one model and configuration covering disjoint shards (`names` names them in messages). The
// result is a pure function of the set of states: any grouping and order give the same document.
Result<nlohmann::json> MergeCalibrationStates(std::span<const nlohmann::json> states,
                                              std::span<const std::string> names);

// The file's bytes: compact JSON (sorted keys) and a final newline; equal states give equal bytes.
std::string SerializeCalibrationState(const nlohmann::json& state);
// Parses a state file's bytes (`what` names it).
Result<nlohmann::json> ParseCalibrationState(std::string_view bytes, std::string_view what);

}  // namespace octet

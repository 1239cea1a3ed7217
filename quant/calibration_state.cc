// Calibration state documents: save, load, merge (see calibration_state.h).
#include "quant/calibration_state.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "observers/observer_factory.h"

namespace octet {
namespace {

constexpr const char* kFormat = "octet calibration state";

const char* RoleName(ObservedRole role) { return role == ObservedRole::kWeight ? "weight" : "activation"; }

std::vector<std::string> ValueNames(const PreparedGraph& prepared, const ObserverSlot& slot) {
  std::vector<std::string> names;
  for (ValueId v : slot.values) names.push_back(prepared.graph().value(v).name);
  return names;
}

// The "observers" list of a state document, checked to be a list of objects with the keys this file writes.
Result<const nlohmann::json*> ObserverList(const nlohmann::json& state, std::string_view what) {
  const auto it = state.find("observers");
  if (it == state.end() || !it->is_array()) {
    return InvalidArgument("failed to read calibration state '{}': missing the \"observers\" list", what);
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& o = (*it)[i];
    if (!o.is_object() || !o.contains("values") || !o["values"].is_array() || !o.contains("role") ||
        !o["role"].is_string() || !o.contains("owner") || !o["owner"].is_string() || !o.contains("observer") ||
        !o["observer"].is_object()) {
      return InvalidArgument(
          "failed to read calibration state '{}': observers[{}] must have \"values\", \"role\", \"owner\" and "
          "\"observer\"",
          what, i);
    }
  }
  return &*it;
}

std::string SlotLabel(const nlohmann::json& slot) {
  return slot["values"].empty() ? std::string("?") : slot["values"][0].dump();
}

}  // namespace

std::string ModelFingerprint(std::span<const std::byte> model_bytes) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64: offset basis and prime
  for (std::byte b : model_bytes) {
    h ^= static_cast<uint64_t>(b);
    h *= 0x100000001b3ull;
  }
  return fmt::format("fnv1a64:{:016x}:{}", h, model_bytes.size());
}

std::optional<std::string> ShardingRefusal(ObserverKind kind) {
  switch (kind) {
    case ObserverKind::kMovingAverageMinMax:
    case ObserverKind::kMovingAveragePerChannelMinMax:
      return fmt::format(
          "{} keeps a moving average, which weighs each batch by its position in the sequence, so shards cannot "
          "be merged into the result of one pass; calibrate in one process (no --shard / --mpi) or use the minmax "
          "observer",
          ObserverClassName(kind));
    case ObserverKind::kHistogram:
      return fmt::format(
          "{} rebins its histogram onto every new range (PyTorch's algorithm), so its result depends on the order "
          "of the batches and shards cannot be merged exactly; calibrate in one process (no --shard / --mpi) or use "
          "--activation-observer pow2_histogram, the same L2 search on an exactly mergeable grid",
          ObserverClassName(kind));
    default: return std::nullopt;
  }
}

Status CheckShardable(const PreparedGraph& prepared) {
  for (const ObserverSlot& slot : prepared.slots()) {
    if (slot.role != ObservedRole::kActivation) continue;
    if (auto why = ShardingRefusal(slot.observer->kind())) {
      return InvalidArgument("cannot calibrate value '{}' in shards: {}",
                             prepared.graph().value(slot.values.front()).name, *why);
    }
  }
  return OkStatus();
}

nlohmann::json SaveCalibrationState(const PreparedGraph& prepared, const CalibrationStateInfo& info) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["format_version"] = kCalibrationStateVersion;
  j["model_fingerprint"] = info.model_fingerprint;
  j["config"] = info.config;
  j["num_samples"] = info.num_samples;
  if (!info.covered.empty() && static_cast<int64_t>(info.covered.size()) < info.shard_count) {
    j["shards"] = {{"count", info.shard_count}, {"covered", info.covered}};
  }
  nlohmann::json observers = nlohmann::json::array();
  for (const ObserverSlot& slot : prepared.slots()) {
    nlohmann::json o;
    o["values"] = ValueNames(prepared, slot);
    o["role"] = RoleName(slot.role);
    o["owner"] = slot.owner;
    o["observer"] = slot.observer->SaveState();
    observers.push_back(std::move(o));
  }
  j["observers"] = std::move(observers);
  return j;
}

Result<CalibrationStateInfo> ReadCalibrationStateInfo(const nlohmann::json& state, std::string_view what) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument("failed to read calibration state '{}': {}", what, why);
  };
  if (!state.is_object() || !state.contains("format") || state["format"] != kFormat) {
    return bad("not a calibration state (written by `octet calibrate` or `octet merge`)");
  }
  if (!state.contains("format_version") || !state["format_version"].is_number_integer() ||
      state["format_version"].get<int64_t>() != kCalibrationStateVersion) {
    return bad(fmt::format("format_version must be {} (this octet's); calibrate again with this octet",
                           kCalibrationStateVersion));
  }
  CalibrationStateInfo info;
  if (!state.contains("model_fingerprint") || !state["model_fingerprint"].is_string()) {
    return bad("missing \"model_fingerprint\"");
  }
  info.model_fingerprint = state["model_fingerprint"].get<std::string>();
  if (!state.contains("config") || !state["config"].is_object()) return bad("missing \"config\"");
  info.config = state["config"];
  if (!state.contains("num_samples") || !state["num_samples"].is_number_integer() ||
      state["num_samples"].get<int64_t>() < 0) {
    return bad("\"num_samples\" must be an integer >= 0");
  }
  info.num_samples = state["num_samples"].get<int64_t>();
  if (state.contains("shards")) {
    const nlohmann::json& s = state["shards"];
    if (!s.is_object() || !s.contains("count") || !s["count"].is_number_integer() || !s.contains("covered") ||
        !s["covered"].is_array()) {
      return bad("\"shards\" must be {\"count\": N, \"covered\": [...]}");
    }
    info.shard_count = s["count"].get<int64_t>();
    std::set<int64_t> seen;
    for (const nlohmann::json& i : s["covered"]) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= info.shard_count ||
          !seen.insert(i.get<int64_t>()).second) {
        return bad(fmt::format("\"shards\" lists an invalid or repeated shard of {}", info.shard_count));
      }
    }
    info.covered.assign(seen.begin(), seen.end());
    if (info.covered.empty() || static_cast<int64_t>(info.covered.size()) >= info.shard_count) {
      return bad("\"shards\" must list some but not all shards");
    }
  }
  OCTET_RETURN_IF_ERROR(ObserverList(state, what).status());
  return info;
}

Status LoadCalibrationState(PreparedGraph& prepared, const nlohmann::json& state, std::string_view fingerprint,
                            std::string_view what) {
  OCTET_ASSIGN_OR_RETURN(const CalibrationStateInfo info, ReadCalibrationStateInfo(state, what));
  if (info.model_fingerprint != fingerprint) {
    return InvalidArgument(
        "calibration state '{}' was made from another model (fingerprint {}, this model's is {}); calibrate this "
        "model (octet calibrate) to make its state",
        what, info.model_fingerprint, fingerprint);
  }
  if (!info.covered.empty()) {
    return InvalidArgument(
        "calibration state '{}' covers shards {} of {} only; merge the states of all {} shards first (octet merge)",
        what, fmt::join(info.covered, ", "), info.shard_count, info.shard_count);
  }
  const nlohmann::json& list = state["observers"];
  std::vector<ObserverSlot>& slots = prepared.mutable_slots();
  const std::string flags = fmt::format("the state was calibrated with {}; give the same quantization flags",
                                        info.config.dump());
  if (list.size() != slots.size()) {
    return InvalidArgument("calibration state '{}' has {} observers, this model prepared with these flags has {}: {}",
                           what, list.size(), slots.size(), flags);
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    const nlohmann::json& saved = list[i];
    const std::vector<std::string> names = ValueNames(prepared, slots[i]);
    if (saved["values"] != nlohmann::json(names) || saved["role"] != RoleName(slots[i].role)) {
      return InvalidArgument("calibration state '{}': observer {} watches {} ({}), this model's watches {} ({}): {}",
                             what, i, saved["values"].dump(), saved["role"].get<std::string>(),
                             nlohmann::json(names).dump(), RoleName(slots[i].role), flags);
    }
    if (Status s = slots[i].observer->LoadState(saved["observer"]); !s.ok()) {
      return InvalidArgument("calibration state '{}', value '{}': {}; {}", what, names.front(), s.message(), flags);
    }
  }
  return OkStatus();
}

Result<nlohmann::json> MergeCalibrationStates(std::span<const nlohmann::json> states,
                                              std::span<const std::string> names) {
  if (states.empty()) return InvalidArgument("nothing to merge: give at least one calibration state");
  std::vector<CalibrationStateInfo> infos;
  for (size_t k = 0; k < states.size(); ++k) {
    OCTET_ASSIGN_OR_RETURN(CalibrationStateInfo info, ReadCalibrationStateInfo(states[k], names[k]));
    infos.push_back(std::move(info));
  }
  const CalibrationStateInfo& first = infos[0];
  CalibrationStateInfo merged = first;
  std::set<int64_t> covered;
  int64_t samples = 0;
  for (size_t k = 0; k < states.size(); ++k) {
    const CalibrationStateInfo& info = infos[k];
    if (info.model_fingerprint != first.model_fingerprint) {
      return InvalidArgument("cannot merge '{}' with '{}': they were calibrated from different models ({} vs {})",
                             names[k], names[0], info.model_fingerprint, first.model_fingerprint);
    }
    if (info.config != first.config) {
      return InvalidArgument("cannot merge '{}' with '{}': they were calibrated with different flags ({} vs {})",
                             names[k], names[0], info.config.dump(), first.config.dump());
    }
    // A complete state is all the data: merging it with anything would count samples twice.
    if (info.covered.empty() && states.size() > 1) {
      return InvalidArgument(
          "cannot merge '{}': it already covers all the data (made without --shard), so merging would count "
          "samples twice; merge the states of the shards (octet calibrate --shard I/N)",
          names[k]);
    }
    if (info.shard_count != first.shard_count) {
      return InvalidArgument("cannot merge '{}' (one of {} shards) with '{}' (one of {}): use one --shard count",
                             names[k], info.shard_count, names[0], first.shard_count);
    }
    for (int64_t s : info.covered) {
      if (!covered.insert(s).second) {
        return InvalidArgument("cannot merge '{}': shard {}/{} is also in another state; each shard once",
                               names[k], s, info.shard_count);
      }
    }
    samples += info.num_samples;
  }
  merged.num_samples = samples;
  merged.covered.assign(covered.begin(), covered.end());

  const nlohmann::json& list0 = states[0]["observers"];
  nlohmann::json observers = nlohmann::json::array();
  for (size_t i = 0; i < list0.size(); ++i) {
    nlohmann::json slot = list0[i];
    const bool weight = slot["role"] == "weight";
    std::unique_ptr<Observer> acc;
    for (size_t k = 0; k < states.size(); ++k) {
      const nlohmann::json& list = states[k]["observers"];
      if (list.size() != list0.size()) {
        return InvalidArgument("cannot merge '{}' ({} observers) with '{}' ({})", names[k], list.size(), names[0],
                               list0.size());
      }
      const nlohmann::json& o = list[i];
      if (o["values"] != slot["values"] || o["role"] != slot["role"] || o["owner"] != slot["owner"]) {
        return InvalidArgument("cannot merge '{}' with '{}': observer {} watches {} in one and {} in the other",
                               names[k], names[0], i, o["values"].dump(), slot["values"].dump());
      }
      if (weight) {
        // Every shard observed the same weights from the same model.
        if (o["observer"] != slot["observer"]) {
          return InvalidArgument("cannot merge '{}' with '{}': the weight observer of {} differs", names[k],
                                 names[0], SlotLabel(slot));
        }
        continue;
      }
      auto observer = ObserverFromState(o["observer"]);
      if (!observer.ok()) {
        return observer.status().WithContext(fmt::format("merging '{}', value {}", names[k], SlotLabel(o)));
      }
      if (auto why = ShardingRefusal((*observer)->kind())) {
        return InvalidArgument("cannot merge the states of value {}: {}", SlotLabel(o), *why);
      }
      if (acc == nullptr) {
        acc = std::move(*observer);
      } else if (Status s = acc->Merge(**observer); !s.ok()) {
        return s.WithContext(fmt::format("merging '{}', value {}", names[k], SlotLabel(o)));
      }
    }
    if (!weight) slot["observer"] = acc->SaveState();
    observers.push_back(std::move(slot));
  }
  nlohmann::json out;
  out["format"] = kFormat;
  out["format_version"] = kCalibrationStateVersion;
  out["model_fingerprint"] = merged.model_fingerprint;
  out["config"] = merged.config;
  out["num_samples"] = merged.num_samples;
  if (!merged.covered.empty() && static_cast<int64_t>(merged.covered.size()) < merged.shard_count) {
    out["shards"] = {{"count", merged.shard_count}, {"covered", merged.covered}};
  }
  out["observers"] = std::move(observers);
  return out;
}

std::string SerializeCalibrationState(const nlohmann::json& state) { return state.dump() + "\n"; }

Result<nlohmann::json> ParseCalibrationState(std::string_view bytes, std::string_view what) {
  nlohmann::json j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return InvalidArgument("failed to read calibration state '{}': not valid JSON", what);
  }
  return j;
}

}  // namespace octet

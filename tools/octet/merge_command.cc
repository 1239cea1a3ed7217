// `octet merge`: read, merge, write atomically.
#include "tools/octet/merge_command.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/file_util.h"
#include "quant/calibration_state.h"

namespace octet::cli {
namespace {

struct MergeCommand {
  std::vector<std::string> inputs;
  std::string output;
};

int RunMerge(const MergeCommand& c) {
  std::vector<nlohmann::json> states;
  for (const std::string& path : c.inputs) {
    auto bytes = ReadFile(path);
    if (!bytes.ok()) return ReportFailure(bytes.status());
    auto state = ParseCalibrationState(*bytes, path);
    if (!state.ok()) return ReportFailure(state.status());
    states.push_back(std::move(*state));
  }
  auto merged = MergeCalibrationStates(states, c.inputs);
  if (!merged.ok()) return ReportFailure(merged.status());
  if (Status s = WriteFileAtomically(c.output, SerializeCalibrationState(*merged)); !s.ok()) return ReportFailure(s);
  const auto info = ReadCalibrationStateInfo(*merged, c.output);
  const std::string coverage =
      info.ok() && !info->covered.empty()
          ? fmt::format(" (shards {} of {}; merge the rest before quantizing)", info->covered.size(), info->shard_count)
          : "";
  fmt::print("{}: {} states merged, {} samples{}\n", c.output, c.inputs.size(),
             info.ok() ? info->num_samples : 0, coverage);
  return kExitOk;
}

}  // namespace

void AddMergeCommand(CLI::App& app, CommandRegistry& registry) {
  auto c = std::make_shared<MergeCommand>();
  CLI::App* sub = app.add_subcommand("merge", "Merge calibration states of shards (octet calibrate --shard)");
  sub->add_option("states", c->inputs, "Calibration states (.json) of disjoint shards")->required();
  sub->add_option("-o,--output", c->output, "The merged calibration state (.json)")->required();
  registry.Add(sub, [c] { return RunMerge(*c); });
}

}  // namespace octet::cli

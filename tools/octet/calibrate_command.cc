// `octet calibrate`: prepare, stream the share of the data through the observers, write the state atomically.
#include "tools/octet/calibrate_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/file_util.h"
#include "quant/calibrate.h"
#include "quant/calibration_state.h"
#include "quant/target_spec.h"
#include "quant/qconfig_mapping.h"
#include "tools/octet/calib_source.h"
#include "tools/octet/context_options.h"
#include "tools/octet/model_command.h"
#include "tools/octet/mpi_gather.h"
#include "tools/octet/quantize_command.h"

namespace octet::cli {
namespace {

struct CalibrateCommand {
  std::string model;
  std::vector<std::string> calib;
  int64_t calib_batch = 32;
  std::string shard;  // "I/N"
  bool mpi = false;
  StaticMappingFlags mapping;
  std::string target;  // --target NAME|FILE.json: the observers of quantize --target
  std::vector<std::string> skip;
  std::string output;
  ContextFlags context;
};

struct ShardSpec {
  int64_t index = 0;
  int64_t count = 1;
};

Result<ShardSpec> ParseShard(const std::string& text) {
  const auto bad = [&] {
    return InvalidArgument("--shard must be I/N with integers 0 <= I < N (shard I of N, counted from 0), got '{}'",
                           text);
  };
  const size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) return bad();
  ShardSpec s;
  try {
    size_t used = 0;
    s.index = std::stoll(text.substr(0, slash), &used);
    if (used != slash) return bad();
    s.count = std::stoll(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) return bad();
  } catch (const std::exception&) {
    return bad();
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) return bad();
  return s;
}

// The flags that decide the observers, recorded in the state: merge requires them equal, and quantize --state
// shows them when its own flags build other observers.
nlohmann::json ConfigJson(const CalibrateCommand& c) {
  nlohmann::json config = {{"backend", c.mapping.backend},
                           {"activation_observer", c.mapping.activation_observer},
                           {"weight_observer", c.mapping.weight_observer},
                           {"per_channel", c.mapping.per_channel},
                           {"per_tensor", c.mapping.per_tensor},
                           {"activation_bits", c.mapping.activation_bits},
                           {"skip", c.skip},
                           {"calib_batch", c.calib_batch}};
  // Only when set, so that states stay mergeable with those written before --weight-bits and --target.
  if (c.mapping.weight_bits != 8) config["weight_bits"] = c.mapping.weight_bits;
  if (!c.target.empty()) config["target"] = c.target;
  return config;
}

// The observers' mapping: the target's (as quantize --target builds it) or the observer flags'.
Result<QConfigMapping> CalibrateMapping(const CalibrateCommand& c) {
  if (c.target.empty()) return StaticMappingFromFlags(c.mapping);
  Result<TargetSpec> target = LoadTargetSpec(c.target);
  if (!target.ok()) return InvalidArgument("--target: {}", target.status().message());
  return target->Mapping();
}

// "calibrating: batch b/B, N samples/s" on stderr where CommandProgress would draw (a terminal, no --quiet).
ProgressFn RateProgress(int64_t batch_size) {
  if (!CommandProgress("calibrating")) return {};
  const auto start = std::chrono::steady_clock::now();
  return [start, batch_size](int64_t done, int64_t total) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr, "\rcalibrating: batch {}/{}, {:.0f} samples/s", done, total,
               s > 0 ? static_cast<double>(done * batch_size) / s : 0.0);
    if (done == total) fmt::print(stderr, "\n");
  };
}

// Calibrates shard `shard` of the data and returns the state document's bytes.
Result<std::string> CalibrateShard(const CalibrateCommand& c, const ShardSpec& shard, const Context& context,
                                   bool report) {
  OCTET_ASSIGN_OR_RETURN(QConfigMapping mapping, CalibrateMapping(c));
  OCTET_ASSIGN_OR_RETURN(const std::string model_bytes, ReadFile(c.model));
  OCTET_ASSIGN_OR_RETURN(Graph graph, LoadModel(c.model));
  for (const std::string& scope : c.skip) {
    const std::vector<std::string> nodes = NodesInScope(graph, scope);
    if (nodes.empty()) {
      return InvalidArgument("--skip {}: '{}' has no node named '{}' or under it; `octet inspect {}` lists the names",
                             scope, c.model, scope, c.model);
    }
    for (const std::string& node : nodes) mapping.SetModuleName(node, std::nullopt);
  }
  ReturnLargeBuffersToKernel();
  OCTET_ASSIGN_OR_RETURN(CalibSource source, CalibSource::Open(c.calib, graph, c.model, c.calib_batch, "--calib"));
  if (source.num_samples() == 0) return InvalidArgument("--calib: the calibration files hold no samples");
  PrepareOptions prepare_options;
  prepare_options.context = &context;
  OCTET_ASSIGN_OR_RETURN(PreparedGraph prepared, Prepare(std::move(graph), mapping, prepare_options));
  if (shard.count > 1) OCTET_RETURN_IF_ERROR(CheckShardable(prepared));
  // Shard I gets the contiguous run of batches [I * B / N, (I + 1) * B / N): whole batches, so every observer sees
  // the batches one process would.
  const int64_t batches = source.num_batches();
  const int64_t first = shard.index * batches / shard.count;
  const int64_t end = (shard.index + 1) * batches / shard.count;
  int64_t samples = 0;
  for (int64_t b = first; b < end; ++b) samples += std::min(c.calib_batch, source.num_samples() - b * c.calib_batch);
  CalibrateOptions options;
  if (report) options.progress = RateProgress(c.calib_batch);
  const auto start = std::chrono::steady_clock::now();
  OCTET_RETURN_IF_ERROR(Calibrate(
      prepared, context, end - first, [&](int64_t b) { return source.Batch(first + b); }, options));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (report) {
    fmt::print("calibrated {} samples in {} batches ({:.0f} samples/s){}\n", samples, end - first,
               seconds > 0 ? static_cast<double>(samples) / seconds : 0.0,
               shard.count > 1 ? fmt::format(", shard {}/{}", shard.index, shard.count) : "");
  }
  CalibrationStateInfo info;
  info.model_fingerprint = ModelFingerprint(std::as_bytes(std::span<const char>(model_bytes)));
  info.config = ConfigJson(c);
  info.num_samples = samples;
  info.shard_count = shard.count;
  if (shard.count > 1) info.covered = {shard.index};
  return SerializeCalibrationState(SaveCalibrationState(prepared, info));
}

// --mpi: rank r calibrates shard r of the ranks; rank 0 merges and writes.
int CalibrateMpi(const CalibrateCommand& c, const Context& context) {
  auto world = MpiStart();
  if (!world.ok()) return ReportFailure(world.status());
  const ShardSpec shard{world->rank, world->size};
  auto bytes = CalibrateShard(c, shard, context, world->rank == 0);
  RankOutcome mine{bytes.ok(), bytes.ok() ? *bytes : bytes.status().message()};
  auto gathered = MpiGatherToRoot(mine);
  int rc = kExitOk;
  if (!gathered.ok()) {
    rc = ReportFailure(gathered.status());
  } else if (world->rank == 0) {
    std::vector<nlohmann::json> states;
    std::vector<std::string> names;
    for (size_t r = 0; r < gathered->size(); ++r) {
      const RankOutcome& o = (*gathered)[r];
      if (!o.ok) {
        rc = ReportFailure(fmt::format("--mpi rank {}: {}", r, o.bytes));
        break;
      }
      names.push_back(fmt::format("rank {}", r));
      auto parsed = ParseCalibrationState(o.bytes, names.back());
      if (!parsed.ok()) {
        rc = ReportFailure(parsed.status());
        break;
      }
      states.push_back(std::move(*parsed));
    }
    if (rc == kExitOk) {
      auto merged = states.size() == 1 ? Result<nlohmann::json>(states[0]) : MergeCalibrationStates(states, names);
      if (!merged.ok()) {
        rc = ReportFailure(merged.status());
      } else if (Status s = WriteFileAtomically(c.output, SerializeCalibrationState(*merged)); !s.ok()) {
        rc = ReportFailure(s);
      } else {
        fmt::print("{}: calibration state of {} ranks\n", c.output, world->size);
      }
    }
  }
  MpiStop();
  return rc;
}

int RunCalibrate(const CalibrateCommand& c) {
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  ShardSpec shard;
  if (!c.shard.empty()) {
    if (c.mpi) return ReportUsage("--shard and --mpi exclude each other: under --mpi each rank is one shard");
    auto parsed = ParseShard(c.shard);
    if (!parsed.ok()) return ReportUsage(parsed.status().message());
    shard = *parsed;
  }
  if (auto m = CalibrateMapping(c); !m.ok()) return ReportUsage(m.status().message());
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  if (c.mpi) return CalibrateMpi(c, *context);
  auto bytes = CalibrateShard(c, shard, *context, true);
  if (!bytes.ok()) return ReportFailure(bytes.status().WithContext(fmt::format("failed to calibrate '{}'", c.model)));
  if (Status s = WriteFileAtomically(c.output, *bytes); !s.ok()) return ReportFailure(s);
  fmt::print("{}: calibration state{}\n", c.output,
             shard.count > 1 ? fmt::format(" of shard {}/{}", shard.index, shard.count) : "");
  return kExitOk;
}

}  // namespace

Status LoadCalibrationStateFile(PreparedGraph& prepared, const std::string& state_path, const std::string& model) {
  OCTET_ASSIGN_OR_RETURN(const std::string model_bytes, ReadFile(model));
  OCTET_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(state_path));
  OCTET_ASSIGN_OR_RETURN(const nlohmann::json state, ParseCalibrationState(bytes, state_path));
  return LoadCalibrationState(prepared, state, ModelFingerprint(std::as_bytes(std::span<const char>(model_bytes))),
                              state_path);
}

void AddCalibrateCommand(CLI::App& app, CommandRegistry& registry) {
  auto c = std::make_shared<CalibrateCommand>();
  CLI::App* sub =
      app.add_subcommand("calibrate", "Calibrate a float ONNX model (or a shard of its data) to a state file");
  sub->add_option("model", c->model, "The float model (.onnx)")->required();
  sub->add_option("--calib", c->calib, "Calibration samples for an input: .npy files (samples along axis 0) or folders")
      ->type_name("NAME=PATH[,PATH...]")
      ->required();
  sub->add_option("--calib-batch", c->calib_batch, "Calibration batch size")->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  sub->add_option("--shard", c->shard, "Calibrate shard I of N (contiguous runs of batches, counted from 0)")
      ->type_name("I/N");
  sub->add_flag("--mpi", c->mpi, "Under mpirun: each rank is one shard; rank 0 merges and writes the state");
  sub->add_option("--backend", c->mapping.backend, "QConfig preset: x86, fbgemm, qnnpack, onednn or symmetric")
      ->capture_default_str();
  sub->add_option("--activation-observer", c->mapping.activation_observer,
                  "Activation observer, e.g. minmax, percentile, entropy, mse, pow2_histogram");
  sub->add_option("--weight-observer", c->mapping.weight_observer, "Weight observer, e.g. per_channel_minmax");
  auto* per_channel = sub->add_flag("--per-channel", c->mapping.per_channel, "Per-channel symmetric weights");
  sub->add_flag("--per-tensor", c->mapping.per_tensor, "Per-tensor symmetric weights")->excludes(per_channel);
  sub->add_option("--activation-bits", c->mapping.activation_bits, "Activation bits (2..8)")->capture_default_str();
  auto* weight_bits = sub->add_option("--weight-bits", c->mapping.weight_bits,
                                      "Weight bits (2..8), as octet quantize --weight-bits: give quantize --state the "
                                      "same value")
                          ->capture_default_str();
  auto* target = sub->add_option("--target", c->target,
                                  "Calibrate the observers of a hardware target (octet quantize --target): a built-in "
                                  "name or a target spec file; give quantize --state the same --target")
                     ->type_name("NAME|FILE.json");
  for (CLI::Option* other : {sub->get_option("--backend"), sub->get_option("--activation-observer"),
                             sub->get_option("--weight-observer"), static_cast<CLI::Option*>(per_channel),
                             sub->get_option("--per-tensor"), sub->get_option("--activation-bits"), weight_bits}) {
    target->excludes(other);
  }
  sub->add_option("--skip", c->skip, "Keep this node (or every node under this name) float")->type_name("NODE");
  sub->add_option("-o,--output", c->output, "The calibration state (.json)")->required();
  c->context.AddTo(sub, 1);
  registry.Add(sub, [c] { return RunCalibrate(*c); });
}

}  // namespace octet::cli

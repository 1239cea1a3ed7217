// `octet sensitivity`: the flags, the evaluation data, the ranking table and the JSON report.
#include "tools/octet/sensitivity_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/version.h"
#include "io/file_util.h"
#include "numeric_suite/sensitivity.h"
#include "quant/numerics_profile.h"
#include "quant/qconfig_mapping.h"
#include "tools/octet/batch_files.h"
#include "tools/octet/context_options.h"
#include "tools/octet/model_command.h"
#include "tools/octet/mpi_gather.h"

namespace octet::cli {
namespace {

struct SensitivityCommand {
  std::string model;
  std::vector<std::string> calib;  // NAME=FILE.npy
  std::vector<std::string> input;  // NAME=FILE.npy
  int64_t calib_batch = 32;
  int64_t input_batch = 64;
  std::string labels;
  std::optional<double> target_sqnr;
  std::optional<double> target_accuracy;
  std::string backend = "x86";
  std::string profile = "reference";
  std::vector<std::string> nodes;
  int latency_runs = 5;
  std::string json;
  bool mpi = false;
  ContextFlags context;
};

// A metric value for the table: SQNR in dB with two decimals ("inf" for exact), accuracy with four.
std::string Value(const SensitivityReport& r, double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return r.metric == "accuracy" ? fmt::format("{:.4f}", v) : fmt::format("{:.2f}", v);
}

std::string Unit(const SensitivityReport& r) { return r.metric == "accuracy" ? "" : " dB"; }

std::string Latency(double us) { return std::isnan(us) ? "-" : fmt::format("{:.1f}", us); }

void PrintReport(const SensitivityCommand& c, const SensitivityReport& r, int64_t samples) {
  const std::string metric = r.metric == "accuracy" ? "top-1 accuracy" : "output SQNR (dB)";
  fmt::print("{}: {} backend, {} profile; metric {} over {} evaluation samples\n", c.model, c.backend, c.profile,
             metric, samples);
  fmt::print("float: {}{}, all int8: {}{} ({} configurations evaluated)\n", Value(r, r.float_value), Unit(r),
             Value(r, r.all_quantized), Unit(r), r.evaluations);
  auto op = [](const NodeSensitivity& n) { return fmt::format("{} -> {}", n.op_type, n.int8_op_type); };
  size_t width = 4, op_width = 2;
  for (const NodeSensitivity& n : r.nodes) {
    width = std::max(width, n.name.size());
    op_width = std::max(op_width, op(n).size());
  }
  fmt::print("{:>4}  {:<{}}  {:<{}}  {:>10}  {:>12}  {:>9}  {:>9}\n", "rank", "node", width, "op", op_width,
             "only this", "all but this", "int8 us", "float us");
  for (const NodeSensitivity& n : r.nodes) {
    fmt::print("{:>4}  {:<{}}  {:<{}}  {:>10}  {:>12}  {:>9}  {:>9}\n", n.rank, n.name, width, op(n), op_width,
               Value(r, n.only_this_quantized), Value(r, n.all_but_this_quantized), Latency(n.int8_latency_us),
               Latency(n.float_latency_us));
  }
  if (!r.target) return;
  const std::string target = Value(r, *r.target) + Unit(r);
  if (!r.target_reached) {
    fmt::print("target {} cannot be reached: with every analysed node float the {} is {}{}\n", target, r.metric,
               Value(r, *r.achieved), Unit(r));
  } else if (r.keep_float.empty()) {
    fmt::print("target {} reached with every node int8 ({}{}): keep nothing float\n", target,
               Value(r, *r.achieved), Unit(r));
  } else {
    fmt::print("keep float ({} node{}): {} -> {}{}, target {} reached\n", r.keep_float.size(),
               r.keep_float.size() == 1 ? "" : "s", fmt::join(r.keep_float, ", "), Value(r, *r.achieved), Unit(r),
               target);
  }
}

int64_t Samples(const std::vector<std::vector<Tensor>>& batches) {
  int64_t n = 0;
  for (const std::vector<Tensor>& b : batches) n += b.empty() || b[0].shape().rank() == 0 ? 0 : b[0].shape().dim(0);
  return n;
}

int RunSensitivity(const SensitivityCommand& c) {
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  if (c.target_accuracy && c.labels.empty()) return ReportUsage("--target-accuracy needs --labels");
  if (c.target_sqnr && !c.labels.empty()) {
    return ReportUsage("--target-sqnr applies to the SQNR metric; with --labels the metric is accuracy "
                       "(--target-accuracy)");
  }
  if (c.target_accuracy && !(*c.target_accuracy >= 0.0 && *c.target_accuracy <= 1.0)) {
    return ReportUsage(fmt::format("--target-accuracy is a fraction in [0, 1], got {}", *c.target_accuracy));
  }
  if (c.target_sqnr && std::isnan(*c.target_sqnr)) return ReportUsage("--target-sqnr is NaN");
  auto profile = ParseNumericsProfile(c.profile);
  if (!profile.ok()) return ReportUsage(profile.status().message());
  auto mapping = GetDefaultQConfigMapping(c.backend);
  if (!mapping.ok()) return ReportUsage(mapping.status().message());

  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Result<LoadedModel> model = LoadModelFile(c.model);
  if (!model.ok()) return ReportFailure(model.status());
  if (model->is_octet) {
    return ReportFailure(fmt::format("'{}' is a quantized .octet model; sensitivity analysis quantizes a float model "
                                     "(.onnx) itself",
                                     c.model));
  }
  const Graph* graph = &model->graph;
  const std::string where = fmt::format("failed to analyse '{}'", c.model);
  auto calibration = BatchesFromFiles(c.calib, *graph, c.model, c.calib_batch,
                                      {"--calib", "sensitivity analysis needs calibration data"});
  if (!calibration.ok()) return ReportFailure(calibration.status().WithContext(where));
  auto evaluation = BatchesFromFiles(c.input, *graph, c.model, c.input_batch,
                                     {"--input", "sensitivity analysis needs evaluation data"});
  if (!evaluation.ok()) return ReportFailure(evaluation.status().WithContext(where));

  SensitivityOptions options;
  if (!c.labels.empty()) {
    auto labels = ReadTensorFile(c.labels);
    if (!labels.ok()) return ReportFailure(labels.status());
    if (labels->shape().rank() != 1 || labels->shape().dim(0) != Samples(*evaluation)) {
      return ReportFailure(fmt::format("--labels '{}' must hold one label per --input sample ({}), got shape {}",
                                       c.labels, Samples(*evaluation), labels->shape()));
    }
    options.metric = AccuracyMetric(*labels);
    options.target = c.target_accuracy;
  } else {
    options.target = c.target_sqnr;
  }
  options.convert.profile = *profile;
  options.prepare.context = &*context;
  options.context = &*context;
  options.nodes = c.nodes;
  options.latency_runs = c.latency_runs;
  options.progress = CommandProgress("sensitivity");
  // --mpi: every rank calibrates and evaluates its share of the per-node configurations; rank 0 reports.
  MpiWorld world;
  if (c.mpi) {
    auto started = MpiStart();
    if (!started.ok()) return ReportFailure(started.status());
    world = *started;
    options.spread = MpiSpread;
    if (world.rank != 0) options.progress = {};
  }
  auto report = AnalyzeSensitivity(*graph, *mapping, *calibration, *evaluation, options);
  if (c.mpi) MpiStop();
  if (!report.ok()) return ReportFailure(report.status());
  if (world.rank != 0) return kExitOk;

  if (!c.json.empty()) {
    nlohmann::json j;
    j["schema_version"] = 1;
    j["generator"] = fmt::format("octet {}", Version());
    j["float_model"] = c.model;
    std::map<std::string, std::string> files;  // already checked by BatchesFromFiles
    for (const std::string& spec : c.input) {
      if (auto kv = SplitAssignment(spec, "--input"); kv.ok()) files[kv->first] = kv->second;
    }
    nlohmann::json inputs = nlohmann::json::array();
    for (size_t k = 0; k < graph->inputs().size(); ++k) {
      const std::string& name = graph->value(graph->inputs()[k]).name;
      std::vector<int64_t> dims = (*evaluation)[0][k].shape().dims();
      if (!dims.empty()) dims[0] = Samples(*evaluation);
      inputs.push_back({{"name", name}, {"file", files[name]}, {"shape", dims}});
    }
    j["inputs"] = std::move(inputs);
    // Schema 1 requires the comparison sections; `octet compare` fills them, this command compares no layers.
    j["weights"] = nlohmann::json::array();
    j["activations"] = nlohmann::json::array();
    j["shadow"] = nlohmann::json::array();
    j["backend"] = c.backend;
    j["profile"] = c.profile;
    j["sensitivity"] = SensitivityJson(*report);
    // Node names come from the model file: replace invalid UTF-8 rather than fail.
    const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (Status s = WriteFileAtomically(c.json, text); !s.ok()) return ReportFailure(s);
  }
  PrintReport(c, *report, Samples(*evaluation));
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

void AddSensitivityCommand(CLI::App& app, CommandRegistry& registry) {
  auto c = std::make_shared<SensitivityCommand>();
  CLI::App* sub = app.add_subcommand(
      "sensitivity", "Rank the nodes of a statically quantized model by how much int8 costs them; propose which "
                     "to keep float for a target");
  sub->add_option("model", c->model, "The float model (.onnx)")->required();
  sub->add_option("--calib", c->calib, "Calibration samples for an input, along axis 0")
      ->type_name("NAME=FILE.npy")
      ->required();
  sub->add_option("--input", c->input, "Evaluation samples for an input, along axis 0")
      ->type_name("NAME=FILE.npy")
      ->required();
  sub->add_option("--calib-batch", c->calib_batch, "Calibration batch size")->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  sub->add_option("--input-batch", c->input_batch, "Evaluation batch size")->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  sub->add_option("--labels", c->labels, "One int label per evaluation sample: the metric becomes top-1 accuracy "
                                         "of output 0")
      ->type_name("Y.npy");
  auto* sqnr = sub->add_option("--target-sqnr", c->target_sqnr, "Output SQNR (dB) the proposal must reach")
                   ->type_name("DB");
  sub->add_option("--target-accuracy", c->target_accuracy, "Accuracy in [0, 1] the proposal must reach (--labels)")
      ->type_name("A")
      ->excludes(sqnr);
  sub->add_option("--backend", c->backend, "QConfig preset: x86, fbgemm, qnnpack, onednn or symmetric")
      ->capture_default_str();
  sub->add_option("--profile", c->profile, "Numerics profile: reference, tflite, pytorch-fbgemm or pytorch-qnnpack")
      ->capture_default_str();
  sub->add_option("--node", c->nodes, "Analyse only these nodes (names in the fused graph); default: every "
                                      "quantized node")
      ->type_name("NODE");
  sub->add_flag("--mpi", c->mpi,
                "Under mpirun: spread the per-node evaluations over the ranks; rank 0 prints and writes the report");
  sub->add_option("--latency-runs", c->latency_runs, "Timed runs per graph for node latency (median); 0 skips it")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  sub->add_option("--json", c->json, "Write the report (numeric-suite JSON schema 1) to this file")
      ->type_name("R.json");
  c->context.AddTo(sub, 1);
  registry.Add(sub, [c] { return RunSensitivity(*c); });
}

}  // namespace octet::cli

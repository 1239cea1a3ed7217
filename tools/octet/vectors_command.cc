// `octet vectors`.
#include "tools/octet/vectors_command.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "io/vectors/vectors.h"
#include "tools/octet/context_options.h"
#include "tools/octet/model_command.h"

namespace octet::cli {
namespace {

struct VectorsCommand {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::string out;
  std::vector<std::string> nodes;
  bool force = false;
  std::string replay;
  ContextFlags context;
};

int Replay(const VectorsCommand& c) {
  Result<ReplayReport> report = ReplayVectors(c.replay);
  if (!report.ok()) return ReportFailure(report.status());
  fmt::print("{}: {} nodes replayed bit-exactly through the reference kernels ({} elements compared)\n", c.replay,
             report->replayed.size(), report->elements);
  for (const std::string& name : report->skipped) fmt::print("skipped (no reference replay): {}\n", name);
  return kExitOk;
}

int Write(const VectorsCommand& c) {
  if (c.out.empty()) return ReportUsage("--out DIR is required (or --replay DIR)");
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (const std::string& spec : c.inputs) {
    auto kv = SplitAssignment(spec, "--input");
    if (!kv.ok()) return ReportUsage(kv.status().message());
    Result<Tensor> t = ReadTensorFile(kv->second);
    if (!t.ok()) return ReportFailure(t.status());
    inputs.emplace_back(kv->first, std::move(*t));
  }
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Result<LoadedModel> model = LoadModelFile(c.model);
  if (!model.ok()) return ReportFailure(model.status());
  if (!IsQuantizedModel(*model)) {
    return ReportFailure(
        fmt::format("failed to write vectors of '{}': not a .octet model or a quantized ONNX model (quantize it "
                    "first with `octet quantize`)",
                    c.model));
  }
  VectorsOptions options;
  options.nodes = c.nodes;
  options.force = c.force;
  options.model_name = c.model;
  Result<VectorsSummary> summary = WriteVectors(model->graph, inputs, c.out, *context, options);
  if (!summary.ok()) return ReportFailure(summary.status());
  fmt::print("{}: {} nodes, {} files, replayed bit-exactly through the reference kernels\n", c.out,
             summary->nodes.size(), summary->files);
  for (const std::string& name : summary->not_replayed) fmt::print("recorded without a reference replay: {}\n", name);
  return kExitOk;
}

}  // namespace

void AddVectorsCommand(CLI::App& app, CommandRegistry& registry) {
  auto c = std::make_shared<VectorsCommand>();
  CLI::App* sub = app.add_subcommand(
      "vectors", "Write per-node test vectors of an int8 model (.npy + manifest.json), or replay them (--replay)");
  CLI::Option* model = sub->add_option("model", c->model, "The quantized model (.octet)")->type_name("QUANT.octet");
  sub->add_option("--input", c->inputs, "A graph input and its file, NAME=FILE.npy (repeat for each input)")
      ->type_name("NAME=FILE");
  sub->add_option("--out", c->out, "Folder to write (must not exist, or be empty, unless --force)")->type_name("DIR");
  sub->add_option("--nodes", c->nodes, "Only these nodes (comma-separated names)")
      ->delimiter(',')
      ->type_name("NAME,...");
  sub->add_flag("--force", c->force, "Replace an existing non-empty DIR");
  CLI::Option* replay =
      sub->add_option("--replay", c->replay, "Recompute a vectors folder with the reference kernels and compare")
          ->type_name("DIR");
  replay->excludes(model);
  c->context.AddTo(sub, 1);
  registry.Add(sub, [c, model, replay] {
    if (replay->count() > 0) {
      if (!c->inputs.empty() || !c->out.empty() || !c->nodes.empty()) {
        return ReportUsage("--replay DIR takes no --input, --out or --nodes");
      }
      return Replay(*c);
    }
    if (model->count() == 0) return ReportUsage("give a model (QUANT.octet) or --replay DIR");
    return Write(*c);
  });
}

}  // namespace octet::cli

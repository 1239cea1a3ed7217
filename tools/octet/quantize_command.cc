// `octet quantize`: load, configure (backend preset, observer overrides, skipped nodes), quantize, write.
#include "tools/octet/quantize_command.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/octet_file.h"
#include "observers/observer_options.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/dynamic.h"
#include "quant/nothing_quantized.h"
#include "quant/numerics_profile.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "quant/qconfig_mapping.h"
#include "quant/weight_only.h"
#include "io/file_util.h"
#include "tools/octet/batch_files.h"
#include "tools/octet/context_options.h"
#include "tools/octet/model_command.h"
#if OCTET_WITH_ONNX
#include "io/onnx/qdq_export.h"
#endif

namespace octet::cli {
namespace {

struct QuantizeCommand {
  std::string model;
  std::string mode = "static";
  std::vector<std::string> calib;  // NAME=FILE.npy
  int64_t calib_batch = 32;
  std::string backend = "x86";
  std::string profile = "reference";
  std::string activation_observer;
  std::string weight_observer;
  bool per_channel = false;
  bool per_tensor = false;
  std::vector<std::string> skip;
  std::string output;
  std::string onnx_output;
  ContextFlags context;
};

// `base` with its observer replaced by `kind`: keeps what describes the quantized integers (dtype, range,
// reduce_range, eps) and drops the options of the old observer kind; the scheme follows per-tensor/per-channel.
ObserverSpec WithKind(const ObserverSpec& base, ObserverKind kind, bool weight) {
  ObserverSpec s{kind, {}};
  s.options.dtype = base.options.dtype;
  s.options.reduce_range = base.options.reduce_range;
  s.options.quant_min = base.options.quant_min;
  s.options.quant_max = base.options.quant_max;
  s.options.eps = base.options.eps;
  const bool symmetric = base.options.qscheme && IsSymmetric(*base.options.qscheme);
  if (IsPerChannelKind(kind)) {
    s.options.qscheme = symmetric || weight ? QScheme::kPerChannelSymmetric : QScheme::kPerChannelAffine;
  } else if (base.options.qscheme) {
    s.options.qscheme = symmetric ? QScheme::kPerTensorSymmetric : QScheme::kPerTensorAffine;
  }
  return s;
}

// The QConfigMapping the flags describe; usage errors (exit 2) for unknown names.
Result<QConfigMapping> MappingFromFlags(const QuantizeCommand& c) {
  QConfig qconfig;
  if (c.mode == "static" || c.mode == "weight-only") {
    OCTET_ASSIGN_OR_RETURN(qconfig, GetDefaultQConfig(c.backend));
  } else {
    qconfig = GetDefaultDynamicQConfig(!c.per_tensor);
  }
  if (!c.activation_observer.empty()) {
    if (c.mode != "static") return InvalidArgument("--activation-observer applies to --mode static only");
    OCTET_ASSIGN_OR_RETURN(const ObserverKind kind, ParseObserverKind(c.activation_observer));
    if (IsPerChannelKind(kind) || kind == ObserverKind::kPlaceholder) {
      return InvalidArgument("--activation-observer {} cannot observe activations (per-channel or placeholder)",
                             c.activation_observer);
    }
    qconfig.activation = WithKind(qconfig.activation, kind, false);
  }
  if (c.per_channel) qconfig.weight = WithKind(qconfig.weight, ObserverKind::kPerChannelMinMax, true);
  if (c.per_tensor) qconfig.weight = WithKind(qconfig.weight, ObserverKind::kMinMax, true);
  if (!c.weight_observer.empty()) {
    OCTET_ASSIGN_OR_RETURN(const ObserverKind kind, ParseObserverKind(c.weight_observer));
    qconfig.weight = WithKind(qconfig.weight, kind, true);
  }
  OCTET_RETURN_IF_ERROR(qconfig.Validate());
  QConfigMapping mapping;
  mapping.SetGlobal(qconfig);
  return mapping;
}

int Quantize(const QuantizeCommand& c) {
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  if (c.mode != "static" && c.mode != "dynamic" && c.mode != "weight-only") {
    return ReportUsage(fmt::format("--mode must be static, dynamic or weight-only, got '{}'", c.mode));
  }
  if (c.mode != "static" && !c.calib.empty()) return ReportUsage("--calib applies to --mode static only");
  auto profile = ParseNumericsProfile(c.profile);
  if (!profile.ok()) return ReportUsage(profile.status().message());
  auto mapping = MappingFromFlags(c);
  if (!mapping.ok()) return ReportUsage(mapping.status().message());
#if !OCTET_WITH_ONNX
  if (!c.onnx_output.empty()) return ReportUsage("--onnx needs a build of octet with ONNX (protobuf)");
#endif

  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Result<Graph> graph = LoadModel(c.model);
  if (!graph.ok()) return ReportFailure(graph.status());
  const std::string where = fmt::format("failed to quantize '{}'", c.model);
  for (const std::string& scope : c.skip) {
    const std::vector<std::string> nodes = NodesInScope(*graph, scope);
    if (nodes.empty()) {
      return ReportUsage(fmt::format("--skip {}: '{}' has no node named '{}' or under it (a scope covers names that "
                                     "start with '{}.' or '{}/'); `octet inspect {}` lists the node names",
                                     scope, c.model, scope, scope, scope, c.model));
    }
    for (const std::string& node : nodes) mapping->SetModuleName(node, std::nullopt);
  }

  Result<Graph> quantized = Status(Internal("unreachable"));
  std::string warning;  // the model came out float
  if (c.mode == "static") {
    auto batches = BatchesFromFiles(c.calib, *graph, c.model, c.calib_batch,
                                    {"--calib", "static quantization needs calibration data"});
    if (!batches.ok()) return ReportFailure(batches.status().WithContext(where));
    PrepareOptions prepare_options;
    prepare_options.context = &*context;
    auto prepared = Prepare(*graph, *mapping, prepare_options);
    if (!prepared.ok()) return ReportFailure(prepared.status().WithContext(where));
    CalibrateOptions calibrate_options;
    calibrate_options.progress = CommandProgress("calibrating");
    if (Status s = Calibrate(*prepared, *context, *batches, calibrate_options); !s.ok()) {
      return ReportFailure(s.WithContext(where));
    }
    ConvertOptions convert_options;
    convert_options.profile = *profile;
    ConvertReport report;
    quantized = Convert(*prepared, convert_options, &report);
    if (quantized.ok()) warning = NothingQuantizedWarning(prepared->graph(), report);
  } else if (c.mode == "dynamic") {
    QuantizeDynamicReport report;
    quantized = QuantizeDynamic(*graph, *mapping, {}, &report);
    if (quantized.ok()) warning = NothingQuantizedWarning(report);
  } else {
    quantized = QuantizeWeightOnly(*graph, *mapping);
  }
  if (!quantized.ok()) return ReportFailure(quantized.status().WithContext(where));

  // Both files are built before either is written, so a failure leaves neither.
#if OCTET_WITH_ONNX
  std::string onnx_bytes;
  if (!c.onnx_output.empty()) {
    auto bytes = ExportQdqModel(*quantized);
    if (!bytes.ok()) return ReportFailure(bytes.status().WithContext(where));
    onnx_bytes = std::move(*bytes);
  }
#endif
  const std::map<std::string, std::string> metadata = {
      {"producer", "octet quantize"}, {"source", c.model},       {"mode", c.mode},
      {"backend", c.backend},         {"profile", c.profile},
  };
  if (Status s = WriteOctetFile(c.output, *quantized, metadata); !s.ok()) return ReportFailure(s);
#if OCTET_WITH_ONNX
  if (!c.onnx_output.empty()) {
    if (Status s = WriteFileAtomically(c.onnx_output, onnx_bytes); !s.ok()) return ReportFailure(s);
  }
#endif

  std::map<std::string, int> kinds;
  for (const Node& node : quantized->nodes()) ++kinds[node.domain.empty() ? node.op_type : node.domain + "." + node.op_type];
  std::vector<std::string> counts;
  for (const auto& [op, n] : kinds) counts.push_back(fmt::format("{} {}", op, n));
  fmt::print("{} ({}, {} backend, {} profile): {} nodes: {}\n", c.output, c.mode, c.backend, c.profile,
             quantized->num_nodes(), fmt::join(counts, ", "));
  if (!c.onnx_output.empty()) {
    fmt::print("ONNX QDQ: {}\n", c.onnx_output);
    std::fflush(stdout);
    WarnIfOnnxRuntimeSaturates(*quantized, c.onnx_output);
  }
  if (!warning.empty()) fmt::print(stderr, "{}\n", warning);
  return kExitOk;
}

}  // namespace

void WarnIfOnnxRuntimeSaturates([[maybe_unused]] const Graph& quantized,
                                [[maybe_unused]] const std::string& onnx_path) {
#if OCTET_WITH_ONNX
  const std::vector<std::string> nodes = NodesSaturatingWithoutVnni(quantized);
  if (nodes.empty()) return;
  constexpr size_t kListed = 3;
  const std::vector<std::string> listed(nodes.begin(), nodes.begin() + std::min(nodes.size(), kListed));
  fmt::print(stderr,
             "octet: warning: {}: ONNX Runtime on x86 CPUs without VNNI (AVX2 only) may be off by many LSB at {} "
             "node(s) ({}{}): full-range 8-bit activations meet s8 weights there, and its u8 x s8 kernels saturate "
             "in int16; --backend x86 (7-bit activations) avoids it\n",
             onnx_path, nodes.size(), fmt::join(listed, ", "), nodes.size() > kListed ? ", ..." : "");
#endif
}

void AddQuantizeCommand(CLI::App& app, CommandRegistry& registry) {
  auto c = std::make_shared<QuantizeCommand>();
  CLI::App* sub = app.add_subcommand("quantize", "Quantize a float ONNX model to an int8 .octet model");
  sub->add_option("model", c->model, "The float model (.onnx)")->required();
  sub->add_option("--mode", c->mode, "static, dynamic or weight-only")->capture_default_str();
  sub->add_option("--calib", c->calib, "Calibration samples for an input, along axis 0 (static)")
      ->type_name("NAME=FILE.npy");
  sub->add_option("--calib-batch", c->calib_batch, "Calibration batch size")->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  sub->add_option("--backend", c->backend, "QConfig preset: x86, fbgemm, qnnpack, onednn or symmetric")
      ->capture_default_str();
  sub->add_option("--profile", c->profile,
                  "Numerics profile: reference, tflite, pytorch-fbgemm or pytorch-qnnpack")
      ->capture_default_str();
  sub->add_option("--activation-observer", c->activation_observer,
                  "Activation observer (static), e.g. minmax, histogram, entropy, percentile, mse");
  sub->add_option("--weight-observer", c->weight_observer, "Weight observer, e.g. per_channel_minmax, minmax");
  auto* per_channel = sub->add_flag("--per-channel", c->per_channel, "Per-channel symmetric weights");
  sub->add_flag("--per-tensor", c->per_tensor, "Per-tensor symmetric weights")->excludes(per_channel);
  sub->add_option("--skip", c->skip, "Keep this node (or every node under this name) float")->type_name("NODE");
  sub->add_option("-o,--output", c->output, "The quantized model (.octet)")->required();
  sub->add_option("--onnx", c->onnx_output, "Also write the model as ONNX QDQ (opset 13)");
  c->context.AddTo(sub, 1);
  registry.Add(sub, [c] { return Quantize(*c); });
}

}  // namespace octet::cli

// `octet quantize`: load, configure (backend preset, observer overrides, skipped nodes), quantize, write.
#include "tools/octet/quantize_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/file_util.h"
#include "io/octet_file.h"
#include "numeric_suite/quantization_guard.h"
#include "observers/observer_options.h"
#include "quant/adaround.h"
#include "quant/bias_correction.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/dynamic.h"
#include "quant/nothing_quantized.h"
#include "quant/numerics_profile.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "quant/qconfig_mapping.h"
#include "quant/smoothquant.h"
#include "quant/target_spec.h"
#include "quant/weight_only.h"
#include "tools/octet/accuracy_options.h"
#include "tools/octet/batch_files.h"
#include "tools/octet/calibrate_command.h"
#include "tools/octet/context_options.h"
#include "tools/octet/model_command.h"
#include "tools/octet/streamed_calibration.h"
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
  bool per_token = false;                // --per-token: dynamic activations with qparams per row
  std::vector<std::string> smoothquant;  // --smoothquant [ALPHA]: the optional value
  const CLI::Option* smoothquant_option = nullptr;
  int activation_bits = 8;
  int weight_bits = 8;
  std::vector<std::string> skip;
  double min_sqnr_db = kDefaultGuardMinSqnrDb;
  bool strict = false;
  bool no_guard = false;
  std::string output;
  std::string onnx_output;
  bool no_dense_stem = false;  // --no-dense-stem: the --onnx export in the plain QDQ form
  std::string state;  // --state: a calibration state instead of calibrating
  ContextFlags context;
  AccuracyFlags accuracy;
  std::string target;  // --target NAME|FILE.json
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
  if (c.activation_bits != 8) {
    if (c.mode != "static") return InvalidArgument("--activation-bits applies to --mode static only");
    if (c.activation_bits < 2 || c.activation_bits > 8) {
      return InvalidArgument("--activation-bits must be 2..8, got {}", c.activation_bits);
    }
    // The low end of the dtype's range: [0, 2^b - 1] for quint8, [-2^(b-1), 2^(b-1) - 1] for qint8.
    const bool is_signed = qconfig.activation.options.dtype == DType::kS8;
    qconfig.activation.options.quant_min = is_signed ? -(int64_t{1} << (c.activation_bits - 1)) : 0;
    qconfig.activation.options.quant_max =
        is_signed ? (int64_t{1} << (c.activation_bits - 1)) - 1 : (int64_t{1} << c.activation_bits) - 1;
  }
  if (c.per_channel) qconfig.weight = WithKind(qconfig.weight, ObserverKind::kPerChannelMinMax, true);
  if (c.per_tensor) qconfig.weight = WithKind(qconfig.weight, ObserverKind::kMinMax, true);
  if (!c.weight_observer.empty()) {
    OCTET_ASSIGN_OR_RETURN(const ObserverKind kind, ParseObserverKind(c.weight_observer));
    qconfig.weight = WithKind(qconfig.weight, kind, true);
  }
  if (c.weight_bits != 8) {
    if (c.weight_bits < 2 || c.weight_bits > 8)
      return InvalidArgument("--weight-bits must be 2..8, got {}", c.weight_bits);
    // The low end of s8, stored in int8 as before: [-2^(b-1), 2^(b-1) - 1], or symmetric [-(2^(b-1) - 1), ...] when
    // the preset restricts int8 weights to [-127, 127] (--backend symmetric).
    const ObserverOptions& o = qconfig.weight.options;
    const bool restricted = o.quant_min && o.quant_max && *o.quant_min == -*o.quant_max;
    const int64_t top = (int64_t{1} << (c.weight_bits - 1)) - 1;
    qconfig.weight.options.quant_min = restricted ? -top : -top - 1;
    qconfig.weight.options.quant_max = top;
  }
  OCTET_RETURN_IF_ERROR(qconfig.Validate());
  QConfigMapping mapping;
  mapping.SetGlobal(qconfig);
  return mapping;
}

// The guard on `split.guard`; when it fails, the fixes it can measure: for static quantization another activation
// observer (minmax, unless it is the one used) and the worst layers kept float.
Result<GuardReport> RunGuard(const QuantizeCommand& c, const Graph& graph, const Graph& quantized,
                             const GuardSplit& split, const PreparedGraph* calibrated,
                             const PrepareOptions& prepare_options, const ConvertOptions& convert_options,
                             const Context& context, const StreamedCalibration* streamed) {
  GuardOptions options;
  options.min_sqnr_db = c.min_sqnr_db;
  options.context = &context;
  OCTET_ASSIGN_OR_RETURN(GuardReport report, CheckQuantization(graph, quantized, split.guard, split.source, options));
  if (report.passed || c.mode != "static") return report;
  GuardFixCandidates candidates;
  candidates.calibrated = calibrated;
  candidates.convert = convert_options;
  candidates.prepare = prepare_options;
  candidates.calibration_batches = split.calibration;
  std::vector<std::vector<Tensor>> loaded;  // streamed calibration: the fixes re-calibrate from memory
  if (streamed != nullptr) {
    OCTET_ASSIGN_OR_RETURN(loaded, LoadBatches(streamed->source, 0, streamed->calibration_batches));
    candidates.calibration_batches = loaded;
  }
  if (c.activation_observer != "minmax") {
    QuantizeCommand minmax = c;
    minmax.activation_observer = "minmax";
    if (auto mapping = MappingFromFlags(minmax); mapping.ok()) {
      candidates.alternatives.push_back({"--activation-observer minmax", std::move(*mapping)});
    }
  }
  OCTET_RETURN_IF_ERROR(MeasureGuardFixes(graph, split.guard, candidates, options, report));
  return report;
}

int Quantize(const QuantizeCommand& c) {
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  if (c.mode != "static" && c.mode != "dynamic" && c.mode != "weight-only") {
    return ReportUsage(fmt::format("--mode must be static, dynamic or weight-only, got '{}'", c.mode));
  }
  if (c.no_guard && c.strict) return ReportUsage("--strict needs the guard: drop --no-guard");
  if (!c.state.empty() && c.mode != "static") return ReportUsage("--state applies to --mode static only");
  if (c.per_token && c.mode != "dynamic") return ReportUsage("--per-token applies to --mode dynamic only");
  std::optional<float> smoothquant_alpha;
  if (c.smoothquant_option != nullptr && c.smoothquant_option->count() > 0) {
    if (c.mode != "static" || !c.state.empty()) {
      return ReportUsage("--smoothquant applies to --mode static with --calib (it measures the activations)");
    }
    smoothquant_alpha = 0.5f;
    if (!c.smoothquant.empty() && !c.smoothquant.front().empty()) {
      const std::string& v = c.smoothquant.front();
      char* end = nullptr;
      const float a = std::strtof(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(a >= 0.0f && a <= 1.0f)) {
        return ReportUsage(fmt::format("--smoothquant ALPHA must be a number in [0, 1], got '{}'", v));
      }
      smoothquant_alpha = a;
    }
  }
  if (Status s = c.accuracy.CheckUsage(c.mode); !s.ok()) return ReportUsage(s.message());
  if (!c.state.empty() && c.accuracy.any()) {
    return ReportUsage(
        "--state cannot be combined with --equalize, --adaround or --bias-correction: the state was calibrated on "
        "the model as given; calibrate in this command with --calib instead");
  }
  auto profile = ParseNumericsProfile(c.profile);
  if (!profile.ok()) return ReportUsage(profile.status().message());
  std::optional<TargetSpec> target;
  if (!c.target.empty()) {
    if (c.mode != "static") return ReportUsage("--target applies to --mode static only");
    auto loaded = LoadTargetSpec(c.target);
    if (!loaded.ok()) return ReportUsage(fmt::format("--target: {}", loaded.status().message()));
    target = std::move(*loaded);
  }
  auto mapping = target ? Result<QConfigMapping>(target->Mapping()) : MappingFromFlags(c);
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

  // Static: --calib is calibration data, part of it held back for the guard (SplitGuardBatches). Dynamic and
  // weight-only: --calib is optional and only feeds the guard.
  std::vector<std::vector<Tensor>> batches;
  const bool from_state = !c.state.empty();
  // Static calibration streams its files batch by batch unless a pass that measures the model first (--equalize,
  // --bias-correction, --adaround, --smoothquant) needs every batch.
  std::optional<StreamedCalibration> streamed;
  if (c.mode == "static" && !from_state && !c.accuracy.any() && !smoothquant_alpha && !c.calib.empty()) {
    auto opened = OpenStreamedCalibration(c.calib, *graph, c.model, c.calib_batch, !c.no_guard);
    if (!opened.ok()) return ReportFailure(opened.status().WithContext(where));
    streamed = std::move(*opened);
  } else if ((c.mode == "static" && !from_state) || !c.calib.empty()) {
    auto read = BatchesFromFiles(
        c.calib, *graph, c.model, c.calib_batch,
        {"--calib", c.mode == "static" ? "static quantization needs calibration data" : "the guard needs samples"});
    if (!read.ok()) return ReportFailure(read.status().WithContext(where));
    batches = std::move(*read);
  }
  GuardSplit split{batches, batches, "--calib"};
  if (streamed) {
    split = GuardSplit{{}, streamed->guard, streamed->guard_source};
  } else if (c.mode == "static" && !c.no_guard && !from_state) {
    split = SplitGuardBatches(batches);
  }

  // --equalize / --bias-correction change a copy; the guard compares with the model as given.
  const Graph original = *graph;
  std::optional<Graph> bias_corrected;
  if (smoothquant_alpha) {
    SmoothQuantOptions options;
    options.alpha = *smoothquant_alpha;
    auto smoothed = SmoothQuant(*graph, split.calibration, *context, options);
    if (!smoothed.ok()) return ReportFailure(smoothed.status().WithContext(where));
    fmt::print("{}", SmoothQuantReportText(*smoothed, options.alpha));
  }
  std::map<std::string, QParams> fixed_weight_qparams;
  if (c.accuracy.any()) {
    auto changes = RunAccuracyPasses(c.accuracy, *graph, *mapping, split.calibration, *context,
                                     target && target->power_of_two_scales);
    if (!changes.ok()) return ReportFailure(changes.status().WithContext(where));
    fmt::print("{}", changes->report);
    bias_corrected = std::move(changes->bias_corrected);
    fixed_weight_qparams = std::move(changes->fixed_weight_qparams);
  }

  Result<Graph> quantized = Status(Internal("unreachable"));
  std::string warning;  // the model came out float
  PrepareOptions prepare_options;
  prepare_options.context = &*context;
  ConvertOptions convert_options;
  convert_options.profile = *profile;
  std::optional<PreparedGraph> calibrated;
  if (c.mode == "static") {
    auto prepared = Prepare(*graph, *mapping, prepare_options);
    if (!prepared.ok()) return ReportFailure(prepared.status().WithContext(where));
    CalibrateOptions calibrate_options;
    calibrate_options.progress = CommandProgress("calibrating");
    const Status s = from_state ? LoadCalibrationStateFile(*prepared, c.state, c.model)
                     : streamed ? CalibrateStreamed(*prepared, *context, *streamed, calibrate_options)
                                : Calibrate(*prepared, *context, split.calibration, calibrate_options);
    if (!s.ok()) return ReportFailure(s.WithContext(where));
    if (bias_corrected) {
      // Calibrated without the corrected biases; converted with them (quant/bias_correction.h).
      auto corrected = Prepare(*bias_corrected, *mapping, prepare_options);
      if (!corrected.ok()) return ReportFailure(corrected.status().WithContext(where));
      if (Status s = TransferActivationObservers(*prepared, *corrected); !s.ok()) {
        return ReportFailure(s.WithContext(where));
      }
      prepared = std::move(corrected);
    }
    if (target && target->power_of_two_scales) {
      if (Status s = RoundScalesToPowerOfTwo(*prepared); !s.ok()) return ReportFailure(s.WithContext(where));
    }
    // --adaround: keep the weights on the grid their rounding was learned for (already power-of-two with --target).
    if (Status s = FixWeightQParams(*prepared, fixed_weight_qparams); !s.ok()) {
      return ReportFailure(s.WithContext(where));
    }
    ConvertReport report;
    quantized = Convert(*prepared, convert_options, &report);
    if (quantized.ok()) warning = NothingQuantizedWarning(prepared->graph(), report);
    calibrated = std::move(*prepared);
  } else if (c.mode == "dynamic") {
    QuantizeDynamicReport report;
    QuantizeDynamicOptions options;
    options.per_token = c.per_token;
    quantized = QuantizeDynamic(*graph, *mapping, options, &report);
    if (quantized.ok()) warning = NothingQuantizedWarning(report);
  } else {
    quantized = QuantizeWeightOnly(*graph, *mapping);
  }
  if (!quantized.ok()) return ReportFailure(quantized.status().WithContext(where));

  std::optional<GuardReport> guard;
  if (c.no_guard) {
    // The user asked for no check.
  } else if (split.guard.empty()) {
    fmt::print("guard: skipped: no samples to check the {} model on (give --calib NAME=FILE.npy)\n", c.mode);
  } else {
    auto checked = RunGuard(c, original, *quantized, split, calibrated ? &*calibrated : nullptr, prepare_options,
                            convert_options, *context, streamed ? &*streamed : nullptr);
    if (checked.ok()) {
      guard = std::move(*checked);
    } else if (c.strict) {
      return ReportFailure(checked.status().WithContext(where + ": the guard (--strict) could not run"));
    } else {
      // The model was made; a guard that cannot run is no reason to lose it.
      fmt::print(stderr, "warning: guard: could not check the int8 model (--no-guard silences this): {}\n",
                 checked.status().message());
    }
  }
  if (guard && guard->passed) {
    fmt::print("{}", FormatGuardReport(*guard));
  } else if (guard) {
    fmt::print(stderr, "{}", FormatGuardReport(*guard));
    if (c.strict) {
      return ReportFailure(FailedPrecondition(
          "{}: the guard failed (--strict): output SQNR {:.1f} dB is below {:.1f} dB (--min-sqnr); '{}' not written",
          where, guard->worst_sqnr_db, guard->min_sqnr_db, c.output));
    }
  }

  // Both files are built before either is written, so a failure leaves neither.
#if OCTET_WITH_ONNX
  std::string onnx_bytes;
  if (!c.onnx_output.empty()) {
    QdqExportOptions export_options;
    export_options.dense_stems = !c.no_dense_stem;
    auto bytes = ExportQdqModel(*quantized, export_options);
    if (!bytes.ok()) return ReportFailure(bytes.status().WithContext(where));
    onnx_bytes = std::move(*bytes);
  }
#endif
  std::map<std::string, std::string> metadata = {
      {"producer", "octet quantize"}, {"source", c.model},    {"mode", c.mode},
      {"backend", target ? "target " + target->name : c.backend}, {"profile", c.profile},
  };
  if (guard) metadata["guard"] = GuardReportJson(*guard).dump();
  if (c.accuracy.equalize) metadata["equalize"] = c.accuracy.no_high_bias_absorption ? "cle" : "cle+hba";
  if (c.accuracy.adaround) metadata["adaround"] = fmt::format("{} iterations", c.accuracy.adaround_iters);
  if (c.weight_bits != 8) metadata["weight_bits"] = std::to_string(c.weight_bits);
  if (c.accuracy.bias_correction) metadata["bias_correction"] = c.accuracy.bias_correction_mode;
  if (target) metadata["target"] = target->name;
  if (smoothquant_alpha) metadata["smoothquant_alpha"] = fmt::format("{}", *smoothquant_alpha);
  if (c.per_token) metadata["per_token"] = "1";
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
  fmt::print("{} ({}, {}, {} profile): {} nodes: {}\n", c.output, c.mode,
             target ? "target " + target->name : c.backend + " backend", c.profile,
             quantized->num_nodes(), fmt::join(counts, ", "));
  if (!c.onnx_output.empty()) {
    fmt::print("ONNX QDQ: {}\n", c.onnx_output);
    std::fflush(stdout);
    WarnIfOnnxRuntimeSaturates(*quantized, c.onnx_output);
  }
  if (!warning.empty()) fmt::print(stderr, "{}\n", warning);
  // Quantization does not enter If/Loop subgraphs: say so, since their Conv/MatMul stay float.
  for (const Node& node : quantized->nodes()) {
    if (node.subgraphs.empty()) continue;
    std::vector<std::string> names;
    for (const auto& [attribute, sub] : node.subgraphs) names.push_back(attribute);
    fmt::print(stderr, "note: node '{}' ({}) keeps its subgraphs ({}) float: quantization does not enter them\n",
               node.name, node.op_type, fmt::join(names, ", "));
  }
  return kExitOk;
}

}  // namespace

Result<QConfigMapping> StaticMappingFromFlags(const StaticMappingFlags& flags) {
  QuantizeCommand c;
  c.backend = flags.backend;
  c.activation_observer = flags.activation_observer;
  c.weight_observer = flags.weight_observer;
  c.per_channel = flags.per_channel;
  c.per_tensor = flags.per_tensor;
  c.activation_bits = flags.activation_bits;
  c.weight_bits = flags.weight_bits;
  return MappingFromFlags(c);
}

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
             "in int16; --backend x86 (7-bit weights) or fbgemm (7-bit activations) avoids it\n",
             onnx_path, nodes.size(), fmt::join(listed, ", "), nodes.size() > kListed ? ", ..." : "");
#endif
}

void AddQuantizeCommand(CLI::App& app, CommandRegistry& registry) {
  auto c = std::make_shared<QuantizeCommand>();
  CLI::App* sub = app.add_subcommand("quantize", "Quantize a float ONNX model to an int8 .octet model");
  sub->add_option("model", c->model, "The float model (.onnx)")->required();
  sub->add_option("--mode", c->mode, "static, dynamic or weight-only")->capture_default_str();
  sub->add_option("--calib", c->calib,
                  "Calibration samples for an input, along axis 0: NAME=FILE.npy (static: also NAME=PATH[,PATH...] "
                  "and folders of .npy files, read a batch at a time)")
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
  sub->add_flag("--per-token", c->per_token,
                "Dynamic: quantize the activations of Gemm/MatMul per row (one scale and zero point per token)");
  sub->add_option("--activation-bits", c->activation_bits,
                  "Activation bits (static; 2..8): the low end of the activation dtype's range")
      ->capture_default_str();
  sub->add_option("--weight-bits", c->weight_bits,
                  "Weight bits (2..8): the low end of int8, [-2^(b-1), 2^(b-1) - 1], stored and run as int8")
      ->capture_default_str();
  sub->add_option("--skip", c->skip, "Keep this node (or every node under this name) float")->type_name("NODE");
  sub->add_option("-o,--output", c->output, "The quantized model (.octet)")->required();
  sub->add_option("--onnx", c->onnx_output, "Also write the model as ONNX QDQ (opset 13)");
  sub->add_flag("--no-dense-stem", c->no_dense_stem,
                "--onnx: write the plain QDQ form: by default an int8 Conv of one input channel over a small image "
                "(the digits CNN's stem) is written as one Gemm over its pixels, and a Clip on int8 codes that only "
                "a MaxPool reads moves after it, forms ONNX Runtime runs faster (the same integers)");
  sub->add_option("--min-sqnr", c->min_sqnr_db,
                  "Guard: the least output SQNR in dB of the int8 model against the float one on held-back "
                  "calibration samples; below it octet warns and names the worst layers")
      ->type_name("DB")
      ->check(CLI::Range(-200.0, 200.0))
      ->capture_default_str();
  sub->add_flag("--strict", c->strict, "Guard: fail (exit 1, no output written) when the output SQNR is too low");
  sub->add_flag("--no-guard", c->no_guard, "Do not check the int8 model (calibrate on every --calib sample)");
  sub->add_option("--state", c->state,
                  "Static: convert from this calibration state (octet calibrate / octet merge) instead of --calib")
      ->type_name("STATE.json");
  auto* target = sub->add_option("--target", c->target,
                                  "Quantize for a hardware target (static): a built-in name (pow2-int8, x86, fbgemm, "
                                  "qnnpack, onednn, symmetric) or a target spec file (README: Target specs)")
                     ->type_name("NAME|FILE.json");
  for (const char* other : {"--backend", "--activation-observer", "--weight-observer", "--per-channel", "--per-tensor",
                            "--activation-bits", "--weight-bits"}) {
    target->excludes(sub->get_option(other));
  }
  c->smoothquant_option =
      sub->add_option("--smoothquant", c->smoothquant,
                      "Static: SmoothQuant, migrating activation outliers into the weights after each LayerNorm "
                      "(strength ALPHA in [0, 1], default 0.5)")
          ->expected(0, 1)
          ->type_name("[ALPHA]");
  c->accuracy.AddTo(sub);
  c->context.AddTo(sub, 1);
  registry.Add(sub, [c] { return Quantize(*c); });
}

}  // namespace octet::cli

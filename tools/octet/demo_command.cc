// `octet demo`: every flow of octet on the bundled digits data, end to end, with one table of results.
#include "tools/octet/demo_command.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/executor.h"
#include "core/latency.h"
#include "io/digits_csv.h"
#include "io/file_util.h"
#include "io/octet_file.h"
#include "numeric_suite/compare_model.h"
#include "numeric_suite/compare_weights.h"
#include "numeric_suite/graph_matching.h"
#include "numeric_suite/metrics.h"
#include "numeric_suite/report_html.h"
#include "numeric_suite/report_json.h"
#include "numeric_suite/sensitivity.h"
#include "ops/float/registry.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/dynamic.h"
#include "quant/fold_batch_norm.h"
#include "quant/prepare.h"
#include "quant/progress.h"
#include "quant/qat/convert_qat.h"
#include "quant/qat/prepare_qat.h"
#include "quant/qat/train_qat.h"
#include "quant/qconfig.h"
#include "quant/quantized_registry.h"
#include "quant/training/digits_models.h"
#include "quant/training/top1.h"
#include "quant/training/training_graph.h"
#include "tools/octet/compare_command.h"
#include "tools/octet/context_options.h"

#ifndef OCTET_DIGITS_DATA
#define OCTET_DIGITS_DATA ""
#endif

namespace octet::cli {
namespace {

namespace fs = std::filesystem;

struct DemoCommand {
  std::string out = "octet-demo";
  std::string data;
  std::string backend = "x86";
  uint64_t seed = 1;
  double target_sqnr = 40.0;
  ContextFlags context;
};

// One row of the table.
struct Variant {
  std::string model;   // "CNN", "MLP"
  std::string method;  // "float", "static int8, MinMax", ...
  double accuracy = 0.0;
  int64_t bytes = 0;                 // the .octet file
  double latency_us = 0.0;           // median over single images, batch 1
  std::optional<double> sqnr_db;     // logits against the float model's
  std::string file;
};

// The bundled data: --data, else next to the executable once installed, else the source tree's data/.
Result<std::string> FindDigitsData(const std::string& flag) {
  if (!flag.empty()) return flag;
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "share" / "octet" / "digits.csv.gz");
  if (std::string(OCTET_DIGITS_DATA).size() > 0) candidates.emplace_back(OCTET_DIGITS_DATA);
  for (const fs::path& p : candidates) {
    if (fs::exists(p, ec)) return p.string();
  }
  return NotFound("the digits data is not where octet looked ({}); pass --data PATH/digits.csv.gz",
                  candidates.empty() ? std::string("nowhere") : candidates.back().string());
}

Result<Tensor> Logits(const Graph& graph, const OpRegistry& registry, const Context& context, const Tensor& x) {
  CompileOptions options;
  options.input_shapes = {{graph.value(graph.inputs()[0]).name, x.shape()}};
  OCTET_ASSIGN_OR_RETURN(Executor executor, Executor::Compile(graph, context, registry, options));
  OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, executor.Run(std::span<const Tensor>(&x, 1)));
  return std::move(outputs[0]);
}

// Median time of one image through a batch-1 executor, over `images` rows after a warm-up.
Result<double> LatencyUs(const Graph& graph, const OpRegistry& registry, const Context& context,
                         const Tensor& images) {
  Shape one = images.shape();
  std::vector<int64_t> dims = one.dims();
  dims[0] = 1;
  CompileOptions options;
  options.input_shapes = {{graph.value(graph.inputs()[0]).name, Shape(dims)}};
  OCTET_ASSIGN_OR_RETURN(Executor executor, Executor::Compile(graph, context, registry, options));
  const int64_t per_image = images.NumElements() / images.shape().dim(0);
  const int64_t n = std::min<int64_t>(images.shape().dim(0), 200);
  std::vector<double> times;
  for (int round = 0; round < 2; ++round) {  // the first round warms caches and scratch up
    times.clear();
    for (int64_t i = 0; i < n; ++i) {
      OCTET_ASSIGN_OR_RETURN(Tensor x, Tensor::Create(DType::kF32, Shape(dims)));
      std::copy_n(images.data<float>() + i * per_image, per_image, x.data<float>());
      const int64_t start = NowNs(LatencyClock::kWall);
      OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> y, executor.Run(std::span<const Tensor>(&x, 1)));
      times.push_back(MicrosecondsSince(LatencyClock::kWall, start));
    }
  }
  return MedianUs(std::move(times));
}

struct Split {
  DigitsData train, test;
  Tensor train_images, test_images;  // [N, 1, 8, 8]
};

Result<Split> LoadSplit(const std::string& path) {
  OCTET_ASSIGN_OR_RETURN(DigitsData all, ReadDigitsCsv(path));
  const int64_t n = static_cast<int64_t>(all.labels.size());
  const int64_t need = training::kDigitsTrainImages + training::kDigitsTestImages;
  if (n != need) return InvalidArgument("'{}' holds {} images; the demo's split needs {}", path, n, need);
  Split s;
  OCTET_ASSIGN_OR_RETURN(s.train, DigitsRows(all, 0, training::kDigitsTrainImages));
  OCTET_ASSIGN_OR_RETURN(s.test, DigitsRows(all, training::kDigitsTrainImages, n));
  OCTET_ASSIGN_OR_RETURN(s.train_images, s.train.images.Reshaped(Shape{training::kDigitsTrainImages, 1, 8, 8}));
  OCTET_ASSIGN_OR_RETURN(s.test_images, s.test.images.Reshaped(Shape{training::kDigitsTestImages, 1, 8, 8}));
  return s;
}

// Trains `graph` with `recipe` and returns the trained float graph.
Result<Graph> Train(Graph graph, const Context& context, const Tensor& x, const std::vector<int64_t>& y,
                    training::TrainClassifierOptions recipe, const std::string& label) {
  OCTET_ASSIGN_OR_RETURN(training::TrainingGraph model, training::TrainingGraph::Create(std::move(graph), context));
  recipe.progress = CommandProgress(label);
  OCTET_ASSIGN_OR_RETURN(auto summaries, training::TrainClassifier(model, x, y, recipe));
  (void)summaries;
  return model.graph();
}

// The demo's output folder: created when missing; files in it are replaced atomically one by one.
Status WriteModel(const fs::path& dir, const std::string& file, const Graph& graph, const std::string& what,
                  int64_t* bytes) {
  const OctetMetadata metadata = {{"producer", "octet demo"}, {"variant", what}};
  OCTET_ASSIGN_OR_RETURN(std::string serialized, SerializeOctet(graph, metadata, file));
  *bytes = static_cast<int64_t>(serialized.size());
  return WriteFileAtomically((dir / file).string(), serialized);
}

class Demo {
 public:
  Demo(const DemoCommand& c, Context context) : c_(c), context_(std::move(context)) {}

  Status Run() {
    OCTET_ASSIGN_OR_RETURN(const std::string data_path, FindDigitsData(c_.data));
    OCTET_ASSIGN_OR_RETURN(split_, LoadSplit(data_path));
    std::error_code ec;
    fs::create_directories(c_.out, ec);
    if (ec) return IoError("failed to create the output folder '{}': {}", c_.out, ec.message());
    fmt::print("octet demo: digits data '{}' ({} training, {} test images), backend {}, seed {}\n", data_path,
               split_.train.labels.size(), split_.test.labels.size(), c_.backend, c_.seed);
    std::fflush(stdout);
    OCTET_RETURN_IF_ERROR(RunCnn());
    OCTET_RETURN_IF_ERROR(RunQat());
    OCTET_RETURN_IF_ERROR(RunMlp());
    PrintTable();
    OCTET_RETURN_IF_ERROR(WriteResults());
    return RunNumericSuite();
  }

 private:
  Status AddVariant(const std::string& model, const std::string& method, const std::string& file,
                    const Graph& graph, const OpRegistry& registry, const Tensor& test_x,
                    const Tensor* float_logits) {
    Variant v;
    v.model = model;
    v.method = method;
    v.file = file;
    OCTET_ASSIGN_OR_RETURN(const Tensor logits, Logits(graph, registry, context_, test_x));
    OCTET_ASSIGN_OR_RETURN(const int64_t correct, training::CountTop1(logits, split_.test.labels));
    v.accuracy = 100.0 * static_cast<double>(correct) / static_cast<double>(split_.test.labels.size());
    if (float_logits != nullptr) {
      OCTET_ASSIGN_OR_RETURN(v.sqnr_db, Sqnr(*float_logits, logits));
    }
    OCTET_ASSIGN_OR_RETURN(v.latency_us, LatencyUs(graph, registry, context_, test_x));
    OCTET_RETURN_IF_ERROR(WriteModel(c_.out, file, graph, model + ", " + method, &v.bytes));
    variants_.push_back(v);
    return OkStatus();
  }

  Status RunCnn() {
    OCTET_ASSIGN_OR_RETURN(Graph initial, training::BuildDigitsCnn(c_.seed));
    OCTET_ASSIGN_OR_RETURN(Graph trained, Train(std::move(initial), context_, split_.train_images,
                                                 split_.train.labels, training::DigitsCnnRecipe(c_.seed),
                                                 "training the float CNN"));
    // The deployed float model: BatchNorm folded into the convolutions, as every int8 variant has it.
    Graph deployed = trained;
    OCTET_RETURN_IF_ERROR(FoldBatchNorm(deployed).status());
    OCTET_ASSIGN_OR_RETURN(cnn_float_logits_,
                           Logits(deployed, FloatOpRegistry(), context_, split_.test_images));
    OCTET_RETURN_IF_ERROR(AddVariant("CNN", "float", "cnn_float.octet", deployed, FloatOpRegistry(),
                                     split_.test_images, nullptr));
    cnn_float_ = trained;

    // Calibration: the first 256 training images, in batches of 32.
    OCTET_ASSIGN_OR_RETURN(const DigitsData calib, DigitsRows(split_.train, 0, 256));
    OCTET_ASSIGN_OR_RETURN(const Tensor calib_images, calib.images.Reshaped(Shape{256, 1, 8, 8}));
    OCTET_ASSIGN_OR_RETURN(const std::vector<Tensor> calib_batches, SplitBatches(calib_images, 32));
    std::vector<std::vector<Tensor>>& batches = calibration_batches_;
    for (const Tensor& t : calib_batches) batches.push_back({t});
    for (ObserverKind kind : {ObserverKind::kMinMax, ObserverKind::kHistogram, ObserverKind::kEntropy}) {
      OCTET_ASSIGN_OR_RETURN(QConfig q, GetDefaultQConfig(c_.backend));
      const bool reduce_range = q.activation.options.reduce_range;
      q.activation = ObserverSpec{kind, {}};
      q.activation.options.reduce_range = reduce_range;
      QConfigMapping mapping;
      mapping.SetGlobal(q);
      PrepareOptions prepare_options;
      prepare_options.context = &context_;
      OCTET_ASSIGN_OR_RETURN(PreparedGraph prepared, Prepare(trained, mapping, prepare_options));
      CalibrateOptions calibrate_options;
      calibrate_options.progress = CommandProgress(fmt::format("calibrating ({})", ObserverClassName(kind)));
      OCTET_RETURN_IF_ERROR(Calibrate(prepared, context_, batches, calibrate_options));
      OCTET_ASSIGN_OR_RETURN(Graph int8, Convert(prepared));
      std::string name = ObserverClassName(kind);
      if (const size_t at = name.find("Observer"); at != std::string::npos) name.erase(at);
      std::string file = "cnn_int8_" + name + ".octet";
      std::transform(file.begin(), file.end(), file.begin(), [](unsigned char ch) { return std::tolower(ch); });
      OCTET_RETURN_IF_ERROR(AddVariant("CNN", "static int8, " + name, file, int8, QuantizedGraphRegistry(),
                                       split_.test_images, &cnn_float_logits_));
      if (kind == ObserverKind::kMinMax) {
        cnn_minmax_ = int8;
        minmax_mapping_ = mapping;
      }
    }
    return OkStatus();
  }

  // QAT from the trained float CNN with PyTorch's default QAT qconfig (version 1, fused moving-average fake-quant):
  // 3 epochs of SGD (lr 0.002, cosine), observers frozen halfway, BatchNorm statistics for the last epoch.
  Status RunQat() {
    OCTET_ASSIGN_OR_RETURN(qat::QatModel model, qat::PrepareQat(cnn_float_, c_.backend, context_));
    constexpr int kEpochs = 3;
    const int64_t per_epoch = (training::kDigitsTrainImages + 31) / 32;
    qat::QatTrainOptions o;
    o.train.epochs = kEpochs;
    o.train.batch_size = 32;
    o.train.seed = c_.seed;
    o.train.sgd = {.lr = 0.002, .momentum = 0.9, .weight_decay = 1e-4};
    o.train.schedule = {.kind = training::LrScheduleKind::kCosine, .t_max = kEpochs};
    o.train.progress = CommandProgress("QAT of the CNN");
    o.freeze_observers_after_steps = per_epoch * kEpochs / 2;
    o.freeze_bn_after_steps = per_epoch * (kEpochs - 1);
    OCTET_RETURN_IF_ERROR(qat::TrainQat(model, split_.train_images, split_.train.labels, o).status());
    OCTET_ASSIGN_OR_RETURN(const Graph int8, qat::ConvertQat(model));
    // QAT moved the weights away from the float model's: its SQNR is against what training simulated (the QAT
    // model's eval-mode forward with fake-quant), which the int8 kernels should reproduce.
    OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> simulated,
                           model.training_graph().Forward(std::span<const Tensor>(&split_.test_images, 1),
                                                          training::Mode::kEval));
    const Tensor reference = simulated[0];
    return AddVariant("CNN", "QAT int8", "cnn_qat.octet", int8, QuantizedGraphRegistry(), split_.test_images,
                      &reference);
  }

  Status RunMlp() {
    OCTET_ASSIGN_OR_RETURN(Graph initial, training::BuildDigitsMlp(c_.seed));
    OCTET_ASSIGN_OR_RETURN(Graph trained, Train(std::move(initial), context_, split_.train.images,
                                                 split_.train.labels, training::DigitsMlpRecipe(c_.seed),
                                                 "training the float MLP"));
    OCTET_ASSIGN_OR_RETURN(const Tensor float_logits,
                           Logits(trained, FloatOpRegistry(), context_, split_.test.images));
    OCTET_RETURN_IF_ERROR(AddVariant("MLP", "float", "mlp_float.octet", trained, FloatOpRegistry(),
                                     split_.test.images, nullptr));
    QConfigMapping mapping;
    mapping.SetGlobal(GetDefaultDynamicQConfig(/*per_channel=*/true));
    QuantizeDynamicOptions options;
    options.context = &context_;
    OCTET_ASSIGN_OR_RETURN(Graph dynamic, QuantizeDynamic(trained, mapping, options));
    return AddVariant("MLP", "dynamic int8", "mlp_dynamic.octet", dynamic, QuantizedGraphRegistry(),
                      split_.test.images, &float_logits);
  }

  // The numeric suite and the sensitivity analysis on the MinMax int8 CNN against the trained float CNN, on the
  // held-out images; report.json and report.html.
  Status RunNumericSuite() {
    fmt::print("\nnumeric suite: the MinMax int8 CNN against the float CNN on the {} held-out images\n",
               split_.test.labels.size());
    CompareOptions options;
    options.context = &context_;
    options.shadow = true;
    OCTET_ASSIGN_OR_RETURN(const Graph fused, FloatReferenceGraph(cnn_float_, options.fuse_float));
    OCTET_ASSIGN_OR_RETURN(const std::vector<WeightComparison> weights, CompareWeights(fused, cnn_minmax_));
    OCTET_ASSIGN_OR_RETURN(std::unique_ptr<PreparedModelOutputs> prepared,
                           PrepareModelOutputs(cnn_float_, cnn_minmax_, options));
    OCTET_ASSIGN_OR_RETURN(const std::vector<Tensor> test_batches, SplitBatches(split_.test_images, 90));
    std::vector<std::vector<Tensor>> evaluation;
    for (const Tensor& t : test_batches) {
      OCTET_RETURN_IF_ERROR(prepared->Run(std::span<const Tensor>(&t, 1)));
      evaluation.push_back({t});
    }
    PrintComparisonTable(weights, *prepared);
    ReportSources sources;
    sources.float_model = "cnn_float.octet (trained by octet demo)";
    sources.quantized_model = "cnn_int8_minmax.octet";
    sources.inputs.push_back({"image", "data/digits.csv.gz, the last 360 images", split_.test_images.shape()});
    OCTET_ASSIGN_OR_RETURN(nlohmann::json report,
                           BuildReportJson(sources, weights, prepared->activations(), prepared->shadow(),
                                           prepared->outputs()));

    SensitivityOptions sensitivity_options;
    sensitivity_options.context = &context_;
    sensitivity_options.prepare.context = &context_;
    sensitivity_options.target = c_.target_sqnr;
    sensitivity_options.progress = CommandProgress("sensitivity analysis");
    OCTET_ASSIGN_OR_RETURN(const SensitivityReport sensitivity,
                           AnalyzeSensitivity(cnn_float_, minmax_mapping_, calibration_batches_, evaluation,
                                              sensitivity_options));
    fmt::print("\nsensitivity (logits SQNR, all int8 {:.1f} dB): node, only this int8, all but this int8, node time "
               "int8 / float per batch of 90\n", sensitivity.all_quantized);
    for (const NodeSensitivity& n : sensitivity.nodes) {
      fmt::print("  {}. {:<8} {:<6} {:>8.1f} dB {:>8.1f} dB {:>8.1f} / {:.1f} us\n", n.rank, n.name, n.op_type,
                 n.only_this_quantized, n.all_but_this_quantized, n.int8_latency_us, n.float_latency_us);
    }
    if (sensitivity.target_reached) {
      fmt::print("to reach {:.1f} dB keep float: {} ({:.1f} dB)\n", c_.target_sqnr,
                 sensitivity.keep_float.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(sensitivity.keep_float, ", ")),
                 sensitivity.achieved.value_or(sensitivity.all_quantized));
    } else {
      fmt::print("{:.1f} dB is out of reach even with every node float\n", c_.target_sqnr);
    }
    report["sensitivity"] = SensitivityJson(sensitivity);
    OCTET_ASSIGN_OR_RETURN(const std::string html, RenderReportHtml(report));
    // Both are built before either is written.
    OCTET_RETURN_IF_ERROR(WriteFileAtomically((fs::path(c_.out) / "report.json").string(), report.dump(2) + "\n"));
    OCTET_RETURN_IF_ERROR(WriteFileAtomically((fs::path(c_.out) / "report.html").string(), html));
    fmt::print("\nwrote {} and {}\n", (fs::path(c_.out) / "report.json").string(),
               (fs::path(c_.out) / "report.html").string());
    return OkStatus();
  }

  void PrintTable() const {
    fmt::print("\n{:<5} {:<26} {:>9} {:>10} {:>13} {:>14}\n", "model", "variant", "accuracy", "size (KB)",
               "latency (us)", "logits SQNR");
    for (const Variant& v : variants_) {
      const std::string sqnr = !v.sqnr_db ? "-"
                               : std::isinf(*v.sqnr_db) ? "exact"
                                                         : fmt::format("{:.1f} dB", *v.sqnr_db);
      fmt::print("{:<5} {:<26} {:>8.2f}% {:>10.1f} {:>13.1f} {:>14}\n", v.model, v.method, v.accuracy,
                 static_cast<double>(v.bytes) / 1024.0, v.latency_us, sqnr);
    }
    fmt::print("\naccuracy on the {} held-out images; latency of one image, batch 1, {} thread(s), median of 200;\n"
               "logits SQNR against the float model (QAT: against its fake-quant simulation, which int8 should reproduce)\n",
               split_.test.labels.size(), context_.threads());
  }

  Status WriteResults() const {
    nlohmann::json rows = nlohmann::json::array();
    for (const Variant& v : variants_) {
      nlohmann::json row = {{"model", v.model},       {"variant", v.method},       {"accuracy_percent", v.accuracy},
                            {"file", v.file},         {"size_bytes", v.bytes},     {"latency_us", v.latency_us}};
      row["logits_sqnr_db"] = v.sqnr_db && std::isfinite(*v.sqnr_db) ? nlohmann::json(*v.sqnr_db) : nullptr;
      rows.push_back(std::move(row));
    }
    const nlohmann::json results = {{"seed", c_.seed}, {"backend", c_.backend}, {"variants", rows}};
    const fs::path path = fs::path(c_.out) / "results.json";
    OCTET_RETURN_IF_ERROR(WriteFileAtomically(path.string(), results.dump(2) + "\n"));
    fmt::print("wrote the models and {} to '{}'\n", "results.json", c_.out);
    return OkStatus();
  }

  const DemoCommand& c_;
  Context context_;
  Split split_;
  Graph cnn_float_, cnn_minmax_;
  QConfigMapping minmax_mapping_;
  std::vector<std::vector<Tensor>> calibration_batches_;
  Tensor cnn_float_logits_;
  std::vector<Variant> variants_;
};

int RunDemo(const DemoCommand& c) {
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  if (!GetDefaultQConfig(c.backend).ok()) {
    return ReportUsage(fmt::format("--backend must be one of the QConfig presets, got '{}'", c.backend));
  }
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Demo demo(c, std::move(*context));
  if (Status s = demo.Run(); !s.ok()) return ReportFailure(s.WithContext("octet demo"));
  return kExitOk;
}

}  // namespace

void AddDemoCommand(CLI::App& app, CommandRegistry& registry) {
  auto c = std::make_shared<DemoCommand>();
  CLI::App* sub = app.add_subcommand(
      "demo", "Train, quantize (static, dynamic, QAT), evaluate and compare models on the bundled digits data");
  sub->add_option("--out", c->out, "Folder for the models, results.json and the report")->capture_default_str();
  sub->add_option("--data", c->data, "The digits data (digits.csv or digits.csv.gz); default: the bundled copy");
  sub->add_option("--backend", c->backend, "QConfig preset for static quantization and QAT")->capture_default_str();
  sub->add_option("--seed", c->seed, "Seed of the initialisation and the shuffling")->capture_default_str();
  sub->add_option("--target-sqnr", c->target_sqnr, "Sensitivity analysis: logits SQNR (dB) to reach by keeping "
                  "nodes float")->capture_default_str();
  c->context.AddTo(sub, 1);
  registry.Add(sub, [c] { return RunDemo(*c); });
}

}  // namespace octet::cli

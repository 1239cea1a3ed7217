// `octet qat`: PrepareQat, TrainQat, ConvertQat, write.
#include "tools/octet/qat_command.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/executor.h"
#include "io/file_util.h"
#include "io/octet_file.h"
#include "quant/numerics_profile.h"
#include "quant/progress.h"
#include "quant/qat/convert_qat.h"
#include "quant/qat/prepare_qat.h"
#include "quant/qat/train_qat.h"
#include "quant/quantized_registry.h"
#include "quant/training/top1.h"
#include "tools/octet/context_options.h"
#include "tools/octet/model_command.h"
#include "tools/octet/quantize_command.h"
#include "tools/octet/training_data.h"
#if OCTET_WITH_ONNX
#include "io/onnx/qdq_export.h"
#endif

namespace octet::cli {
namespace {

struct QatCommand {
  std::string model, data, labels, output, onnx_output, test_data, test_labels;
  std::string backend = "x86", profile = "reference", weight_quant_range, convert_qparams = "forward";
  int epochs = 3;
  double lr = 0.001, momentum = 0.9, weight_decay = 0.0;
  int64_t batch = 32;
  int freeze_bn_after = -1, freeze_observers_after = -1, weight_bits = 8, qconfig_version = 1;
  bool learnable = false;
  uint64_t seed = 0;
  std::vector<std::string> skip;
  ContextFlags context;
};

// The QAT qconfig the flags describe; usage errors for bad values.
Result<qat::QatQConfig> QConfigFromFlags(const QatCommand& c) {
  OCTET_ASSIGN_OR_RETURN(qat::QatQConfig q, qat::GetDefaultQatQConfig(c.backend, c.qconfig_version));
  if (c.learnable) {
    for (qat::FakeQuantizeConfig* f : {&q.activation, &q.weight}) {
      f->kind = qat::FakeQuantizeKind::kLearnable;
      f->use_grad_scaling = true;  // LSQ's gradient scale 1/sqrt(numel * quant_max)
    }
  }
  if (!c.weight_quant_range.empty()) {
    int64_t lo = 0, hi = 0;
    char comma = 0;
    if (std::sscanf(c.weight_quant_range.c_str(), "%ld%c%ld", &lo, &comma, &hi) != 3 || comma != ',' || lo >= 0 ||
        hi <= 0 || lo < -128 || hi > 127) {
      return InvalidArgument("--weight-quant-range must be MIN,MAX inside [-128, 127] around 0, got '{}'",
                             c.weight_quant_range);
    }
    q.weight.observer_options.quant_min = lo;
    q.weight.observer_options.quant_max = hi;
  } else if (c.weight_bits != 8) {
    if (c.weight_bits < 2 || c.weight_bits > 8) {
      return InvalidArgument("--weight-bits must be 2..8, got {}", c.weight_bits);
    }
    q.weight.observer_options.quant_min = -(int64_t{1} << (c.weight_bits - 1));
    q.weight.observer_options.quant_max = (int64_t{1} << (c.weight_bits - 1)) - 1;
  }
  return q;
}

// Fraction of rows of `x` whose argmax of the int8 model's first output is the label.
Result<double> Int8Accuracy(const Graph& graph, const Context& context, const Tensor& x,
                            const std::vector<int64_t>& labels) {
  CompileOptions co;
  co.input_shapes = {{graph.value(graph.inputs()[0]).name, x.shape()}};
  OCTET_ASSIGN_OR_RETURN(Executor exec, Executor::Compile(graph, context, QuantizedGraphRegistry(), co));
  OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> out, exec.Run(std::vector<Tensor>{x}));
  const Tensor& logits = out.at(0);
  if (logits.shape().rank() != 2 || logits.shape().dim(0) != static_cast<int64_t>(labels.size())) {
    return InvalidArgument("the int8 model's first output is {}, expected logits [{}, C]", logits.shape(),
                           labels.size());
  }
  return training::Top1Accuracy(logits, labels);
}

int Qat(const QatCommand& c) {
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  if (c.test_data.empty() != c.test_labels.empty()) return ReportUsage("--test-data and --test-labels go together");
  if (c.epochs < 1 || c.batch < 1) return ReportUsage("--epochs and --batch must be >= 1");
  Result<qat::QatQConfig> qconfig = QConfigFromFlags(c);
  if (!qconfig.ok()) return ReportUsage(qconfig.status().message());
  if (c.convert_qparams != "forward" && c.convert_qparams != "calculate") {
    return ReportUsage(fmt::format("--convert-qparams must be forward or calculate, got '{}'", c.convert_qparams));
  }
  auto profile = ParseNumericsProfile(c.profile);
  if (!profile.ok()) return ReportUsage(profile.status().message());
#if !OCTET_WITH_ONNX
  if (!c.onnx_output.empty()) return ReportUsage("--onnx needs a build of octet with ONNX (protobuf)");
#endif
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Result<Graph> graph = LoadModel(c.model);
  if (!graph.ok()) return ReportFailure(graph.status());
  const std::string where = fmt::format("failed to train '{}' for QAT", c.model);
  Result<TrainingData> data = ReadTrainingData(c.data, c.labels, c.test_data, c.test_labels, *graph, "octet qat");
  if (!data.ok()) return ReportFailure(data.status());
  const Tensor& x = data->x;
  const std::vector<int64_t>& y = data->y;
  const Tensor& test_x = data->test_x;
  const std::vector<int64_t>& test_y = data->test_y;
  qat::PrepareQatOptions po;
  po.skip = c.skip;
  Result<qat::QatModel> model = qat::PrepareQat(*std::move(graph), *qconfig, *context, po);
  if (!model.ok()) return ReportFailure(model.status().WithContext(where));

  const int64_t per_epoch = (x.shape().dim(0) + c.batch - 1) / c.batch;
  int freeze_observers = c.freeze_observers_after;
  if (c.learnable && freeze_observers < 0) freeze_observers = 1;  // LSQ: estimate for one epoch, then learn
  qat::QatTrainOptions o;
  o.train.epochs = c.epochs;
  o.train.batch_size = c.batch;
  o.train.seed = c.seed;
  o.train.sgd = {.lr = c.lr, .momentum = c.momentum, .weight_decay = c.weight_decay};
  o.train.progress = CommandProgress("qat");
  o.freeze_bn_after_steps = c.freeze_bn_after < 0 ? -1 : per_epoch * c.freeze_bn_after;
  o.freeze_observers_after_steps = freeze_observers < 0 ? -1 : per_epoch * freeze_observers;
  o.train.on_epoch_end = [&](const training::EpochSummary& s) -> Status {
    std::string line = fmt::format("epoch {}/{}: lr {:.6g}, loss {:.4f}, training accuracy {:.2f}%", s.epoch,
                                   c.epochs, s.lr, s.mean_loss, 100.0 * s.train_accuracy);
    if (!test_y.empty()) {
      OCTET_ASSIGN_OR_RETURN(double acc, training::ClassifierAccuracy(model->training_graph(), test_x, test_y));
      line += fmt::format(", test accuracy (fake-quant) {:.2f}%", 100.0 * acc);
    }
    fmt::print("{}\n", line);
    std::fflush(stdout);
    return OkStatus();
  };
  auto summaries = qat::TrainQat(*model, x, y, o);
  if (!summaries.ok()) return ReportFailure(summaries.status().WithContext(where));

  qat::QatConvertOptions convert_options;
  convert_options.convert.profile = *profile;
  convert_options.qparams =
      c.convert_qparams == "forward" ? qat::QatQParamsSource::kForward : qat::QatQParamsSource::kCalculateQParams;
  ConvertReport report;
  Result<Graph> quantized = qat::ConvertQat(*model, convert_options, &report);
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
  std::string test_line;
  if (!test_y.empty()) {
    Result<double> acc = Int8Accuracy(*quantized, *context, test_x, test_y);
    if (!acc.ok()) return ReportFailure(acc.status().WithContext(where));
    test_line = fmt::format(", int8 test accuracy {:.2f}%", 100.0 * *acc);
  }
  const std::map<std::string, std::string> metadata = {
      {"producer", "octet qat"}, {"source", c.model},   {"mode", "qat"},
      {"backend", c.backend},    {"profile", c.profile}, {"epochs", std::to_string(c.epochs)},
      {"learnable", c.learnable ? "true" : "false"},
  };
  if (Status s = WriteOctetFile(c.output, *quantized, metadata); !s.ok()) return ReportFailure(s);
#if OCTET_WITH_ONNX
  if (!c.onnx_output.empty()) {
    if (Status s = WriteFileAtomically(c.onnx_output, onnx_bytes); !s.ok()) return ReportFailure(s);
  }
#endif
  fmt::print("{} (qat, {} backend{}, {} profile): {} nodes, {} quantized, {} kept float{}\n", c.output, c.backend,
             c.learnable ? ", learnable" : "", c.profile, quantized->num_nodes(), report.quantized.size(),
             report.kept_float.size(), test_line);
  if (!c.onnx_output.empty()) {
    fmt::print("ONNX QDQ: {}\n", c.onnx_output);
    std::fflush(stdout);
    WarnIfOnnxRuntimeSaturates(*quantized, c.onnx_output);
  }
  return kExitOk;
}

}  // namespace

void AddQatCommand(CLI::App& app, CommandRegistry& registry) {
  auto c = std::make_shared<QatCommand>();
  CLI::App* t = app.add_subcommand("qat", "Quantization-aware training of a float classifier, then int8 conversion");
  t->add_option("model", c->model, "The float model (.onnx), trained")->required()->type_name("MODEL");
  t->add_option("--data", c->data, "Training inputs, f32 [N, ...]")->required()->type_name("X.npy");
  t->add_option("--labels", c->labels, "Training labels, integers [N]")->required()->type_name("Y.npy");
  t->add_option("-o,--output", c->output, "The int8 model (.octet)")->required()->type_name("OUT.octet");
  t->add_option("--onnx", c->onnx_output, "Also write the int8 model as ONNX QDQ (opset 13)")->type_name("OUT.onnx");
  t->add_option("--epochs", c->epochs, "Epochs")->capture_default_str();
  t->add_option("--lr", c->lr, "Learning rate")->capture_default_str();
  t->add_option("--batch", c->batch, "Mini-batch size")->capture_default_str();
  t->add_option("--momentum", c->momentum, "SGD momentum")->capture_default_str();
  t->add_option("--weight-decay", c->weight_decay, "SGD weight decay")->capture_default_str();
  t->add_option("--backend", c->backend, "get_default_qat_qconfig preset: x86, fbgemm, qnnpack or onednn")
      ->capture_default_str();
  t->add_option("--qconfig-version", c->qconfig_version,
                 "get_default_qat_qconfig version: 1 FusedMovingAvgObsFakeQuantize, 0 FakeQuantize")
      ->capture_default_str();
  t->add_flag("--learnable", c->learnable, "Learn scales and zero points (LSQ, _LearnableFakeQuantize)");
  t->add_option("--freeze-bn-after", c->freeze_bn_after, "Freeze BatchNorm statistics after N epochs (-1: never)")
      ->capture_default_str();
  t->add_option("--freeze-observers-after", c->freeze_observers_after,
                "Disable observers after N epochs (-1: never; --learnable: start learning then, default 1)")
      ->capture_default_str();
  auto* bits = t->add_option("--weight-bits", c->weight_bits, "Weight bits (symmetric range [-2^(b-1), 2^(b-1)-1])")
                   ->capture_default_str();
  t->add_option("--weight-quant-range", c->weight_quant_range, "Weight quant_min,quant_max, e.g. -8,7")
      ->type_name("MIN,MAX")
      ->excludes(bits);
  t->add_option("--skip", c->skip, "Keep this node (or every node under this name) float")->type_name("NODE");
  t->add_option("--profile", c->profile, "Numerics profile of the int8 model")->capture_default_str();
  t->add_option("--convert-qparams", c->convert_qparams,
                "Qparams of the int8 model: forward (what training simulated) or calculate (PyTorch's convert: "
                "calculate_qparams)")
      ->capture_default_str();
  t->add_option("--seed", c->seed, "Seed of the shuffling")->capture_default_str();
  t->add_option("--test-data", c->test_data, "Held-out inputs, for test accuracies")->type_name("X.npy");
  t->add_option("--test-labels", c->test_labels, "Held-out labels")->type_name("Y.npy");
  c->context.AddTo(t, 1);
  registry.Add(t, [c] { return Qat(*c); });
}

}  // namespace octet::cli

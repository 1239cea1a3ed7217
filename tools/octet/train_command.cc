// `octet train`.
#include "tools/octet/train_command.h"

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/weights_checkpoint.h"
#if OCTET_WITH_ONNX
#include "io/onnx/qdq_export.h"
#endif
#include "quant/progress.h"
#include "quant/training/parameter_init.h"
#include "quant/training/train_classifier.h"
#include "tools/octet/context_options.h"
#include "tools/octet/model_command.h"
#include "tools/octet/training_data.h"

namespace octet::cli {
namespace {

bool IsOnnxPath(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

struct TrainCommand {
  std::string model, data, labels, out, checkpoint, test_data, test_labels, schedule = "constant";
  int epochs = 10;
  double lr = 0.01, momentum = 0.9, weight_decay = 0.0, gamma = 0.1;
  int64_t batch = 32;
  int step_size = 1;
  uint64_t seed = 0;
  bool reset_parameters = false;
  ContextFlags context;
};

int Train(const TrainCommand& c) {
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  if (c.test_data.empty() != c.test_labels.empty()) return ReportUsage("--test-data and --test-labels go together");
  Result<training::LrScheduleKind> kind = training::ParseLrScheduleKind(c.schedule);
  if (!kind.ok()) return ReportUsage(kind.status().message());
  if (c.epochs < 1 || c.batch < 1) return ReportUsage("--epochs and --batch must be >= 1");
  const bool onnx_output = IsOnnxPath(c.out);
#if !OCTET_WITH_ONNX
  if (onnx_output) return ReportUsage("-o MODEL.onnx needs a build of octet with ONNX (protobuf)");
#endif
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Result<Graph> graph = LoadModel(c.model);
  if (!graph.ok()) return ReportFailure(graph.status());
  if (c.reset_parameters) {
    if (Status s = training::ResetParameters(*graph, c.seed); !s.ok()) return ReportFailure(s);
  }
  Result<TrainingData> data = ReadTrainingData(c.data, c.labels, c.test_data, c.test_labels, *graph, "octet train");
  if (!data.ok()) return ReportFailure(data.status());
  const Tensor& x = data->x;
  const std::vector<int64_t>& y = data->y;
  const Tensor& test_x = data->test_x;
  const std::vector<int64_t>& test_y = data->test_y;
  Result<training::TrainingGraph> model = training::TrainingGraph::Create(*std::move(graph), *context);
  if (!model.ok()) return ReportFailure(model.status());
  training::TrainClassifierOptions o;
  o.epochs = c.epochs;
  o.batch_size = c.batch;
  o.seed = c.seed;
  o.sgd = {.lr = c.lr, .momentum = c.momentum, .weight_decay = c.weight_decay};
  o.schedule = {.kind = *kind, .step_size = c.step_size, .gamma = c.gamma, .t_max = c.epochs};
  o.progress = CommandProgress("train");
  o.on_epoch_end = [&](const training::EpochSummary& s) -> Status {
    std::string line = fmt::format("epoch {}/{}: lr {:.6g}, loss {:.4f}, training accuracy {:.2f}%", s.epoch,
                                   c.epochs, s.lr, s.mean_loss, 100.0 * s.train_accuracy);
    std::map<std::string, std::string> metadata = {{"epoch", std::to_string(s.epoch)},
                                                   {"loss", fmt::format("{:.6g}", s.mean_loss)},
                                                   {"model", c.model}};
    if (!test_y.empty()) {
      OCTET_ASSIGN_OR_RETURN(double acc, training::ClassifierAccuracy(*model, test_x, test_y));
      line += fmt::format(", test accuracy {:.2f}%", 100.0 * acc);
      metadata["test_accuracy"] = fmt::format("{:.6g}", acc);
    }
    fmt::print("{}\n", line);
    std::fflush(stdout);
    if (!c.checkpoint.empty()) OCTET_RETURN_IF_ERROR(WriteWeightsCheckpoint(model->graph(), c.checkpoint, metadata));
    if (!onnx_output) return WriteWeightsCheckpoint(model->graph(), c.out, metadata);
#if OCTET_WITH_ONNX
    return WriteQdqModel(c.out, model->graph());
#else
    return Unimplemented("writing '{}' needs a build of octet with ONNX (protobuf)", c.out);
#endif
  };
  Result<std::vector<training::EpochSummary>> summaries = training::TrainClassifier(*model, x, y, o);
  if (!summaries.ok()) return ReportFailure(summaries.status());
  return kExitOk;
}

}  // namespace

void AddTrainCommand(CLI::App& app, CommandRegistry& registry) {
  auto cmd = std::make_shared<TrainCommand>();
  CLI::App* t = app.add_subcommand("train", "Train a float classifier model (SGD, cross-entropy) on .npy data");
  t->add_option("model", cmd->model, "The model (.onnx)")->required()->type_name("MODEL");
  t->add_option("--data", cmd->data, "Training inputs, f32 [N, ...]")->required()->type_name("X.npy");
  t->add_option("--labels", cmd->labels, "Training labels, integers [N]")->required()->type_name("Y.npy");
  t->add_option("-o,--output", cmd->out,
                 "The trained float model (.onnx), or a checkpoint folder (.npy weights + manifest.json); rewritten "
                 "after each epoch")
      ->required()
      ->type_name("TRAINED.onnx|DIR");
  t->add_option("--checkpoint", cmd->checkpoint, "Also write a checkpoint folder after each epoch")->type_name("DIR");
  t->add_option("--epochs", cmd->epochs, "Epochs")->capture_default_str();
  t->add_option("--lr", cmd->lr, "Learning rate")->capture_default_str();
  t->add_option("--batch", cmd->batch, "Mini-batch size")->capture_default_str();
  t->add_option("--momentum", cmd->momentum, "SGD momentum")->capture_default_str();
  t->add_option("--weight-decay", cmd->weight_decay, "SGD weight decay (L2, added to the gradient)")
      ->capture_default_str();
  t->add_option("--schedule", cmd->schedule, "Learning-rate schedule per epoch: constant, step, cosine")
      ->capture_default_str();
  t->add_option("--step-size", cmd->step_size, "StepLR: epochs between decays")->capture_default_str();
  t->add_option("--gamma", cmd->gamma, "StepLR: decay factor")->capture_default_str();
  t->add_option("--seed", cmd->seed, "Seed of the shuffling (and of --reset-parameters)")->capture_default_str();
  t->add_flag("--reset-parameters", cmd->reset_parameters, "Start from PyTorch's default random initialisation");
  t->add_option("--test-data", cmd->test_data, "Held-out inputs, for a test accuracy per epoch")->type_name("X.npy");
  t->add_option("--test-labels", cmd->test_labels, "Held-out labels")->type_name("Y.npy");
  cmd->context.AddTo(t, 1);
  registry.Add(t, [cmd] { return Train(*cmd); });
}

}  // namespace octet::cli

// The classifier training loop.
#include "quant/training/train_classifier.h"

#include <cmath>

#include "ops/float/grad/loss.h"
#include "quant/training/mini_batches.h"
#include "quant/training/top1.h"

namespace octet::training {
namespace {

Status CheckData(const TrainingGraph& model, const Tensor& x, std::span<const int64_t> labels) {
  if (model.graph().inputs().size() != 1 || model.graph().outputs().empty()) {
    return InvalidArgument("a classifier needs one graph input and logits as its first output; graph '{}' has {} inputs",
                           model.graph().name(), model.graph().inputs().size());
  }
  if (x.shape().rank() < 1 || x.shape().dim(0) != static_cast<int64_t>(labels.size())) {
    return InvalidArgument("data {} and {} labels do not match", x.shape(), labels.size());
  }
  if (labels.empty()) return InvalidArgument("no training data");
  return OkStatus();
}

Result<Tensor> Logits(const std::vector<Tensor>& outputs) {
  if (outputs.empty() || outputs[0].shape().rank() != 2 || outputs[0].dtype() != DType::kF32) {
    return InvalidArgument("a classifier's first output must be f32 logits [N, C], got {}",
                           outputs.empty() ? Shape{0} : outputs[0].shape());
  }
  return outputs[0];
}

}  // namespace

Result<std::vector<EpochSummary>> TrainClassifier(TrainingGraph& model, const Tensor& x,
                                                  std::span<const int64_t> labels,
                                                  const TrainClassifierOptions& options) {
  OCTET_RETURN_IF_ERROR(CheckData(model, x, labels));
  if (options.epochs < 0) return InvalidArgument("epochs must be >= 0, got {}", options.epochs);
  OCTET_ASSIGN_OR_RETURN(Sgd sgd, Sgd::Create(options.sgd));
  OCTET_ASSIGN_OR_RETURN(LrScheduler schedule, LrScheduler::Create(options.sgd.lr, options.schedule));
  const int64_t count = x.shape().dim(0);
  const int64_t per_epoch = (count + options.batch_size - 1) / std::max<int64_t>(options.batch_size, 1);
  const int64_t total = per_epoch * options.epochs;
  int64_t done = 0;
  std::vector<Tensor> params = model.AllParameters();
  std::vector<EpochSummary> summaries;
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    sgd.set_lr(schedule.lr());
    OCTET_ASSIGN_OR_RETURN(auto batches, MiniBatches(count, options.batch_size, options.seed, epoch - 1));
    double loss_sum = 0.0;
    int64_t correct = 0;
    for (size_t b = 0; b < batches.size(); ++b) {
      const std::vector<int64_t>& rows = batches[b];
      if (options.on_batch_begin) OCTET_RETURN_IF_ERROR(options.on_batch_begin(done));
      OCTET_ASSIGN_OR_RETURN(Tensor batch_x, GatherRows(x, rows));
      std::vector<int64_t> batch_y;
      for (int64_t r : rows) batch_y.push_back(labels[static_cast<size_t>(r)]);
      const Tensor inputs[] = {batch_x};
      OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, model.Forward(inputs, Mode::kTraining));
      OCTET_ASSIGN_OR_RETURN(Tensor logits, Logits(outputs));
      OCTET_ASSIGN_OR_RETURN(float_ops::LossAndGrad loss, float_ops::SoftmaxCrossEntropy(logits, batch_y));
      if (!std::isfinite(loss.loss)) {
        return FailedPrecondition("training diverged: loss {} at epoch {}, batch {} (lower the learning rate)",
                                  loss.loss, epoch, b + 1);
      }
      loss_sum += loss.loss * static_cast<double>(rows.size());
      OCTET_ASSIGN_OR_RETURN(const int64_t batch_correct, CountTop1(logits, batch_y));
      correct += batch_correct;
      std::vector<Tensor> output_grads(outputs.size());
      output_grads[0] = std::move(loss.grad);
      OCTET_RETURN_IF_ERROR(model.Backward(output_grads));
      const std::vector<Tensor> grads = model.AllGradients();
      OCTET_RETURN_IF_ERROR(sgd.Step(params, grads));
      ++done;
      if (options.progress) options.progress(done, total);
    }
    EpochSummary s;
    s.epoch = epoch;
    s.lr = schedule.lr();
    s.mean_loss = loss_sum / static_cast<double>(count);
    s.train_accuracy = static_cast<double>(correct) / static_cast<double>(count);
    summaries.push_back(s);
    schedule.Step();
    if (options.on_epoch_end) {
      OCTET_RETURN_IF_ERROR(options.on_epoch_end(s));
    }
  }
  return summaries;
}

Result<double> ClassifierAccuracy(TrainingGraph& model, const Tensor& x, std::span<const int64_t> labels,
                                  int64_t batch_size) {
  OCTET_RETURN_IF_ERROR(CheckData(model, x, labels));
  const int64_t count = x.shape().dim(0);
  OCTET_ASSIGN_OR_RETURN(auto batches, MiniBatches(count, batch_size, 0, 0, /*shuffle=*/false));
  int64_t correct = 0;
  for (const std::vector<int64_t>& rows : batches) {
    OCTET_ASSIGN_OR_RETURN(Tensor batch_x, GatherRows(x, rows));
    const Tensor inputs[] = {batch_x};
    OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, model.Forward(inputs, Mode::kEval));
    OCTET_ASSIGN_OR_RETURN(Tensor logits, Logits(outputs));
    std::vector<int64_t> batch_y;
    for (int64_t r : rows) batch_y.push_back(labels[static_cast<size_t>(r)]);
    OCTET_ASSIGN_OR_RETURN(const int64_t batch_correct, CountTop1(logits, batch_y));
    correct += batch_correct;
  }
  return static_cast<double>(correct) / static_cast<double>(count);
}

}  // namespace octet::training

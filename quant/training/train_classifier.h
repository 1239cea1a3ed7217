// The training loop of a classifier: epochs of seeded mini-batches through a TrainingGraph in training mode,
// softmax cross-entropy on its first output (logits [N, C]), backward, SGD, a learning-rate schedule stepped per
// epoch, progress per batch and a callback per epoch (where checkpoints are written). And its evaluation.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "quant/progress.h"
#include "quant/training/lr_scheduler.h"
#include "quant/training/sgd.h"
#include "quant/training/training_graph.h"

namespace octet::training {

struct EpochSummary {
  int epoch = 0;            // from 1
  double lr = 0.0;          // the learning rate the epoch ran with
  double mean_loss = 0.0;   // mean of the batch losses, weighted by batch size
  double train_accuracy = 0.0;  // of the training-mode predictions made during the epoch
};

struct TrainClassifierOptions {
  int epochs = 10;
  int64_t batch_size = 32;
  SgdOptions sgd;
  LrScheduleOptions schedule;
  uint64_t seed = 0;  // shuffling
  // (batches done, batches in all epochs) after every batch; empty = silent.
  ProgressFn progress;
  // Before every batch, with the number of batches done (QAT freezes observers and BatchNorm statistics here).
  std::function<Status(int64_t step)> on_batch_begin;
  // After every epoch, with the graph's weights updated; an error stops training (and is returned).
  std::function<Status(const EpochSummary&)> on_epoch_end;
};

// Trains `model` (one graph input fed with rows of `x`, dimension 0 = sample) on `labels` (one per row, in
// [0, C)); SGD updates model.AllParameters() (the graph's and its modules'). Returns one summary per epoch. Fails on
// a label outside the logits' classes, a non-finite loss (naming the epoch and batch), or bad options.
Result<std::vector<EpochSummary>> TrainClassifier(TrainingGraph& model, const Tensor& x,
                                                  std::span<const int64_t> labels,
                                                  const TrainClassifierOptions& options);

// Fraction of rows whose eval-mode argmax (first maximum) equals the label.
Result<double> ClassifierAccuracy(TrainingGraph& model, const Tensor& x, std::span<const int64_t> labels,
                                  int64_t batch_size = 256);

}  // namespace octet::training

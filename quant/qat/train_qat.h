// The QAT training loop: TrainClassifier (quant/training/train_classifier.h) on a QatModel's training graph, with
// PyTorch's usual recipe of freezing, by step (one step = one mini-batch, counted from 0):
//   * observers: from step `freeze_observers_after_steps` on, no module observes any more (disable_observer); its
//     qparams stay as they are. kLearnable modules switch to learning scale and zero point then
//     (enable_param_learning); before it they estimate them from the observer (static estimate).
//   * BatchNorm statistics: from step `freeze_bn_after_steps` on, BatchNormalization uses and keeps its running
//     statistics (freeze_bn_stats).
// -1 never freezes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "quant/qat/prepare_qat.h"
#include "quant/training/train_classifier.h"

namespace octet::qat {

struct QatTrainOptions {
  training::TrainClassifierOptions train;  // its on_batch_begin is called after the freezing
  int64_t freeze_observers_after_steps = -1;
  int64_t freeze_bn_after_steps = -1;
};

Result<std::vector<training::EpochSummary>> TrainQat(QatModel& model, const Tensor& x, std::span<const int64_t> labels,
                                                     const QatTrainOptions& options);

}  // namespace octet::qat

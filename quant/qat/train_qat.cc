// The QAT training loop (see train_qat.h).
#include "quant/qat/train_qat.h"

namespace octet::qat {

Result<std::vector<training::EpochSummary>> TrainQat(QatModel& model, const Tensor& x, std::span<const int64_t> labels,
                                                     const QatTrainOptions& options) {
  training::TrainClassifierOptions o = options.train;
  bool observers_frozen = false, bn_frozen = false;
  o.on_batch_begin = [&](int64_t step) -> Status {
    const int64_t observers_at = options.freeze_observers_after_steps;
    if (!observers_frozen && observers_at >= 0 && step >= observers_at) {
      OCTET_RETURN_IF_ERROR(model.DisableObservers());
      observers_frozen = true;
    }
    if (!bn_frozen && options.freeze_bn_after_steps >= 0 && step >= options.freeze_bn_after_steps) {
      model.FreezeBatchNormStats();
      bn_frozen = true;
    }
    return options.train.on_batch_begin ? options.train.on_batch_begin(step) : OkStatus();
  };
  return training::TrainClassifier(model.training_graph(), x, labels, o);
}

}  // namespace octet::qat

// Learning-rate schedules stepped once per epoch, as torch.optim.lr_scheduler (PyTorch 1.13) computes them, in
// double and with PyTorch's recursive (chainable) formulas, so the values equal PyTorch's to the last bit:
//   StepLR:            lr_e = lr_{e-1} * gamma when e % step_size == 0 (e > 0), else lr_{e-1}
//   CosineAnnealingLR: lr_e = eta_min + (lr_{e-1} - eta_min) * (1 + cos(pi e / T)) / (1 + cos(pi (e - 1) / T)),
//                      with PyTorch's special step (e - 1 - T) % 2T == 0:
//                      lr_e = lr_{e-1} + (base_lr - eta_min) * (1 - cos(pi / T)) / 2
//   Constant:          lr_e = base_lr
#pragma once

#include <string>

#include "core/status.h"

namespace octet::training {

enum class LrScheduleKind { kConstant, kStep, kCosine };

struct LrScheduleOptions {
  LrScheduleKind kind = LrScheduleKind::kConstant;
  int step_size = 1;      // StepLR
  double gamma = 0.1;     // StepLR
  int t_max = 1;          // CosineAnnealingLR
  double eta_min = 0.0;   // CosineAnnealingLR
};

class LrScheduler {
 public:
  // Fails on step_size < 1, t_max < 1 or a non-finite gamma / eta_min.
  static Result<LrScheduler> Create(double base_lr, const LrScheduleOptions& options);

  // The learning rate of the current epoch (epoch 0 = base_lr).
  double lr() const { return lr_; }
  int epoch() const { return epoch_; }
  // Moves to the next epoch (torch's scheduler.step()) and returns its learning rate.
  double Step();

 private:
  LrScheduler(double base_lr, const LrScheduleOptions& options) : base_lr_(base_lr), lr_(base_lr), options_(options) {}
  double base_lr_;
  double lr_;
  int epoch_ = 0;
  LrScheduleOptions options_;
};

// "constant", "step" or "cosine".
Result<LrScheduleKind> ParseLrScheduleKind(const std::string& name);

}  // namespace octet::training

// StepLR and CosineAnnealingLR.
#include "quant/training/lr_scheduler.h"

#include <cmath>
#include <numbers>

namespace octet::training {

Result<LrScheduler> LrScheduler::Create(double base_lr, const LrScheduleOptions& o) {
  if (!std::isfinite(base_lr) || base_lr < 0.0) return InvalidArgument("learning rate must be >= 0, got {}", base_lr);
  if (o.kind == LrScheduleKind::kStep && (o.step_size < 1 || !std::isfinite(o.gamma))) {
    return InvalidArgument("StepLR needs step_size >= 1 and a finite gamma, got {} and {}", o.step_size, o.gamma);
  }
  if (o.kind == LrScheduleKind::kCosine && (o.t_max < 1 || !std::isfinite(o.eta_min))) {
    return InvalidArgument("CosineAnnealingLR needs T_max >= 1 and a finite eta_min, got {} and {}", o.t_max,
                           o.eta_min);
  }
  return LrScheduler(base_lr, o);
}

double LrScheduler::Step() {
  ++epoch_;
  const double pi = std::numbers::pi;
  switch (options_.kind) {
    case LrScheduleKind::kConstant:
      break;
    case LrScheduleKind::kStep:
      if (epoch_ % options_.step_size == 0) lr_ *= options_.gamma;
      break;
    case LrScheduleKind::kCosine: {
      const double t = options_.t_max, e = epoch_, eta = options_.eta_min;
      if ((epoch_ - 1 - options_.t_max) % (2 * options_.t_max) == 0) {
        lr_ = lr_ + (base_lr_ - eta) * (1.0 - std::cos(pi / t)) / 2.0;
      } else {
        lr_ = (1.0 + std::cos(pi * e / t)) / (1.0 + std::cos(pi * (e - 1.0) / t)) * (lr_ - eta) + eta;
      }
      break;
    }
  }
  return lr_;
}

Result<LrScheduleKind> ParseLrScheduleKind(const std::string& name) {
  if (name == "constant") return LrScheduleKind::kConstant;
  if (name == "step") return LrScheduleKind::kStep;
  if (name == "cosine") return LrScheduleKind::kCosine;
  return InvalidArgument("unknown learning-rate schedule '{}' (constant, step, cosine)", name);
}

}  // namespace octet::training

// FusedMovingAvgObsFakeQuantize (numerics.md §2.9), PyTorch 1.13's fused_moving_avg_obs_fake_quant:
//   observer on:   batch min / max (per tensor, or per channel along axis 0 of the input seen as [C, -1]);
//                  running = isinf(running) ? batch : running + c * (batch - running)   (float32, per element)
//   fake-quant on: (scale, zp) = ChooseQuantizationParams(running_min, running_max, qmin, qmax,
//                                preserve_sparsity = symmetric) with the scale in double, stored as float
//                  (0.1 when the range is empty or all zero), then fake_quantize_per_{tensor,channel}_affine.
// Convert's qparams come from the observer path instead (_calculate_qparams on the running range, §2.3), as
// PyTorch's calculate_qparams delegates to the MovingAverage observer whose buffers the fused op updates.
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "observers/observer_options.h"
#include "observers/qparams_math.h"
#include "observers/tensor_scan.h"
#include "ops/quantize.h"
#include "ops/reference/dynamic_qgemm_reference.h"
#include "quant/qat/fake_quantize_kinds.h"

namespace octet::qat {
namespace {

constexpr std::string_view kFusedKindName = "FusedMovingAvgObsFakeQuantize";
constexpr float kInf = std::numeric_limits<float>::infinity();

class FusedMovingAvgObsFakeQuantize final : public FakeQuantizeModule {
 public:
  FusedMovingAvgObsFakeQuantize(const FakeQuantizeConfig& config, const Context& context,
                                ResolvedObserverOptions options)
      : FakeQuantizeModule(config, context),
        options_(std::move(options)),
        per_channel_(IsPerChannel(options_.qscheme)),
        symmetric_(IsSymmetric(options_.qscheme)) {
    if (!per_channel_) {
      running_min_ = {kInf};
      running_max_ = {-kInf};
    }
  }

  Result<Tensor> Forward(const Tensor& x) override {
    OCTET_RETURN_IF_ERROR(CheckFakeQuantizeInput(x, kFusedKindName));
    OCTET_RETURN_IF_ERROR(SizeRunningRange(x.shape()));
    last_shape_.reset();
    if (observer_enabled_) OCTET_RETURN_IF_ERROR(Observe(x));
    if (!fake_quant_enabled_) {
      mask_ = Tensor();
      last_shape_ = x.shape();
      return x.Clone();
    }
    OCTET_ASSIGN_OR_RETURN(QParams qparams, ChooseQParams());
    OCTET_ASSIGN_OR_RETURN(FakeQuantizeOutput out, FakeQuantize(context(), x, qparams, {.name = "fake-quantize input"}));
    mask_ = std::move(out.mask);
    last_shape_ = x.shape();
    return std::move(out.output);
  }

  // The fused op with the observer off: the qparams chosen from the running range, as the last Forward used.
  Result<Tensor> ForwardEval(const Tensor& x) const override {
    OCTET_RETURN_IF_ERROR(CheckFakeQuantizeInput(x, kFusedKindName));
    if (!fake_quant_enabled_) return x.Clone();
    if (per_channel_ && running_min_.empty()) {
      return FailedPrecondition("{} eval forward: the per-channel module has not seen a training Forward yet",
                                kFusedKindName);
    }
    OCTET_ASSIGN_OR_RETURN(QParams qparams, ChooseQParams());
    Status fits = qparams.ValidateFor(x.shape(), "fake-quantize input");
    if (!fits.ok()) return InvalidArgument("{} eval forward: {}", kFusedKindName, fits.message());
    OCTET_ASSIGN_OR_RETURN(FakeQuantizeOutput out, FakeQuantize(context(), x, qparams, {.name = "fake-quantize input"}));
    return std::move(out.output);
  }

  Result<Tensor> Backward(const Tensor& dy) override {
    if (!last_shape_) return FailedPrecondition("{} backward: no forward pass to differentiate", kFusedKindName);
    return StraightThroughBackward(dy, mask_, *last_shape_, kFusedKindName);
  }

  Result<QParams> CalculateQParams() const override {
    return CalculateQParamsFromRange(running_min_, running_max_, options_.Spec(0));
  }

  Result<QParams> FakeQuantQParams() const override {
    if (running_min_.empty() || std::isinf(running_min_[0])) {
      return FailedPrecondition("{}: no qparams before the first observed Forward", kFusedKindName);
    }
    return ChooseQParams();
  }

 private:
  // Per channel, the running range gets one (+inf, -inf) entry per channel of the first input; later inputs must
  // have as many channels (PyTorch would read past its buffers).
  Status SizeRunningRange(const Shape& shape) {
    if (!per_channel_) return OkStatus();
    if (shape.rank() < 2) {
      return InvalidArgument("{} forward: per-channel fake-quant needs an input of rank >= 2 (channels along axis 0), "
                             "got shape {}",
                             kFusedKindName, shape);
    }
    const auto channels = static_cast<size_t>(shape.dim(0));
    if (running_min_.empty()) {
      running_min_.assign(channels, kInf);
      running_max_.assign(channels, -kInf);
    } else if (running_min_.size() != channels) {
      return InvalidArgument("{} forward: the input has {} channels along axis 0 (shape {}), but this per-channel "
                             "module has seen {}",
                             kFusedKindName, channels, shape, running_min_.size());
    }
    return OkStatus();
  }

  Status Observe(const Tensor& x) {
    std::vector<float> batch_min, batch_max;
    NonFiniteStats nonfinite;
    if (per_channel_) {
      ChannelRangeScan scan = ScanChannelRanges(context(), x.values<float>(), x.shape(), 0);
      batch_min = std::move(scan.min);
      batch_max = std::move(scan.max);
      nonfinite = scan.nonfinite;
    } else {
      RangeScan scan = ScanRange(context(), x.values<float>());
      batch_min = {scan.min};
      batch_max = {scan.max};
      nonfinite = scan.nonfinite;
    }
    if (nonfinite.count() != 0) {
      return InvalidArgument("{} forward: the input has {} non-finite values (first at flat index {}: {})", kFusedKindName,
                             nonfinite.count(), nonfinite.first_index, nonfinite.first_value);
    }
    const float c = options_.averaging_constant;
    for (size_t i = 0; i < running_min_.size(); ++i) {
      running_min_[i] = std::isinf(running_min_[i]) ? batch_min[i] : running_min_[i] + c * (batch_min[i] - running_min_[i]);
      running_max_[i] = std::isinf(running_max_[i]) ? batch_max[i] : running_max_[i] + c * (batch_max[i] - running_max_[i]);
    }
    return OkStatus();
  }

  Result<QParams> ChooseQParams() const {
    std::vector<float> scales(running_min_.size());
    std::vector<int32_t> zero_points(running_min_.size());
    const auto qmin = static_cast<int32_t>(options_.range.quant_min);
    const auto qmax = static_cast<int32_t>(options_.range.quant_max);
    for (size_t i = 0; i < running_min_.size(); ++i) {
      const reference::ChosenQParams chosen =
          reference::ChooseQuantizationParams(running_min_[i], running_max_[i], qmin, qmax, symmetric_);
      scales[i] = static_cast<float>(chosen.scale);
      zero_points[i] = chosen.zero_point;
    }
    // Affine schemes: ChooseQuantizationParams' symmetric zero point is only the midpoint when min < 0 < max.
    Result<QParams> qparams =
        QParams::Create(per_channel_ ? QScheme::kPerChannelAffine : QScheme::kPerTensorAffine, options_.dtype, qmin,
                        qmax, std::move(scales), std::move(zero_points), 0);
    if (!qparams.ok()) return InvalidArgument("{} forward: {}", kFusedKindName, qparams.status().message());
    return qparams;
  }

  ResolvedObserverOptions options_;
  bool per_channel_;
  bool symmetric_;
  std::vector<float> running_min_;  // the observer's min_val / max_val buffers
  std::vector<float> running_max_;
  Tensor mask_;
  std::optional<Shape> last_shape_;
};

}  // namespace

Result<std::unique_ptr<FakeQuantizeModule>> MakeFusedMovingAvgObsFakeQuantize(const FakeQuantizeConfig& config,
                                                                               const Context& context) {
  if (config.observer != ObserverKind::kMovingAverageMinMax &&
      config.observer != ObserverKind::kMovingAveragePerChannelMinMax) {
    return InvalidArgument("failed to create {}: the observer must be moving_average_minmax or "
                           "moving_average_per_channel_minmax, got {}",
                           kFusedKindName, ObserverKindName(config.observer));
  }
  auto options = ResolveObserverOptions(config.observer, config.observer_options);
  if (!options.ok()) return InvalidArgument("failed to create {}: {}", kFusedKindName, options.status().message());
  if (options->skip_non_finite) {
    return InvalidArgument("failed to create {}: skip_non_finite is not supported (PyTorch's fused op has no such "
                           "policy)",
                           kFusedKindName);
  }
  if (IsPerChannel(options->qscheme) && options->ch_axis != 0) {
    return InvalidArgument("failed to create {}: per-channel fake-quant supports only ch_axis 0 (PyTorch's fused op "
                           "quantizes along axis 0), got ch_axis {}",
                           kFusedKindName, options->ch_axis);
  }
  return std::unique_ptr<FakeQuantizeModule>(new FusedMovingAvgObsFakeQuantize(config, context, std::move(*options)));
}

}  // namespace octet::qat

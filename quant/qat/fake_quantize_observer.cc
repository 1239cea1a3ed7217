// FakeQuantize (torch.ao.quantization.FakeQuantize, numerics.md §2.8): an octet observer watches the input, the
// qparams are recomputed from it after every observed batch, and fake_quantize_per_{tensor,channel}_affine
// (ops/quantize.h FakeQuantize) quantizes; the backward pass is the straight-through estimator dX = dY * mask.
#include <memory>
#include <optional>
#include <utility>

#include "observers/observer.h"
#include "observers/observer_factory.h"
#include "ops/quantize.h"
#include "quant/qat/fake_quantize_kinds.h"

namespace octet::qat {
namespace {

constexpr std::string_view kKindName = "FakeQuantize";

class ObserverFakeQuantize final : public FakeQuantizeModule {
 public:
  ObserverFakeQuantize(const FakeQuantizeConfig& config, const Context& context, std::unique_ptr<Observer> observer,
                       QParams initial)
      : FakeQuantizeModule(config, context), observer_(std::move(observer)), qparams_(std::move(initial)) {
    observer_->set_context(&context);
  }

  Result<Tensor> Forward(const Tensor& x) override {
    OCTET_RETURN_IF_ERROR(CheckFakeQuantizeInput(x, kKindName));
    last_shape_.reset();
    if (observer_enabled_) {
      OCTET_RETURN_IF_ERROR(observer_->Observe(x, "fake-quantize input"));
      OCTET_ASSIGN_OR_RETURN(qparams_, observer_->CalculateQParams());
    }
    if (!fake_quant_enabled_) {
      mask_ = Tensor();
      last_shape_ = x.shape();
      return x.Clone();
    }
    OCTET_ASSIGN_OR_RETURN(FakeQuantizeOutput out, FakeQuantizeWithCurrent(x));
    mask_ = std::move(out.mask);
    last_shape_ = x.shape();
    return std::move(out.output);
  }

  Result<Tensor> ForwardEval(const Tensor& x) const override {
    OCTET_RETURN_IF_ERROR(CheckFakeQuantizeInput(x, kKindName));
    if (!fake_quant_enabled_) return x.Clone();
    OCTET_ASSIGN_OR_RETURN(FakeQuantizeOutput out, FakeQuantizeWithCurrent(x));
    return std::move(out.output);
  }

  Result<Tensor> Backward(const Tensor& dy) override {
    if (!last_shape_) return FailedPrecondition("{} backward: no forward pass to differentiate", kKindName);
    return StraightThroughBackward(dy, mask_, *last_shape_, kKindName);
  }

  Result<QParams> CalculateQParams() const override { return observer_->CalculateQParams(); }

 private:
  Result<FakeQuantizeOutput> FakeQuantizeWithCurrent(const Tensor& x) const {
    Status valid = qparams_.ValidateFor(x.shape(), "fake-quantize input");
    if (!valid.ok()) {
      return InvalidArgument("{} forward: the current qparams ({}) do not fit the input of shape {}{}: {}", kKindName,
                             qparams_.ToString(), x.shape(),
                             observer_enabled_ ? "" : " (the observer is disabled and has not seen this shape)",
                             valid.message());
    }
    return FakeQuantize(context(), x, qparams_, {.nan_policy = NanPolicy::kError, .name = "fake-quantize input"});
  }

  std::unique_ptr<Observer> observer_;
  QParams qparams_;  // PyTorch's scale / zero_point buffers: scale 1.0, zero point 0 until the first observation
  Tensor mask_;
  std::optional<Shape> last_shape_;
};

}  // namespace

Result<std::unique_ptr<FakeQuantizeModule>> MakeObserverFakeQuantize(const FakeQuantizeConfig& config,
                                                                      const Context& context) {
  auto observer = MakeObserver(config.observer, config.observer_options);
  if (!observer.ok()) {
    return InvalidArgument("failed to create {}: {}", kKindName, observer.status().message());
  }
  const ResolvedObserverOptions& options = (*observer)->options();
  // The buffers before any observation: scale [1.0], zero point [0] over the observer's range.
  OCTET_ASSIGN_OR_RETURN(QParams initial,
                         QParams::PerTensor(options.dtype, 1.0f, 0, options.range.quant_min, options.range.quant_max));
  return std::unique_ptr<FakeQuantizeModule>(
      new ObserverFakeQuantize(config, context, std::move(*observer), std::move(initial)));
}

}  // namespace octet::qat

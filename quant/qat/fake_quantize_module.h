// Fake-quantize modules for quantization-aware training (issue #8; numerics.md §2.8-2.11): PyTorch 1.13's
// FakeQuantize, FusedMovingAvgObsFakeQuantize and _LearnableFakeQuantize (LSQ), with their straight-through
// backward, and get_default_qat_qconfig.
//
// A module watches one f32 tensor during training. Forward observes (when the observer is enabled), recomputes the
// qparams every step as PyTorch does, and fake-quantizes (when fake-quant is enabled); Backward turns dL/dy of the
// last Forward into dL/dx (dY * mask) and, for kLearnable, adds dL/dscale and dL/dzero_point into the gradients of
// learnable_parameters(). Forward outputs and dX equal PyTorch 1.13 bit for bit (tests/data/fake_quant).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"
#include "observers/observer_options.h"

namespace octet::qat {

enum class FakeQuantizeKind {
  kFakeQuantize,       // torch.ao.quantization.FakeQuantize: observer (any octet observer, default
                       // MovingAverageMinMax) + fake_quantize_per_{tensor,channel}_affine, STE with mask (§2.8)
  kFusedMovingAvgObs,  // FusedMovingAvgObsFakeQuantize (§2.9): moving-average min/max, ChooseQuantizationParams
                       // in double, per-channel ch_axis 0 only
  kLearnable,          // _LearnableFakeQuantize / LSQ (§2.10): scale and float zero point are learned parameters
};

// "fake_quantize", "fused_moving_avg_obs", "learnable".
const char* FakeQuantizeKindName(FakeQuantizeKind kind);
Result<FakeQuantizeKind> ParseFakeQuantizeKind(std::string_view name);

struct FakeQuantizeConfig {
  FakeQuantizeKind kind = FakeQuantizeKind::kFusedMovingAvgObs;
  ObserverKind observer = ObserverKind::kMovingAverageMinMax;  // or kMovingAveragePerChannelMinMax (per channel)
  ObserverOptions observer_options;  // dtype, qscheme, reduce_range, quant_min/max, eps, averaging_constant, ch_axis
  bool use_grad_scaling = false;     // kLearnable: grad_factor = 1/sqrt(numel * quant_max)
  // kLearnable per channel: the channel count (PyTorch's channel_len), so that learnable_parameters() has its final
  // shape before the first Forward; 0: taken from the first Forward (the parameters are allocated then).
  int64_t channels = 0;
};

// PyTorch's get_default_qat_qconfig(backend, version) as FakeQuantizeConfigs: {activation, weight}.
struct QatQConfig {
  FakeQuantizeConfig activation;
  FakeQuantizeConfig weight;
};
// backend: "x86", "fbgemm", "qnnpack" or "onednn"; version 0 (FakeQuantize) or 1 (FusedMovingAvgObs).
Result<QatQConfig> GetDefaultQatQConfig(std::string_view backend, int version = 1);

class FakeQuantizeModule {
 public:
  // Validates the config (observer options as the observer would, and what the kind refuses: the fused kind takes
  // only ch_axis 0 per channel). `context` (ISAs, threads) is not owned and must outlive the module.
  static Result<std::unique_ptr<FakeQuantizeModule>> Create(const FakeQuantizeConfig& config, const Context& context);
  virtual ~FakeQuantizeModule();
  FakeQuantizeModule(const FakeQuantizeModule&) = delete;
  FakeQuantizeModule& operator=(const FakeQuantizeModule&) = delete;

  // Training-mode forward of one tensor (f32): observe when the observer is enabled (qparams recomputed every step,
  // as PyTorch), fake-quantize when fake-quant is enabled (else identity). Keeps what Backward needs (the mask...).
  virtual Result<Tensor> Forward(const Tensor& x) = 0;
  // Eval-mode forward: fake-quantize with the current qparams (identity when fake-quant is disabled), no
  // observing, nothing kept.
  virtual Result<Tensor> ForwardEval(const Tensor& x) const = 0;
  // dL/dx for dL/dy of the last Forward (straight-through with the clipping mask). kLearnable in param-learning
  // mode also ADDS dL/dscale and dL/dzero_point into the gradients of learnable_parameters() (in the other modes
  // the observer sets the parameters, and they get no gradient). dy must have x's shape. The input of Forward is
  // kept by reference (not copied) until the next Forward: do not write into it before Backward.
  virtual Result<Tensor> Backward(const Tensor& dy) = 0;
  // The qparams Convert uses (PyTorch's calculate_qparams; zero point rounded and clamped for kLearnable).
  virtual Result<QParams> CalculateQParams() const = 0;
  // The qparams the fake-quant forward uses now (ForwardEval's). The same as CalculateQParams() except for
  // kFusedMovingAvgObs, whose forward chooses them with ChooseQuantizationParams (§2.9) while calculate_qparams is
  // the observer's formula; ConvertQat takes these so the int8 model computes what training simulated.
  virtual Result<QParams> FakeQuantQParams() const { return CalculateQParams(); }

  void set_observer_enabled(bool on) { observer_enabled_ = on; }
  bool observer_enabled() const { return observer_enabled_; }
  void set_fake_quant_enabled(bool on) { fake_quant_enabled_ = on; }
  bool fake_quant_enabled() const { return fake_quant_enabled_; }

  // kLearnable modes (PyTorch's enable_param_learning / enable_static_estimate / enable_static_observation); other
  // kinds: param learning is an error, the other two set the observer / fake-quant flags the same way.
  //   static estimate:    observer on, fake-quant on,  learning off (the observer's qparams are copied in)
  //   param learning:     observer off, fake-quant on, learning on
  //   static observation: observer on, fake-quant off, learning off
  Status EnableParamLearning();
  void EnableStaticEstimate();
  void EnableStaticObservation();
  bool learning_enabled() const { return learning_enabled_; }

  // Learned tensors (empty list unless kLearnable): {"scale", value, grad}, {"zero_point", value, grad}; value and
  // grad are f32 tensors of shape [1] or [channels]; SGD updates value in place; grads are zeroed by ZeroGrad().
  // The tensors share storage with the module (copies of a Tensor share their buffer).
  struct LearnedTensor {
    std::string name;
    Tensor value;
    Tensor grad;
  };
  virtual std::vector<LearnedTensor> learnable_parameters();
  virtual void ZeroGrad();
  const FakeQuantizeConfig& config() const { return config_; }

 protected:
  FakeQuantizeModule(const FakeQuantizeConfig& config, const Context& context)
      : config_(config), context_(&context) {}
  const Context& context() const { return *context_; }

  FakeQuantizeConfig config_;
  const Context* context_;
  bool observer_enabled_ = true;
  bool fake_quant_enabled_ = true;
  bool learning_enabled_ = false;
};

}  // namespace octet::qat

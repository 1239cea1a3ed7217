#include "quant/qat/fake_quantize_module.h"

#include <algorithm>
#include <utility>

#include "quant/qat/fake_quantize_kinds.h"

namespace octet::qat {

const char* FakeQuantizeKindName(FakeQuantizeKind kind) {
  switch (kind) {
    case FakeQuantizeKind::kFakeQuantize: return "fake_quantize";
    case FakeQuantizeKind::kFusedMovingAvgObs: return "fused_moving_avg_obs";
    case FakeQuantizeKind::kLearnable: return "learnable";
  }
  return "unknown";
}

Result<FakeQuantizeKind> ParseFakeQuantizeKind(std::string_view name) {
  for (FakeQuantizeKind kind : {FakeQuantizeKind::kFakeQuantize, FakeQuantizeKind::kFusedMovingAvgObs,
                                FakeQuantizeKind::kLearnable}) {
    if (name == FakeQuantizeKindName(kind)) return kind;
  }
  return InvalidArgument("unknown fake-quantize kind '{}' (expected fake_quantize, fused_moving_avg_obs or learnable)",
                         name);
}

namespace {

// MovingAverageMinMaxObserver(quint8, [0, 255], reduce_range): the activation fake-quant of every backend.
FakeQuantizeConfig ActivationConfig(FakeQuantizeKind kind, bool reduce_range) {
  FakeQuantizeConfig config;
  config.kind = kind;
  config.observer = ObserverKind::kMovingAverageMinMax;
  config.observer_options.dtype = DType::kU8;
  config.observer_options.quant_min = 0;
  config.observer_options.quant_max = 255;
  config.observer_options.reduce_range = reduce_range;
  return config;
}

// qint8 [-128, 127] symmetric, per tensor or per channel (ch_axis 0): default_(per_channel_)weight_fake_quant and
// default_fused_(per_channel_)wt_fake_quant.
FakeQuantizeConfig WeightConfig(FakeQuantizeKind kind, bool per_channel) {
  FakeQuantizeConfig config;
  config.kind = kind;
  config.observer = per_channel ? ObserverKind::kMovingAveragePerChannelMinMax : ObserverKind::kMovingAverageMinMax;
  config.observer_options.dtype = DType::kS8;
  config.observer_options.quant_min = -128;
  config.observer_options.quant_max = 127;
  config.observer_options.qscheme = per_channel ? QScheme::kPerChannelSymmetric : QScheme::kPerTensorSymmetric;
  if (per_channel) config.observer_options.ch_axis = 0;
  return config;
}

}  // namespace

Result<QatQConfig> GetDefaultQatQConfig(std::string_view backend, int version) {
  if (version != 0 && version != 1) {
    return InvalidArgument("get_default_qat_qconfig: version must be 0 or 1, got {}", version);
  }
  bool reduce_range = false;
  bool per_channel_weights = true;
  if (backend == "fbgemm" || backend == "x86") {
    reduce_range = true;
  } else if (backend == "qnnpack") {
    per_channel_weights = false;
  } else if (backend != "onednn") {
    return InvalidArgument("get_default_qat_qconfig: unknown backend '{}' (expected x86, fbgemm, qnnpack or onednn)",
                           backend);
  }
  const FakeQuantizeKind kind = version == 1 ? FakeQuantizeKind::kFusedMovingAvgObs : FakeQuantizeKind::kFakeQuantize;
  return QatQConfig{ActivationConfig(kind, reduce_range), WeightConfig(kind, per_channel_weights)};
}

Result<std::unique_ptr<FakeQuantizeModule>> FakeQuantizeModule::Create(const FakeQuantizeConfig& config,
                                                                      const Context& context) {
  switch (config.kind) {
    case FakeQuantizeKind::kFakeQuantize: return MakeObserverFakeQuantize(config, context);
    case FakeQuantizeKind::kFusedMovingAvgObs: return MakeFusedMovingAvgObsFakeQuantize(config, context);
    case FakeQuantizeKind::kLearnable: return MakeLearnableFakeQuantize(config, context);
  }
  return InvalidArgument("unknown fake-quantize kind {}", static_cast<int>(config.kind));
}

FakeQuantizeModule::~FakeQuantizeModule() = default;

Status CheckFakeQuantizeInput(const Tensor& x, std::string_view kind) {
  if (x.dtype() != DType::kF32) {
    return InvalidArgument("{} forward: input must be f32, got {} of shape {}", kind, x.dtype(), x.shape());
  }
  if (x.empty()) return InvalidArgument("{} forward: input is empty (shape {})", kind, x.shape());
  return OkStatus();
}

Result<Tensor> StraightThroughBackward(const Tensor& dy, const Tensor& mask, const Shape& x_shape,
                                       std::string_view kind) {
  if (dy.dtype() != DType::kF32 || dy.shape() != x_shape) {
    return InvalidArgument("{} backward: dY must be f32 of the last forward input's shape {}, got {} of shape {}",
                           kind, x_shape, dy.dtype(), dy.shape());
  }
  OCTET_ASSIGN_OR_RETURN(Tensor dx, Tensor::Create(DType::kF32, x_shape));
  const float* g = dy.data<float>();
  float* out = dx.data<float>();
  const int64_t n = dy.NumElements();
  if (mask.empty()) {
    std::copy(g, g + n, out);
    return dx;
  }
  const uint8_t* m = mask.data<uint8_t>();
  // dY * mask as PyTorch multiplies (a masked -0.0 or NaN gradient keeps IEEE multiply semantics).
  for (int64_t i = 0; i < n; ++i) out[i] = g[i] * static_cast<float>(m[i]);
  return dx;
}

Status FakeQuantizeModule::EnableParamLearning() {
  if (config_.kind != FakeQuantizeKind::kLearnable) {
    return FailedPrecondition("enable_param_learning: a {} fake-quantize module has no learnable qparams",
                              FakeQuantizeKindName(config_.kind));
  }
  learning_enabled_ = true;
  fake_quant_enabled_ = true;
  observer_enabled_ = false;
  return OkStatus();
}

void FakeQuantizeModule::EnableStaticEstimate() {
  learning_enabled_ = false;
  fake_quant_enabled_ = true;
  observer_enabled_ = true;
}

void FakeQuantizeModule::EnableStaticObservation() {
  learning_enabled_ = false;
  fake_quant_enabled_ = false;
  observer_enabled_ = true;
}

std::vector<FakeQuantizeModule::LearnedTensor> FakeQuantizeModule::learnable_parameters() { return {}; }

void FakeQuantizeModule::ZeroGrad() {}

}  // namespace octet::qat

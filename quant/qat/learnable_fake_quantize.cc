// _LearnableFakeQuantize (LSQ, numerics.md §2.10): scale and a float zero point are learned parameters.
//   forward:  static estimate (observer on) copies the observer's qparams into the parameters, otherwise
//             scale.clamp_(min = float32 eps); symmetric schemes zero the zero point; then fake quant with
//             zp = clamp(rne(zero_point)) (PyTorch's forward rounding).
//   backward: per element, with xq = rne(fma(x, inv_scale, zp)) (zp added before rounding, one rounding: ATen's
//             x86-64 kernel is compiled with FMA contraction) and
//             xfq = (clamp(xq) - zp) * scale (xfq - x also one fused multiply-add, as ATen's build contracts it):
//               dX     = dY * [qmin <= xq <= qmax]
//               dScale = dY * (xfq - x) * inv_scale * g        in range
//                        dY * (qmin - zp) * g / dY * (qmax - zp) * g   below / above
//               dZp    = 0 in range, dY * -1 * scale * g out of range
//             summed over the tensor (per tensor) or over all but the channel axis, in torch.sum's order where each
//             sum is one contiguous run (per tensor, channel axis 0). The backward zero point is
//             int(clamp(zero_point + 0.5)) per tensor (round half up, truncated), clamp(rne(zero_point)) per
//             channel: PyTorch 1.13's two kernels differ there, and this copies both.
// The module's range is quant_min / quant_max as given (default: the dtype's), as PyTorch's module takes them; the
// observer gets the same bounds plus reduce_range, so with reduce_range its qparams are for half the range while
// the module still clamps to the whole one (as in PyTorch).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "observers/observer.h"
#include "observers/observer_factory.h"
#include "observers/torch_numerics.h"
#include "ops/quantize.h"
#include "quant/qat/fake_quantize_kinds.h"

namespace octet::qat {
namespace {

constexpr std::string_view kLearnableKindName = "_LearnableFakeQuantize";
// The module's eps buffer: torch.finfo(torch.float32).eps, whatever the observer's eps.
constexpr float kScaleEps = std::numeric_limits<float>::epsilon();

class LearnableFakeQuantize final : public FakeQuantizeModule {
 public:
  LearnableFakeQuantize(const FakeQuantizeConfig& config, const Context& context, std::unique_ptr<Observer> observer,
                        int64_t quant_min, int64_t quant_max)
      : FakeQuantizeModule(config, context),
        observer_(std::move(observer)),
        quant_min_(quant_min),
        quant_max_(quant_max),
        per_channel_(IsPerChannel(observer_->options().qscheme)),
        symmetric_(IsSymmetric(observer_->options().qscheme)) {
    observer_->set_context(&context);
  }

  // Allocates scale = 1, zero_point = 0 (PyTorch's defaults) for `channels` entries.
  Status Allocate(int64_t channels) {
    OCTET_ASSIGN_OR_RETURN(scale_, Tensor::Create(DType::kF32, Shape{channels}));
    OCTET_ASSIGN_OR_RETURN(zero_point_, Tensor::Create(DType::kF32, Shape{channels}));
    OCTET_ASSIGN_OR_RETURN(scale_grad_, Tensor::Create(DType::kF32, Shape{channels}));
    OCTET_ASSIGN_OR_RETURN(zero_point_grad_, Tensor::Create(DType::kF32, Shape{channels}));
    std::fill_n(scale_.data<float>(), channels, 1.0f);
    return OkStatus();
  }

  Result<Tensor> Forward(const Tensor& x) override {
    OCTET_RETURN_IF_ERROR(CheckFakeQuantizeInput(x, kLearnableKindName));
    saved_.reset();
    OCTET_ASSIGN_OR_RETURN(const int axis, ChannelAxis(x.shape()));
    if (observer_enabled_) {
      OCTET_RETURN_IF_ERROR(observer_->Observe(x, "fake-quantize input"));
      OCTET_ASSIGN_OR_RETURN(QParams observed, observer_->CalculateQParams());
      for (int64_t c = 0; c < scale_.NumElements(); ++c) {
        scale_.data<float>()[c] = observed.scales()[static_cast<size_t>(c)];
        zero_point_.data<float>()[c] = static_cast<float>(observed.zero_points()[static_cast<size_t>(c)]);
      }
    } else {
      ClampScale();
    }
    if (!fake_quant_enabled_) {
      saved_ = Saved{x, axis, 1.0f, {}, {}, false};
      return x.Clone();
    }
    if (symmetric_) std::fill_n(zero_point_.data<float>(), zero_point_.NumElements(), 0.0f);
    float grad_factor = 1.0f;
    if (config_.use_grad_scaling) {
      // 1.0 / (X.numel() * quant_max) ** 0.5 in double, handed to the kernel as float.
      grad_factor = static_cast<float>(1.0 / std::pow(static_cast<double>(x.NumElements() * quant_max_), 0.5));
    }
    OCTET_ASSIGN_OR_RETURN(QParams qparams, ForwardQParams(axis));
    OCTET_ASSIGN_OR_RETURN(FakeQuantizeOutput out, FakeQuantize(context(), x, qparams, {.name = "fake-quantize input"}));
    saved_ = Saved{x, axis, grad_factor, std::vector<float>(scale_.values<float>().begin(), scale_.values<float>().end()),
                   std::vector<float>(zero_point_.values<float>().begin(), zero_point_.values<float>().end()), true};
    return std::move(out.output);
  }

  Result<Tensor> ForwardEval(const Tensor& x) const override {
    OCTET_RETURN_IF_ERROR(CheckFakeQuantizeInput(x, kLearnableKindName));
    if (!fake_quant_enabled_) return x.Clone();
    OCTET_ASSIGN_OR_RETURN(const int axis, ChannelAxis(x.shape()));
    OCTET_ASSIGN_OR_RETURN(QParams qparams, ForwardQParams(axis));
    OCTET_ASSIGN_OR_RETURN(FakeQuantizeOutput out, FakeQuantize(context(), x, qparams, {.name = "fake-quantize input"}));
    return std::move(out.output);
  }

  Result<Tensor> Backward(const Tensor& dy) override {
    if (!saved_) return FailedPrecondition("{} backward: no forward pass to differentiate", kLearnableKindName);
    const Saved& s = *saved_;
    if (dy.dtype() != DType::kF32 || dy.shape() != s.x.shape()) {
      return InvalidArgument("{} backward: dY must be f32 of the last forward input's shape {}, got {} of shape {}",
                             kLearnableKindName, s.x.shape(), dy.dtype(), dy.shape());
    }
    if (!s.fake_quantized) return dy.Clone();
    OCTET_ASSIGN_OR_RETURN(Tensor dx, Tensor::Create(DType::kF32, dy.shape()));
    const int64_t channels = static_cast<int64_t>(s.scale.size());
    const Shape& shape = s.x.shape();
    const int64_t inner = per_channel_ ? shape.Product(s.axis + 1, shape.rank()) : shape.NumElements();
    const int64_t outer = per_channel_ ? shape.Product(0, s.axis) : 1;
    // The per-element terms (ATen's dScale_vec / dZeroPoint_vec), then their sums.
    std::vector<float> dscale_terms(static_cast<size_t>(shape.NumElements()));
    std::vector<float> dzp_terms(dscale_terms.size());
    const float* x = s.x.data<float>();
    const float* g = dy.data<float>();
    float* out = dx.data<float>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < channels; ++c) {
        const auto k = static_cast<size_t>(c);
        const int64_t begin = (o * channels + c) * inner;
        float* ds = dscale_terms.data() + begin;
        float* dz = dzp_terms.data() + begin;
        if (per_channel_) {
          BackwardRun<float>(inner, x + begin, g + begin, out + begin, ds, dz, s.scale[k],
                             BackwardZeroPointPerChannel(s.zero_point[k]), s.grad_factor);
        } else {
          BackwardRun<int64_t>(inner, x + begin, g + begin, out + begin, ds, dz, s.scale[k],
                               BackwardZeroPointPerTensor(s.zero_point[k]), s.grad_factor);
        }
      }
    }
    std::vector<float> dscale(static_cast<size_t>(channels));
    std::vector<float> dzp(static_cast<size_t>(channels));
    if (outer == 1) {
      // Each sum is over one contiguous run: torch.sum's own order (observers/torch_numerics.h), so the result is
      // PyTorch's to the bit.
      for (int64_t c = 0; c < channels; ++c) {
        const auto k = static_cast<size_t>(c);
        dscale[k] = torch_numerics::Sum(std::span<const float>(dscale_terms).subspan(k * inner, inner));
        dzp[k] = torch_numerics::Sum(std::span<const float>(dzp_terms).subspan(k * inner, inner));
      }
    } else {
      // A channel axis other than the first: PyTorch reduces strided dimensions in an order octet does not copy;
      // summed in double, so the last bits may differ from PyTorch's float sum.
      std::vector<double> ds(static_cast<size_t>(channels), 0.0), dz(static_cast<size_t>(channels), 0.0);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t begin = (o * channels + c) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            ds[static_cast<size_t>(c)] += dscale_terms[static_cast<size_t>(begin + i)];
            dz[static_cast<size_t>(c)] += dzp_terms[static_cast<size_t>(begin + i)];
          }
        }
      }
      for (size_t k = 0; k < ds.size(); ++k) {
        dscale[k] = static_cast<float>(ds[k]);
        dzp[k] = static_cast<float>(dz[k]);
      }
    }
    if (learning_enabled_) {
      for (int64_t c = 0; c < channels; ++c) {
        scale_grad_.data<float>()[c] += dscale[static_cast<size_t>(c)];
        zero_point_grad_.data<float>()[c] += dzp[static_cast<size_t>(c)];
      }
    }
    return dx;
  }

  // calculate_qparams: scale clamped to eps (PyTorch clamps the parameter itself), zero point rounded half to even
  // and clamped.
  Result<QParams> CalculateQParams() const override {
    if (scale_.empty()) {
      return FailedPrecondition("{}: the per-channel parameters are allocated by the first Forward (or set "
                                "FakeQuantizeConfig::channels)",
                                kLearnableKindName);
    }
    std::vector<float> scales;
    std::vector<int32_t> zero_points;
    for (int64_t c = 0; c < scale_.NumElements(); ++c) {
      scales.push_back(std::max(scale_.data<float>()[c], kScaleEps));
      zero_points.push_back(ForwardZeroPoint(zero_point_.data<float>()[c]));
    }
    const int axis = per_channel_ ? std::max(last_axis_, 0) : 0;
    return QParams::Create(per_channel_ ? QScheme::kPerChannelAffine : QScheme::kPerTensorAffine,
                           observer_->options().dtype, quant_min_, quant_max_, std::move(scales),
                           std::move(zero_points), axis);
  }

  std::vector<LearnedTensor> learnable_parameters() override {
    if (scale_.empty()) return {};
    return {{"scale", scale_, scale_grad_}, {"zero_point", zero_point_, zero_point_grad_}};
  }

  void ZeroGrad() override {
    if (scale_.empty()) return;
    std::fill_n(scale_grad_.data<float>(), scale_grad_.NumElements(), 0.0f);
    std::fill_n(zero_point_grad_.data<float>(), zero_point_grad_.NumElements(), 0.0f);
  }

 private:
  struct Saved {
    Tensor x;  // shares the caller's buffer: the input must not change before Backward
    int axis;
    float grad_factor;
    std::vector<float> scale;       // the parameters the forward used
    std::vector<float> zero_point;
    bool fake_quantized;
  };

  // The channel axis of x (per channel), allocating the parameters on the first call when their count was not
  // configured; fails on a channel count that differs from the parameters'.
  Result<int> ChannelAxis(const Shape& shape) {
    OCTET_ASSIGN_OR_RETURN(const int axis, static_cast<const LearnableFakeQuantize*>(this)->ChannelAxis(shape));
    if (per_channel_ && scale_.empty()) OCTET_RETURN_IF_ERROR(Allocate(shape.dim(axis)));
    if (per_channel_) last_axis_ = axis;
    return axis;
  }
  Result<int> ChannelAxis(const Shape& shape) const {
    if (!per_channel_) return 0;
    const int rank = shape.rank();
    const int ch_axis = observer_->options().ch_axis;
    const int axis = ch_axis < 0 ? ch_axis + rank : ch_axis;
    if (axis < 0 || axis >= rank) {
      return InvalidArgument("{}: ch_axis {} is out of range for the input of shape {}", kLearnableKindName, ch_axis, shape);
    }
    if (!scale_.empty() && shape.dim(axis) != scale_.NumElements()) {
      return InvalidArgument("{}: the input of shape {} has {} channels along axis {}, the parameters have {}",
                             kLearnableKindName, shape, shape.dim(axis), axis, scale_.NumElements());
    }
    return axis;
  }

  void ClampScale() {
    float* s = scale_.data<float>();
    for (int64_t c = 0; c < scale_.NumElements(); ++c) s[c] = std::max(s[c], kScaleEps);
  }

  // Forward rounding of the float zero point: rne, clamped (in float) to the range.
  int32_t ForwardZeroPoint(float zp) const {
    const float r = std::nearbyint(zp);
    return static_cast<int32_t>(std::min(std::max(r, static_cast<float>(quant_min_)), static_cast<float>(quant_max_)));
  }
  // The per-tensor backward kernel's zero point: int64(clamp(zp + 0.5f)), truncating.
  int64_t BackwardZeroPointPerTensor(float zp) const {
    const float clamped = std::min(std::max(zp + 0.5f, static_cast<float>(quant_min_)), static_cast<float>(quant_max_));
    return static_cast<int64_t>(clamped);
  }
  // The per-channel backward kernel's zero point: round().clamp_(), kept as float.
  float BackwardZeroPointPerChannel(float zp) const { return static_cast<float>(ForwardZeroPoint(zp)); }

  Result<QParams> ForwardQParams(int axis) const {
    std::vector<float> scales(scale_.values<float>().begin(), scale_.values<float>().end());
    std::vector<int32_t> zero_points;
    for (float zp : zero_point_.values<float>()) zero_points.push_back(ForwardZeroPoint(zp));
    Result<QParams> qparams =
        QParams::Create(per_channel_ ? QScheme::kPerChannelAffine : QScheme::kPerTensorAffine,
                        observer_->options().dtype, quant_min_, quant_max_, std::move(scales), std::move(zero_points),
                        axis);
    if (!qparams.ok()) {
      return InvalidArgument("{} forward: the learned qparams are not usable: {}", kLearnableKindName,
                             qparams.status().message());
    }
    return qparams;
  }

  // One contiguous run of one channel, as PyTorch's learnable-gradient kernels compute each element: dX and the
  // dScale / dZp terms. ZP is the backward zero point: int64 (per tensor) or float (per channel); the arithmetic
  // follows that type as in ATen.
  template <typename ZP>
  void BackwardRun(int64_t n, const float* x, const float* dy, float* dx, float* dscale, float* dzp, float scale,
                   ZP zp, float grad_factor) const {
    const float inv_scale = 1.0f / scale;
    const int64_t qmin = quant_min_;
    const int64_t qmax = quant_max_;
    const float dscale_small = static_cast<float>(qmin - zp);
    const float dscale_big = static_cast<float>(qmax - zp);
    for (int64_t i = 0; i < n; ++i) {
      const float xi = x[i];
      const float g = dy[i];
      // ATen's AVX2 / AVX-512 builds of this kernel (what PyTorch runs on x86-64 with FMA) contract
      // zp + x * inv_scale into one fused multiply-add: one rounding, not two. At products that round onto a tie
      // this decides the mask (x * inv_scale == -130.5 in float can be -130.50001 exactly).
      const auto xq = static_cast<int64_t>(std::nearbyint(std::fma(xi, inv_scale, static_cast<float>(zp))));
      const bool in_range = xq >= qmin && xq <= qmax;
      dx[i] = g * static_cast<float>(in_range);
      if (in_range) {
        // xfq - x with xfq = (clamp(xq) - zp) * scale, contracted the same way: fma(clamp(xq) - zp, scale, -x).
        const auto level = static_cast<float>(std::clamp(xq, qmin, qmax) - zp);
        dzp[i] = 0.0f;
        dscale[i] = g * std::fma(level, scale, -xi) * inv_scale * grad_factor;
      } else {
        dzp[i] = g * -1.0f * scale * grad_factor;
        dscale[i] = (xq < qmin ? g * dscale_small : g * dscale_big) * grad_factor;
      }
    }
  }

  std::unique_ptr<Observer> observer_;
  int64_t quant_min_;
  int64_t quant_max_;
  bool per_channel_;
  bool symmetric_;
  int last_axis_ = -1;
  Tensor scale_;  // [1] or [channels]; empty until the first Forward when per channel with channels unset
  Tensor zero_point_;
  Tensor scale_grad_;
  Tensor zero_point_grad_;
  std::optional<Saved> saved_;
};

// The module's range: quant_min / quant_max as configured, else the dtype's limits.
Result<std::pair<int64_t, int64_t>> ModuleRange(const ObserverOptions& options) {
  if (options.quant_min.has_value() != options.quant_max.has_value()) {
    return InvalidArgument("failed to create {}: give both quant_min and quant_max, or neither", kLearnableKindName);
  }
  if (options.quant_min) return std::pair{*options.quant_min, *options.quant_max};
  switch (options.dtype) {
    case DType::kU8: return std::pair<int64_t, int64_t>{0, 255};
    case DType::kS8: return std::pair<int64_t, int64_t>{-128, 127};
    default: break;
  }
  return InvalidArgument("failed to create {}: dtype must be quint8 or qint8, got {}", kLearnableKindName, options.dtype);
}

}  // namespace

Result<std::unique_ptr<FakeQuantizeModule>> MakeLearnableFakeQuantize(const FakeQuantizeConfig& config,
                                                                       const Context& context) {
  OCTET_ASSIGN_OR_RETURN(auto range, ModuleRange(config.observer_options));
  ObserverOptions observer_options = config.observer_options;
  observer_options.quant_min = range.first;
  observer_options.quant_max = range.second;
  auto observer = MakeObserver(config.observer, observer_options);
  if (!observer.ok()) return InvalidArgument("failed to create {}: {}", kLearnableKindName, observer.status().message());
  if (config.use_grad_scaling && range.second <= 0) {
    return InvalidArgument("failed to create {}: use_grad_scaling needs quant_max > 0, got {}", kLearnableKindName,
                           range.second);
  }
  const bool per_channel = IsPerChannel((*observer)->options().qscheme);
  if (config.channels < 0 || (!per_channel && config.channels > 1)) {
    return InvalidArgument("failed to create {}: channels must be 0 (from the first input){}, got {}", kLearnableKindName,
                           per_channel ? " or the channel count" : " or 1 for a per-tensor module", config.channels);
  }
  auto module = std::make_unique<LearnableFakeQuantize>(config, context, std::move(*observer), range.first,
                                                        range.second);
  if (!per_channel) {
    OCTET_RETURN_IF_ERROR(module->Allocate(1));
  } else if (config.channels > 0) {
    OCTET_RETURN_IF_ERROR(module->Allocate(config.channels));
  }
  return std::unique_ptr<FakeQuantizeModule>(std::move(module));
}

}  // namespace octet::qat

// Requantize over tensors: validation, multiplier preparation per scheme, kernel choice, row tiling.
#include "ops/requantize.h"

#include <cmath>

#include "core/threading.h"
#include "ops/reference/requantize_reference.h"
#include "ops/ukernels/requantize.h"

namespace octet {
namespace {

constexpr int64_t kRequantizeTileElements = int64_t{1} << 16;

template <typename T>
using Fp32Entry = UkernelEntry<RequantizeFp32UkernelFn<T>>;
template <typename T>
using Q31Entry = UkernelEntry<RequantizeQ31UkernelFn<T>>;

// Records `kernel` in its family, then runs it over the rows of acc (last dimension = channels) split over the
// context's threads in tiles that depend only on the shape.
template <typename T, typename Entry, typename Params>
Result<Tensor> RunOverRows(const Context& context, RequantizeScheme scheme, const Entry& kernel, const Tensor& acc,
                           DType output_dtype, const Params& params) {
  static const KernelFamily kFp32(
      fmt::format("requantize_s32_{}_{}", DTypeName(DTypeOf<T>::value), RequantizeSchemeName(RequantizeScheme::kFp32)));
  static const KernelFamily kQ31(
      fmt::format("requantize_s32_{}_{}", DTypeName(DTypeOf<T>::value), RequantizeSchemeName(RequantizeScheme::kQ31)));
  context.RecordKernel(scheme == RequantizeScheme::kFp32 ? kFp32 : kQ31, kernel.name);
  const int64_t channels = acc.shape().dim(acc.shape().rank() - 1);
  const int64_t rows = channels == 0 ? 0 : acc.NumElements() / channels;
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(output_dtype, acc.shape()));
  const int64_t rows_per_tile = std::max<int64_t>(1, kRequantizeTileElements / std::max<int64_t>(1, channels));
  const int32_t* in = acc.data<int32_t>();
  T* out = y.data<T>();
  const size_t c = static_cast<size_t>(channels);
  ParallelFor(context, rows, rows_per_tile, [&](int64_t begin, int64_t end) {
    kernel.fn(static_cast<size_t>(end - begin), c, in + begin * channels, c, out + begin * channels, c, params);
  });
  return y;
}

template <typename T>
Result<Tensor> RequantizeFp32(const Context& context, const Fp32Entry<T>& kernel, const Tensor& acc,
                              const RequantizeSpec& spec) {
  const std::vector<float> m(spec.multipliers.begin(), spec.multipliers.end());
  const RequantizeFp32Params p{m.data(), spec.multipliers.size() != 1, spec.zero_point, spec.lo, spec.hi};
  return RunOverRows<T>(context, RequantizeScheme::kFp32, kernel, acc, spec.output_dtype, p);
}

template <typename T>
Result<Tensor> RequantizeQ31(const Context& context, const Q31Entry<T>& kernel, const Tensor& acc,
                             const RequantizeSpec& spec) {
  std::vector<int32_t> multipliers(spec.multipliers.size()), shifts(spec.multipliers.size());
  for (size_t i = 0; i < spec.multipliers.size(); ++i) {
    reference::QuantizeMultiplier(spec.multipliers[i], &multipliers[i], &shifts[i]);
  }
  const RequantizeQ31Params p{multipliers.data(), shifts.data(), spec.multipliers.size() != 1,
                              spec.zero_point,    spec.lo,       spec.hi};
  return RunOverRows<T>(context, RequantizeScheme::kQ31, kernel, acc, spec.output_dtype, p);
}

// The chosen entry of a kernel list (static storage: the plan keeps a pointer to it), and its name in `*name`.
template <typename Entry>
const void* Choose(const Context& context, std::span<const Entry> list, const char** name) {
  const Entry& e = SelectUkernel(context, list);
  *name = e.name;
  return &e;
}

Status CheckRequantizeArgs(const Tensor& acc, const RequantizeSpec& spec) {
  if (acc.dtype() != DType::kS32) {
    return InvalidArgument("failed to requantize tensor: accumulators must be s32, got {}", acc.dtype());
  }
  if (acc.shape().rank() == 0) {
    return InvalidArgument("failed to requantize tensor: need rank >= 1 (last dimension = channels), got a scalar");
  }
  if (spec.output_dtype != DType::kU8 && spec.output_dtype != DType::kS8) {
    return InvalidArgument("failed to requantize tensor: output dtype must be u8 or s8, got {}", spec.output_dtype);
  }
  const int64_t channels = acc.shape().dim(acc.shape().rank() - 1);
  if (spec.multipliers.size() != 1 && static_cast<int64_t>(spec.multipliers.size()) != channels) {
    return InvalidArgument(
        "failed to requantize tensor of shape {}: need 1 multiplier or one per channel ({}), got {}", acc.shape(),
        channels, spec.multipliers.size());
  }
  for (size_t i = 0; i < spec.multipliers.size(); ++i) {
    const double m = spec.multipliers[i];
    const bool ok = std::isfinite(m) && m > 0.0 &&
                    (spec.scheme == RequantizeScheme::kQ31 || std::isfinite(static_cast<float>(m)));
    if (!ok) {
      return InvalidArgument("failed to requantize tensor: multiplier {} must be finite and > 0, got {}", i, m);
    }
  }
  const int64_t dmin = DTypeMin(spec.output_dtype), dmax = DTypeMax(spec.output_dtype);
  if (spec.lo < dmin || spec.hi > dmax || spec.lo > spec.hi) {
    return InvalidArgument("failed to requantize tensor: need {} <= lo <= hi <= {} for {}, got lo {} and hi {}", dmin,
                           dmax, spec.output_dtype, spec.lo, spec.hi);
  }
  if (spec.zero_point < dmin || spec.zero_point > dmax) {
    return InvalidArgument("failed to requantize tensor: zero point must lie in [{}, {}] for {}, got {}", dmin, dmax,
                           spec.output_dtype, spec.zero_point);
  }
  return OkStatus();
}

}  // namespace

const char* RequantizeSchemeName(RequantizeScheme scheme) { return scheme == RequantizeScheme::kFp32 ? "fp32" : "q31"; }

Result<RequantizePlan> RequantizePlan::Create(const Context& context, RequantizeScheme scheme, DType output_dtype) {
  RequantizePlan plan;
  plan.scheme_ = scheme;
  plan.output_dtype_ = output_dtype;
  const bool fp32 = scheme == RequantizeScheme::kFp32;
  if (output_dtype == DType::kU8) {
    plan.entry_ = fp32 ? Choose(context, RequantizeFp32Ukernels<uint8_t>(), &plan.kernel_name_)
                       : Choose(context, RequantizeQ31Ukernels<uint8_t>(), &plan.kernel_name_);
  } else if (output_dtype == DType::kS8) {
    plan.entry_ = fp32 ? Choose(context, RequantizeFp32Ukernels<int8_t>(), &plan.kernel_name_)
                       : Choose(context, RequantizeQ31Ukernels<int8_t>(), &plan.kernel_name_);
  } else {
    return InvalidArgument("failed to requantize tensor: output dtype must be u8 or s8, got {}", output_dtype);
  }
  return plan;
}

Result<Tensor> RequantizePlan::Run(const Context& context, const Tensor& acc, const RequantizeSpec& spec) const {
  OCTET_RETURN_IF_ERROR(CheckRequantizeArgs(acc, spec));
  if (spec.scheme != scheme_ || spec.output_dtype != output_dtype_) {
    return InvalidArgument("failed to requantize tensor: the plan requantizes {} to {}, the spec asks {} to {}",
                           RequantizeSchemeName(scheme_), output_dtype_, RequantizeSchemeName(spec.scheme),
                           spec.output_dtype);
  }
  return RunChecked(context, acc, spec);
}

Result<Tensor> RequantizePlan::RunChecked(const Context& context, const Tensor& acc, const RequantizeSpec& spec) const {
  const bool fp32 = scheme_ == RequantizeScheme::kFp32;
  if (output_dtype_ == DType::kU8) {
    return fp32 ? RequantizeFp32(context, *static_cast<const Fp32Entry<uint8_t>*>(entry_), acc, spec)
                : RequantizeQ31(context, *static_cast<const Q31Entry<uint8_t>*>(entry_), acc, spec);
  }
  return fp32 ? RequantizeFp32(context, *static_cast<const Fp32Entry<int8_t>*>(entry_), acc, spec)
              : RequantizeQ31(context, *static_cast<const Q31Entry<int8_t>*>(entry_), acc, spec);
}

Result<Tensor> Requantize(const Context& context, const Tensor& acc, const RequantizeSpec& spec) {
  OCTET_RETURN_IF_ERROR(CheckRequantizeArgs(acc, spec));
  OCTET_ASSIGN_OR_RETURN(const RequantizePlan plan, RequantizePlan::Create(context, spec.scheme, spec.output_dtype));
  return plan.RunChecked(context, acc, spec);
}

}  // namespace octet

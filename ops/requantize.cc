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
Result<Tensor> RequantizeAs(const Context& context, const Tensor& acc, const RequantizeSpec& spec) {
  const int64_t channels = acc.shape().dim(acc.shape().rank() - 1);
  const int64_t rows = channels == 0 ? 0 : acc.NumElements() / channels;
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(spec.output_dtype, acc.shape()));
  const bool per_channel = spec.multipliers.size() != 1;
  const int64_t rows_per_tile = std::max<int64_t>(1, kRequantizeTileElements / std::max<int64_t>(1, channels));
  const int32_t* in = acc.data<int32_t>();
  T* out = y.data<T>();
  static const KernelFamily kFp32Family(
      fmt::format("requantize_s32_{}_{}", DTypeName(DTypeOf<T>::value), RequantizeSchemeName(RequantizeScheme::kFp32)));
  static const KernelFamily kQ31Family(
      fmt::format("requantize_s32_{}_{}", DTypeName(DTypeOf<T>::value), RequantizeSchemeName(RequantizeScheme::kQ31)));
  if (spec.scheme == RequantizeScheme::kFp32) {
    std::vector<float> m(spec.multipliers.begin(), spec.multipliers.end());
    const RequantizeFp32Params p{m.data(), per_channel, spec.zero_point, spec.lo, spec.hi};
    const auto& kernel = SelectUkernel(context, RequantizeFp32Ukernels<T>());
    context.RecordKernel(kFp32Family, kernel.name);
    ParallelFor(context, rows, rows_per_tile, [&](int64_t begin, int64_t end) {
      const size_t c = static_cast<size_t>(channels);
      kernel.fn(static_cast<size_t>(end - begin), c, in + begin * channels, c, out + begin * channels, c, p);
    });
  } else {
    std::vector<int32_t> multipliers(spec.multipliers.size()), shifts(spec.multipliers.size());
    for (size_t i = 0; i < spec.multipliers.size(); ++i) {
      reference::QuantizeMultiplier(spec.multipliers[i], &multipliers[i], &shifts[i]);
    }
    const RequantizeQ31Params p{multipliers.data(), shifts.data(), per_channel, spec.zero_point, spec.lo, spec.hi};
    const auto& kernel = SelectUkernel(context, RequantizeQ31Ukernels<T>());
    context.RecordKernel(kQ31Family, kernel.name);
    ParallelFor(context, rows, rows_per_tile, [&](int64_t begin, int64_t end) {
      const size_t c = static_cast<size_t>(channels);
      kernel.fn(static_cast<size_t>(end - begin), c, in + begin * channels, c, out + begin * channels, c, p);
    });
  }
  return y;
}

}  // namespace

const char* RequantizeSchemeName(RequantizeScheme scheme) {
  return scheme == RequantizeScheme::kFp32 ? "fp32" : "q31";
}

Result<Tensor> Requantize(const Context& context, const Tensor& acc, const RequantizeSpec& spec) {
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
  if (spec.output_dtype == DType::kU8) return RequantizeAs<uint8_t>(context, acc, spec);
  return RequantizeAs<int8_t>(context, acc, spec);
}

}  // namespace octet

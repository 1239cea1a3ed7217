// Quantize, dequantize and fake-quantize over tensors: validation, kernel choice, deterministic tiling.
#include "ops/quantize.h"

#include <atomic>
#include <cmath>

#include "core/threading.h"
#include "ops/ukernels/dequantize.h"
#include "ops/ukernels/fake_quantize.h"
#include "ops/ukernels/quantize.h"

namespace octet {
namespace {

// Elements per tile: large enough to amortise the dispatch, small enough to spread 16 Mi elements over threads.
constexpr int64_t kQuantizeTileElements = int64_t{1} << 16;

// Calls fn(offset, count, channel) for runs of contiguous elements that share one channel's qparams, covering the
// tensor exactly once, spread over the context's threads in tiles that depend only on the shape.
template <typename Fn>
void ForEachChannelRun(const Context& context, const Shape& shape, const QParams& qparams, Fn&& fn) {
  const int64_t n = shape.NumElements();
  if (!qparams.per_channel()) {
    ParallelFor(context, n, kQuantizeTileElements, [&](int64_t begin, int64_t end) { fn(begin, end - begin, 0); });
    return;
  }
  const int axis = qparams.axis();
  const int64_t channels = shape.dim(axis);
  const int64_t inner = shape.Product(axis + 1, shape.rank());
  const int64_t rows = shape.Product(0, axis) * channels;
  if (inner == 0 || rows == 0) return;
  const int64_t rows_per_tile = std::max<int64_t>(1, kQuantizeTileElements / inner);
  ParallelFor(context, rows, rows_per_tile, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) fn(r * inner, inner, r % channels);
  });
}

std::vector<float> InverseScales(const QParams& qparams) {
  std::vector<float> inv(qparams.scales().size());
  for (size_t c = 0; c < inv.size(); ++c) inv[c] = 1.0f / qparams.scales()[c];
  return inv;
}

Status NanError(const char* verb, std::string_view name, const Tensor& x, size_t nans) {
  const float* p = x.data<float>();
  int64_t first = 0;
  while (first < x.NumElements() && !std::isnan(p[first])) ++first;
  return InvalidArgument(
      "failed to {} tensor '{}': {} NaN value(s), first at flat index {} of shape {} (the zero-point NaN policy "
      "maps them to the zero point instead)",
      verb, name, nans, first, x.shape());
}

Status CheckFloatInput(const char* verb, const Tensor& x, const QParams& qparams, std::string_view name) {
  if (x.dtype() != DType::kF32) {
    return InvalidArgument("failed to {} tensor '{}': input must be f32, got {}", verb, name, x.dtype());
  }
  return qparams.ValidateFor(x.shape(), name);
}

Status CheckOutput(const char* verb, const Tensor& out, DType dtype, const Shape& shape, std::string_view name) {
  if (out.dtype() != dtype || out.shape() != shape) {
    return InvalidArgument("failed to {} tensor '{}': output must be {} of shape {}, got {} of shape {}", verb, name,
                           dtype, shape, out.dtype(), out.shape());
  }
  return OkStatus();
}

bool Stream(const Tensor& out) { return static_cast<int64_t>(out.SizeBytes()) >= kStreamingStoreBytes; }

template <typename T>
using QuantizeEntry = UkernelEntry<QuantizeUkernelFn<T>>;
template <typename T>
using DequantizeEntry = UkernelEntry<DequantizeUkernelFn<T>>;

template <typename T>
Status QuantizeWith(const Context& context, const QuantizeEntry<T>& kernel, const Tensor& x, const QParams& qparams,
                    const QuantizeOptions& options, Tensor& y) {
  static const KernelFamily kFamily(fmt::format("quantize_f32_{}", DTypeName(DTypeOf<T>::value)));
  context.RecordKernel(kFamily, kernel.name);
  const std::vector<float> inv_scales = InverseScales(qparams);
  const float* in = x.data<float>();
  T* out = y.data<T>();
  const bool stream = Stream(y);
  std::atomic<size_t> nans{0};
  ForEachChannelRun(context, x.shape(), qparams, [&](int64_t offset, int64_t count, int64_t c) {
    const QuantizeParams p{inv_scales[static_cast<size_t>(c)], qparams.zero_points()[static_cast<size_t>(c)],
                           qparams.quant_min(), qparams.quant_max(), stream};
    const size_t found = kernel.fn(static_cast<size_t>(count), in + offset, out + offset, p);
    if (found != 0) nans.fetch_add(found, std::memory_order_relaxed);
  });
  if (nans.load() != 0 && options.nan_policy == NanPolicy::kError) {
    return NanError("quantize", options.name, x, nans.load());
  }
  return OkStatus();
}

template <typename T>
void DequantizeWith(const Context& context, const DequantizeEntry<T>& kernel, const QTensor& q, Tensor& y) {
  static const KernelFamily kFamily(fmt::format("dequantize_{}_f32", DTypeName(DTypeOf<T>::value)));
  context.RecordKernel(kFamily, kernel.name);
  const QParams& qparams = q.qparams();
  const T* in = q.values().data<T>();
  float* out = y.data<float>();
  const bool stream = Stream(y);
  ForEachChannelRun(context, q.shape(), qparams, [&](int64_t offset, int64_t count, int64_t c) {
    const DequantizeParams p{qparams.scales()[static_cast<size_t>(c)], qparams.zero_points()[static_cast<size_t>(c)],
                             stream};
    kernel.fn(static_cast<size_t>(count), in + offset, out + offset, p);
  });
}

// The chosen entry of a kernel list (static storage: the plans keep a pointer to it), and its name in `*name`.
template <typename Entry>
const void* Choose(const Context& context, std::span<const Entry> list, const char** name) {
  const Entry& e = SelectUkernel(context, list);
  *name = e.name;
  return &e;
}

// Choose over the list of dtype's element type: list_of(T{}) gives the list for T = uint8_t, int8_t or int32_t.
// False for a dtype that is not an integer type.
template <typename ListOf>
bool ChooseForDType(const Context& context, DType dtype, ListOf list_of, const void** entry, const char** name) {
  switch (dtype) {
    case DType::kU8:
      *entry = Choose(context, list_of(uint8_t{}), name);
      return true;
    case DType::kS8:
      *entry = Choose(context, list_of(int8_t{}), name);
      return true;
    case DType::kS32:
      *entry = Choose(context, list_of(int32_t{}), name);
      return true;
    case DType::kF32:
      break;
  }
  return false;
}

Status CheckQuantizeArgs(const Tensor& x, const QParams& qparams, const Tensor& out, std::string_view name) {
  OCTET_RETURN_IF_ERROR(CheckFloatInput("quantize", x, qparams, name));
  return CheckOutput("quantize", out, qparams.dtype(), x.shape(), name);
}

Status CheckDequantizeArgs(const QTensor& q, const Tensor& out) {
  OCTET_RETURN_IF_ERROR(q.qparams().ValidateFor(q.shape(), "tensor"));
  if (q.values().dtype() != q.qparams().dtype()) {
    return InvalidArgument("failed to dequantize tensor: values are {} but qparams are for {}", q.values().dtype(),
                           q.qparams().dtype());
  }
  return CheckOutput("dequantize", out, DType::kF32, q.shape(), "tensor");
}

}  // namespace

Result<QuantizePlan> QuantizePlan::Create(const Context& context, DType dtype, std::string_view name) {
  QuantizePlan plan;
  plan.dtype_ = dtype;
  const auto lists = [](auto t) { return QuantizeUkernels<decltype(t)>(); };
  if (ChooseForDType(context, dtype, lists, &plan.entry_, &plan.kernel_name_)) return plan;
  return InvalidArgument("failed to quantize tensor '{}': qparams dtype must be an integer type", name);
}

Status QuantizePlan::Run(const Context& context, const Tensor& x, const QParams& qparams, Tensor& out,
                         const QuantizeOptions& options) const {
  OCTET_RETURN_IF_ERROR(CheckQuantizeArgs(x, qparams, out, options.name));
  if (qparams.dtype() != dtype_) {
    return InvalidArgument("failed to quantize tensor '{}': the plan quantizes to {}, the qparams are for {}",
                           options.name, dtype_, qparams.dtype());
  }
  return RunChecked(context, x, qparams, out, options);
}

Status QuantizePlan::RunChecked(const Context& context, const Tensor& x, const QParams& qparams, Tensor& out,
                                const QuantizeOptions& options) const {
  switch (dtype_) {
    case DType::kU8:
      return QuantizeWith(context, *static_cast<const QuantizeEntry<uint8_t>*>(entry_), x, qparams, options, out);
    case DType::kS8:
      return QuantizeWith(context, *static_cast<const QuantizeEntry<int8_t>*>(entry_), x, qparams, options, out);
    case DType::kS32:
      return QuantizeWith(context, *static_cast<const QuantizeEntry<int32_t>*>(entry_), x, qparams, options, out);
    case DType::kF32: break;
  }
  return Internal("failed to quantize tensor '{}': a plan for {}", options.name, dtype_);
}

Status QuantizeInto(const Context& context, const Tensor& x, const QParams& qparams, Tensor& out,
                    const QuantizeOptions& options) {
  OCTET_RETURN_IF_ERROR(CheckQuantizeArgs(x, qparams, out, options.name));
  OCTET_ASSIGN_OR_RETURN(const QuantizePlan plan, QuantizePlan::Create(context, qparams.dtype(), options.name));
  return plan.RunChecked(context, x, qparams, out, options);
}

Result<QTensor> Quantize(const Context& context, const Tensor& x, const QParams& qparams,
                         const QuantizeOptions& options) {
  if (!IsIntegerDType(qparams.dtype())) {
    return InvalidArgument("failed to quantize tensor '{}': qparams dtype must be an integer type", options.name);
  }
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(qparams.dtype(), x.shape()));
  OCTET_RETURN_IF_ERROR(QuantizeInto(context, x, qparams, y, options));
  return QTensor::Create(std::move(y), qparams);
}

Result<DequantizePlan> DequantizePlan::Create(const Context& context, DType dtype) {
  DequantizePlan plan;
  plan.dtype_ = dtype;
  const auto lists = [](auto t) { return DequantizeUkernels<decltype(t)>(); };
  if (ChooseForDType(context, dtype, lists, &plan.entry_, &plan.kernel_name_)) return plan;
  return InvalidArgument("failed to dequantize tensor: values must be an integer type");
}

Status DequantizePlan::Run(const Context& context, const QTensor& q, Tensor& out) const {
  OCTET_RETURN_IF_ERROR(CheckDequantizeArgs(q, out));
  if (q.qparams().dtype() != dtype_) {
    return InvalidArgument("failed to dequantize tensor: the plan dequantizes {}, the values are {}", dtype_,
                           q.qparams().dtype());
  }
  RunChecked(context, q, out);
  return OkStatus();
}

void DequantizePlan::RunChecked(const Context& context, const QTensor& q, Tensor& out) const {
  switch (dtype_) {
    case DType::kU8:
      DequantizeWith(context, *static_cast<const DequantizeEntry<uint8_t>*>(entry_), q, out);
      return;
    case DType::kS8:
      DequantizeWith(context, *static_cast<const DequantizeEntry<int8_t>*>(entry_), q, out);
      return;
    case DType::kS32:
      DequantizeWith(context, *static_cast<const DequantizeEntry<int32_t>*>(entry_), q, out);
      return;
    case DType::kF32: break;
  }
  OCTET_CHECK(!"a dequantize plan is made for integer dtypes only");
}

Status DequantizeInto(const Context& context, const QTensor& q, Tensor& out) {
  OCTET_RETURN_IF_ERROR(CheckDequantizeArgs(q, out));
  OCTET_ASSIGN_OR_RETURN(const DequantizePlan plan, DequantizePlan::Create(context, q.qparams().dtype()));
  plan.RunChecked(context, q, out);
  return OkStatus();
}

Result<Tensor> Dequantize(const Context& context, const QTensor& q) {
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(DType::kF32, q.shape()));
  OCTET_RETURN_IF_ERROR(DequantizeInto(context, q, y));
  return y;
}

Result<FakeQuantizeOutput> FakeQuantize(const Context& context, const Tensor& x, const QParams& qparams,
                                        const QuantizeOptions& options) {
  OCTET_RETURN_IF_ERROR(CheckFloatInput("fake-quantize", x, qparams, options.name));
  const int64_t span = int64_t{qparams.quant_max()} - qparams.quant_min();
  if (span > (int64_t{1} << 24)) {
    return InvalidArgument(
        "failed to fake-quantize tensor '{}': quant_max - quant_min must be <= 2^24 so every level is exact in "
        "float32, got [{}, {}]",
        options.name, qparams.quant_min(), qparams.quant_max());
  }
  FakeQuantizeOutput result;
  OCTET_ASSIGN_OR_RETURN(result.output, Tensor::Create(DType::kF32, x.shape()));
  OCTET_ASSIGN_OR_RETURN(result.mask, Tensor::Create(DType::kU8, x.shape()));
  const auto& kernel = SelectUkernel(context, FakeQuantizeUkernels());
  static const KernelFamily kFamily("fake_quantize_f32");
  context.RecordKernel(kFamily, kernel.name);
  const std::vector<float> inv_scales = InverseScales(qparams);
  const float* in = x.data<float>();
  float* out = result.output.data<float>();
  uint8_t* mask = result.mask.data<uint8_t>();
  std::atomic<size_t> nans{0};
  ForEachChannelRun(context, x.shape(), qparams, [&](int64_t offset, int64_t count, int64_t c) {
    const size_t k = static_cast<size_t>(c);
    const FakeQuantizeParams p{qparams.scales()[k], inv_scales[k], qparams.zero_points()[k], qparams.quant_min(),
                               qparams.quant_max()};
    const size_t found = kernel.fn(static_cast<size_t>(count), in + offset, out + offset, mask + offset, p);
    if (found != 0) nans.fetch_add(found, std::memory_order_relaxed);
  });
  if (nans.load() != 0 && options.nan_policy == NanPolicy::kError) {
    return NanError("fake-quantize", options.name, x, nans.load());
  }
  return result;
}

}  // namespace octet

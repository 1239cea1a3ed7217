// Quantize, dequantize and fake-quantize over tensors: per-tensor or per-channel, threaded, dispatched once.
//
// The arithmetic is ops/reference/quantize_reference.h (DESIGN.md §4). These functions validate, pick the kernel
// for the context's ISAs (recorded as family "quantize_f32_u8" etc.), and split the work over the context's
// threads in tiles that do not depend on the thread count, so results are bit-identical at any thread count.
// QuantizePlan / DequantizePlan pick the kernel once (an operator's Prepare); the plain functions pick per call.
#pragma once

#include <string_view>

#include "core/context.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

enum class NanPolicy {
  kError,      // strict (default): a NaN input is an error naming the tensor and the first NaN's index
  kZeroPoint,  // permissive: NaN quantizes to the zero point (fake-quantize: output 0, mask 0)
};

struct QuantizeOptions {
  NanPolicy nan_policy = NanPolicy::kError;
  std::string_view name = "tensor";  // names the tensor in error messages
};

// f32 -> the qparams' dtype. q = clamp(zp + rne(x * (1.0f / scale)), quant_min, quant_max); ±Inf saturate.
// Per-channel qparams quantize slice c of axis `axis` with scale[c], zero_point[c].
Result<QTensor> Quantize(const Context& context, const Tensor& x, const QParams& qparams,
                         const QuantizeOptions& options = {});

// As Quantize, into an existing tensor `out` of the qparams' dtype and x's shape (no allocation: for repeated calls
// and benchmarks).
Status QuantizeInto(const Context& context, const Tensor& x, const QParams& qparams, Tensor& out,
                    const QuantizeOptions& options = {});

// Quantize to one integer dtype with the kernel chosen once for a context: Run selects nothing and records the
// kernel without a lock. The context Run is given must enable the ISAs of the one the plan was made for.
class QuantizePlan {
 public:
  // Fails for a dtype that is not an integer type; `name` names the tensor in that error.
  static Result<QuantizePlan> Create(const Context& context, DType dtype, std::string_view name = "tensor");
  DType dtype() const { return dtype_; }
  const char* kernel_name() const { return kernel_name_; }  // the ukernel's symbol
  // QuantizeInto with this plan's kernel; qparams must have the plan's dtype.
  Status Run(const Context& context, const Tensor& x, const QParams& qparams, Tensor& out,
             const QuantizeOptions& options = {}) const;

 private:
  friend Status QuantizeInto(const Context&, const Tensor&, const QParams&, Tensor&, const QuantizeOptions&);
  QuantizePlan() = default;
  Status RunChecked(const Context& context, const Tensor& x, const QParams& qparams, Tensor& out,
                    const QuantizeOptions& options) const;
  DType dtype_ = DType::kU8;
  const void* entry_ = nullptr;  // the chosen UkernelEntry of the dtype's list (static storage)
  const char* kernel_name_ = "";
};

// QTensor -> f32: x = float(q - zp) * scale (per channel along the qparams' axis).
Result<Tensor> Dequantize(const Context& context, const QTensor& q);
// As Dequantize, into an existing f32 tensor `out` of q's shape.
Status DequantizeInto(const Context& context, const QTensor& q, Tensor& out);

// Dequantize from one integer dtype with the kernel chosen once for a context (as QuantizePlan).
class DequantizePlan {
 public:
  // Fails for a dtype that is not an integer type.
  static Result<DequantizePlan> Create(const Context& context, DType dtype);
  DType dtype() const { return dtype_; }
  const char* kernel_name() const { return kernel_name_; }
  // DequantizeInto with this plan's kernel; q must have the plan's dtype.
  Status Run(const Context& context, const QTensor& q, Tensor& out) const;

 private:
  friend Status DequantizeInto(const Context&, const QTensor&, Tensor&);
  DequantizePlan() = default;
  void RunChecked(const Context& context, const QTensor& q, Tensor& out) const;
  DType dtype_ = DType::kU8;
  const void* entry_ = nullptr;
  const char* kernel_name_ = "";
};

// Outputs of at least this many bytes are written with non-temporal stores (they would not stay in cache anyway);
// the values are the same either way.
inline constexpr int64_t kStreamingStoreBytes = int64_t{8} << 20;

struct FakeQuantizeOutput {
  Tensor output;  // f32, x's shape: (clamp(zp + rne(x / s)) - zp) * s
  Tensor mask;    // u8 0/1, x's shape: 1 where quant_min <= zp + rne(x / s) <= quant_max (the STE gradient mask)
};
// Fake quantize as PyTorch's fake_quantize_per_{tensor,channel}_affine (cachemask variant). The qparams' dtype
// only bounds [quant_min, quant_max], which may span at most 2^24 (so every value is exact in float32).
Result<FakeQuantizeOutput> FakeQuantize(const Context& context, const Tensor& x, const QParams& qparams,
                                        const QuantizeOptions& options = {});

}  // namespace octet

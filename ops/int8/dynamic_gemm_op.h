// DynamicQGemm and DynamicQMatMul (ops/int8/int8_ops.h): float activations quantized to u8 per call from their live
// range, s8 weights prepacked at Prepare, float outputs. The arithmetic is reference::DynamicQGemm
// (ops/reference/dynamic_qgemm_reference.h), or with attribute per_token = 1 (one range per row)
// reference::PerTokenDynamicQGemm (per_token_qgemm_reference.h); the dynamic RNN operators run their projections
// through the same DynamicGemm below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.h"
#include "core/op_registry.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ops/qgemm.h"
#include "ops/ukernels/quantize.h"

namespace octet {

// One weight matrix of a dynamic GEMM, prepared once: y[i][j] = DynamicQGemm(x rows, W) + bias[j].
class DynamicGemm {
 public:
  DynamicGemm() = default;
  // weights: s8 [N, K] (row j = output channel j) with per-tensor or per-channel (axis 0) symmetric qparams; bias
  // empty or N finite floats. `what` names the weight in errors. per_token: qparams per row of x instead of one
  // pair for the whole call.
  static Result<DynamicGemm> Create(const Context& context, const QTensor& weights, std::vector<float> bias,
                                    bool reduce_range, std::string_view what, bool per_token = false);

  int64_t n() const { return packed_.n(); }
  int64_t k() const { return packed_.k(); }
  bool reduce_range() const { return reduce_range_; }
  bool per_token() const { return per_token_; }
  // Scratch bytes a call of m rows needs.
  size_t ScratchBytes(int64_t m) const;
  // "dynamic_qgemm_u8s8_f32" (or "per_token_qgemm_u8s8_f32") plus the quantize kernel's name.
  const std::string& kernel_name() const { return kernel_name_; }

  // x: m rows of K contiguous finite floats; scratch: at least ScratchBytes(m) bytes; y: m rows of N floats,
  // y_stride apart. Fails naming `what` (the activation) and the element on a non-finite x. Returns the chosen
  // activation qparams (per token: the first row's). Each per-tensor call plans the GEMM for its activation qparams
  // (QGemmPlan::Create: O(N) set-up, small allocations); per token, one plan with zero point 0 made at Create
  // gives int32 sums that the zero-point term of each row corrects exactly.
  Result<QParams> Run(const Context& context, const float* x, int64_t m, std::byte* scratch, float* y,
                      size_t y_stride, std::string_view what) const;

 private:
  Result<QParams> RunPerToken(const Context& context, const float* x, int64_t m, std::byte* scratch, float* y,
                              size_t y_stride, std::string_view what) const;

  PackedWeights packed_;
  std::vector<float> bias_;
  bool reduce_range_ = false;
  bool per_token_ = false;
  QGemmPlan raw_plan_;               // per token: A with zero point 0, int32 output
  std::vector<int32_t> w_col_sums_;  // per token: sum_k w[j][k]
  std::vector<float> w_scales_;      // per token: per output channel
  QuantizeUkernelFn<uint8_t> quantize_ = nullptr;
  std::string kernel_name_;
};

// Fails (naming `what`) unless the input is an s8 constant with s8 symmetric qparams (zero points 0), per tensor or
// per channel along `channel_axis`: the weights every dynamic operator takes.
Status CheckDynamicWeight(const ValueInfo& info, int channel_axis, std::string_view what);

// A rank-2 weight that passes CheckDynamicWeight, transposed to [N, K] when its output channels run along axis 1
// ([K, N]), with the qparams' axis moved to 0.
Result<QTensor> DynamicGemmWeight(const ValueInfo& info, int channel_axis, std::string_view what);

Status RegisterDynamicGemmOps(OpRegistry& registry);

}  // namespace octet

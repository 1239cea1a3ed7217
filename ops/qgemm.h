// The int8 GEMM operator: weights prepacked once (validated, packed for the context's kernel layout, column sums
// for the activation zero point), then QGemm(context, A, packed, output) per call (DESIGN.md §4; the arithmetic is
// ops/reference/qgemm_reference.h, the kernels ops/ukernels/qgemm.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/dtype.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ops/ukernels/qgemm.h"

namespace octet {

struct QGemmPrepackOptions {
  // The activations' dtype: u8 or s8.
  DType activation_dtype = DType::kU8;
  // The activations' zero point when it is known now (static quantization): the int32 bound is checked for it and
  // QGemm requires it. Unset (dynamic quantization): any zero point of the dtype; the bound uses the worst one.
  std::optional<int32_t> activation_zero_point;
};

// Weights W of shape [N, K] (output channel j = row j, like a Linear layer's weight), s8, per-tensor or per-channel
// (axis 0), symmetric or affine, packed once for the layout of the kernels the prepack context selects. Immutable
// after Prepack; copies share the packed data, and concurrent QGemm calls may use one PackedWeights.
class PackedWeights {
 public:
  PackedWeights() = default;

  // Fails on a weight tensor that is not s8 of rank 2, per-channel qparams on another axis than 0, or a K for which
  // an accumulator sum_k (a - a_zp)(w - w_zp[j]) could leave int32 for some operands of these dtypes and zero points
  // (reference::QGemmMaxK: the exact worst case over the dtype ranges, zero-point terms included).
  static Result<PackedWeights> Prepack(const Context& context, const QTensor& weights,
                                       const QGemmPrepackOptions& options = {});

  int64_t n() const;
  int64_t k() const;
  const QGemmLayout& layout() const;
  // A second packing for another kernel of the context (nr 0 when none): on AVX2 without VNNI, full-range weights
  // are packed as s8 for vpmaddubsw (layout()) and as int16 for the exact kernel (SelectQGemmLayouts).
  const QGemmLayout& alt_layout() const;
  DType activation_dtype() const;
  const std::optional<int32_t>& activation_zero_point() const;
  const QParams& weight_qparams() const;
  // The largest K these dtypes and zero points allow (>= k()).
  int64_t max_k() const;

  // False for a default-constructed PackedWeights.
  bool valid() const { return data_ != nullptr; }
  struct Data;
  const Data& data() const { return *data_; }

 private:
  std::shared_ptr<const Data> data_;
};

// The output stage (reference::QGemmStage; formulas in ops/reference/qgemm_reference.h). Scales: a_scale from the
// activations' qparams, w_scale[j] from the weights'.
struct QGemmOutput {
  QGemmStage stage = QGemmStage::kS32;
  // kS32, kFp32, kQ31: an int32 bias in accumulator units (reference::QuantizeBias), empty or N values.
  std::vector<int32_t> bias_s32;
  // kFbgemm, kF32: a float bias, empty or N values (finite).
  std::vector<float> bias_f32;
  // 8-bit stages: output dtype (u8 or s8), scale, zero point and clamp bounds (default: the dtype's range; a fused
  // ReLU is lo = zero point).
  DType output_dtype = DType::kU8;
  float output_scale = 1.0f;
  int32_t output_zero_point = 0;
  std::optional<int32_t> lo;
  std::optional<int32_t> hi;

  static QGemmOutput Int32(std::vector<int32_t> bias = {});
  static QGemmOutput Float(std::vector<float> bias = {});
  // kFp32 or kQ31 (int32 bias) and kFbgemm (float bias in bias_f32, set it after).
  static QGemmOutput Requantized(QGemmStage scheme, DType output_dtype, float output_scale, int32_t output_zero_point,
                                 std::vector<int32_t> bias = {});
};

// A prepared call (validate and precompute in Create, only compute in Run): the packed weights, the activations'
// qparams and the output stage, with the per-channel parameters of the stage derived once.
//   y[..., j] = stage(sum_k (a[..., k] - a_zp) * (w[j][k] - w_zp[j]))     (ops/reference/qgemm_reference.h)
// Fails on activation qparams that are not per-tensor, of another dtype or zero point than prepacked, malformed stage
// parameters (sizes, scales, zero point, bounds; multipliers that are not finite and > 0), or an int32 bias that
// could take an accumulator out of int32 (the exact bound, as at prepack).
class QGemmPlan {
 public:
  QGemmPlan() = default;
  static Result<QGemmPlan> Create(const PackedWeights& weights, const QParams& a_qparams, const QGemmOutput& output);

  // A: u8 / s8 values of shape [..., K]; the result has shape [..., N] and dtype output_dtype(). The kernel was
  // chosen at Create for the ISAs of the prepack context, per M bucket and, where the list has a kernel that needs
  // it, per class of A's range (the 7-bit vpmaddubsw kernel: only then is A scanned); a context with other ISAs
  // chooses per call. It is recorded in the context under "qgemm" without a lock. Tiling and the split over
  // threads depend only on the shape and the kernel, so results are bit-identical at any thread count and equal
  // the reference on every ISA.
  Result<Tensor> Run(const Context& context, const Tensor& a) const;
  // The same into a preallocated y of the right dtype and shape (no allocation but small per-call vectors).
  Status RunInto(const Context& context, const Tensor& a, Tensor& y) const;
  // The same on raw rows, for operators that feed the GEMM from their own buffers (qconv2d: im2col chunks, one
  // group's channel slice of the output): A is m rows of K activations (the prepacked dtype), a_stride elements
  // apart; y is m rows of N outputs of output_dtype(), y_stride elements apart. Same kernel choice and tiling rule.
  Status RunRows(const Context& context, const void* a, size_t a_stride, int64_t m, void* y, size_t y_stride) const;
  // The same over other weights of the plan's shape, packed by the caller in weights().layout() (valid only when
  // alt_layout() is empty) with column sums `col_sums` (PaddedN entries, QGemmPackWeights), for operators whose
  // "weights" are activations (QBatchMatMul). Their values must lie within the prepacked weights' range, for which
  // the kernel was chosen; zero points, scales and the output stage are the plan's.
  Status RunRowsPacked(const Context& context, const int8_t* packed, const int32_t* col_sums, const void* a,
                       size_t a_stride, int64_t m, void* y, size_t y_stride) const;

  DType output_dtype() const;
  // The ukernel a call of m rows runs on `context` ("a or b" where A's range decides), for operator kernel names.
  std::string UkernelName(const Context& context, int64_t m) const;
  // The plan's per-output-channel kernel parameters (col_offsets with the bias and zero-point terms, column sums,
  // the stage's arrays; PaddedN entries, valid while the plan lives), for operators that run their own kernels over
  // the same output stage (qdwconv). w_zero_points is set only for affine weights; row_sums is never set.
  QGemmUkernelParams KernelParams() const;
  const PackedWeights& weights() const;
  struct State;

 private:
  std::shared_ptr<const State> state_;
};

// `params` for a block of output columns starting at column j0 (and rows at i0, for the row sums of affine
// weights): every per-column array advanced to j0. Operators that split the columns over threads use it.
QGemmUkernelParams QGemmParamsAt(const QGemmUkernelParams& params, int64_t i0, int64_t j0);

// QGemmPlan::Create(weights, a.qparams(), output) then Run(context, a.values()).
Result<Tensor> QGemm(const Context& context, const QTensor& a, const PackedWeights& weights, const QGemmOutput& output);

// The kernel QGemm would choose for M rows of activations with values in [a_min, a_max], and why each candidate
// before it was skipped (for `octet bench gemm` and tests).
std::string QGemmKernelName(const Context& context, const PackedWeights& weights, QGemmStage stage, int64_t m,
                            int32_t a_min = 0, int32_t a_max = 255);
std::vector<std::string> ExplainQGemm(const Context& context, const PackedWeights& weights, QGemmStage stage,
                                      int64_t m, int32_t a_min = 0, int32_t a_max = 255);

}  // namespace octet

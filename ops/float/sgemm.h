// Sgemm: the one float matrix product every GEMM-shaped float operator (Gemm, MatMul, Conv, ConvTranspose, LSTM,
// GRU) goes through. The product is cut into blocks of C (a pure function of m and n), the blocks are split over the
// context's threads, and each block runs the sgemm kernel chosen from the context (ops/float/ukernels/sgemm.h).
#pragma once

#include <cstdint>

#include "core/context.h"
#include "ops/float/ukernels/sgemm.h"

namespace octet::float_ops {

struct SgemmArgs {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false;  // A is stored [k, m] (row-major) instead of [m, k]
  bool trans_b = false;  // B is stored [n, k] instead of [k, n]
  const float* a = nullptr;
  int64_t lda = 0;  // row stride of A as stored
  const float* b = nullptr;
  int64_t ldb = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  bool accumulate = false;  // C = alpha * op(A) op(B) + C, instead of C = alpha * op(A) op(B)
  // Optional: PackSgemmA(kernel, m, k, ...) of A, made once by the operator for constant weights.
  const float* packed_a = nullptr;
  // Optional, for kernels with SgemmPanelCols > 0: B as [n / NR][k][NR] panels (see SgemmBlockArgs::packed_b).
  const float* packed_b = nullptr;
};

// The kernel for a context: operators call it once, in Prepare, and keep the entry (its name goes in their
// kernel name).
const UkernelEntry<SgemmBlockFn>& SelectSgemm(const Context& context);

// C[m, n] (row-major, stride ldc) = alpha * op(A) * op(B) (+ C) with `kernel`. The blocks of C depend only on
// (m, n), so results are identical at any thread count.
void Sgemm(const Context& context, SgemmBlockFn kernel, const SgemmArgs& args);
// The same on the calling thread only, for callers that split the work over threads themselves. Its blocks are
// those of Sgemm, so the two give identical results.
void SgemmSerial(SgemmBlockFn kernel, const SgemmArgs& args);

}  // namespace octet::float_ops

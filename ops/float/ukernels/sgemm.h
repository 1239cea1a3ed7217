// The sgemm kernel family: one block of a row-major float product C[m, n] = alpha * op(A) op(B) (+ C), computed
// by packing panels of A and B into a caller-provided workspace and running a register-tiled MRxNR microkernel
// over them (the scalar entry calls Eigen instead). ops/float/sgemm.h splits a product into blocks over threads
// and picks the kernel once per call from the context.
//
// Float sums are not bit-exact across kernels (the order of the k sum and FMA contraction differ); every kernel is
// tested against a double-precision reference with a tolerance proportional to sqrt(k).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/ukernel_list.h"
#include "ops/float/ukernels/fused_activation.h"

namespace octet::float_ops {

// Blocking shared by the packing kernels: the k dimension is processed kSgemmKc at a time.
inline constexpr int64_t kSgemmKc = 256;
// Largest block a caller passes: m <= kSgemmMaxM, n <= kSgemmMaxN.
inline constexpr int64_t kSgemmMaxM = 128;
inline constexpr int64_t kSgemmMaxN = 256;
// Floats of workspace any kernel needs for a block of at most kSgemmMaxM x kSgemmMaxN: packed A (rounded up to 16
// rows), packed B (rounded up to 32 columns) and one MRxNR tile for edges.
inline constexpr size_t kSgemmWorkspaceFloats =
    static_cast<size_t>(kSgemmKc * (kSgemmMaxM + 16) + kSgemmKc * (kSgemmMaxN + 32) + 16 * 32);

struct SgemmBlockArgs {
  int64_t m = 0, n = 0, k = 0;  // m <= kSgemmMaxM, n <= kSgemmMaxN, k >= 1
  bool trans_a = false;         // A stored [k, m] (row stride lda) instead of [m, k]
  bool trans_b = false;         // B stored [n, k] instead of [k, n]
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  bool accumulate = false;     // C += ..., instead of C = ...
  float* workspace = nullptr;  // kSgemmWorkspaceFloats floats, 64-byte aligned, contents unspecified
  // Optional: A already packed by PackSgemmA for this kernel, starting at this block's first row (then a, lda and
  // trans_a are not read). Kernels with MR 0 ignore it.
  const float* packed_a = nullptr;
  // With packed_a: this block is panels [packed_a_first_panel, ...) of a prepacked block of packed_a_block_rows rows
  // starting at packed_a (0: the block is the whole prepacked block). Lets threads split one kSgemmMaxM block of
  // prepacked weights into row tiles; a row's sum is the same either way.
  int64_t packed_a_block_rows = 0;
  int64_t packed_a_first_panel = 0;
  // Optional: B already packed as NR-wide panels over all of k, [n / NR][k][NR] (zero-padded past column n), for a
  // kernel with NR > 0 (then b, ldb and trans_b are not read). Operators that build B themselves (im2col) write
  // this layout directly.
  const float* packed_b = nullptr;
  // Optional: bias[r] added to row r of C after the product (and after C's old value, with accumulate), in the same
  // store: C = (alpha * op(A) op(B) (+ C)) + bias[r], the sum a separate pass over C would give, without re-reading
  // C from memory (convolution biases).
  const float* bias = nullptr;
  // Optional: applied to each element of C in the same store, after the bias (a fused Relu or Clip).
  FusedActivation activation;
};

using SgemmBlockFn = void (*)(const SgemmBlockArgs& args);

#define OCTET_SGEMM_UKERNEL(isa, fn, mr, nr) void fn(const SgemmBlockArgs& args);
#include "ops/float/ukernels/sgemm.inc"
#undef OCTET_SGEMM_UKERNEL

// Candidates, best first, scalar (Eigen) last.
std::span<const UkernelEntry<SgemmBlockFn>> SgemmUkernels();

// The height of `kernel`'s A panels and the width of its B panels (0 when it takes no packed operands).
int SgemmPanelRows(SgemmBlockFn kernel);
int SgemmPanelCols(SgemmBlockFn kernel);

// Packed A for `kernel` (empty when its MR is 0): for each block of kSgemmMaxM rows, for each kSgemmKc slice of k,
// the slice's MR-row panels (zero-padded), each [kc][MR]. Block b starts at float b * kSgemmMaxM' * k, where
// kSgemmMaxM' is kSgemmMaxM rounded up to MR. Operators pack constant weights with it once, at Prepare.
std::vector<float> PackSgemmA(SgemmBlockFn kernel, int64_t m, int64_t k, bool trans_a, const float* a, int64_t lda);
// Packed B for `kernel` (empty when its NR is 0): op(B) [k, n] as NR-wide panels over all of k, [ceil(n / NR)][k][NR],
// zero past column n: the layout SgemmArgs::packed_b takes. Operators pack constant weights with it once, at Prepare.
std::vector<float> PackSgemmB(SgemmBlockFn kernel, int64_t k, int64_t n, bool trans_b, const float* b, int64_t ldb);
// The float offset of row block `block` in PackSgemmA's output.
int64_t PackedSgemmABlockOffset(SgemmBlockFn kernel, int64_t block, int64_t k);

}  // namespace octet::float_ops

// Sgemm: the one float matrix product every GEMM-shaped float operator (Gemm, MatMul, Conv, ConvTranspose, LSTM,
// GRU) goes through. The product is cut into blocks of C (a pure function of m and n), the blocks are split over the
// context's threads, and each block runs the sgemm kernel chosen from the context (ops/float/ukernels/sgemm.h).
#pragma once

#include <cstdint>
#include <span>

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
  // Optional: bias[i] added to row i of C after the product (SgemmBlockArgs::bias), i in [0, m).
  const float* bias = nullptr;
  // Optional: a Relu or Clip applied to every element of C in the kernel's store, after the bias.
  FusedActivation activation;
};

// How a product C[m, n] is cut into tiles for threads: a pure function of (kernel, m, n, k), never of the thread
// count. Row tiles are runs of the kernel's MR-row panels inside one kSgemmMaxM block (so prepacked A stays
// addressable); column tiles are tile_n columns, a multiple of the kernel's NR. Large products get enough tiles to
// keep 16+ threads busy; small ones fewer (each tile does a minimum of work), so they run on fewer threads rather
// than slower. Every element's sum is the same under any tiling, so results do not depend on it.
struct SgemmTiling {
  int64_t m = 0, n = 0;
  int64_t panel_rows = 1;    // MR (1 for kernels without packed panels)
  int64_t block_panels = 1;  // panels in a full kSgemmMaxM block
  int64_t tile_panels = 1;   // panels per row tile
  int64_t subtiles = 1;      // row tiles per block
  int64_t tiles_m = 1;       // row tiles in all (some of the last block's may be empty)
  int64_t tile_n = 0;        // columns per column tile
  int64_t tiles_n = 1;
  int64_t count() const { return tiles_m * tiles_n; }
};
SgemmTiling ChooseSgemmTiling(SgemmBlockFn kernel, int64_t m, int64_t n, int64_t k);

// The rows of row tile `tm`: [begin, end) (empty for a padding tile of the last block), the kSgemmMaxM block it lies
// in and its first panel inside that block.
struct SgemmRowTile {
  int64_t begin = 0, end = 0, block = 0, first_panel = 0;
};
SgemmRowTile SgemmTileRows(const SgemmTiling& tiling, int64_t tm);

// Rows [rows.begin, rows.end) x columns [n0, n1) of the product on the calling thread (n0 a multiple of the kernel's
// NR when args.packed_b is set; args.packed_b then points at the panels of column 0).
void SgemmTile(SgemmBlockFn kernel, const SgemmArgs& args, const SgemmRowTile& rows, int64_t n0, int64_t n1);

// The kernel for a context: operators call it once, in Prepare, and keep the entry (its name goes in their
// kernel name).
const UkernelEntry<SgemmBlockFn>& SelectSgemm(const Context& context);

// C[m, n] (row-major, stride ldc) = alpha * op(A) * op(B) (+ C) with `kernel`. The blocks of C depend only on
// (m, n), so results are identical at any thread count.
void Sgemm(const Context& context, SgemmBlockFn kernel, const SgemmArgs& args);
// Several products of one shape (MatMul's batch: attention heads), their tiles over threads together, so small
// products still fill the threads. The same tiles as Sgemm per product, so identical results.
void SgemmBatch(const Context& context, SgemmBlockFn kernel, std::span<const SgemmArgs> products);
// The same on the calling thread only, for callers that split the work over threads themselves. Its blocks are
// those of Sgemm, so the two give identical results.
void SgemmSerial(SgemmBlockFn kernel, const SgemmArgs& args);

}  // namespace octet::float_ops

// Sgemm: blocks of C over threads, each through the chosen sgemm kernel with a per-thread packing workspace.
#include "ops/float/sgemm.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "core/threading.h"

namespace octet::float_ops {
namespace {

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};

// The calling thread's packing workspace, allocated on first use and kept for the thread's life. It carries no
// state between calls (every kernel overwrites what it reads), so results never depend on it.
float* ThreadWorkspace() {
  thread_local std::unique_ptr<float, FreeDeleter> buffer;
  if (!buffer) {
    const size_t bytes = (kSgemmWorkspaceFloats * sizeof(float) + 63) / 64 * 64;
    buffer.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    OCTET_CHECK(buffer != nullptr);
  }
  return buffer.get();
}

}  // namespace

const UkernelEntry<SgemmBlockFn>& SelectSgemm(const Context& context) {
  return SelectUkernel(context, SgemmUkernels());
}

namespace {

// Runs blocks [begin, end) of the product (row-major over (m block, n block)).
void RunBlocks(SgemmBlockFn kernel, const SgemmArgs& g, int64_t tiles_n, int64_t begin, int64_t end) {
  float* workspace = ThreadWorkspace();
  for (int64_t t = begin; t < end; ++t) {
    const int64_t mi = t / tiles_n, ni = t % tiles_n;
    const int64_t m0 = mi * kSgemmMaxM, n0 = ni * kSgemmMaxN;
    SgemmBlockArgs b;
    b.m = std::min(kSgemmMaxM, g.m - m0);
    b.n = std::min(kSgemmMaxN, g.n - n0);
    b.k = g.k;
    b.trans_a = g.trans_a;
    b.trans_b = g.trans_b;
    b.a = g.trans_a ? g.a + m0 : g.a + m0 * g.lda;
    b.lda = g.lda;
    b.b = g.trans_b ? g.b + n0 * g.ldb : g.b + n0;
    b.ldb = g.ldb;
    b.c = g.c + m0 * g.ldc + n0;
    b.ldc = g.ldc;
    b.alpha = g.alpha;
    b.accumulate = g.accumulate;
    b.workspace = workspace;
    if (g.packed_a != nullptr) b.packed_a = g.packed_a + PackedSgemmABlockOffset(kernel, mi, g.k);
    if (g.packed_b != nullptr) b.packed_b = g.packed_b + n0 * g.k;  // n0 is a multiple of every NR
    kernel(b);
  }
}

// Handles the empty cases; returns false when there is nothing more to do.
bool Prologue(const SgemmArgs& g) {
  if (g.m <= 0 || g.n <= 0) return false;
  if (g.k <= 0) {
    if (!g.accumulate) {
      for (int64_t i = 0; i < g.m; ++i) std::fill(g.c + i * g.ldc, g.c + i * g.ldc + g.n, 0.0f);
    }
    return false;
  }
  return true;
}

}  // namespace

void SgemmSerial(SgemmBlockFn kernel, const SgemmArgs& g) {
  if (!Prologue(g)) return;
  const int64_t tiles_n = (g.n + kSgemmMaxN - 1) / kSgemmMaxN;
  RunBlocks(kernel, g, tiles_n, 0, (g.m + kSgemmMaxM - 1) / kSgemmMaxM * tiles_n);
}

void Sgemm(const Context& context, SgemmBlockFn kernel, const SgemmArgs& g) {
  if (!Prologue(g)) return;
  const int64_t tiles_m = (g.m + kSgemmMaxM - 1) / kSgemmMaxM;
  const int64_t tiles_n = (g.n + kSgemmMaxN - 1) / kSgemmMaxN;
  const int64_t tiles = tiles_m * tiles_n;
  // Small products are not worth a thread hand-off.
  if (tiles == 1 || g.m * g.n * g.k < (int64_t{1} << 18)) {
    RunBlocks(kernel, g, tiles_n, 0, tiles);
  } else {
    ParallelFor(context, tiles, 1, [&](int64_t begin, int64_t end) { RunBlocks(kernel, g, tiles_n, begin, end); });
  }
}

}  // namespace octet::float_ops

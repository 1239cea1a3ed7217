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
    if (g.bias != nullptr) b.bias = g.bias + m0;
    b.activation = g.activation;
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
    if (g.bias != nullptr) {
      for (int64_t i = 0; i < g.m; ++i) {
        for (int64_t j = 0; j < g.n; ++j) g.c[i * g.ldc + j] += g.bias[i];
      }
    }
    for (int64_t i = 0; i < g.m; ++i) g.activation.Apply(g.c + i * g.ldc, g.n);
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

namespace {

// A tile below this many flops (about 80 us on one AVX2 core) costs more to hand to another thread than it saves,
// and smaller or thinner tiles reload their operands from L2/L3 too often: 64x64 tiles ran ResNet-18's 3x3 layers
// ~20% slower at one thread than 64x256 ones.
constexpr int64_t kMinTileFlops = int64_t{1} << 23;
// Tiles a large product is cut into: enough for 16 threads to balance.
constexpr int64_t kTargetTiles = 64;
// Columns are halved down to this first, then rows down to kMinTileRows, then columns down to one panel.
constexpr int64_t kPreferredMinTileN = 128;
constexpr int64_t kMinTileRows = 32;

int64_t RoundUp(int64_t v, int64_t unit) { return (v + unit - 1) / unit * unit; }

void Finish(SgemmTiling& t) {
  const int64_t first_block_panels = (std::min(t.m, kSgemmMaxM) + t.panel_rows - 1) / t.panel_rows;
  t.tile_panels = (first_block_panels + t.subtiles - 1) / t.subtiles;
  t.tiles_m = (t.m + kSgemmMaxM - 1) / kSgemmMaxM * t.subtiles;
  t.tiles_n = (t.n + t.tile_n - 1) / t.tile_n;
}

}  // namespace

SgemmTiling ChooseSgemmTiling(SgemmBlockFn kernel, int64_t m, int64_t n, int64_t k) {
  SgemmTiling t;
  t.m = std::max<int64_t>(m, 1);
  t.n = std::max<int64_t>(n, 1);
  t.panel_rows = std::max(1, SgemmPanelRows(kernel));
  t.block_panels = (kSgemmMaxM + t.panel_rows - 1) / t.panel_rows;
  const int64_t col_unit = std::max<int64_t>(SgemmPanelCols(kernel), 16);
  t.tile_n = std::min(kSgemmMaxN, RoundUp(t.n, col_unit));
  Finish(t);
  const int64_t kk = std::max<int64_t>(k, 1);
  auto tile_flops = [&](const SgemmTiling& c) {
    return 2 * std::min(c.m, c.tile_panels * c.panel_rows) * std::min(c.n, c.tile_n) * kk;
  };
  // Halve the tiles, wide columns first, then rows down to kMinTileRows, then columns down to one panel (the first
  // of these that still leaves kMinTileFlops per tile), while the product has fewer than kTargetTiles tiles.
  while (t.count() < kTargetTiles) {
    bool split = false;
    for (int option = 0; option < 3 && !split; ++option) {
      SgemmTiling next = t;
      const int64_t rows = std::min(t.m, t.tile_panels * t.panel_rows);
      if (option == 1) {
        if (rows / 2 < kMinTileRows || t.tile_panels == 1) continue;
        next.subtiles = t.subtiles * 2;
      } else {
        const int64_t narrowest = option == 0 ? kPreferredMinTileN : col_unit;
        if (t.tile_n <= narrowest || t.n <= t.tile_n / 2) continue;
        next.tile_n = RoundUp(t.tile_n / 2, col_unit);
      }
      Finish(next);
      if (next.count() > t.count() && tile_flops(next) >= kMinTileFlops) {
        t = next;
        split = true;
      }
    }
    if (!split) break;
  }
  return t;
}

SgemmRowTile SgemmTileRows(const SgemmTiling& t, int64_t tm) {
  SgemmRowTile r;
  r.block = tm / t.subtiles;
  const int64_t m0 = r.block * kSgemmMaxM;
  const int64_t rows = std::min(kSgemmMaxM, t.m - m0);
  r.first_panel = (tm % t.subtiles) * t.tile_panels;
  r.begin = m0 + std::min(rows, r.first_panel * t.panel_rows);
  r.end = m0 + std::min(rows, (r.first_panel + t.tile_panels) * t.panel_rows);
  return r;
}

void SgemmTile(SgemmBlockFn kernel, const SgemmArgs& g, const SgemmRowTile& rows, int64_t n0, int64_t n1) {
  if (rows.end <= rows.begin || n1 <= n0) return;
  float* workspace = ThreadWorkspace();
  const int64_t m0 = rows.begin;
  SgemmBlockArgs b;
  b.m = rows.end - rows.begin;
  b.k = g.k;
  b.trans_a = g.trans_a;
  b.trans_b = g.trans_b;
  b.a = g.trans_a ? g.a + m0 : g.a + m0 * g.lda;
  b.lda = g.lda;
  b.ldc = g.ldc;
  b.alpha = g.alpha;
  b.accumulate = g.accumulate;
  b.workspace = workspace;
  if (g.bias != nullptr) b.bias = g.bias + m0;
  b.activation = g.activation;
  if (g.packed_a != nullptr) {
    b.packed_a = g.packed_a + PackedSgemmABlockOffset(kernel, rows.block, g.k);
    b.packed_a_block_rows = std::min(kSgemmMaxM, g.m - rows.block * kSgemmMaxM);
    b.packed_a_first_panel = rows.first_panel;
  }
  for (int64_t c0 = n0; c0 < n1; c0 += kSgemmMaxN) {
    b.n = std::min(kSgemmMaxN, n1 - c0);
    b.b = g.trans_b ? g.b + c0 * g.ldb : g.b + c0;
    b.ldb = g.ldb;
    b.c = g.c + m0 * g.ldc + c0;
    if (g.packed_b != nullptr) b.packed_b = g.packed_b + c0 * g.k;  // c0 is a multiple of every NR
    kernel(b);
  }
}

void Sgemm(const Context& context, SgemmBlockFn kernel, const SgemmArgs& g) {
  if (!Prologue(g)) return;
  const SgemmTiling t = ChooseSgemmTiling(kernel, g.m, g.n, g.k);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t tm = i / t.tiles_n, tn = i % t.tiles_n;
      SgemmTile(kernel, g, SgemmTileRows(t, tm), tn * t.tile_n, std::min(g.n, (tn + 1) * t.tile_n));
    }
  };
  if (t.count() == 1) {
    run(0, 1);
  } else {
    ParallelFor(context, t.count(), 1, run);
  }
}

void SgemmBatch(const Context& context, SgemmBlockFn kernel, std::span<const SgemmArgs> products) {
  if (products.empty()) return;
  const SgemmArgs& first = products.front();
  if (!Prologue(first)) {
    for (const SgemmArgs& g : products.subspan(1)) Prologue(g);
    return;
  }
  const SgemmTiling t = ChooseSgemmTiling(kernel, first.m, first.n, first.k);
  const int64_t total = static_cast<int64_t>(products.size()) * t.count();
  ParallelFor(context, total, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const SgemmArgs& g = products[static_cast<size_t>(i / t.count())];
      const int64_t tile = i % t.count(), tm = tile / t.tiles_n, tn = tile % t.tiles_n;
      SgemmTile(kernel, g, SgemmTileRows(t, tm), tn * t.tile_n, std::min(g.n, (tn + 1) * t.tile_n));
    }
  });
}

}  // namespace octet::float_ops

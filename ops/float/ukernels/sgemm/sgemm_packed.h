// The packed sgemm algorithm, written once for every SIMD tier: for each kSgemmKc slice of k, pack A into MR-high
// row panels (unless the caller passes A prepacked) and B into NR-wide column panels (zero-padded at the edges), then
// run an MRxNR register tile over
// every pair of panels with one FMA per lane per step, and combine it into C (alpha, accumulate). Each per-ISA file
// instantiates Block<Arch, MR, NR> with its xsimd architecture tag under its ISA's compiler flags; every function
// here is templated on Arch, so the instantiations of different ISAs are distinct symbols (no ODR clash).
//
// Register use: NR / W vectors of B and MR x NR / W accumulators (W = lanes per vector), plus one broadcast of A:
// 8x32 on AVX-512 is 16 accumulators + 2 + 1 of 32 zmm registers; 6x16 on AVX2 is 12 + 2 + 1 of 16 ymm registers.
#pragma once

#include <cstdint>
#include <cstring>

#include <xsimd/xsimd.hpp>

#include "ops/float/ukernels/sgemm.h"

namespace octet::float_ops::sgemm_packed {

template <class Arch>
inline int64_t Min(int64_t a, int64_t b) {
  return a < b ? a : b;
}

// Ap[i][p][r] = A(i * MR + r, k0 + p), zero past row m (the layout of PackSgemmA, which operators use to pack
// constant weights once; then this is skipped).
template <class Arch, int MR>
void PackA(const SgemmBlockArgs& g, int64_t k0, int64_t kc, float* ap) {
  for (int64_t i0 = 0; i0 < g.m; i0 += MR, ap += kc * MR) {
    const int64_t rows = Min<Arch>(MR, g.m - i0);
    if (g.trans_a) {
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = g.a + (k0 + p) * g.lda + i0;
        for (int64_t r = 0; r < rows; ++r) ap[p * MR + r] = src[r];
        for (int64_t r = rows; r < MR; ++r) ap[p * MR + r] = 0.0f;
      }
      continue;
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = g.a + (i0 + r) * g.lda + k0;
      for (int64_t p = 0; p < kc; ++p) ap[p * MR + r] = src[p];
    }
    for (int64_t r = rows; r < MR; ++r) {
      for (int64_t p = 0; p < kc; ++p) ap[p * MR + r] = 0.0f;
    }
  }
}

// Bp[j][p][c] = B(k0 + p, j * NR + c), zero past column n: contiguous panels, read sequentially by the tiles.
template <class Arch, int NR>
void PackB(const SgemmBlockArgs& g, int64_t k0, int64_t kc, float* bp) {
  for (int64_t j0 = 0; j0 < g.n; j0 += NR) {
    const int64_t width = Min<Arch>(NR, g.n - j0);
    if (!g.trans_b && width == NR) {
      const float* src = g.b + k0 * g.ldb + j0;
      for (int64_t p = 0; p < kc; ++p, bp += NR, src += g.ldb) std::memcpy(bp, src, NR * sizeof(float));
      continue;
    }
    for (int64_t p = 0; p < kc; ++p, bp += NR) {
      for (int64_t c = 0; c < width; ++c) {
        bp[c] = g.trans_b ? g.b[(j0 + c) * g.ldb + k0 + p] : g.b[(k0 + p) * g.ldb + j0 + c];
      }
      for (int64_t c = width; c < NR; ++c) bp[c] = 0.0f;
    }
  }
}

// How far ahead of the A panel being read the tile prefetches, in floats.
inline constexpr int64_t kPrefetchAFloats = 512;

// One MRxNR tile over kc steps of packed panels, combined into C: c = alpha * acc + (first ? (accumulate ? c : 0)
// : c), then + bias[r] when `bias` is set, then the activation when `act` is set (both only on the last k slice).
// Rows past `rows` and columns past `cols` are computed on padding and not stored.
template <class Arch, int MR, int NR>
void Tile(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, int64_t rows, int64_t cols, float alpha,
          bool keep_c, const float* bias, const FusedActivation* act, float* edge) {
  using V = xsimd::batch<float, Arch>;
  constexpr int W = static_cast<int>(V::size);
  constexpr int NV = NR / W;
  static_assert(NR % W == 0, "NR must be a multiple of the vector width");
  V acc[MR][NV];
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NV; ++v) acc[r][v] = V(0.0f);
  }
  for (int64_t p = 0; p < kc; ++p) {
    V b[NV];
    // Unaligned: weights prepacked by PackSgemmB live in a std::vector (16-byte aligned only).
    for (int v = 0; v < NV; ++v) b[v] = V::load_unaligned(bp + v * W);
    for (int r = 0; r < MR; ++r) {
      const V a(ap[r]);
      for (int v = 0; v < NV; ++v) acc[r][v] = xsimd::fma(a, b[v], acc[r][v]);
    }
    // A is read once per tile from a stream that, for prepacked weights of large layers (ResNet's layer3 and
    // layer4: 2 to 9 MB each, cold in cache when the model runs), comes from memory; fetching 2 KB ahead overlaps
    // that with the FMAs (measured on 512x49x4608 with cold weights: 2.4 ms -> 2.0 ms). A hint, never a fault.
    __builtin_prefetch(ap + kPrefetchAFloats);
    ap += MR;
    bp += NR;
  }
  const V va(alpha);
  if (rows == MR && cols == NR) {
    for (int r = 0; r < MR; ++r) {
      for (int v = 0; v < NV; ++v) {
        float* out = c + r * ldc + v * W;
        V y = acc[r][v] * va;
        if (keep_c) y += V::load_unaligned(out);
        if (bias != nullptr) y += V(bias[r]);
        if (act != nullptr) y = act->ApplyVector(y);
        y.store_unaligned(out);
      }
    }
    return;
  }
  // Edge tile: whole vectors stored directly, the last partial one through `edge` (narrow outputs such as 7x7
  // convolutions have a partial panel in every tile row).
  const int64_t full = cols / W;
  for (int64_t r = 0; r < rows; ++r) {
    for (int v = 0; v < NV; ++v) {
      float* out = c + r * ldc + v * W;
      V y = acc[r][v] * va;
      if (v < full) {
        if (keep_c) y += V::load_unaligned(out);
        if (bias != nullptr) y += V(bias[r]);
        if (act != nullptr) y = act->ApplyVector(y);
        y.store_unaligned(out);
        continue;
      }
      if (v * W >= cols) break;
      y.store_aligned(edge);
      for (int64_t j = 0; j < cols - v * W; ++j) {
        float e = keep_c ? out[j] + edge[j] : edge[j];
        if (bias != nullptr) e += bias[r];
        out[j] = act != nullptr ? act->Apply(e) : e;
      }
    }
  }
}

// Up to Q B panels of one row of A over kc steps, combined into C like Tile. Q * NR / W independent accumulators keep
// the FMA units busy where one row could not (a 1-row register tile is a chain of dependent FMAs), and every B load
// feeds a useful FMA (Tile on one row of a 6- or 8-row panel wastes 5/6 or 7/8 of its work). The sum over k runs in
// the same order as Tile's, so results equal Tile's.
template <class Arch, int NR, int Q>
void RowPanels(int64_t kc, const float* ap, int64_t a_step, const float* bp, int64_t b_panel_stride, float* c,
               int64_t cols, float alpha, bool keep_c, const float* bias, const FusedActivation* act, float* edge) {
  using V = xsimd::batch<float, Arch>;
  constexpr int W = static_cast<int>(V::size);
  constexpr int NV = NR / W;
  V acc[Q][NV];
  for (int q = 0; q < Q; ++q) {
    for (int v = 0; v < NV; ++v) acc[q][v] = V(0.0f);
  }
  for (int64_t p = 0; p < kc; ++p) {
    const V a(ap[p * a_step]);
    for (int q = 0; q < Q; ++q) {
      for (int v = 0; v < NV; ++v) {
        acc[q][v] = xsimd::fma(a, V::load_unaligned(bp + q * b_panel_stride + p * NR + v * W), acc[q][v]);
      }
    }
  }
  const V va(alpha);
  for (int q = 0; q < Q; ++q) {
    const int64_t width = Min<Arch>(NR, cols - q * NR);
    float* out = c + q * NR;
    if (width == NR) {
      for (int v = 0; v < NV; ++v) {
        V y = acc[q][v] * va;
        if (keep_c) y += V::load_unaligned(out + v * W);
        if (bias != nullptr) y += V(*bias);
        if (act != nullptr) y = act->ApplyVector(y);
        y.store_unaligned(out + v * W);
      }
      continue;
    }
    for (int v = 0; v < NV; ++v) (acc[q][v] * va).store_aligned(edge + v * W);
    for (int64_t j = 0; j < width; ++j) {
      float e = keep_c ? out[j] + edge[j] : edge[j];
      if (bias != nullptr) e += *bias;
      out[j] = act != nullptr ? act->Apply(e) : e;
    }
  }
}

// Blocks of at most this many rows go through RowPanels one row at a time (matrix-vector products: the LSTM's
// recurrent step at batch 1, Gemm at batch 1).
inline constexpr int64_t kSmallM = 2;
// B panels RowPanels runs together.
inline constexpr int kRowPanels = 4;

// At most this many B panels per k slice: loop over A panels outside (see Block).
inline constexpr int64_t kFewBPanels = 2;

template <class Arch, int MR, int NR>
void Block(const SgemmBlockArgs& g) {
  const int64_t m_panels = (g.m + MR - 1) / MR;
  const int64_t n_panels = (g.n + NR - 1) / NR;
  float* ap = g.workspace;
  float* bp = ap + kSgemmKc * m_panels * MR;
  float* edge = bp + kSgemmKc * n_panels * NR;
  for (int64_t k0 = 0; k0 < g.k; k0 += kSgemmKc) {
    const int64_t kc = Min<Arch>(kSgemmKc, g.k - k0);
    const bool keep_c = k0 > 0 || g.accumulate;
    const bool last = k0 + kc == g.k;
    const float* bias = last ? g.bias : nullptr;  // after the last slice only
    const FusedActivation* act = last && g.activation.active() ? &g.activation : nullptr;
    const float* a_slice = ap;
    if (g.packed_a != nullptr) {
      const int64_t block_panels = g.packed_a_block_rows > 0 ? (g.packed_a_block_rows + MR - 1) / MR : m_panels;
      a_slice = g.packed_a + block_panels * MR * k0 + g.packed_a_first_panel * kc * MR;
    } else {
      PackA<Arch, MR>(g, k0, kc, ap);
    }
    // Packed B: panel j of this slice at b_slice + j * b_panel_stride.
    const float* b_slice = bp;
    int64_t b_panel_stride = kc * NR;
    if (g.packed_b != nullptr) {
      b_slice = g.packed_b + k0 * NR;
      b_panel_stride = g.k * NR;
    } else {
      PackB<Arch, NR>(g, k0, kc, bp);
    }
    auto tile = [&](int64_t i, int64_t j) {
      Tile<Arch, MR, NR>(kc, a_slice + i * kc * MR, b_slice + j * b_panel_stride, g.c + i * MR * g.ldc + j * NR, g.ldc,
                         Min<Arch>(MR, g.m - i * MR), Min<Arch>(NR, g.n - j * NR), g.alpha, keep_c,
                         bias != nullptr ? bias + i * MR : nullptr, act, edge);
    };
    if (g.m <= kSmallM) {
      for (int64_t r = 0; r < g.m; ++r) {
        for (int64_t j = 0; j < n_panels; j += kRowPanels) {
          const float* b0 = b_slice + j * b_panel_stride;
          float* c0 = g.c + r * g.ldc + j * NR;
          const int64_t cols = g.n - j * NR;
          const float* rb = bias != nullptr ? bias + r : nullptr;
          switch (Min<Arch>(kRowPanels, n_panels - j)) {
            case 1:
              RowPanels<Arch, NR, 1>(kc, a_slice + r, MR, b0, b_panel_stride, c0, cols, g.alpha, keep_c, rb, act, edge);
              break;
            case 2:
              RowPanels<Arch, NR, 2>(kc, a_slice + r, MR, b0, b_panel_stride, c0, cols, g.alpha, keep_c, rb, act, edge);
              break;
            case 3:
              RowPanels<Arch, NR, 3>(kc, a_slice + r, MR, b0, b_panel_stride, c0, cols, g.alpha, keep_c, rb, act, edge);
              break;
            default:
              RowPanels<Arch, NR, kRowPanels>(kc, a_slice + r, MR, b0, b_panel_stride, c0, cols, g.alpha, keep_c, rb,
                                              act, edge);
          }
        }
      }
      continue;
    }
    // Few B panels (small-spatial convs: 7x7 or 14x14 outputs, many channels): A is the large operand, often
    // prepacked weights streamed from memory, so each A panel is loaded once and reused from L1 across the B
    // panels (which stay in L2). Otherwise each B panel stays in L1 while the A panels stream from L2. The order
    // only changes which tile runs first, never a sum, so results do not depend on it.
    if (n_panels <= kFewBPanels) {
      for (int64_t i = 0; i < m_panels; ++i) {
        for (int64_t j = 0; j < n_panels; ++j) tile(i, j);
      }
    } else {
      for (int64_t j = 0; j < n_panels; ++j) {
        for (int64_t i = 0; i < m_panels; ++i) tile(i, j);
      }
    }
  }
}

}  // namespace octet::float_ops::sgemm_packed

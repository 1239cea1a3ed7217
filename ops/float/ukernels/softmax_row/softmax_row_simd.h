// The SIMD softmax row, written once for every x86 tier with xsimd: a vector max, exp(x - max) with xsimd's vector
// exp stored into y while W lane sums accumulate, then y times 1 / sum. The tail goes through a copy padded with
// -inf (exp gives 0 there). Each per-ISA file instantiates Row<Arch> under its ISA's flags (no ODR clash).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <xsimd/xsimd.hpp>

#include "ops/float/ukernels/softmax_row.h"

namespace octet::float_ops::softmax_row_simd {

template <class Arch>
void Row(const float* x, float* y, int64_t n) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t W = static_cast<int64_t>(V::size);
  const int64_t body = n / W * W;
  float tail[W];
  for (int64_t j = 0; j < W; ++j) tail[j] = -INFINITY;
  std::memcpy(tail, x + body, static_cast<size_t>(n - body) * sizeof(float));
  V vmax = V::load_unaligned(tail);
  for (int64_t i = 0; i < body; i += W) vmax = xsimd::max(vmax, V::load_unaligned(x + i));
  // A NaN anywhere makes the sum, and so every output, NaN, as in the scalar kernel.
  alignas(64) float lanes[W];
  vmax.store_aligned(lanes);
  float max = lanes[0];
  for (int64_t j = 1; j < W; ++j) max = lanes[j] > max ? lanes[j] : max;
  const V m(max);
  V vsum(0.0f);
  for (int64_t i = 0; i < body; i += W) {
    const V e = xsimd::exp(V::load_unaligned(x + i) - m);
    e.store_unaligned(y + i);
    vsum += e;
  }
  const V et = xsimd::exp(V::load_unaligned(tail) - m);
  vsum += et;
  et.store_unaligned(tail);
  const float inv = 1.0f / xsimd::hadd(vsum);
  const V vinv(inv);
  for (int64_t i = 0; i < body; i += W) (V::load_unaligned(y + i) * vinv).store_unaligned(y + i);
  for (int64_t i = body; i < n; ++i) y[i] = tail[i - body] * inv;
}

}  // namespace octet::float_ops::softmax_row_simd

// The SIMD erf, written once for every x86 tier with xsimd's vector erf: W elements at a time, the tail through a
// zero-padded copy. Each per-ISA file instantiates Span<Arch> under its ISA's flags (no ODR clash).
#pragma once

#include <cstdint>
#include <cstring>
#include <xsimd/xsimd.hpp>

#include "ops/float/ukernels/erf.h"

namespace octet::float_ops::erf_simd {

template <class Arch>
void Span(const float* x, float* y, int64_t n) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t W = static_cast<int64_t>(V::size);
  int64_t i = 0;
  for (; i + W <= n; i += W) xsimd::erf(V::load_unaligned(x + i)).store_unaligned(y + i);
  if (i == n) return;
  float tail[W] = {};
  const size_t bytes = static_cast<size_t>(n - i) * sizeof(float);
  std::memcpy(tail, x + i, bytes);
  xsimd::erf(V::load_unaligned(tail)).store_unaligned(tail);
  std::memcpy(y + i, tail, bytes);
}

}  // namespace octet::float_ops::erf_simd

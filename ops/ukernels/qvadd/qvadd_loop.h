// The body of the SIMD qvadd kernels: a loop the compiler vectorises with each ISA file's flags (widen, two
// multiplies and an add in float32, clamp, round, narrow), templated on the ISA so the instantiations built with
// different flags are different symbols.
//
// Rounding: the sum is clamped to [lo - y_zp, hi - y_zp] first (integer bounds, so clamping before rounding equals
// clamping after), which keeps |v| <= 510 < 2^22; then (v + 1.5 * 2^23) - 1.5 * 2^23 is v rounded to the nearest
// integer, ties to even, in the default rounding mode -- the same rne as the reference, with plain float adds that
// every vector ISA has. The clamp is written as `x < lo ? lo : x`, which is (v)maxps / fmax exactly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/isa.h"
#include "ops/ukernels/qvadd.h"

namespace octet::qvadd_internal {

template <Isa kIsa, typename T>
inline void QVAddLoop(size_t n, const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y,
                      const QVAddParams& p) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  const float a_mult = p.a_mult, b_mult = p.b_mult;
  const int32_t a_zp = p.a_zp, b_zp = p.b_zp, y_zp = p.y_zp;
  const float lo = static_cast<float>(p.lo - p.y_zp);
  const float hi = static_cast<float>(p.hi - p.y_zp);
  for (size_t i = 0; i < n; ++i) {
    const float va = static_cast<float>(static_cast<int32_t>(a[i]) - a_zp) * a_mult;
    const float vb = static_cast<float>(static_cast<int32_t>(b[i]) - b_zp) * b_mult;
    float v = va + vb;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    v = (v + kMagic) - kMagic;
    y[i] = static_cast<T>(static_cast<int32_t>(v) + y_zp);
  }
}

// y may alias a or b exactly (an in-place add); the vectorised loop above assumes no overlap, so an aliased call
// goes through a stack buffer in blocks.
template <Isa kIsa, typename T>
inline void QVAdd(size_t n, const T* a, const T* b, T* y, const QVAddParams& p) {
  if (y != a && y != b) {
    QVAddLoop<kIsa>(n, a, b, y, p);
    return;
  }
  constexpr size_t kBlock = 1024;
  T buffer[kBlock];
  for (size_t i = 0; i < n; i += kBlock) {
    const size_t m = n - i < kBlock ? n - i : kBlock;
    QVAddLoop<kIsa>(m, a + i, b + i, buffer, p);
    for (size_t j = 0; j < m; ++j) y[i + j] = buffer[j];
  }
}

}  // namespace octet::qvadd_internal

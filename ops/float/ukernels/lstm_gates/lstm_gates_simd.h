// The SIMD LSTM cell, written once for every x86 tier with xsimd's vector exp and tanh: W hidden units at a time,
// the last partial vector through a zero-padded copy. Each per-ISA file instantiates Cell<Arch> under its ISA's
// flags; every function is templated on Arch (no ODR clash).
#pragma once

#include <cstdint>
#include <cstring>
#include <xsimd/xsimd.hpp>

#include "ops/float/ukernels/lstm_gates.h"

namespace octet::float_ops::lstm_gates_simd {

template <class Arch>
xsimd::batch<float, Arch> Sigmoid(xsimd::batch<float, Arch> x) {
  using V = xsimd::batch<float, Arch>;
  return V(1.0f) / (V(1.0f) + xsimd::exp(-x));
}

// Units [k, k + W) of the cell from pointers that are W floats wide at each gate.
template <class Arch>
void Units(const float* xw, const float* rec, int64_t H, float* c, float* h) {
  using V = xsimd::batch<float, Arch>;
  auto pre = [&](int gate) { return V::load_unaligned(xw + gate * H) + V::load_unaligned(rec + gate * H); };
  const V iv = Sigmoid<Arch>(pre(0));
  const V fv = Sigmoid<Arch>(pre(2));
  const V gv = xsimd::tanh(pre(3));
  const V cn = fv * V::load_unaligned(c) + iv * gv;
  const V ov = Sigmoid<Arch>(pre(1));
  cn.store_unaligned(c);
  (ov * xsimd::tanh(cn)).store_unaligned(h);
}

template <class Arch>
void Cell(const float* xw, const float* rec, float* c, float* h, int64_t hidden) {
  constexpr int64_t W = static_cast<int64_t>(xsimd::batch<float, Arch>::size);
  int64_t k = 0;
  for (; k + W <= hidden; k += W) Units<Arch>(xw + k, rec + k, hidden, c + k, h + k);
  const int64_t rest = hidden - k;
  if (rest == 0) return;
  // The last units: the four gates' tails side by side (stride W) in zero-padded copies.
  float xs[4 * W] = {}, rs[4 * W] = {}, cs[W] = {}, hs[W] = {};
  const size_t bytes = static_cast<size_t>(rest) * sizeof(float);
  for (int gate = 0; gate < 4; ++gate) {
    std::memcpy(xs + gate * W, xw + gate * hidden + k, bytes);
    std::memcpy(rs + gate * W, rec + gate * hidden + k, bytes);
  }
  std::memcpy(cs, c + k, bytes);
  Units<Arch>(xs, rs, W, cs, hs);
  std::memcpy(c + k, cs, bytes);
  std::memcpy(h + k, hs, bytes);
}

}  // namespace octet::float_ops::lstm_gates_simd

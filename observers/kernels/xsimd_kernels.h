// The SIMD bodies of the observer kernel families, written once with xsimd and instantiated per ISA by the
// <family>__<isa>.cc files (each built with its ISA's flags). Everything here is a template on the xsimd arch, so
// instantiations for different ISAs are different symbols and never merged by the linker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "observers/kernels/histogram.h"
#include "observers/kernels/minmax.h"

namespace octet::xsimd_kernels {

// Keeps the compiler from turning the reloads of a just-stored index vector into lane extracts: the extracts compete
// for the one shuffle port, the reloads use the load ports (several per cycle) and forward from the store.
inline void KeepInMemory(const void* p) { __asm__ __volatile__("" : : "r"(p) : "memory"); }

// How far ahead of the current element the loops prefetch (4 KiB; a prefetch past the end is harmless). The
// histogram loops keep the out-of-order window busy with their scatter, so the hardware prefetcher alone falls
// behind when x streams from DRAM.
inline constexpr size_t kPrefetchFloats = 1024;

// Four accumulator pairs of vectors; NaN and ±Inf are caught by summing x - x (0 for finite x, NaN otherwise).
template <class Arch>
MinMaxResult MinMax(size_t n, const float* x) {
  using B = xsimd::batch<float, Arch>;
  constexpr size_t kL = B::size;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  B mn0(kInf), mn1(kInf), mn2(kInf), mn3(kInf);
  B mx0(-kInf), mx1(-kInf), mx2(-kInf), mx3(-kInf);
  B bad0(0.0f), bad1(0.0f);
  size_t i = 0;
  for (; i + 4 * kL <= n; i += 4 * kL) {
    __builtin_prefetch(x + i + kPrefetchFloats);
    const B v0 = B::load_unaligned(x + i);
    const B v1 = B::load_unaligned(x + i + kL);
    const B v2 = B::load_unaligned(x + i + 2 * kL);
    const B v3 = B::load_unaligned(x + i + 3 * kL);
    mn0 = xsimd::min(mn0, v0);
    mx0 = xsimd::max(mx0, v0);
    mn1 = xsimd::min(mn1, v1);
    mx1 = xsimd::max(mx1, v1);
    mn2 = xsimd::min(mn2, v2);
    mx2 = xsimd::max(mx2, v2);
    mn3 = xsimd::min(mn3, v3);
    mx3 = xsimd::max(mx3, v3);
    bad0 = bad0 + ((v0 - v0) + (v1 - v1));
    bad1 = bad1 + ((v2 - v2) + (v3 - v3));
  }
  for (; i + kL <= n; i += kL) {
    const B v = B::load_unaligned(x + i);
    mn0 = xsimd::min(mn0, v);
    mx0 = xsimd::max(mx0, v);
    bad0 = bad0 + (v - v);
  }
  mn0 = xsimd::min(xsimd::min(mn0, mn1), xsimd::min(mn2, mn3));
  mx0 = xsimd::max(xsimd::max(mx0, mx1), xsimd::max(mx2, mx3));
  bad0 = bad0 + bad1;
  alignas(64) float lane_min[kL];
  alignas(64) float lane_max[kL];
  alignas(64) float lane_bad[kL];
  mn0.store_aligned(lane_min);
  mx0.store_aligned(lane_max);
  bad0.store_aligned(lane_bad);
  MinMaxResult r{kInf, -kInf, false};
  bool nan = false;
  for (size_t k = 0; k < kL; ++k) {
    r.min = lane_min[k] < r.min ? lane_min[k] : r.min;
    r.max = lane_max[k] > r.max ? lane_max[k] : r.max;
    nan |= lane_bad[k] != lane_bad[k];
  }
  for (; i < n; ++i) {
    const float v = x[i];
    r.min = v < r.min ? v : r.min;
    r.max = v > r.max ? v : r.max;
    nan |= v != v;
  }
  r.nonfinite = nan || r.min == -kInf || r.max == kInf;
  return r;
}

// xsimd::fma, fused where the arch has a fused multiply-add (fma3<avx2>, neon64). xsimd 8.1 spells it x * y + z
// (two roundings) for avx512*, so the AVX-512 file passes its own fused functor.
struct XsimdFma {
  template <class B>
  B operator()(const B& x, const B& y, const B& z) const {
    return xsimd::fma(x, y, z);
  }
};

// Bins computed a vector at a time with the scalar kernel's float operations, counted lane by lane into the
// kHistogramCopies copies (lane k of a vector goes to copy k % kHistogramCopies).
//
// The quotient f32(d / range), d = x - lo, is computed without a division (divps is the slowest instruction here):
// with y = RN(1 / range) computed once, q0 = RN(d * y) is within one ulp of d / range, r = fma(-q0, range, d) is
// exact, and RN(q0 + r * y) (one fma) is the correctly rounded quotient (Markstein's theorem; Muller et al.,
// Handbook of Floating-Point Arithmetic, 2nd ed., section 4.7), identical to the division. The theorem needs no
// underflow in r; with range inside [2^-60, 2^60] and bins < 2^24 that holds wherever the quotient can decide a bin
// (q >= 2^-24, so d >= 2^-84), and below that every quotient bins to 0 anyway. Otherwise the kernel divides. Arch
// must have a fused multiply-add, through `Fma` (a functor fma(x, y, z) rounded once). With kRange, the pass also
// returns MinMax's summary of x.
template <class Arch, bool kRange, class Fma = XsimdFma>
MinMaxResult LinearHistogram(size_t n, const float* x, const LinearHistogramParams& p, uint32_t* counts) {
  using B = xsimd::batch<float, Arch>;
  using I = xsimd::batch<int32_t, Arch>;
  constexpr size_t kL = B::size;
  static_assert(kL % kHistogramCopies == 0, "lanes must spread evenly over the copies");
  const float range_s = p.hi - p.lo;
  const float bins_s = static_cast<float>(p.bins);
  const bool markstein = range_s > 0x1p-60f && range_s < 0x1p60f && bins_s < 0x1p24f;
  // -range rather than -q0 below: the negation is exact either way, and this one is hoisted out of the loop.
  const B lo(p.lo), hi(p.hi), bins_f(bins_s), range(range_s), neg_range(-range_s), inv(1.0f / range_s),
      minus_one(-1.0f);
  const I last(static_cast<int32_t>(p.bins) - 1);
  const size_t stride = p.bins + 1;
  // Lane k counts into copy k % kHistogramCopies: its offset is added in the vector, not per element.
  alignas(64) int32_t lane_offset[kL];
  for (size_t k = 0; k < kL; ++k) lane_offset[k] = static_cast<int32_t>((k % kHistogramCopies) * stride) + 1;
  const I offset = I::load_aligned(lane_offset);
  alignas(64) int32_t slot_a[2 * kL];
  alignas(64) int32_t slot_b[2 * kL];
  constexpr float kInf = std::numeric_limits<float>::infinity();
  B mn(kInf), mx(-kInf), bad(0.0f);
  size_t i = 0;
  auto bin = [&]<bool kMarkstein>(const B& v) {
    if constexpr (kRange) {
      mn = xsimd::min(mn, v);
      mx = xsimd::max(mx, v);
      bad = bad + (v - v);
    }
    const auto in = (v >= lo) & (v <= hi);
    const B d = v - lo;
    B q;
    if constexpr (kMarkstein) {
      const B q0 = d * inv;
      const B r = Fma()(q0, neg_range, d);
      q = Fma()(r, inv, q0);
    } else {
      q = d / range;
    }
    const I b = xsimd::batch_cast<int32_t>(xsimd::select(in, q * bins_f, minus_one));
    return xsimd::min(b, last) + offset;
  };
  // Unrolled: the counting is the bottleneck, and a loop branch per increment costs as much as the increment.
  auto count = [&](const int32_t* s) {
#pragma GCC unroll 32
    for (size_t k = 0; k < 2 * kL; ++k) counts[static_cast<uint32_t>(s[k])] += 1;
  };
  // Software-pipelined over two buffers: the bins of one block are stored while the previous block's are counted,
  // so the reloads find their values in L1 instead of waiting on store forwarding. The loop is written twice (the
  // quotient's two methods), so that neither tests the method nor swaps buffers per block.
  auto run = [&]<bool kMarkstein>() {
    auto block = [&](size_t at, int32_t* dst) {
      __builtin_prefetch(x + at + kPrefetchFloats);
      bin.template operator()<kMarkstein>(B::load_unaligned(x + at)).store_aligned(dst);
      bin.template operator()<kMarkstein>(B::load_unaligned(x + at + kL)).store_aligned(dst + kL);
      KeepInMemory(dst);
    };
    if (i + 2 * kL > n) return;
    block(i, slot_a);
    i += 2 * kL;
    for (; i + 4 * kL <= n; i += 4 * kL) {
      block(i, slot_b);
      count(slot_a);
      block(i + 2 * kL, slot_a);
      count(slot_b);
    }
    if (i + 2 * kL <= n) {
      block(i, slot_b);
      i += 2 * kL;
      count(slot_a);
      count(slot_b);
    } else {
      count(slot_a);
    }
  };
  if (markstein) {
    run.template operator()<true>();
  } else {
    run.template operator()<false>();
  }
  MinMaxResult r{kInf, -kInf, false};
  bool nan = false;
  if constexpr (kRange) {
    alignas(64) float lane_min[kL];
    alignas(64) float lane_max[kL];
    alignas(64) float lane_bad[kL];
    mn.store_aligned(lane_min);
    mx.store_aligned(lane_max);
    bad.store_aligned(lane_bad);
    for (size_t k = 0; k < kL; ++k) {
      r.min = lane_min[k] < r.min ? lane_min[k] : r.min;
      r.max = lane_max[k] > r.max ? lane_max[k] : r.max;
      nan |= lane_bad[k] != lane_bad[k];
    }
  }
  const float lo_s = p.lo, hi_s = p.hi;
  const int32_t last_s = static_cast<int32_t>(p.bins) - 1;
  for (; i < n; ++i) {
    const float v = x[i];
    if constexpr (kRange) {
      r.min = v < r.min ? v : r.min;
      r.max = v > r.max ? v : r.max;
      nan |= v != v;
    }
    size_t s = 0;
    if (v >= lo_s && v <= hi_s) {
      int32_t b = static_cast<int32_t>(((v - lo_s) / range_s) * bins_s);
      b = b < last_s ? b : last_s;
      s = static_cast<size_t>(b) + 1;
    }
    counts[(i % kHistogramCopies) * stride + s] += 1;
  }
  r.nonfinite = nan || r.min == -kInf || r.max == kInf;
  return r;
}

template <class Arch>
void SignedHistogram(size_t n, const float* x, const SignedHistogramParams& p, uint32_t* counts) {
  using B = xsimd::batch<float, Arch>;
  using I = xsimd::batch<int32_t, Arch>;
  constexpr size_t kL = B::size;
  static_assert(kL % kHistogramCopies == 0, "lanes must spread evenly over the copies");
  const int32_t bins = static_cast<int32_t>(p.bins);
  const B inv(p.inv_width), bins_f(static_cast<float>(p.bins)), far(-3.0f * static_cast<float>(p.bins));
  const I bins_i(bins), minus_one(-1), one(1);
  const size_t stride = 2 * size_t{p.bins} + 1;
  alignas(64) int32_t slot[2 * kL];
  size_t i = 0;
  auto bin = [&](const B& v) {
    const B m = xsimd::abs(v) * inv;
    const I sign_offset = (xsimd::bitwise_cast<I>(v) >> 31) & bins_i;  // bins where the sign bit is set
    const I b = xsimd::batch_cast<int32_t>(xsimd::select(m < bins_f, m, far)) + sign_offset;
    return xsimd::max(b, minus_one) + one;
  };
  for (; i + 2 * kL <= n; i += 2 * kL) {
    __builtin_prefetch(x + i + kPrefetchFloats);
    bin(B::load_unaligned(x + i)).store_aligned(slot);
    bin(B::load_unaligned(x + i + kL)).store_aligned(slot + kL);
    KeepInMemory(slot);
#pragma GCC unroll 32
    for (size_t k = 0; k < 2 * kL; ++k) {
      counts[(k % kHistogramCopies) * stride + static_cast<uint32_t>(slot[k])] += 1;
    }
  }
  const float bins_s = static_cast<float>(p.bins);
  for (; i < n; ++i) {
    const float v = x[i];
    // Builtins rather than std:: helpers: nothing here may become an out-of-line function shared across ISAs.
    const float m = __builtin_fabsf(v) * p.inv_width;
    size_t s = 0;
    if (m < bins_s) s = static_cast<size_t>(m) + 1 + (__builtin_signbit(v) ? p.bins : 0);
    counts[(i % kHistogramCopies) * stride + s] += 1;
  }
}

}  // namespace octet::xsimd_kernels

// The SIMD depthwise algorithm, written once for every x86 tier: the plane is copied once into a zero-padded buffer,
// then every output row is computed W columns at a time (four vectors in flight, so the FMA chains overlap), each
// accumulator starting at the bias and taking the taps in (i, j) order, as the scalar kernel does. Stride 1 loads
// unaligned vectors; stride 2 loads two and keeps the even lanes (MobileNetV2's downsampling layers). Other
// horizontal strides go to the scalar kernel. Each per-ISA file
// instantiates Plane<Arch> under its ISA's flags; every function is templated on Arch (no ODR clash).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "ops/float/ukernels/dwconv.h"

namespace octet::float_ops::dwconv_rows {

// p[0], p[S], ..., p[(W - 1) S]; reads W * S floats from p.
template <class Arch, int S>
xsimd::batch<float, Arch> Load(const float* p) {
  using V = xsimd::batch<float, Arch>;
  if constexpr (S == 1) {
    return V::load_unaligned(p);
  } else {
    static_assert(S == 2, "strides 1 and 2 only");
#if defined(__AVX512F__)
    if constexpr (V::size == 16) {
      const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      return V(_mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16)));
    } else  // NOLINT(readability/braces)
#endif
    {
      static_assert(V::size == 8, "AVX2 or AVX-512 vectors");
      // [a0 a2 b0 b2 | a4 a6 b4 b6], then the 64-bit pairs reordered to [a0 a2 a4 a6 b0 b2 b4 b6].
      const __m256 t = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
      return V(_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0))));
    }
  }
}

// The calling thread's copy of a zero-padded plane, grown on demand and kept for the thread's life; it carries no
// state between calls (each plane overwrites what it reads).
inline std::vector<float>& PaddedPlane() {
  thread_local std::vector<float> buffer;
  return buffer;
}

// Every output row of a plane, W columns at a time, from a zero-padded copy of the input: no column or row needs a
// bounds check, so rows narrower than a few vectors (MobileNetV2's 28- to 7-wide layers) are vector code too
// instead of per-column edge handling. The copy costs one read of the input; the taps read it kh * kw times.
template <class Arch, int S>
void Strided(const DwconvPlaneArgs& g) {
  using V = xsimd::batch<float, Arch>;
  constexpr int64_t W = static_cast<int64_t>(V::size);
  constexpr int64_t U = 4;
  const int64_t vectors = (g.ow + W - 1) / W;
  // Padded columns read: the last vector's last tap Load reads W * S floats from column
  // (vectors * W - W) * S + (kw - 1) * dw.
  const int64_t pw = (vectors * W - W) * S + (g.kw - 1) * g.dw + W * S;
  const int64_t ph = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  std::vector<float>& buffer = PaddedPlane();
  if (buffer.size() < static_cast<size_t>(ph * pw)) buffer.resize(static_cast<size_t>(ph * pw));
  float* padded = buffer.data();
  for (int64_t r = 0; r < ph; ++r) {
    float* out = padded + r * pw;
    const int64_t ih = r - g.pad_top;
    if (ih < 0 || ih >= g.h) {
      std::fill(out, out + pw, 0.0f);
      continue;
    }
    // Input columns [c0, c1) land at padded columns [c0 + pad_left, c1 + pad_left) inside [0, pw).
    const int64_t c0 = std::max<int64_t>(0, -g.pad_left), c1 = std::min(g.w, pw - g.pad_left);
    const int64_t left = std::min(pw, std::max<int64_t>(0, c0 + g.pad_left));
    std::fill(out, out + left, 0.0f);
    if (c1 > c0) std::memcpy(out + left, g.x + ih * g.w + c0, static_cast<size_t>(c1 - c0) * sizeof(float));
    std::fill(out + std::max(left, c1 + g.pad_left), out + pw, 0.0f);
  }
  const V bias(g.bias);
  const bool act = g.activation.active();
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    const float* top = padded + oh * g.sh * pw;
    float* yr = g.y + oh * g.ow;
    int64_t v = 0;
    auto run = [&](auto unroll) {
      constexpr int64_t K = decltype(unroll)::value;
      V acc[K];
      for (int64_t u = 0; u < K; ++u) acc[u] = bias;
      for (int64_t i = 0; i < g.kh; ++i) {
        const float* row = top + i * g.dh * pw + v * W * S;
        const float* wr = g.weights + i * g.kw;
        for (int64_t j = 0; j < g.kw; ++j) {
          const V wv(wr[j]);
          const float* p = row + j * g.dw;
          for (int64_t u = 0; u < K; ++u) acc[u] = xsimd::fma(wv, Load<Arch, S>(p + u * W * S), acc[u]);
        }
      }
      if (act) {
        for (int64_t u = 0; u < K; ++u) acc[u] = g.activation.ApplyVector(acc[u]);
      }
      for (int64_t u = 0; u < K; ++u) {
        const int64_t col = (v + u) * W;
        if (col + W <= g.ow) {
          acc[u].store_unaligned(yr + col);
        } else {
          alignas(64) float last[W];
          acc[u].store_aligned(last);
          std::memcpy(yr + col, last, static_cast<size_t>(g.ow - col) * sizeof(float));
        }
      }
    };
    for (; v + U <= vectors; v += U) run(std::integral_constant<int64_t, U>());
    for (; v < vectors; ++v) run(std::integral_constant<int64_t, 1>());
  }
}

template <class Arch>
void Plane(const DwconvPlaneArgs& g) {
  if (g.sw != 1 && g.sw != 2) {
    dwconv_f32_ukernel__scalar(g);
  } else if (g.sw == 1) {
    Strided<Arch, 1>(g);
  } else {
    Strided<Arch, 2>(g);
  }
}

}  // namespace octet::float_ops::dwconv_rows

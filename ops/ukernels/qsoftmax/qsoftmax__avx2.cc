// The AVX2 QSoftmax u8 -> u8 row kernel. Max by vpmaxub; the sum of table[max - x] by 32-bit gathers into 64-bit
// lanes; then per 8 elements the quotient of the spec, q = floor((e M + D / 2) / D) = floor(t), t = e M / D + 1/2
// (D = S 2^16 even), estimated as r = e * (M / D) + 0.5: in single precision when the output scale keeps t small
// enough (the presets' 1/256: t <= 257, margin 2^-14), else in double.
//
// Why the double estimate gives the spec's q: M <= 2^32 and D (S < 2^40) are exact doubles, so r carries three
// roundings of relative 2^-53 each on values at most M / 2^16 + 1/2 <= 2^16 + 1, hence |r - t| < 2^-34. Where r's
// fractional part lies in [2^-20, 1 - 2^-20], no integer lies between r and t and floor(r) = floor(t); any lane closer
// to an integer takes the exact 64-bit division for its 8 elements. Rows with S >= 2^40 (more than 2^17 elements) run
// the reference.
#include <immintrin.h>

#include <algorithm>

#include "ops/ukernels/qsoftmax.h"

namespace octet {
namespace {

inline uint8_t ExactCode(const reference::QSoftmaxParams& p, uint64_t e, uint64_t den) {
  int64_t q = static_cast<int64_t>((e * p.multiplier + (den >> 1)) / den) + p.y_zp;
  q = std::clamp<int64_t>(q, p.y_quant_min, p.y_quant_max);
  return static_cast<uint8_t>(q);
}

}  // namespace

void qsoftmax_u8_u8_ukernel__avx2(const reference::QSoftmaxParams& p, int64_t n, const uint8_t* x, uint8_t* y) {
  const auto count = static_cast<size_t>(n);
  // Max.
  __m256i vmax = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    vmax = _mm256_max_epu8(vmax, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
  }
  alignas(32) uint8_t lanes[32];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), vmax);
  uint8_t max = 0;
  for (uint8_t v : lanes) max = std::max(max, v);
  for (; i < count; ++i) max = std::max(max, x[i]);
  // Sum of e = table[max - x].
  const auto* table = reinterpret_cast<const int*>(p.exp_table.data());
  const __m256i vmax32 = _mm256_set1_epi32(max);
  __m256i sum64 = _mm256_setzero_si256();
  i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256i xi = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i)));
    const __m256i e = _mm256_i32gather_epi32(table, _mm256_sub_epi32(vmax32, xi), 4);
    sum64 = _mm256_add_epi64(sum64, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(e)));
    sum64 = _mm256_add_epi64(sum64, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(e, 1)));
  }
  alignas(32) uint64_t parts[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(parts), sum64);
  uint64_t sum = parts[0] + parts[1] + parts[2] + parts[3];
  for (; i < count; ++i) sum += p.exp_table[max - x[i]];
  if (sum >= (uint64_t{1} << 40)) {
    reference::QSoftmaxRow(p, n, x, y);
    return;
  }
  const uint64_t den = sum << 16;
  const __m256i zp = _mm256_set1_epi32(p.y_zp);
  const __m256i lo = _mm256_set1_epi32(p.y_quant_min), hi = _mm256_set1_epi32(p.y_quant_max);
  // Codes from 8 int32 quotients: + zero point, clamp, then 8 bytes.
  auto store8 = [&](__m256i q, uint8_t* out) {
    const __m256i code = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(q, zp), lo), hi);
    const __m128i c16 = _mm_packus_epi32(_mm256_castsi256_si128(code), _mm256_extracti128_si256(code, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_packus_epi16(c16, c16));
  };
  // Single precision while its error allows a useful margin: e (< 2^24) is exact, M / D carries 2^-24 and so do the
  // product and the + 1/2, so |r - t| < 3.01 * 2^-24 * (M / 2^16 + 1); eps_f is 4/3 of that bound.
  const double t_max = static_cast<double>(p.multiplier) / 65536.0 + 1.0;
  const double eps_f = 4.0 * t_max / 16777216.0;
  if (eps_f <= 1.0 / 64) {
    const __m256 scale_f =
        _mm256_set1_ps(static_cast<float>(static_cast<double>(p.multiplier) / static_cast<double>(den)));
    const __m256 half_f = _mm256_set1_ps(0.5f);
    const __m256 eps = _mm256_set1_ps(static_cast<float>(eps_f));
    const __m256 one_minus_eps = _mm256_set1_ps(static_cast<float>(1.0 - eps_f));
    i = 0;
    for (; i + 8 <= count; i += 8) {
      const __m256i xi = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i)));
      const __m256i e = _mm256_i32gather_epi32(table, _mm256_sub_epi32(vmax32, xi), 4);
      const __m256 r = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(e), scale_f), half_f);
      const __m256 f = _mm256_floor_ps(r);
      const __m256 fr = _mm256_sub_ps(r, f);
      const __m256 near =
          _mm256_or_ps(_mm256_cmp_ps(fr, eps, _CMP_LT_OQ), _mm256_cmp_ps(fr, one_minus_eps, _CMP_GT_OQ));
      if (_mm256_movemask_ps(near) != 0) {
        for (size_t j = i; j < i + 8; ++j) y[j] = ExactCode(p, p.exp_table[max - x[j]], den);
        continue;
      }
      store8(_mm256_cvttps_epi32(f), y + i);
    }
    for (; i < count; ++i) y[i] = ExactCode(p, p.exp_table[max - x[i]], den);
    return;
  }
  const __m256d scale = _mm256_set1_pd(static_cast<double>(p.multiplier) / static_cast<double>(den));
  const __m256d half = _mm256_set1_pd(0.5);
  const __m256d eps = _mm256_set1_pd(1.0 / (1 << 20));
  const __m256d one_minus_eps = _mm256_set1_pd(1.0 - 1.0 / (1 << 20));
  i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256i xi = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i)));
    const __m256i e = _mm256_i32gather_epi32(table, _mm256_sub_epi32(vmax32, xi), 4);
    const __m256d r0 = _mm256_add_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(e)), scale), half);
    const __m256d r1 = _mm256_add_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(e, 1)), scale), half);
    const __m256d f0 = _mm256_floor_pd(r0), f1 = _mm256_floor_pd(r1);
    const __m256d fr0 = _mm256_sub_pd(r0, f0), fr1 = _mm256_sub_pd(r1, f1);
    const __m256d near =
        _mm256_or_pd(_mm256_or_pd(_mm256_cmp_pd(fr0, eps, _CMP_LT_OQ), _mm256_cmp_pd(fr0, one_minus_eps, _CMP_GT_OQ)),
                     _mm256_or_pd(_mm256_cmp_pd(fr1, eps, _CMP_LT_OQ), _mm256_cmp_pd(fr1, one_minus_eps, _CMP_GT_OQ)));
    if (_mm256_movemask_pd(near) != 0) {
      for (size_t j = i; j < i + 8; ++j) y[j] = ExactCode(p, p.exp_table[max - x[j]], den);
      continue;
    }
    store8(_mm256_setr_m128i(_mm256_cvttpd_epi32(f0), _mm256_cvttpd_epi32(f1)), y + i);
  }
  for (; i < count; ++i) y[i] = ExactCode(p, p.exp_table[max - x[i]], den);
}

}  // namespace octet

// AVX2 fake-quantize kernel.
//
// 8 floats per vector. qval = float(zp) + round(x * inv_scale, nearest even); the mask compares qval with
// [quant_min, quant_max] (ordered compares: NaN gives 0); qval is clamped, zp subtracted (exact, the range spans
// <= 2^24), one multiply by scale; NaN lanes give 0. Tails go through a staging buffer (no over-read).
#include <immintrin.h>

#include <cstring>

#include "ops/ukernels/fake_quantize.h"

namespace octet {

size_t fake_quantize_f32_ukernel__avx2(size_t n, const float* x, float* y, uint8_t* mask,
                                       const FakeQuantizeParams& p) {
  const __m256 scale = _mm256_set1_ps(p.scale);
  const __m256 inv_scale = _mm256_set1_ps(p.inv_scale);
  const __m256 zp = _mm256_set1_ps(static_cast<float>(p.zero_point));
  const __m256 lo = _mm256_set1_ps(static_cast<float>(p.quant_min));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(p.quant_max));
  size_t nans = 0;
  auto block8 = [&](const float* src, float* dst, uint8_t* mask_dst) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(src), inv_scale);
    const __m256 qval = _mm256_add_ps(zp, _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256 is_nan = _mm256_cmp_ps(qval, qval, _CMP_UNORD_Q);
    nans += static_cast<size_t>(__builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(is_nan))));
    const __m256 inside = _mm256_and_ps(_mm256_cmp_ps(qval, lo, _CMP_GE_OQ), _mm256_cmp_ps(qval, hi, _CMP_LE_OQ));
    const __m256 clamped = _mm256_min_ps(hi, _mm256_max_ps(lo, qval));  // NaN stays NaN, zeroed below
    const __m256 out = _mm256_mul_ps(_mm256_sub_ps(clamped, zp), scale);
    _mm256_storeu_ps(dst, _mm256_andnot_ps(is_nan, out));
    if (mask_dst != nullptr) {
      // 0/-1 lanes -> 0/1 bytes.
      const __m256i bits = _mm256_srli_epi32(_mm256_castps_si256(inside), 31);
      const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(mask_dst), _mm_packus_epi16(w, w));
    }
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) block8(x + i, y + i, mask != nullptr ? mask + i : nullptr);
  if (i < n) {
    alignas(32) float in[8] = {};
    alignas(32) float out[8];
    alignas(16) uint8_t out_mask[16];
    std::memcpy(in, x + i, (n - i) * sizeof(float));
    block8(in, out, out_mask);
    std::memcpy(y + i, out, (n - i) * sizeof(float));
    if (mask != nullptr) std::memcpy(mask + i, out_mask, n - i);
  }
  return nans;
}

}  // namespace octet

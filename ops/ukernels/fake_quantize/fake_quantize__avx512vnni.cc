// AVX-512 fake-quantize kernel (avx512vnni tier; only AVX-512 F/BW/DQ/VL instructions are used).
//
// 16 floats per vector, masked tail (no over-read). qval = float(zp) + roundscale(x * inv_scale, nearest even);
// the mask compares qval with [quant_min, quant_max] (ordered compares: NaN gives 0); qval is clamped, zp
// subtracted (exact, the range spans <= 2^24) and one multiply by scale gives y; NaN lanes give 0.
#include <immintrin.h>

#include "ops/ukernels/fake_quantize.h"

namespace octet {

size_t fake_quantize_f32_ukernel__avx512vnni(size_t n, const float* x, float* y, uint8_t* mask,
                                             const FakeQuantizeParams& p) {
  const __m512 scale = _mm512_set1_ps(p.scale);
  const __m512 inv_scale = _mm512_set1_ps(p.inv_scale);
  const __m512 zp = _mm512_set1_ps(static_cast<float>(p.zero_point));
  const __m512 lo = _mm512_set1_ps(static_cast<float>(p.quant_min));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(p.quant_max));
  const __m512i one = _mm512_set1_epi32(1);
  size_t nans = 0;
  for (size_t i = 0; i < n; i += 16) {
    const size_t left = n - i < 16 ? n - i : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << left) - 1u);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), inv_scale);
    const __m512 qval = _mm512_add_ps(zp, _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __mmask16 is_nan = _mm512_cmp_ps_mask(qval, qval, _CMP_UNORD_Q);
    nans += static_cast<size_t>(__builtin_popcount(is_nan & m));
    const __mmask16 inside =
        _mm512_cmp_ps_mask(qval, lo, _CMP_GE_OQ) & _mm512_cmp_ps_mask(qval, hi, _CMP_LE_OQ);
    const __m512 clamped = _mm512_min_ps(hi, _mm512_max_ps(lo, qval));  // NaN stays NaN, zeroed below
    const __m512 out = _mm512_mul_ps(_mm512_sub_ps(clamped, zp), scale);
    _mm512_mask_storeu_ps(y + i, m, _mm512_maskz_mov_ps(static_cast<__mmask16>(~is_nan), out));
    if (mask != nullptr) _mm512_mask_cvtepi32_storeu_epi8(mask + i, m, _mm512_maskz_mov_epi32(inside, one));
  }
  return nans;
}

}  // namespace octet

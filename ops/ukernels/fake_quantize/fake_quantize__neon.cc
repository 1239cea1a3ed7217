// NEON (aarch64 ASIMD) fake-quantize kernel.
//
// 16 floats per iteration, all in float32 as the reference: qval = float(zp) + FRINTN(x * inv_scale) (FRINTN rounds
// to nearest even; FMUL and FADD, no FMA), mask = FCMGE(qval, lo) & FCMGE(hi, qval) (false for NaN),
// y = (FMIN(FMAX(qval, lo), hi) - float(zp)) * scale with the NaN lanes of qval zeroed afterwards (FMAX/FMIN
// propagate NaN). qval is never -0 (float(zp) + ±0 is +0 under round to nearest), so FMAX/FMIN equal the
// reference's comparisons. The four 0 / all-ones masks become 16 bytes 0 / 1 with two UZP1 and an AND.
// The NaN count is taken on the inputs x, as the reference counts them. Tails go through a stack buffer: no
// over-read, no over-write of y or mask.
#include <arm_neon.h>

#include <cstring>

#include "ops/ukernels/fake_quantize.h"

namespace octet {
namespace {

struct Consts {
  float32x4_t scale;
  float32x4_t inv_scale;
  float32x4_t zp;
  float32x4_t lo;
  float32x4_t hi;
};

inline int32x4_t NanLanes(float32x4_t x) { return vreinterpretq_s32_u32(vmvnq_u32(vceqq_f32(x, x))); }

inline float32x4_t FakeQuantize4(float32x4_t x, const Consts& k, uint32x4_t* in_range) {
  const float32x4_t qval = vaddq_f32(k.zp, vrndnq_f32(vmulq_f32(x, k.inv_scale)));
  *in_range = vandq_u32(vcgeq_f32(qval, k.lo), vcleq_f32(qval, k.hi));
  const float32x4_t clamped = vminq_f32(vmaxq_f32(qval, k.lo), k.hi);
  const float32x4_t y = vmulq_f32(vsubq_f32(clamped, k.zp), k.scale);
  return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(y), vceqq_f32(qval, qval)));
}

template <bool kMask>
size_t FakeQuantize(size_t n, const float* x, float* y, uint8_t* mask, const FakeQuantizeParams& p) {
  const Consts k{vdupq_n_f32(p.scale), vdupq_n_f32(p.inv_scale), vdupq_n_f32(static_cast<float>(p.zero_point)),
                 vdupq_n_f32(static_cast<float>(p.quant_min)), vdupq_n_f32(static_cast<float>(p.quant_max))};
  int64x2_t nan_total = vdupq_n_s64(0);  // -1 per NaN input
  auto block16 = [&](const float* src, float* dst, uint8_t* mask_dst) {
    const float32x4_t x0 = vld1q_f32(src);
    const float32x4_t x1 = vld1q_f32(src + 4);
    const float32x4_t x2 = vld1q_f32(src + 8);
    const float32x4_t x3 = vld1q_f32(src + 12);
    nan_total = vpadalq_s32(
        nan_total, vaddq_s32(vaddq_s32(NanLanes(x0), NanLanes(x1)), vaddq_s32(NanLanes(x2), NanLanes(x3))));
    uint32x4_t m0;
    uint32x4_t m1;
    uint32x4_t m2;
    uint32x4_t m3;
    vst1q_f32(dst, FakeQuantize4(x0, k, &m0));
    vst1q_f32(dst + 4, FakeQuantize4(x1, k, &m1));
    vst1q_f32(dst + 8, FakeQuantize4(x2, k, &m2));
    vst1q_f32(dst + 12, FakeQuantize4(x3, k, &m3));
    if constexpr (kMask) {
      const uint16x8_t h01 = vuzp1q_u16(vreinterpretq_u16_u32(m0), vreinterpretq_u16_u32(m1));
      const uint16x8_t h23 = vuzp1q_u16(vreinterpretq_u16_u32(m2), vreinterpretq_u16_u32(m3));
      const uint8x16_t b = vuzp1q_u8(vreinterpretq_u8_u16(h01), vreinterpretq_u8_u16(h23));
      vst1q_u8(mask_dst, vandq_u8(b, vdupq_n_u8(1)));
    }
  };
  size_t i = 0;
  for (; i + 16 <= n; i += 16) block16(x + i, y + i, kMask ? mask + i : nullptr);
  if (i < n) {
    float in[16] = {};  // the zero padding is never NaN, so the count stays exact
    float out[16];
    uint8_t mask_out[16];
    const size_t left = n - i;
    std::memcpy(in, x + i, left * sizeof(float));
    block16(in, out, mask_out);
    std::memcpy(y + i, out, left * sizeof(float));
    if constexpr (kMask) std::memcpy(mask + i, mask_out, left);
  }
  return static_cast<size_t>(-vaddvq_s64(nan_total));
}

}  // namespace

size_t fake_quantize_f32_ukernel__neon(size_t n, const float* x, float* y, uint8_t* mask,
                                       const FakeQuantizeParams& p) {
  return mask != nullptr ? FakeQuantize<true>(n, x, y, mask, p) : FakeQuantize<false>(n, x, y, mask, p);
}

}  // namespace octet

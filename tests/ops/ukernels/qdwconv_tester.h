// A tester for qdwconv kernels: random inputs behind an indirection buffer (some taps pointing at the zero-point
// row, as padding does), random int16-packed weights, per-channel stage parameters derived with the reference's
// functions, and the reference's sum (x - zp) * w + bias then QGemmApplyStage as the oracle, compared with ==.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ops/reference/qgemm_reference.h"
#include "ops/ukernels/qdwconv.h"
#include "tests/ops/stage_arrays.h"

namespace octet::testing {

class QDwConvTester {
 public:
  QDwConvTester& channels(size_t v) { channels_ = v; return *this; }
  QDwConvTester& taps(size_t v) {
    REQUIRE(v >= 1);
    REQUIRE(v <= kQDwConvMaxTaps);
    taps_ = v;
    return *this;
  }
  QDwConvTester& pixels(size_t v) { pixels_ = v; return *this; }
  QDwConvTester& zero_point(int32_t v) { zero_point_ = v; return *this; }
  QDwConvTester& output_zero_point(int32_t v) { output_zero_point_ = v; return *this; }
  QDwConvTester& y_pixel_stride(size_t v) { y_pixel_stride_ = v; return *this; }
  QDwConvTester& lo(int32_t v) { lo_ = v; return *this; }
  QDwConvTester& hi(int32_t v) { hi_ = v; return *this; }
  QDwConvTester& signed_output(bool v) { signed_output_ = v; return *this; }
  // u8 activations in [0, 127] (a third of them 0 or 127, the ends where vpmaddubsw would saturate if it could),
  // and the 7-bit weights (QDwConvPackWeightsQuads) passed as args.w_quads.
  QDwConvTester& seven_bit(bool v) { seven_bit_ = v; return *this; }
  // Full-range u8 activations with every weight in [-64, 64] (a third of them at -64 or 64, the ends), the weights
  // passed as args.w_quads too: the other condition under which the vpmaddubsw pair sums fit int16.
  QDwConvTester& small_weights(bool v) { small_weights_ = v; return *this; }
  // Whether to require varied outputs (off for random sweeps, where extreme zero points may saturate on purpose).
  QDwConvTester& check_varied(bool v) { check_varied_ = v; return *this; }

  // Runs `e` and the reference on the same data; REQUIREs bit equality (naming pixel and channel).
  void Test(const QDwConvUkernelEntry& e, std::mt19937_64& rng) const {
    const size_t c = channels_, taps = taps_, px = pixels_;
    const size_t cp = QDwConvPaddedChannels(c);
    const size_t y_stride = y_pixel_stride_ == 0 ? c : y_pixel_stride_;
    REQUIRE(y_stride >= c);
    const bool u8 = e.a_dtype == DType::kU8;
    const int32_t zp = u8 ? zero_point_ : zero_point_ - 128;
    if (seven_bit_) {
      REQUIRE(u8);
      REQUIRE(zero_point_ <= 127);
    }
    if (small_weights_) REQUIRE(u8);
    // Input rows: one per (pixel, tap), each exactly `channels` bytes in its own allocation, so a kernel that reads
    // past them trips ASan.
    std::vector<std::vector<uint8_t>> rows(px * taps);
    std::vector<const void*> indirection(px * taps);
    std::vector<uint8_t> zero_row(cp, static_cast<uint8_t>(zp));
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rng() % 5 == 0) {
        indirection[i] = zero_row.data();
        continue;
      }
      rows[i].resize(c);
      for (auto& b : rows[i]) {
        b = static_cast<uint8_t>(rng());
        if (seven_bit_) b = rng() % 3 == 0 ? static_cast<uint8_t>(127 * (b & 1)) : static_cast<uint8_t>(b & 127);
      }
      indirection[i] = rows[i].data();
    }
    std::vector<int8_t> w(c * taps);
    for (auto& v : w) {
      v = static_cast<int8_t>(rng());
      if (small_weights_) v = rng() % 3 == 0 ? static_cast<int8_t>(rng() % 2 == 0 ? -64 : 64) : static_cast<int8_t>(v / 2);
    }
    std::vector<int16_t> packed(taps * cp);
    QDwConvPackWeights(c, taps, w.data(), packed.data());
    std::vector<int8_t> quads(QDwConvQuadPackedBytes(c, taps));
    if (seven_bit_ || small_weights_) QDwConvPackWeightsQuads(c, taps, w.data(), quads.data());

    // Per-channel parameters, 16-entry aligned lengths as the operator provides.
    const size_t np = (c + 15) / 16 * 16;
    std::vector<int32_t> col_offsets(np, 0), col_sums(np, 0);
    StageArrays st(np);
    const float a_scale = 0.02f;
    for (size_t j = 0; j < c; ++j) {
      for (size_t t = 0; t < taps; ++t) col_sums[j] += w[j * taps + t];
      st.w_scales[j] = 0.002f + 0.001f * static_cast<float>(rng() % 7);
      const float y_scale = 0.0005f * std::sqrt(static_cast<float>(taps)) * (1.0f + static_cast<float>(rng() % 3));
      if (e.stage == QGemmStage::kFbgemm) {
        reference::QGemmFbgemmParams(a_scale, st.w_scales[j], y_scale,
                                     static_cast<float>(static_cast<int64_t>(rng() % 201) - 100) * 0.01f,
                                     &st.multipliers[j], &st.bias_f32[j]);
      } else {
        st.multipliers[j] = reference::QGemmFp32Multiplier(a_scale, st.w_scales[j], y_scale);
        reference::QGemmQ31Multiplier(a_scale, st.w_scales[j], y_scale, &st.q31_m[j], &st.q31_s[j]);
        st.bias_f32[j] = static_cast<float>(static_cast<int64_t>(rng() % 201) - 100) * 0.01f;
        st.bias_s32[j] = static_cast<int32_t>(rng() % 20001) - 10000;
      }
      if (e.stage == QGemmStage::kFbgemm || e.stage == QGemmStage::kF32) st.bias_s32[j] = 0;
      col_offsets[j] = QGemmColumnOffset(st.bias_s32[j], zp, col_sums[j], static_cast<int64_t>(taps), 0);
    }
    QGemmUkernelParams params;
    params.col_offsets = col_offsets.data();
    params.col_sums = col_sums.data();
    params.stage = st.Params(e.stage, a_scale);
    QGemmStageParams& s = params.stage;
    s.signed_output = signed_output_;
    s.zero_point = signed_output_ ? output_zero_point_ - 128 : output_zero_point_;
    s.lo = signed_output_ ? lo_ - 128 : lo_;
    s.hi = signed_output_ ? hi_ - 128 : hi_;

    // Reference: exact sums, then the stage (with the int32 bias) per pixel.
    const size_t size = e.stage == QGemmStage::kS32 || e.stage == QGemmStage::kF32 ? 4 : 1;
    std::vector<int32_t> acc(px * c);
    for (size_t p = 0; p < px; ++p) {
      for (size_t j = 0; j < c; ++j) {
        int64_t sum = 0;
        for (size_t t = 0; t < taps; ++t) {
          const auto* row = static_cast<const uint8_t*>(indirection[p * taps + t]);
          const int64_t x = u8 ? int64_t{row[j]} : int64_t{static_cast<int8_t>(row[j])};
          sum += (x - zp) * w[j * taps + t];
        }
        acc[p * c + j] = static_cast<int32_t>(sum);
      }
    }
    std::vector<uint8_t> want(px * y_stride * size, 0xA5), got(px * y_stride * size, 0xA5);
    reference::QGemmStageParams rs = s;
    reference::QGemmApplyStage(px, c, acc.data(), c, rs, want.data(), y_stride);

    QDwConvUkernelArgs args;
    args.channels = c;
    args.taps = taps;
    args.pixels = px;
    args.input = indirection.data();
    args.w = packed.data();
    args.y = got.data();
    args.y_pixel_stride = y_stride;
    args.params = &params;
    if (seven_bit_ || small_weights_) args.w_quads = quads.data();
    e.fn(args);
    for (size_t i = 0; i < want.size(); ++i) {
      if (want[i] != got[i]) {
        FAIL(e.name << ": byte " << i << " (pixel " << i / size / y_stride << ", channel " << i / size % y_stride
                    << "): want " << int{want[i]} << ", got " << int{got[i]} << " (channels " << c << ", taps "
                    << taps << ", pixels " << px << ")");
      }
    }
    if (check_varied_ && size == 1 && px * c >= 16) {
      // Not vacuous: the outputs are not all one value.
      bool varied = false;
      for (size_t p = 0; p < px && !varied; ++p) {
        for (size_t j = 0; j < c && !varied; ++j) varied = want[p * y_stride + j] != want[0];
      }
      CHECK(varied);
    }
  }

 private:
  bool seven_bit_ = false;
  bool small_weights_ = false;
  size_t channels_ = 16;
  size_t taps_ = 9;
  size_t pixels_ = 3;
  int32_t zero_point_ = 117;  // as u8; s8 kernels get zero_point - 128
  int32_t output_zero_point_ = 121;
  size_t y_pixel_stride_ = 0;
  int32_t lo_ = 0;
  int32_t hi_ = 255;
  bool signed_output_ = false;
  bool check_varied_ = true;
};

}  // namespace octet::testing

// QGemmTester: runs one qgemm kernel on random operands of a chosen shape and compares every output with the
// reference (ops/reference/qgemm_reference.h) for exact equality, checking that nothing outside the m x n block of
// y was written. Defaults are non-trivial: activation and weight zero points not 0, scales not 1, strides wider
// than the rows, per-channel weights.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ops/reference/qgemm_reference.h"
#include "ops/ukernels/qgemm.h"
#include "tests/ops/stage_arrays.h"

namespace octet::testing {

// What a Test() saw, for guards against vacuous tests.
struct QGemmTestStats {
  size_t outputs = 0;
  size_t at_lo = 0;  // 8-bit stages: outputs equal to lo / hi
  size_t at_hi = 0;
  size_t distinct = 0;
  bool passed = true;
};

class QGemmTester {
 public:
  QGemmTester& m(size_t v) { m_ = v; return *this; }
  QGemmTester& n(size_t v) { n_ = v; return *this; }
  QGemmTester& k(size_t v) { k_ = v; return *this; }
  // Elements between rows; 0 means the tight value (k for A, n for y).
  QGemmTester& a_stride(size_t v) { a_stride_ = v; return *this; }
  QGemmTester& y_stride(size_t v) { y_stride_ = v; return *this; }
  QGemmTester& a_zero_point(int32_t v) { a_zp_ = v; return *this; }
  // Weight zero points: per channel drawn from [w_zp_min, w_zp_max]; (0, 0) is symmetric.
  QGemmTester& w_zero_points(int32_t lo, int32_t hi) {
    REQUIRE(lo <= hi);
    w_zp_min_ = lo;
    w_zp_max_ = hi;
    return *this;
  }
  // Value ranges of the operands (A in its own dtype).
  QGemmTester& a_range(int32_t lo, int32_t hi) {
    REQUIRE(lo <= hi);
    a_min_ = lo;
    a_max_ = hi;
    return *this;
  }
  QGemmTester& w_range(int32_t lo, int32_t hi) {
    REQUIRE((lo <= hi && lo >= -128 && hi <= 127));
    w_min_ = lo;
    w_max_ = hi;
    return *this;
  }
  QGemmTester& signed_output(bool v) { signed_output_ = v; return *this; }
  // Output zero point and clamp bounds of the 8-bit stages, relative to nothing (absolute values in the dtype).
  QGemmTester& output(int32_t zero_point, int32_t lo, int32_t hi) {
    REQUIRE((lo <= hi));
    y_zp_ = zero_point;
    lo_ = lo;
    hi_ = hi;
    explicit_bounds_ = true;
    return *this;
  }
  // Multiplies the requantization scale: > 1 pushes outputs into both clamps.
  QGemmTester& gain(double v) { gain_ = v; return *this; }
  QGemmTester& with_bias(bool v) { bias_ = v; return *this; }
  QGemmTester& layout(QGemmLayout v) { layout_ = v; return *this; }
  QGemmTester& rng(std::mt19937_64* r) { rng_ = r; return *this; }

  // Runs `kernel` once and REQUIREs equality with the reference (the first difference is printed with its index).
  QGemmTestStats Test(const QGemmUkernelEntry& kernel) const {
    std::mt19937_64 local(12345);
    std::mt19937_64& rng = rng_ != nullptr ? *rng_ : local;
    const bool a_signed = kernel.a_dtype == DType::kS8;
    const int32_t a_lo = a_min_.value_or(a_signed ? -128 : 0), a_hi = a_max_.value_or(a_signed ? 127 : 255);
    const int32_t a_zp = a_zp_.value_or(a_signed ? -3 : 117);
    const size_t a_stride = a_stride_ != 0 ? a_stride_ : k_;
    const size_t y_stride = y_stride_ != 0 ? y_stride_ : n_;
    REQUIRE(a_stride >= k_);
    REQUIRE(y_stride >= n_);
    const QGemmLayout layout = kernel.layout == kQGemmLayoutAny ? layout_ : kernel.layout;
    // A vpmaddubsw kernel is only chosen when its int16 pair sums cannot saturate: keep the operands so.
    int32_t w_min = w_min_, w_max = w_max_;
    if (kernel.requirement == QGemmRequirement::kPairSumsFitInt16) {
      const int64_t a_view_max = int64_t{a_hi} + (a_signed ? 128 : 0);
      auto fits = [&] {
        return 2 * a_view_max * std::max(0, w_max) <= 32767 && 2 * a_view_max * std::max(0, -w_min) <= 32768;
      };
      if (!fits()) {
        w_min = std::clamp(w_min, -64, 64);
        w_max = std::clamp(w_max, -64, 64);
      }
      REQUIRE(fits());
    }

    // Operands: uniform values, with a few rows and columns pinned to the range ends (worst-case sums).
    std::vector<uint8_t> a_bytes(m_ * a_stride + 1, 0xA5);
    std::uniform_int_distribution<int32_t> a_dist(a_lo, a_hi), w_dist(w_min, w_max);
    for (size_t i = 0; i < m_; ++i) {
      for (size_t kk = 0; kk < k_; ++kk) {
        int32_t v = a_dist(rng);
        if (i == 0 && m_ > 2) v = a_hi;
        a_bytes[i * a_stride + kk] = static_cast<uint8_t>(v);
      }
    }
    std::vector<int8_t> w(n_ * k_);
    for (size_t j = 0; j < n_; ++j) {
      for (size_t kk = 0; kk < k_; ++kk) w[j * k_ + kk] = static_cast<int8_t>(j == 0 && n_ > 2 ? w_min : w_dist(rng));
    }
    const size_t np = (n_ + 63) / 64 * 64 + 64;
    std::vector<int32_t> w_zps(np, 0);
    std::uniform_int_distribution<int32_t> zp_dist(w_zp_min_, w_zp_max_);
    for (size_t j = 0; j < n_; ++j) w_zps[j] = zp_dist(rng);
    const bool affine = std::any_of(w_zps.begin(), w_zps.end(), [](int32_t z) { return z != 0; });

    // The reference accumulators.
    std::vector<int32_t> acc(m_ * n_ + 1);
    if (a_signed) {
      reference::QGemmAccumulate(m_, n_, k_, reinterpret_cast<const int8_t*>(a_bytes.data()), a_stride, a_zp,
                                 w.data(), k_, w_zps.data(), acc.data(), n_);
    } else {
      reference::QGemmAccumulate(m_, n_, k_, a_bytes.data(), a_stride, a_zp, w.data(), k_, w_zps.data(), acc.data(),
                                 n_);
    }

    // Stage parameters per column, scaled so the outputs spread over the range.
    const QGemmStage stage = kernel.stage;
    StageArrays st(np);
    std::uniform_real_distribution<double> jitter(0.5, 2.0);
    const float a_scale = 0.0173f;
    for (size_t j = 0; j < n_; ++j) {
      int64_t col_max = 1;
      for (size_t i = 0; i < m_; ++i) col_max = std::max<int64_t>(col_max, std::abs(int64_t{acc[i * n_ + j]}));
      const double real = 70.0 * gain_ / static_cast<double>(col_max) * jitter(rng);
      st.w_scales[j] = static_cast<float>(0.003 * jitter(rng));
      if (bias_) {
        st.bias_s32[j] = static_cast<int32_t>(static_cast<int64_t>(rng() % 2001) - 1000) * static_cast<int32_t>(
                          std::max<int64_t>(1, col_max / 4000));
        st.bias_f32[j] = static_cast<float>(st.bias_s32[j]) * 0.37f;
      }
      st.multipliers[j] = static_cast<float>(real);
      reference::QuantizeMultiplier(real, &st.q31_m[j], &st.q31_s[j]);
      if (stage == QGemmStage::kFbgemm) st.bias_f32[j] = static_cast<float>(st.bias_s32[j]) * 0.37f + 0.25f;
    }
    QGemmStageParams sp = st.Params(stage, a_scale);
    sp.signed_output = signed_output_;
    sp.zero_point = explicit_bounds_ ? y_zp_ : (signed_output_ ? -7 : 121);
    sp.lo = explicit_bounds_ ? lo_ : (signed_output_ ? -128 : 0);
    sp.hi = explicit_bounds_ ? hi_ : (signed_output_ ? 127 : 255);

    const size_t out_size = stage == QGemmStage::kS32 || stage == QGemmStage::kF32 ? 4 : 1;
    const size_t y_bytes = (m_ * y_stride + 16) * out_size;
    std::vector<uint8_t> want(y_bytes, 0x5C), got(y_bytes, 0x5C);
    reference::QGemmApplyStage(m_, n_, acc.data(), n_, sp, want.data(), y_stride);

    // The kernel: packed weights, column offsets (the int32 bias folded in where the stage adds it), row sums.
    std::vector<int8_t> packed(layout.PackedBytes(n_, k_) + 64);
    std::vector<int32_t> col_sums(layout.PaddedN(n_) + 64, 0);
    QGemmPackWeights(layout, n_, k_, w.data(), k_, packed.data(), col_sums.data());
    const bool int_bias = stage == QGemmStage::kS32 || stage == QGemmStage::kFp32 || stage == QGemmStage::kQ31;
    std::vector<int32_t> col_offsets(np, 0);
    for (size_t j = 0; j < n_; ++j) {
      col_offsets[j] = QGemmColumnOffset(int_bias ? st.bias_s32[j] : 0, a_zp, col_sums[j], static_cast<int64_t>(k_),
                                         w_zps[j]);
    }
    std::vector<int32_t> row_sums(m_ + 1, 0);
    for (size_t i = 0; i < m_; ++i) {
      int64_t sum = 0;
      for (size_t kk = 0; kk < k_; ++kk) {
        const uint8_t b = a_bytes[i * a_stride + kk];
        sum += a_signed ? int64_t{static_cast<int8_t>(b)} : int64_t{b};
      }
      row_sums[i] = static_cast<int32_t>(sum);
    }
    QGemmUkernelParams params;
    params.col_offsets = col_offsets.data();
    params.col_sums = col_sums.data();
    params.w_zero_points = affine ? w_zps.data() : nullptr;
    params.row_sums = affine ? row_sums.data() : nullptr;
    params.stage = sp;
    params.stage.bias_s32 = nullptr;
    QGemmUkernelArgs args;
    args.m = m_;
    args.n = n_;
    args.k = k_;
    args.a = a_bytes.data();
    args.a_stride = a_stride;
    args.w = packed.data();
    args.w_panel_stride = layout.PanelStride(k_);
    args.layout = layout;
    args.y = got.data();
    args.y_stride = y_stride;
    args.params = &params;
    kernel.fn(args);

    QGemmTestStats stats;
    for (size_t b = 0; b < y_bytes; ++b) {
      if (want[b] == got[b]) continue;
      const size_t e = b / out_size;
      FAIL_CHECK(kernel.name << " m=" << m_ << " n=" << n_ << " k=" << k_ << " a_stride=" << a_stride
                             << " y_stride=" << y_stride << " a_zp=" << a_zp << " affine=" << affine
                             << ": differs at element " << e << " (row " << e / y_stride << ", column "
                             << e % y_stride << "): want " << Describe(want, e, stage) << ", got "
                             << Describe(got, e, stage));
      stats.passed = false;
      return stats;
    }
    std::vector<int64_t> values;
    for (size_t i = 0; i < m_; ++i) {
      for (size_t j = 0; j < n_; ++j) {
        const int64_t v = ValueAt(want, i * y_stride + j, stage);
        values.push_back(v);
        if (out_size == 1 && v == sp.lo) ++stats.at_lo;
        if (out_size == 1 && v == sp.hi) ++stats.at_hi;
      }
    }
    stats.outputs = values.size();
    std::sort(values.begin(), values.end());
    stats.distinct = static_cast<size_t>(std::unique(values.begin(), values.end()) - values.begin());
    return stats;
  }

 private:
  int64_t ValueAt(const std::vector<uint8_t>& y, size_t e, QGemmStage stage) const {
    switch (stage) {
      case QGemmStage::kS32: {
        int32_t v;
        std::memcpy(&v, y.data() + e * 4, 4);
        return v;
      }
      case QGemmStage::kF32: {
        uint32_t v;
        std::memcpy(&v, y.data() + e * 4, 4);
        return v;
      }
      default: return signed_output_ ? int64_t{static_cast<int8_t>(y[e])} : int64_t{y[e]};
    }
  }
  std::string Describe(const std::vector<uint8_t>& y, size_t e, QGemmStage stage) const {
    if (stage == QGemmStage::kF32) {
      float f;
      std::memcpy(&f, y.data() + e * 4, 4);
      return std::to_string(f);
    }
    return std::to_string(ValueAt(y, e, stage));
  }

  size_t m_ = 1, n_ = 1, k_ = 1, a_stride_ = 0, y_stride_ = 0;
  std::optional<int32_t> a_zp_, a_min_, a_max_;
  int32_t w_zp_min_ = 0, w_zp_max_ = 0, w_min_ = -128, w_max_ = 127;
  bool signed_output_ = false, explicit_bounds_ = false, bias_ = true;
  int32_t y_zp_ = 0, lo_ = 0, hi_ = 255;
  double gain_ = 1.0;
  QGemmLayout layout_ = kQGemmDefaultLayout;
  std::mt19937_64* rng_ = nullptr;
};

}  // namespace octet::testing

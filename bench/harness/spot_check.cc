// The reference spot check: which outputs are compared, and each output's reference value.
#include "bench/harness/spot_check.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ops/reference/qconv2d_reference.h"
#include "ops/reference/qgemm_reference.h"

namespace octet::bench {
namespace {

constexpr int kSamples = 300;
constexpr uint64_t kSampleSeed = 7;

// The stage of output channel j, derived as ops/qgemm.cc derives it (per-tensor scales), applied to one accumulator.
int64_t ApplyStage(const QGemmOutput& o, float a_scale, float w_scale, int64_t j, int32_t acc) {
  reference::QGemmStageParams s;
  s.stage = o.stage;
  const int32_t bias = o.bias_s32.empty() ? 0 : o.bias_s32[static_cast<size_t>(j)];
  s.bias_s32 = &bias;
  float multiplier = reference::QGemmFp32Multiplier(a_scale, w_scale, o.output_scale);
  float bias_f = 0.0f;
  int32_t q31_m = 0, q31_s = 0;
  reference::QGemmQ31Multiplier(a_scale, w_scale, o.output_scale, &q31_m, &q31_s);
  if (o.stage == QGemmStage::kFbgemm) {
    reference::QGemmFbgemmParams(a_scale, w_scale, o.output_scale, o.bias_f32[static_cast<size_t>(j)], &multiplier,
                                 &bias_f);
  }
  s.multipliers = &multiplier;
  s.bias_f32 = &bias_f;
  s.q31_multipliers = &q31_m;
  s.q31_shifts = &q31_s;
  s.zero_point = o.output_zero_point;
  s.lo = 0;
  s.hi = 255;
  if (o.stage == QGemmStage::kS32) {
    int32_t y = 0;
    reference::QGemmApplyStage(1, 1, &acc, 1, s, &y, 1);
    return y;
  }
  uint8_t y = 0;
  reference::QGemmApplyStage(1, 1, &acc, 1, s, &y, 1);
  return y;
}

int64_t Below(std::mt19937_64& rng, int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); }

int64_t ConvValue(const ConvProblem& p, const reference::Conv2dGeometry& g, const std::vector<int32_t>& w_zps,
                  int64_t oy, int64_t ox, int64_t o) {
  const int32_t acc = reference::QConv2dAccumulateOne(g, p.x.values().data<uint8_t>(), p.x.qparams().zero_point(),
                                                      p.w.values().data<int8_t>(), w_zps.data(), 0, oy, ox, o);
  return ApplyStage(p.output, p.x.qparams().scale(), p.w.qparams().scale(), o, acc);
}

}  // namespace

int64_t GemmReferenceValue(const GemmProblem& p, int64_t i, int64_t j) {
  const int64_t k = p.w.shape().dim(1);
  int32_t acc = 0;
  const int32_t w_zp = p.w.qparams().zero_point();
  reference::QGemmAccumulate(1, 1, static_cast<size_t>(k), p.a.values().data<uint8_t>() + i * k, 0,
                             p.a.qparams().zero_point(), p.w.values().data<int8_t>() + j * k, 0, &w_zp, &acc, 1);
  return ApplyStage(p.output, p.a.qparams().scale(), p.w.qparams().scale(), j, acc);
}

Result<int64_t> ConvReferenceValue(const ConvProblem& p, int64_t oy, int64_t ox, int64_t o) {
  OCTET_ASSIGN_OR_RETURN(const reference::Conv2dGeometry g,
                         Conv2dGeometryFor(p.params, p.w.shape(), p.x.shape(), "bench conv"));
  if (oy < 0 || oy >= g.OutH() || ox < 0 || ox >= g.OutW() || o < 0 || o >= g.c_out) {
    return InvalidArgument("output ({}, {}), channel {} is outside the conv output [{}, {}] x {} channels", oy, ox, o,
                           g.OutH(), g.OutW(), g.c_out);
  }
  return ConvValue(p, g, std::vector<int32_t>(static_cast<size_t>(g.c_out), p.w.qparams().zero_point()), oy, ox, o);
}

Result<SpotCheck> CheckGemm(const GemmProblem& p, const Tensor& y) {
  const int64_t m = p.a.shape().dim(0), n = p.w.shape().dim(0), k = p.w.shape().dim(1);
  if (y.shape() != Shape{m, n} || (y.dtype() != DType::kS32 && y.dtype() != DType::kU8)) {
    return InvalidArgument("the GEMM output is {} {}, expected s32 or u8 [{}, {}]", DTypeName(y.dtype()), y.shape(), m,
                           n);
  }
  std::vector<std::pair<int64_t, int64_t>> points;
  if (m * n * std::max<int64_t>(k, 1) <= (int64_t{1} << 24)) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) points.emplace_back(i, j);
    }
  } else {
    std::mt19937_64 rng(kSampleSeed);
    points = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
    for (int s = 0; s < kSamples; ++s) {
      const int64_t i = Below(rng, m);
      points.emplace_back(i, Below(rng, n));
    }
  }
  SpotCheck check;
  for (const auto& [i, j] : points) {
    const int64_t want = GemmReferenceValue(p, i, j);
    const int64_t got =
        y.dtype() == DType::kS32 ? int64_t{y.data<int32_t>()[i * n + j]} : int64_t{y.data<uint8_t>()[i * n + j]};
    if (got != want) {
      check.mismatch = fmt::format("row {}, column {}: got {}, expected {}", i, j, got, want);
      return check;
    }
    ++check.checked;
    check.inside += want > 0 && want < 255;
  }
  return check;
}

Result<SpotCheck> CheckConv(const ConvProblem& p, const Tensor& y) {
  OCTET_ASSIGN_OR_RETURN(const reference::Conv2dGeometry g,
                         Conv2dGeometryFor(p.params, p.w.shape(), p.x.shape(), "bench conv"));
  const int64_t oh = g.OutH(), ow = g.OutW(), co = g.c_out;
  if (y.shape() != Shape{1, oh, ow, co} || y.dtype() != DType::kU8) {
    return InvalidArgument("the conv output is {} {}, expected u8 [1, {}, {}, {}]", DTypeName(y.dtype()), y.shape(), oh,
                           ow, co);
  }
  struct Point {
    int64_t oy, ox, o;
  };
  std::vector<Point> points;
  if (oh * ow * co * g.kh * g.kw * (g.c_in / g.groups) <= (int64_t{1} << 22)) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        for (int64_t o = 0; o < co; ++o) points.push_back({oy, ox, o});
      }
    }
  } else {
    std::mt19937_64 rng(kSampleSeed);
    points = {{0, 0, 0}, {0, ow - 1, co - 1}, {oh - 1, 0, 0}, {oh - 1, ow - 1, co - 1}};
    for (int s = 0; s < kSamples; ++s) {
      const int64_t oy = Below(rng, oh);
      const int64_t ox = Below(rng, ow);
      points.push_back({oy, ox, Below(rng, co)});
    }
  }
  const std::vector<int32_t> w_zps(static_cast<size_t>(co), p.w.qparams().zero_point());
  SpotCheck check;
  for (const Point& pt : points) {
    const int64_t want = ConvValue(p, g, w_zps, pt.oy, pt.ox, pt.o);
    const int64_t got = y.data<uint8_t>()[(pt.oy * ow + pt.ox) * co + pt.o];
    if (got != want) {
      check.mismatch = fmt::format("pixel ({}, {}), channel {}: got {}, expected {}", pt.oy, pt.ox, pt.o, got, want);
      return check;
    }
    ++check.checked;
    check.inside += want > 0 && want < 255;
  }
  return check;
}

}  // namespace octet::bench

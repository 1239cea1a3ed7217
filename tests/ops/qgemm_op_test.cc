// The qgemm reference on hand-computed cases and its exact K bound; the operator (prepack, plan, run) against the
// reference for every runnable ISA, 1, 2, 3 and 7 threads (bit-identical), every stage, per-tensor and per-channel,
// symmetric and affine weights, u8 and s8 activations and outputs; and its errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/qgemm.h"
#include "ops/reference/qgemm_reference.h"
#include "tests/ops/linear_op_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

TEST_CASE("qgemm reference: a hand-computed product with zero points and every stage", "[qgemm]") {
  // A = [[1, 2, 3], [4, 5, 6]] with a_zp 1; W = [[1, 1, 1], [2, 0, -1]] with w_zp = [0, 1]:
  // (a - 1) = [[0, 1, 2], [3, 4, 5]], (w - zp) = [[1, 1, 1], [1, -1, -2]] -> acc = [[3, -5], [12, -11]].
  const uint8_t a[] = {1, 2, 3, 4, 5, 6};
  const int8_t w[] = {1, 1, 1, 2, 0, -1};
  const int32_t w_zp[] = {0, 1};
  int32_t acc[4];
  reference::QGemmAccumulate(2, 2, 3, a, 3, 1, w, 3, w_zp, acc, 2);
  CHECK(std::vector<int32_t>(acc, acc + 4) == std::vector<int32_t>{3, -5, 12, -11});

  reference::QGemmStageParams p;
  const int32_t bias[] = {10, -10};
  p.bias_s32 = bias;
  int32_t s32[4];
  reference::QGemmApplyStage(2, 2, acc, 2, p, s32, 2);
  CHECK(std::vector<int32_t>(s32, s32 + 4) == std::vector<int32_t>{13, -15, 22, -21});

  // fp32: (acc + bias) * 0.5, ties to even: 6.5 -> 6, -7.5 -> -8, 11 -> 11, -10.5 -> -10; + zp 100.
  const float half[] = {0.5f, 0.5f};
  p.stage = reference::QGemmStage::kFp32;
  p.multipliers = half;
  p.zero_point = 100;
  uint8_t u8[4];
  reference::QGemmApplyStage(2, 2, acc, 2, p, u8, 2);
  CHECK(std::vector<int>(u8, u8 + 4) == std::vector<int>{106, 92, 111, 90});
  // Clamp bounds: a fused ReLU (lo = zp).
  p.lo = 100;
  reference::QGemmApplyStage(2, 2, acc, 2, p, u8, 2);
  CHECK(std::vector<int>(u8, u8 + 4) == std::vector<int>{106, 100, 111, 100});

  // fbgemm: float bias before the multiply: (acc + 1.5) * 0.5 -> 2.25, -1.75, 6.75, -4.75 -> 2, -2, 7, -5.
  const float fbias[] = {1.5f, 1.5f};
  p.stage = reference::QGemmStage::kFbgemm;
  p.bias_f32 = fbias;
  p.lo = -128;
  p.hi = 127;
  p.zero_point = 0;
  p.signed_output = true;
  int8_t s8[4];
  reference::QGemmApplyStage(2, 2, acc, 2, p, s8, 2);
  CHECK(std::vector<int>(s8, s8 + 4) == std::vector<int>{2, -2, 7, -5});

  // q31 with multiplier 0.5 (2^30, shift 0): acc + bias = 13, -15, 22, -21 -> 6.5 -> 7, -7.5 -> -7, 11,
  // -10.5 -> -10 (SaturatingRoundingDoublingHighMul rounds ties toward +infinity).
  const int32_t qm[] = {1 << 30, 1 << 30}, qs[] = {0, 0};
  p.stage = reference::QGemmStage::kQ31;
  p.q31_multipliers = qm;
  p.q31_shifts = qs;
  reference::QGemmApplyStage(2, 2, acc, 2, p, s8, 2);
  CHECK(std::vector<int>(s8, s8 + 4) == std::vector<int>{7, -7, 11, -10});

  // f32: acc * 0.25 * w_scale + bias.
  const float ws[] = {2.0f, 4.0f};
  p.stage = reference::QGemmStage::kF32;
  p.a_scale = 0.25f;
  p.w_scales = ws;
  float f[4];
  reference::QGemmApplyStage(2, 2, acc, 2, p, f, 2);
  CHECK(std::vector<float>(f, f + 4) == std::vector<float>{3.0f, -3.5f, 7.5f, -9.5f});
}

TEST_CASE("qgemm reference: the K bound is exact", "[qgemm]") {
  using reference::QGemmMaxK;
  // u8 x s8, zero points 0: 255 * -128 per term -> floor((2^31 - 1) / 32640) = 65,793 (DESIGN.md §4).
  CHECK(QGemmMaxK(0, 255, 0, -128, 127, 0) == 65793);
  CHECK(QGemmMaxK(0, 255, 255, -128, 127, 0) == 65793);
  // Activation zero point in the middle: |a - 128| <= 128; (-128) * (-128) = 16384 per term.
  CHECK(QGemmMaxK(0, 255, 128, -128, 127, 0) == 131071);
  CHECK(QGemmMaxK(-128, 127, 0, -128, 127, 0) == 131071);
  // Affine weights widen the product range: w - (-128) in [0, 255], 255 * 255 per term.
  CHECK(QGemmMaxK(0, 255, 0, -128, 127, -128) == 2147483647 / 65025);
  // Negative side: the minimum is -2^31, one more than the maximum's magnitude.
  const auto range = reference::QGemmAccumulatorRange(65793, 0, 255, 0, -128, 127, 0);
  CHECK(range.min == -int64_t{65793} * 32640);
  CHECK(range.max == int64_t{65793} * 255 * 127);
  // A bias takes from the room: K * 32640 + bias must stay >= -2^31.
  CHECK(QGemmMaxK(0, 255, 0, -128, 127, 0, -129, 0) == 65792);
  CHECK(QGemmMaxK(0, 255, 0, -128, 127, 0, -128, 0) == 65793);
}

// Weights [n, k].
QTensor MakeWeights(std::mt19937_64& rng, int64_t n, int64_t k, bool per_channel, bool affine) {
  return testing::MakeLinearWeights(rng, Shape{n, k}, per_channel, affine);
}

// The reference result of the whole operator, from the spec's functions only.
std::vector<uint8_t> ReferenceQGemm(const QTensor& a, const QTensor& w, const QGemmOutput& out) {
  const Shape& as = a.shape();
  const int64_t k = w.shape().dim(1), n = w.shape().dim(0), m = as.Product(0, as.rank() - 1);
  const std::vector<int32_t> w_zp = testing::LinearWeightZeroPoints(w, n);
  std::vector<int32_t> acc(static_cast<size_t>(m * n));
  const int32_t a_zp = a.qparams().zero_point();
  if (a.values().dtype() == DType::kU8) {
    reference::QGemmAccumulate(m, n, k, a.values().data<uint8_t>(), k, a_zp, w.values().data<int8_t>(), k,
                               w_zp.data(), acc.data(), n);
  } else {
    reference::QGemmAccumulate(m, n, k, a.values().data<int8_t>(), k, a_zp, w.values().data<int8_t>(), k,
                               w_zp.data(), acc.data(), n);
  }
  return testing::ReferenceLinearStage(acc, m, n, a.qparams().scale(), w, out);
}

QGemmOutput RandomOutput(std::mt19937_64& rng, QGemmStage stage, int64_t n) {
  return testing::RandomLinearOutput(rng, stage, n, 0.05f, 0.01f);
}

constexpr QGemmStage kStages[] = {QGemmStage::kS32, QGemmStage::kFp32, QGemmStage::kQ31, QGemmStage::kFbgemm,
                                  QGemmStage::kF32};

TEST_CASE("qgemm op equals the reference on every ISA and thread count", "[qgemm]") {
  auto rng = testing::MakeRng("qgemm_op");
  struct Case {
    Shape a_shape;
    int64_t n;
  };
#if defined(__aarch64__)
  const std::vector<Case> cases = {{{1, 64}, 33}, {{9, 5}, 48}, {{2, 3, 31}, 17}, {{37, 100}, 70}, {{0, 7}, 5}};
#else
  const std::vector<Case> cases = {{{1, 1000}, 200},
                                   {{9, 5}, 48},
                                   {{2, 3, 31}, 17},
                                   {{70, 300}, 130},
                                   {{129, 64}, 97},
                                   {{33, 1}, 1},
                                   {{0, 7}, 5},
                                   {{4, 0}, 6},
                                   {{300, 257}, 50},
                                   {{16, 128}, 513},
                                   // 281 KB of A: the range check in two pieces; more than 16 blocks.
                                   {{1100, 256}, 64}};
#endif
  for (const Case& c : cases) {
    const int64_t k = c.a_shape.dim(c.a_shape.rank() - 1);
    for (DType a_dtype : {DType::kU8, DType::kS8}) {
      const bool per_channel = rng() & 1, affine = rng() % 3 == 0;
      const QTensor w = MakeWeights(rng, c.n, k, per_channel, affine);
      const int32_t a_zp = a_dtype == DType::kU8 ? 117 : -9;
      const QTensor a = testing::MakeLinearInput(rng, c.a_shape, a_dtype, a_zp);
      const QGemmStage stage = kStages[rng() % 5];
      const QGemmOutput out = RandomOutput(rng, stage, c.n);
      const std::vector<uint8_t> want = ReferenceQGemm(a, w, out);
      for (Isa isa : testing::CompiledIsaList()) {
        if (!testing::CanRun(isa, std::string("qgemm op on ") + IsaName(isa))) continue;
        QGemmPrepackOptions options;
        options.activation_dtype = a_dtype;
        if (rng() & 1) options.activation_zero_point = a_zp;
        const PackedWeights packed = PackedWeights::Prepack(testing::ContextFor(isa), w, options).value();
        for (int threads : {1, 2, 3, 7}) {
          const Context ctx = testing::ContextFor(isa, threads);
          INFO("A " << c.a_shape.ToString() << " " << DTypeName(a_dtype) << ", N " << c.n << ", stage "
                    << reference::QGemmStageName(stage) << (per_channel ? " per-channel" : " per-tensor")
                    << (affine ? " affine" : "") << ", isa " << IsaName(isa) << ", threads " << threads);
          const Tensor y = QGemm(ctx, a, packed, out).value();
          std::vector<int64_t> dims = c.a_shape.dims();
          dims.back() = c.n;
          REQUIRE(y.shape() == Shape(dims));
          REQUIRE(y.SizeBytes() == want.size());
          const auto* got = static_cast<const uint8_t*>(y.raw_data());
          for (size_t i = 0; i < want.size(); ++i) {
            if (got[i] != want[i]) FAIL("byte " << i << ": want " << int{want[i]} << ", got " << int{got[i]});
          }
          if (!y.empty()) {
            // This ISA's kernel ran if the list has one for the dtype, stage and M, else the scalar fallback.
            std::string expected = "__scalar";
            const auto m = static_cast<uint32_t>(c.a_shape.Product(0, c.a_shape.rank() - 1));
            for (const auto& e : QGemmUkernels()) {
              if (e.isa == isa && e.a_dtype == a_dtype && e.stage == stage && e.min_m <= m) {
                expected = std::string("__") + IsaName(isa);
              }
            }
            CHECK_THAT(ctx.LastKernel("qgemm"), Catch::EndsWith(expected));
          }
        }
      }
    }
  }
}

TEST_CASE("qgemm op: each enabled ISA's kernel runs (no silent scalar fallback)", "[qgemm]") {
  auto rng = testing::MakeRng("qgemm_op_kernel");
  const QTensor w = MakeWeights(rng, 64, 128, true, false);
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, std::string("qgemm kernel choice on ") + IsaName(isa))) continue;
    const Context ctx = testing::ContextFor(isa);
    const PackedWeights packed = PackedWeights::Prepack(ctx, w).value();
    const QTensor a = testing::MakeLinearInput(rng, Shape{64, 128}, DType::kU8, 117);
    std::string expected = "__scalar";
    for (const auto& e : QGemmUkernels()) {
      if (e.isa == isa && e.a_dtype == DType::kU8 && e.stage == QGemmStage::kS32 &&
          e.requirement == QGemmRequirement::kNone) {
        expected = std::string("__") + IsaName(isa);
        break;
      }
    }
    (void)QGemm(ctx, a, packed, QGemmOutput::Int32()).value();
    INFO(ExplainQGemm(ctx, packed, QGemmStage::kS32, 64).size() << " candidates");
    CHECK_THAT(ctx.LastKernel("qgemm"), Catch::EndsWith(expected));
  }
}

TEST_CASE("qgemm op: the plan's kernel choice (made once) is the per-call rule's, for every M bucket", "[qgemm]") {
  auto rng = testing::MakeRng("qgemm_plan_choice");
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, std::string("qgemm plan kernel choice on ") + IsaName(isa))) continue;
    const Context ctx = testing::ContextFor(isa);
    for (const bool narrow_weights : {false, true}) {
      QTensor w = MakeWeights(rng, 40, 96, true, false);
      if (narrow_weights) {
        for (auto& v : w.values().values<int8_t>()) v = static_cast<int8_t>(std::clamp<int>(v, -64, 64));
      }
      const PackedWeights packed = PackedWeights::Prepack(ctx, w).value();
      const QGemmOutput out = QGemmOutput::Requantized(QGemmStage::kQ31, DType::kU8, 0.7f, 100);
      const QGemmPlan plan =
          QGemmPlan::Create(packed, testing::MakeLinearInput(rng, Shape{1, 96}, DType::kU8, 3).qparams(), out).value();
      for (const int64_t m : {1, 2, 3, 4, 5, 8, 15, 16, 17, 64}) {
        for (const bool seven_bit : {false, true}) {
          QTensor a = testing::MakeLinearInput(rng, Shape{m, 96}, DType::kU8, 3);
          auto values = a.values().values<uint8_t>();
          for (auto& v : values) v = seven_bit ? v & 0x7F : v;
          if (!seven_bit) values[0] = 255;
          const Tensor y = plan.Run(ctx, a.values()).value();
          INFO(IsaName(isa) << " m " << m << (seven_bit ? " 7-bit" : " 8-bit") << (narrow_weights ? " narrow" : ""));
          // The kernel that ran is the one the per-call rule picks for this A's actual range...
          const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
          CHECK(ctx.LastKernel("qgemm") == QGemmKernelName(ctx, packed, QGemmStage::kQ31, m, *lo, *hi));
          // ...and one of those the plan names for this M.
          CHECK_THAT(plan.UkernelName(ctx, m), Catch::Contains(ctx.LastKernel("qgemm")));
          const std::vector<uint8_t> want = ReferenceQGemm(a, w, out);
          CHECK(std::memcmp(y.raw_data(), want.data(), want.size()) == 0);
        }
      }
      // A context with other ISAs than the prepack one chooses per call, by the same rule.
      const Context scalar = testing::ContextFor(Isa::kScalar);
      (void)plan.Run(scalar, testing::MakeLinearInput(rng, Shape{5, 96}, DType::kU8, 3).values()).value();
      CHECK_THAT(scalar.LastKernel("qgemm"), Catch::EndsWith("__scalar"));
    }
  }
}

#if defined(__x86_64__)
TEST_CASE("qgemm op: vpmaddubsw only where int16 pair sums cannot saturate, exact either way", "[qgemm]") {
  if (!testing::CanRun(Isa::kAvx2, "qgemm vpmaddubsw dispatch on avx2")) return;
  auto rng = testing::MakeRng("qgemm_maddubs");
  const Context ctx = testing::ContextFor(Isa::kAvx2);
  const QTensor w = MakeWeights(rng, 40, 300, true, false);  // full-range s8 weights
  const PackedWeights packed = PackedWeights::Prepack(ctx, w).value();
  QTensor a = testing::MakeLinearInput(rng, Shape{9, 300}, DType::kU8, 60);
  // 7-bit activations: 2 * 127 * 128 = 32512 fits int16, so the fast kernel runs.
  for (auto& v : a.values().values<uint8_t>()) v &= 0x7F;
  const QGemmOutput out = QGemmOutput::Requantized(QGemmStage::kFp32, DType::kU8, 0.5f, 121);
  const std::vector<uint8_t> want7 = ReferenceQGemm(a, w, out);
  const Tensor y7 = QGemm(ctx, a, packed, out).value();
  CHECK_THAT(ctx.LastKernel("qgemm"), Catch::Contains("_maddubs__avx2"));
  CHECK(std::memcmp(y7.raw_data(), want7.data(), want7.size()) == 0);
  // One activation of 255: a pair could reach 2 * 255 * -128, beyond int16; the exact vpmaddwd kernel runs instead
  // on the int16 packing, with the same bits as the reference.
  a.values().values<uint8_t>()[17] = 255;
  const std::vector<uint8_t> want8 = ReferenceQGemm(a, w, out);
  const Tensor y8 = QGemm(ctx, a, packed, out).value();
  CHECK_THAT(ctx.LastKernel("qgemm"), Catch::EndsWith("_3x24c2__avx2"));
  CHECK(std::memcmp(y8.raw_data(), want8.data(), want8.size()) == 0);
  // Below its minimum M, the widening kernel over the s8 packing.
  QTensor a2 = testing::MakeLinearInput(rng, Shape{3, 300}, DType::kU8, 60);
  a2.values().values<uint8_t>()[5] = 255;
  const std::vector<uint8_t> want2 = ReferenceQGemm(a2, w, out);
  const Tensor y2 = QGemm(ctx, a2, packed, out).value();
  CHECK_THAT(ctx.LastKernel("qgemm"), Catch::EndsWith("_2x16c4__avx2"));
  CHECK(std::memcmp(y2.raw_data(), want2.data(), want2.size()) == 0);
  const auto why = ExplainQGemm(ctx, packed, QGemmStage::kFp32, 9, 0, 255);
  bool explained = false;
  for (const auto& line : why) explained = explained || line.find("could saturate int16") != std::string::npos;
  CHECK(explained);
}
#endif

TEST_CASE("qgemm op: avx2 packs int16 weights next to the s8 ones only where vpmaddubsw could saturate", "[qgemm]") {
  if (!testing::CanRun(Isa::kAvx2, "qgemm avx2 packings")) return;
  auto rng = testing::MakeRng("qgemm_avx2_layouts");
  const Context ctx = testing::ContextFor(Isa::kAvx2);
  const QGemmOutput out = QGemmOutput::Requantized(QGemmStage::kQ31, DType::kS8, 0.3f, -4);
  for (DType a_dtype : {DType::kU8, DType::kS8}) {
    QGemmPrepackOptions options;
    options.activation_dtype = a_dtype;
    // Full-range weights: both packings.
    const QTensor full = MakeWeights(rng, 50, 77, true, true);
    const PackedWeights both = PackedWeights::Prepack(ctx, full, options).value();
    CHECK(both.layout() == kQGemmLayoutX86);
    CHECK(both.alt_layout() == kQGemmLayoutX86Wide);
    // Weights within [-64, 64]: 2 * 255 * 64 fits int16 for any activations, vpmaddubsw always serves; one packing.
    QTensor narrow = MakeWeights(rng, 50, 77, true, false);
    for (auto& v : narrow.values().values<int8_t>()) v = static_cast<int8_t>(std::clamp<int>(v, -64, 64));
    const PackedWeights one = PackedWeights::Prepack(ctx, narrow, options).value();
    CHECK(one.layout() == kQGemmLayoutX86);
    CHECK(one.alt_layout().nr == 0);
    const int32_t a_zp = a_dtype == DType::kU8 ? 200 : 90;
    for (const int64_t m : {1, 4, 37}) {
      QTensor a = testing::MakeLinearInput(rng, Shape{m, 77}, a_dtype, a_zp);
      static_cast<uint8_t*>(a.values().raw_data())[0] = a_dtype == DType::kU8 ? 255 : 127;  // the full range
      const Tensor y_both = QGemm(ctx, a, both, out).value();
      CHECK_THAT(ctx.LastKernel("qgemm"), Catch::EndsWith(m >= 4 ? "_3x24c2__avx2" : "_2x16c4__avx2"));
      const std::vector<uint8_t> want_both = ReferenceQGemm(a, full, out);
      CHECK(std::memcmp(y_both.raw_data(), want_both.data(), want_both.size()) == 0);
      const Tensor y_one = QGemm(ctx, a, one, out).value();
      CHECK_THAT(ctx.LastKernel("qgemm"), Catch::Contains("_maddubs__avx2"));
      const std::vector<uint8_t> want_one = ReferenceQGemm(a, narrow, out);
      CHECK(std::memcmp(y_one.raw_data(), want_one.data(), want_one.size()) == 0);
    }
  }
}

TEST_CASE("qgemm op: prepack rejects K that could overflow int32, exactly at the bound", "[qgemm]") {
  const Context ctx = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  auto weights = [](int64_t k, int32_t zp) {
    Tensor w = Tensor::Create(DType::kS8, Shape{1, k}).value();
    return QTensor::Create(std::move(w), QParams::PerTensor(DType::kS8, 0.01f, zp).value()).value();
  };
  QGemmPrepackOptions u8_zp0;
  u8_zp0.activation_zero_point = 0;
  CHECK(PackedWeights::Prepack(ctx, weights(65793, 0), u8_zp0).ok());
  const auto too_long = PackedWeights::Prepack(ctx, weights(65794, 0), u8_zp0);
  REQUIRE_FALSE(too_long.ok());
  CHECK(too_long.status().code() == StatusCode::kOutOfRange);
  CHECK_THAT(too_long.status().message(), Catch::Contains("K = 65794") && Catch::Contains("at most 65793"));
  // Unknown activation zero point: the worst one (0 or 255) gives the same bound.
  CHECK(PackedWeights::Prepack(ctx, weights(65793, 0)).ok());
  CHECK_FALSE(PackedWeights::Prepack(ctx, weights(65794, 0)).ok());
  // A zero point of 128 halves the worst term: K up to 131,071.
  QGemmPrepackOptions u8_zp128;
  u8_zp128.activation_zero_point = 128;
  CHECK(PackedWeights::Prepack(ctx, weights(131071, 0), u8_zp128).ok());
  CHECK_FALSE(PackedWeights::Prepack(ctx, weights(131072, 0), u8_zp128).ok());
  // Affine weights count the zero-point terms: w_zp = -128 makes (w - zp) reach 255.
  CHECK(PackedWeights::Prepack(ctx, weights(33025, -128), u8_zp0).ok());
  CHECK_FALSE(PackedWeights::Prepack(ctx, weights(33026, -128), u8_zp0).ok());
}

TEST_CASE("qgemm op: a bias that could overflow the accumulator is rejected, at the exact bound", "[qgemm]") {
  const Context ctx = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  Tensor wt = Tensor::Create(DType::kS8, Shape{1, 65793}).value();
  for (auto& v : wt.values<int8_t>()) v = -128;
  const QTensor w = QTensor::Create(std::move(wt), QParams::PerTensor(DType::kS8, 0.01f, 0).value()).value();
  QGemmPrepackOptions options;
  options.activation_zero_point = 0;
  const PackedWeights packed = PackedWeights::Prepack(ctx, w, options).value();
  Tensor at = Tensor::Create(DType::kU8, Shape{1, 65793}).value();
  for (auto& v : at.values<uint8_t>()) v = 255;
  const QTensor a = QTensor::Create(std::move(at), QParams::PerTensor(DType::kU8, 0.1f, 0).value()).value();
  // The accumulator reaches 65793 * 255 * -128 = -2147483520: a bias of -128 lands on INT32_MIN, -129 would wrap.
  const Tensor y = QGemm(ctx, a, packed, QGemmOutput::Int32({-128})).value();
  CHECK(y.data<int32_t>()[0] == std::numeric_limits<int32_t>::min());
  const auto bad = QGemm(ctx, a, packed, QGemmOutput::Int32({-129}));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kOutOfRange);
  CHECK_THAT(bad.status().message(), Catch::Contains("bias[0] = -129"));
}

TEST_CASE("qgemm op: clear errors for malformed operands and stages", "[qgemm]") {
  auto rng = testing::MakeRng("qgemm_errors");
  const Context ctx = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  const QTensor w = MakeWeights(rng, 8, 16, true, false);
  const PackedWeights packed = PackedWeights::Prepack(ctx, w).value();
  const QTensor a = testing::MakeLinearInput(rng, Shape{3, 16}, DType::kU8, 117);

  // Weights: not s8, not rank 2, per-channel on axis 1.
  const QTensor u8w = testing::MakeLinearInput(rng, Shape{4, 4}, DType::kU8, 0);
  CHECK_THAT(PackedWeights::Prepack(ctx, u8w).status().message(), Catch::Contains("need an s8 tensor"));
  Tensor w1 = Tensor::Create(DType::kS8, Shape{4, 4}).value();
  const QTensor axis1 =
      QTensor::Create(w1, QParams::PerChannel(DType::kS8, {1, 1, 1, 1}, {0, 0, 0, 0}, 1, -128, 127).value()).value();
  CHECK_THAT(PackedWeights::Prepack(ctx, axis1).status().message(), Catch::Contains("axis 0"));

  // Activations: wrong K, wrong dtype, zero point other than prepacked, per-channel.
  const QTensor wrong_k = testing::MakeLinearInput(rng, Shape{3, 15}, DType::kU8, 117);
  CHECK_THAT(QGemm(ctx, wrong_k, packed, QGemmOutput::Int32()).status().message(), Catch::Contains("[..., 16]"));
  const QTensor s8a = testing::MakeLinearInput(rng, Shape{3, 16}, DType::kS8, 0);
  CHECK_THAT(QGemm(ctx, s8a, packed, QGemmOutput::Int32()).status().message(), Catch::Contains("prepacked for u8"));
  QGemmPrepackOptions fixed;
  fixed.activation_zero_point = 100;
  const PackedWeights packed100 = PackedWeights::Prepack(ctx, w, fixed).value();
  CHECK_THAT(QGemm(ctx, a, packed100, QGemmOutput::Int32()).status().message(), Catch::Contains("zero point 100"));

  // Stages: bias size and kind, output dtype, scale, zero point, bounds.
  CHECK_THAT(QGemm(ctx, a, packed, QGemmOutput::Int32({1, 2})).status().message(), Catch::Contains("N = 8"));
  QGemmOutput f = QGemmOutput::Float({1, 2, 3, 4, 5, 6, 7, std::numeric_limits<float>::quiet_NaN()});
  CHECK_THAT(QGemm(ctx, a, packed, f).status().message(), Catch::Contains("finite"));
  QGemmOutput q = QGemmOutput::Requantized(QGemmStage::kFp32, DType::kS32, 0.1f, 0);
  CHECK_THAT(QGemm(ctx, a, packed, q).status().message(), Catch::Contains("u8 or s8"));
  q = QGemmOutput::Requantized(QGemmStage::kFp32, DType::kU8, 0.0f, 0);
  CHECK_THAT(QGemm(ctx, a, packed, q).status().message(), Catch::Contains("scale"));
  q = QGemmOutput::Requantized(QGemmStage::kQ31, DType::kS8, 0.1f, 200);
  CHECK_THAT(QGemm(ctx, a, packed, q).status().message(), Catch::Contains("zero point"));
  q = QGemmOutput::Requantized(QGemmStage::kFbgemm, DType::kU8, 0.1f, 3);
  q.lo = 10;
  q.hi = 5;
  CHECK_THAT(QGemm(ctx, a, packed, q).status().message(), Catch::Contains("lo <= hi"));
  q = QGemmOutput::Requantized(QGemmStage::kFbgemm, DType::kU8, 0.1f, 3, {1, 2, 3, 4, 5, 6, 7, 8});
  CHECK_THAT(QGemm(ctx, a, packed, q).status().message(), Catch::Contains("float bias"));
  // A multiplier that is not finite in float.
  q = QGemmOutput::Requantized(QGemmStage::kFp32, DType::kU8, 1e-45f, 3);
  CHECK_THAT(QGemm(ctx, a, packed, q).status().message(), Catch::Contains("finite and > 0"));
}

}  // namespace
}  // namespace octet

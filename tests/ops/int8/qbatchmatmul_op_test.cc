// QBatchMatMul (two int8 activations) against reference::QBatchMatMul bit for bit on every ISA and at 1-3 threads
// (its packed path and, with B codes outside B's quant range, its per-batch prepack), against a plain float matmul of
// the dequantized operands within 1 LSB, and its shape errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "ops/reference/qbatchmatmul_reference.h"
#include "tests/ops/int8/qmisc_op_tester.h"

namespace octet {
namespace {

using testing::CodeAt;
using testing::QIn;

TEST_CASE(
    "QBatchMatMul equals its reference on every ISA and thread count, "
    "and float within 1 LSB",
    "[int8_misc]") {
  auto rng = testing::MakeRng("qbatchmatmul_op");
  struct Case {
    Shape a, b;
  };
  const std::vector<Case> cases = {{Shape{2, 3, 17, 33}, Shape{2, 3, 33, 9}},   // Q x K^T-like
                                   {Shape{1, 4, 16, 16}, Shape{1, 4, 16, 64}},  // P x V-like
                                   {Shape{3, 5, 8}, Shape{8, 7}},               // B broadcast over the batch
                                   {Shape{1, 6, 4}, Shape{2, 4, 1}},            // A broadcast, N = 1
                                   {Shape{7, 300}, Shape{300, 20}},             // plain 2-D, long K
                                   {Shape{2, 5, 65}, Shape{2, 65, 31}},         // partial panels, K past 64
                                   {Shape{3, 2, 9, 6}, Shape{3, 1, 6, 17}},     // B broadcast in one batch dim
                                   {Shape{2, 3, 1}, Shape{1, 2}},               // K = 1
                                   {Shape{1, 1}, Shape{1, 1}}};                 // one element
  std::vector<Context> contexts;
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, "qbatchmatmul")) continue;
    for (int threads : {1, 2, 3}) contexts.push_back(testing::ContextFor(isa, threads));
  }
  for (const Case& c : cases) {
    for (DType a_dtype : {DType::kU8, DType::kS8}) {
      for (DType b_dtype : {DType::kU8, DType::kS8}) {
        const QParams qa = testing::RandomActivationQParams(rng, a_dtype);
        // u8 B is 7-bit ([0, 127], as --backend x86 makes it) every other time: the weights then shift into
        // [-64, 63] (reference::BatchMatMulWeightShift).
        const bool seven_bit = b_dtype == DType::kU8 && rng() % 2 == 0;
        const QParams qb =
            seven_bit ? QParams::PerTensor(DType::kU8, 0.02f, static_cast<int32_t>(rng() % 128), 0, 127).value()
                      : testing::RandomActivationQParams(rng, b_dtype);
        const Tensor a = testing::RandomCodes(rng, a_dtype, c.a);
        Tensor b = testing::RandomCodes(rng, b_dtype, c.b);
        // Every other 7-bit B keeps a few codes above its quant range, which no producer writes: the operator then
        // leaves its packed path for the per-batch prepack, which clamps them as the reference does.
        const bool stray = seven_bit && rng() % 2 == 0;
        if (seven_bit) {
          for (int64_t i = 0; i < b.NumElements(); ++i) {
            if (!stray || i % 5 != 0) b.data<uint8_t>()[i] &= 0x7F;
          }
        }
        // The float product of the dequantized operands; y's qparams cover its range.
        const reference::BatchMatMulShape s = reference::MakeBatchMatMulShape(c.a, c.b).value();
        std::vector<double> product;
        for (size_t batch = 0; batch < s.a_offsets.size(); ++batch) {
          for (int64_t i = 0; i < s.m; ++i) {
            for (int64_t j = 0; j < s.n; ++j) {
              double acc = 0;
              for (int64_t t = 0; t < s.k; ++t) {
                acc += static_cast<double>(testing::Dequantized(a, qa, s.a_offsets[batch] + i * s.k + t)) *
                       testing::Dequantized(b, qb, s.b_offsets[batch] + t * s.n + j);
              }
              product.push_back(acc);
            }
          }
        }
        const double lo = std::min(0.0, *std::min_element(product.begin(), product.end()));
        const double hi = std::max(0.0, *std::max_element(product.begin(), product.end()));
        const float y_scale = static_cast<float>((hi - lo) / 255.0);
        const QParams qy =
            QParams::PerTensor(DType::kU8, y_scale, static_cast<int32_t>(std::lround(-lo / y_scale))).value();
        INFO("A " << c.a.ToString() << " " << qa.ToString() << ", B " << c.b.ToString() << " " << qb.ToString()
                  << (stray ? " with codes outside its quant range" : ""));
        const Tensor want = reference::QBatchMatMul(a, qa, b, qb, qy).value();
        for (const Context& context : contexts) {
          const Tensor y = testing::RunQOp("QBatchMatMul", {QIn(a, qa), QIn(b, qb)}, qy, {}, context).value();
          testing::RequireSameCodes(y, want);
        }
        if (s.m * s.n > 1) CHECK(testing::VariedCodes(want));
        if (stray) continue;  // the float product reads the stray codes unclamped
        int max_error = 0;
        for (size_t o = 0; o < product.size(); ++o) {
          const double f = std::clamp(std::nearbyint(product[o] / qy.scale()) + qy.zero_point(), 0.0, 255.0);
          max_error = std::max(max_error, std::abs(CodeAt(want, static_cast<int64_t>(o)) - static_cast<int32_t>(f)));
        }
        CHECK(max_error <= 1);
      }
    }
  }
}

TEST_CASE("QBatchMatMul refuses operands whose K or batch dims do not match", "[int8_misc]") {
  auto rng = testing::MakeRng("qbatchmatmul_errors");
  const QParams q = QParams::PerTensor(DType::kU8, 0.05f, 128).value();
  const Context context = Context::ForIsas(DetectedIsas(), 1);
  auto bad_k = testing::RunQOp("QBatchMatMul",
                               {QIn(testing::RandomCodes(rng, DType::kU8, Shape{2, 3}), q),
                                QIn(testing::RandomCodes(rng, DType::kU8, Shape{4, 5}), q)},
                               q, {}, context);
  REQUIRE(!bad_k.ok());
  CHECK_THAT(bad_k.status().message(), Catch::Contains("K differs"));
  auto bad_batch = testing::RunQOp("QBatchMatMul",
                                   {QIn(testing::RandomCodes(rng, DType::kU8, Shape{2, 2, 3}), q),
                                    QIn(testing::RandomCodes(rng, DType::kU8, Shape{3, 3, 5}), q)},
                                   q, {}, context);
  REQUIRE(!bad_batch.ok());
  CHECK_THAT(bad_batch.status().message(), Catch::Contains("do not broadcast"));
}

}  // namespace
}  // namespace octet

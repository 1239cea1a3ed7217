// The shape-only ONNX operators (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transpose) on u8 and s8 values
// with qparams, through QuantizedGraphRegistry(): the output holds the input's codes in the new layout, and an
// output whose qparams differ from the input's is refused.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/ops/int8/qmisc_op_tester.h"

namespace octet {
namespace {

using testing::QInput;

Tensor QShapeInts(const std::vector<int32_t>& v) {
  return Tensor::FromValues<int32_t>(Shape{static_cast<int64_t>(v.size())}, v).value();
}

TEST_CASE("Shape-only operators move u8 and s8 codes unchanged", "[int8_misc]") {
  auto rng = testing::MakeRng("qshape_ops");
  for (DType dtype : {DType::kU8, DType::kS8}) {
    const QParams q = testing::RandomActivationQParams(rng, dtype);
    const Tensor x = testing::RandomCodes(rng, dtype, Shape{2, 3, 1, 5});
    for (int threads : {1, 2}) {
      const Context ctx = Context::ForIsas(DetectedIsas(), threads);
      auto same_codes = [&](const Tensor& y, const Shape& shape) {
        REQUIRE(y.dtype() == dtype);
        REQUIRE(y.shape() == shape);
        REQUIRE(std::memcmp(y.raw_data(), x.raw_data(), x.SizeBytes()) == 0);
      };
      same_codes(
          testing::RunQOp("Reshape", {{x, q}, {QShapeInts({6, -1}), std::nullopt, true}}, q, {}, ctx, "").value(),
          Shape{6, 5});
      same_codes(testing::RunQOp("Flatten", {{x, q}}, q, {{"axis", int64_t{2}}}, ctx, "").value(), Shape{6, 5});
      same_codes(testing::RunQOp("Squeeze", {{x, q}, {QShapeInts({2}), std::nullopt, true}}, q, {}, ctx, "").value(),
                 Shape{2, 3, 5});
      same_codes(testing::RunQOp("Unsqueeze", {{x, q}, {QShapeInts({0}), std::nullopt, true}}, q, {}, ctx, "").value(),
                 Shape{1, 2, 3, 1, 5});
      same_codes(testing::RunQOp("Identity", {{x, q}}, q, {}, ctx, "").value(), x.shape());
      // Transpose [2, 3, 1, 5] by (3, 0, 2, 1): y[d][a][c][b] = x[a][b][c][d].
      const Tensor y = testing::RunQOp("Transpose", {{x, q}}, q, {{"perm", std::vector<int64_t>{3, 0, 2, 1}}}, ctx, "")
                           .value();
      REQUIRE(y.dtype() == dtype);
      REQUIRE(y.shape() == Shape{5, 2, 1, 3});
      for (int64_t a = 0; a < 2; ++a) {
        for (int64_t b = 0; b < 3; ++b) {
          for (int64_t d = 0; d < 5; ++d) {
            REQUIRE(testing::CodeAt(y, (d * 2 + a) * 3 + b) == testing::CodeAt(x, (a * 3 + b) * 5 + d));
          }
        }
      }
    }
  }
}

TEST_CASE("Shape-only operators refuse an output whose qparams differ from the input's", "[int8_misc]") {
  const Context ctx = Context::ForIsas(DetectedIsas(), 1);
  const QParams q = QParams::PerTensor(DType::kU8, 0.1f, 3).value();
  const QParams other = QParams::PerTensor(DType::kU8, 0.1f, 4).value();
  const Tensor x = Tensor::Create(DType::kU8, Shape{2, 3}).value();
  for (const std::string op : {"Identity", "Flatten", "Transpose"}) {
    auto r = testing::RunQOp(op, {{x, q}}, other, {}, ctx, "");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().ToString(), Catch::Contains("only moves its input's codes"));
  }
}

}  // namespace
}  // namespace octet

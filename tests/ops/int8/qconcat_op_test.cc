// QConcat against an element-by-element expectation (inputs with y's qparams copied, others requantized with
// reference::RequantizeFp32Value), random ranks, axes and input counts, u8 and s8, 1 and 2 threads; the float
// sanity check; and the errors.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ops/reference/requantize_reference.h"
#include "tests/ops/int8/qmisc_op_tester.h"

namespace octet {
namespace {

using testing::QInput;

TEST_CASE("QConcat copies inputs with the output's qparams and requantizes the others", "[int8_misc]") {
  auto rng = testing::MakeRng("qconcat_op");
  int requantized = 0;
  for (int iter = 0; iter < 30; ++iter) {
    const DType dtype = rng() % 2 ? DType::kU8 : DType::kS8;
    const int rank = 1 + static_cast<int>(rng() % 4);
    std::vector<int64_t> dims(static_cast<size_t>(rank));
    for (auto& d : dims) d = 1 + static_cast<int64_t>(rng() % 5);
    const int axis = static_cast<int>(rng() % static_cast<uint64_t>(rank));
    const int64_t axis_attr = rng() % 2 ? axis : axis - rank;
    const QParams qy = testing::RandomActivationQParams(rng, dtype);
    const size_t count = 1 + rng() % 4;
    std::vector<QInput> inputs;
    std::vector<int64_t> out_dims = dims;
    out_dims[static_cast<size_t>(axis)] = 0;
    for (size_t i = 0; i < count; ++i) {
      std::vector<int64_t> d = dims;
      d[static_cast<size_t>(axis)] = static_cast<int64_t>(rng() % 5);  // 0 now and then
      out_dims[static_cast<size_t>(axis)] += d[static_cast<size_t>(axis)];
      // Half the inputs share y's qparams; the others have a scale within 4x of y's.
      QParams qx = qy;
      if (rng() % 2) {
        const float scale = qy.scale() * std::exp2(std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng));
        qx = QParams::PerTensor(dtype, scale, testing::RandomActivationQParams(rng, dtype).zero_point()).value();
      }
      inputs.push_back({testing::RandomCodes(rng, dtype, Shape(d)), qx});
    }
    // Expected: walk every input's elements into y.
    const Shape out(out_dims);
    Tensor want = testing::EmptyLike(dtype, out);
    auto* pw = static_cast<uint8_t*>(want.raw_data());
    const int64_t outer = out.Product(0, axis), inner = out.Product(axis + 1, rank);
    const int64_t y_row = out.dim(axis) * inner;
    int64_t offset = 0;
    for (const QInput& in : inputs) {
      const int64_t row = in.tensor.shape().dim(axis) * inner;
      const bool same = in.qparams->scale() == qy.scale() && in.qparams->zero_point() == qy.zero_point();
      requantized += !same;
      const float m = in.qparams->scale() / qy.scale();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t k = 0; k < row; ++k) {
          const int32_t x = testing::CodeAt(in.tensor, o * row + k);
          const int32_t v = same ? x
                                 : reference::RequantizeFp32Value(x - in.qparams->zero_point(), m, qy.zero_point(),
                                                                  qy.quant_min(), qy.quant_max());
          pw[o * y_row + offset + k] = static_cast<uint8_t>(v);
        }
      }
      offset += row;
    }
    INFO("concat of " << count << " inputs on axis " << axis_attr << " into " << out.ToString() << " "
                      << DTypeName(dtype));
    for (int threads : {1, 2}) {
      const Tensor got = testing::RunQOp("QConcat", inputs, qy, {{"axis", axis_attr}},
                                         Context::ForIsas(DetectedIsas(), threads))
                             .value();
      testing::RequireSameCodes(got, want);
    }
    // Float sanity: each output is its input's real value to within 1 LSB of y, where y's range holds it.
    offset = 0;
    const float y_lo = static_cast<float>(qy.quant_min() - qy.zero_point()) * qy.scale();
    const float y_hi = static_cast<float>(qy.quant_max() - qy.zero_point()) * qy.scale();
    for (const QInput& in : inputs) {
      const int64_t row = in.tensor.shape().dim(axis) * inner;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t k = 0; k < row; ++k) {
          const float x = testing::Dequantized(in.tensor, *in.qparams, o * row + k);
          const float y = testing::Dequantized(want, qy, o * y_row + offset + k);
          if (x >= y_lo && x <= y_hi && std::fabs(x - y) > qy.scale() * 1.001f) FAIL("x " << x << ", y " << y);
        }
      }
      offset += row;
    }
  }
  CHECK(requantized > 10);
}

TEST_CASE("QConcat: errors name the value and the problem", "[int8_misc]") {
  const Context ctx = Context::ForIsas(DetectedIsas(), 1);
  const QParams q = QParams::PerTensor(DType::kU8, 0.1f, 3).value();
  const Tensor a = Tensor::Create(DType::kU8, Shape{2, 3}).value();
  const Tensor b = Tensor::Create(DType::kU8, Shape{3, 3}).value();
  const Tensor s8 = Tensor::Create(DType::kS8, Shape{2, 3}).value();
  const QParams qs8 = QParams::PerTensor(DType::kS8, 0.1f, 0).value();
  auto error = [&](const std::vector<QInput>& in, const std::optional<QParams>& qy, AttributeMap attrs) {
    auto r = testing::RunQOp("QConcat", in, qy, std::move(attrs), ctx);
    REQUIRE_FALSE(r.ok());
    return r.status().ToString();
  };
  using Catch::Contains;
  const AttributeMap axis1{{"axis", int64_t{1}}};
  CHECK_THAT(error({{a, q}, {b, q}}, q, axis1),
             Contains("failed to compile node 'node' (QConcat)") && Contains("input 1 (inputs) 'in1' has shape [3, 3]"));
  CHECK_THAT(error({{a, q}, {a, std::nullopt}}, q, axis1), Contains("input 1 (inputs) 'in1' has no qparams"));
  CHECK_THAT(error({{a, q}, {s8, qs8}}, q, axis1), Contains("input 1 (inputs) 'in1' is s8 but the output is u8"));
  CHECK_THAT(error({{a, q}}, std::nullopt, axis1), Contains("output 0 (concat_result) 'out' has no qparams"));
  CHECK_THAT(error({{a, q}}, q, {}), Contains("axis"));
  CHECK_THAT(error({{a, q}}, q, {{"axis", int64_t{2}}}), Contains("axis must be in [-2, 2)"));
}

}  // namespace
}  // namespace octet

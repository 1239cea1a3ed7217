// Quantize, Dequantize and Requantize as graph operators: against the scalar reference (quantize_reference.h,
// requantize_reference.h) for u8 / s8 / s32, per tensor and per channel, every rounding and non-finite policy,
// 1 and 2 threads; PyTorch 1.13's non-finite mapping on values measured with torch; Dequantize of a constant
// folded at Compile; and the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/reference/quantize_reference.h"
#include "ops/reference/requantize_reference.h"
#include "tests/ops/int8/int8_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::QConst;
using testing::QIn;

using testing::kInf;

// Random floats over a few quantization ranges, with exact ties (multiples of scale / 2) and a few specials.
Tensor QuantizeInput(std::mt19937_64& rng, const Shape& shape, float scale, bool specials) {
  Tensor t = Tensor::Create(DType::kF32, shape).value();
  float* p = t.data<float>();
  std::uniform_real_distribution<float> u(-200.0f * scale, 200.0f * scale);
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    switch (rng() % 4) {
      case 0: p[i] = static_cast<float>(static_cast<int>(rng() % 401) - 200) * 0.5f * scale; break;  // ties
      default: p[i] = u(rng);
    }
  }
  if (specials && t.NumElements() >= 6) {
    p[0] = kInf;
    p[1] = -kInf;
    p[2] = 1e30f;
    p[3] = -1e30f;
    p[4] = std::numeric_limits<float>::quiet_NaN();
    p[5] = 9.3e18f * scale;  // scaled value >= 2^63
  }
  return t;
}

template <typename T>
std::vector<T> ReferenceQuantize(const Tensor& x, const QParams& qp, const std::string& rounding,
                                 const std::string& non_finite) {
  const Shape& s = x.shape();
  const int64_t inner = qp.per_channel() ? s.Product(qp.axis() + 1, s.rank()) : 1;
  const int64_t channels = qp.per_channel() ? s.dim(qp.axis()) : 1;
  std::vector<T> y(static_cast<size_t>(x.NumElements()));
  const float* p = x.data<float>();
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const size_t c = static_cast<size_t>((i / inner) % channels);
    const float scale = qp.scales()[c], inv = 1.0f / scale;
    const int32_t zp = qp.zero_points()[c];
    const float v = rounding == "half_even" ? p[i] * inv : p[i] / scale;
    if (non_finite == "quant_min" && reference::PyTorchMapsToQuantMin(v)) {
      y[static_cast<size_t>(i)] = static_cast<T>(qp.quant_min());
    } else if (rounding == "half_even") {
      y[static_cast<size_t>(i)] = reference::QuantizeValue<T>(p[i], inv, zp, qp.quant_min(), qp.quant_max());
    } else {
      y[static_cast<size_t>(i)] = reference::QuantizeValueHalfAway<T>(p[i], scale, zp, qp.quant_min(), qp.quant_max());
    }
  }
  return y;
}

template <typename T>
std::vector<T> QuantizeValues(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

template <typename T>
void CheckQuantize(std::mt19937_64& rng, const QParams& qp, const Shape& shape, const std::string& rounding,
                   const std::string& non_finite) {
  INFO(qp.ToString() << " shape " << shape.ToString() << " rounding " << rounding << " non_finite " << non_finite);
  const bool specials = non_finite == "quant_min";
  const Tensor x = QuantizeInput(rng, shape, qp.scale(), specials);
  testing::Int8OpSpec spec;
  spec.op_type = "Quantize";
  spec.inputs = {QIn(x, std::nullopt)};
  spec.attributes = {{"rounding", rounding}, {"non_finite", non_finite}};
  spec.output_qparams = qp;
  auto y = testing::RunInt8Op(spec);
  REQUIRE(testing::ErrorOf(y) == "");
  REQUIRE(y->dtype() == qp.dtype());
  const std::vector<T> want = ReferenceQuantize<T>(x, qp, rounding, non_finite);
  const std::vector<T> got = QuantizeValues<T>(*y);
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) FAIL("element " << i << " (x = " << x.data<float>()[i] << "): got " << int64_t{got[i]}
                                           << ", want " << int64_t{want[i]});
  }
  spec.threads = 2;
  auto two = testing::RunInt8Op(spec);
  REQUIRE(testing::ErrorOf(two) == "");
  CHECK(QuantizeValues<T>(*two) == got);
}

TEST_CASE("Quantize equals the reference for every dtype, scheme, rounding and non-finite policy", "[int8_ops]") {
  std::mt19937_64 rng = testing::MakeRng("quantize_op");
  const QParams u8 = QParams::PerTensor(DType::kU8, 0.25f, 77).value();
  const QParams s8 = QParams::PerTensor(DType::kS8, 0.1f, -3, -127, 127).value();
  const QParams s32 = QParams::PerTensor(DType::kS32, 0.001f, 0).value();
  const QParams u8_pc = QParams::PerChannel(DType::kU8, {0.5f, 0.02f, 0.125f}, {0, 128, 255}, 1, 0, 255).value();
  const QParams s8_pc = QParams::PerChannel(DType::kS8, {0.5f, 0.25f}, {0, 5}, 0, -128, 127).value();
  // 70,000 elements: more than one 64 Ki tile, so two threads split the work.
  for (const char* rounding : {"half_even", "half_away"}) {
    for (const char* non_finite : {"error", "quant_min"}) {
      CheckQuantize<uint8_t>(rng, u8, Shape{70000}, rounding, non_finite);
      CheckQuantize<int8_t>(rng, s8, Shape{3, 5, 7}, rounding, non_finite);
      CheckQuantize<int32_t>(rng, s32, Shape{33}, rounding, non_finite);
      CheckQuantize<uint8_t>(rng, u8_pc, Shape{2, 3, 40000}, rounding, non_finite);
      CheckQuantize<int8_t>(rng, s8_pc, Shape{2, 9}, rounding, non_finite);
    }
  }
}

TEST_CASE("Quantize roundings differ exactly on ties; quant_min follows PyTorch 1.13", "[int8_ops]") {
  const QParams qp = QParams::PerTensor(DType::kS8, 1.0f, 3).value();
  auto run = [&](std::vector<float> xs, const char* rounding, const char* non_finite) {
    testing::Int8OpSpec spec;
    spec.op_type = "Quantize";
    spec.inputs = {QIn(Tensor::FromValues<float>(Shape{static_cast<int64_t>(xs.size())}, xs).value(), std::nullopt)};
    spec.attributes = {{"rounding", rounding}, {"non_finite", non_finite}};
    spec.output_qparams = qp;
    auto y = testing::RunInt8Op(spec);
    REQUIRE(testing::ErrorOf(y) == "");
    std::vector<int> out;
    for (int8_t v : QuantizeValues<int8_t>(*y)) out.push_back(v);
    return out;
  };
  // 2.5 -> 2 (even) or 3 (away); -0.5 -> -0 or -1; plus zero point 3.
  CHECK(run({1.5f, 2.5f, -0.5f, -2.5f}, "half_even", "error") == std::vector<int>{5, 5, 3, 1});
  CHECK(run({1.5f, 2.5f, -0.5f, -2.5f}, "half_away", "error") == std::vector<int>{5, 6, 2, 0});
  // torch.quantize_per_tensor([inf, -inf, nan, 9.2e18, 9.3e18, -1e30, 1.5, 2.5], 1.0, 3, torch.qint8) in torch
  // 1.13 gives [-128, -128, -128, 127, -128, -128, 5, 5] (numerics.md §2.1 item 4).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(run({kInf, -kInf, nan, 9.2e18f, 9.3e18f, -1e30f, 1.5f, 2.5f}, "half_even", "quant_min") ==
        std::vector<int>{-128, -128, -128, 127, -128, -128, 5, 5});
  // The strict mode saturates infinities (DESIGN.md §4).
  CHECK(run({kInf, -kInf, 9.3e18f}, "half_even", "error") == std::vector<int>{127, -128, 127});
}

TEST_CASE("Quantize fails on NaN in the error mode, naming the value and the index", "[int8_ops]") {
  for (const char* rounding : {"half_even", "half_away"}) {
    testing::Int8OpSpec spec;
    spec.op_type = "Quantize";
    spec.inputs = {QIn(Tensor::FromValues<float>(Shape{3}, std::vector<float>{1.0f, std::nanf(""), 2.0f}).value(),
                       std::nullopt)};
    spec.attributes = {{"rounding", rounding}};
    spec.output_qparams = testing::PerTensorQ(DType::kU8, 0.1f, 0);
    auto y = testing::RunInt8Op(spec);
    REQUIRE_FALSE(y.ok());
    INFO(y.status().message());
    CHECK(y.status().message().find("'x'") != std::string::npos);
    CHECK(y.status().message().find("index 1") != std::string::npos);
  }
}

template <typename T>
void CheckDequantize(std::mt19937_64& rng, const QParams& qp, const Shape& shape, bool constant) {
  INFO(qp.ToString() << " shape " << shape.ToString() << (constant ? " constant" : " input"));
  Tensor x = Tensor::Create(qp.dtype(), shape).value();
  for (T& v : x.values<T>()) {
    v = static_cast<T>(std::clamp<int64_t>(static_cast<int64_t>(rng() % 2001) - 1000 + qp.zero_point(),
                                           qp.quant_min(), qp.quant_max()));
  }
  testing::Int8OpSpec spec;
  spec.op_type = "Dequantize";
  spec.inputs = {constant ? QConst(x, qp) : QIn(x, qp)};
  auto compiled = testing::CompileInt8Op(spec);
  REQUIRE(testing::ErrorOf(compiled) == "");
  CHECK(compiled->executor.is_folded(0) == constant);
  auto out = compiled->executor.Run(compiled->feeds);
  REQUIRE(testing::ErrorOf(out) == "");
  const Tensor& y = out->front();
  REQUIRE(y.dtype() == DType::kF32);
  REQUIRE(y.shape() == shape);
  const int64_t inner = qp.per_channel() ? shape.Product(qp.axis() + 1, shape.rank()) : 1;
  const int64_t channels = qp.per_channel() ? shape.dim(qp.axis()) : 1;
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    const size_t c = static_cast<size_t>((i / inner) % channels);
    const float want = reference::DequantizeValue<T>(x.data<T>()[i], qp.scales()[c], qp.zero_points()[c]);
    if (y.data<float>()[i] != want) FAIL("element " << i << ": got " << y.data<float>()[i] << ", want " << want);
  }
}

TEST_CASE("Dequantize equals the reference and is folded when its input is a constant", "[int8_ops]") {
  std::mt19937_64 rng = testing::MakeRng("dequantize_op");
  for (bool constant : {false, true}) {
    CheckDequantize<uint8_t>(rng, QParams::PerTensor(DType::kU8, 0.05f, 200).value(), Shape{4, 33}, constant);
    CheckDequantize<int8_t>(rng, QParams::PerChannel(DType::kS8, {0.1f, 0.01f, 0.3f}, {0, 0, 0}, 0, -127, 127).value(),
                            Shape{3, 2, 5}, constant);
    CheckDequantize<int32_t>(rng, QParams::PerChannel(DType::kS32, {1e-4f, 2e-4f}, {0, 0}, 1, INT32_MIN, INT32_MAX)
                                      .value(),
                             Shape{3, 2}, constant);
  }
}

TEST_CASE("Weight-only graph: s8 constant + Dequantize folds into the float operator's weight", "[int8_ops]") {
  std::mt19937_64 rng = testing::MakeRng("weight_only");
  Graph g("weight_only");
  const Tensor w = testing::RandomBytes(rng, DType::kS8, Shape{4, 6});
  const QParams w_qp = QParams::PerChannel(DType::kS8, {0.1f, 0.2f, 0.05f, 0.3f}, {0, 0, 0, 0}, 0, -127, 127).value();
  const ValueId x = g.AddInput("x", DType::kF32, Shape{2, 6}).value();
  const ValueId wq = g.AddConstant("fc.weight", w).value();
  g.mutable_value(wq).qparams = w_qp;
  const ValueId wf = g.AddNodeValue("fc.weight.dq").value();
  const ValueId y = g.AddNodeValue("y").value();
  REQUIRE(g.AddNode(Node{"fc.weight.dequantize", "Dequantize", "octet", {}, {wq}, {wf}}).ok());
  REQUIRE(g.AddNode(Node{"fc", "Gemm", "", {{"transB", int64_t{1}}}, {x, wf}, {y}}).ok());
  REQUIRE(g.AddOutput(y).ok());
  const Context context = Context::ForIsas(DetectedIsas());
  auto exec = Executor::Compile(g, context, testing::Int8Registry());
  REQUIRE(testing::ErrorOf(exec) == "");
  CHECK(exec->is_folded(0));
  CHECK_FALSE(exec->is_folded(1));
  const Tensor xin = Tensor::FromValues<float>(Shape{2, 6}, std::vector<float>{1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0})
                         .value();
  auto out = exec->Run(std::vector<Tensor>{xin});
  REQUIRE(testing::ErrorOf(out) == "");
  // Row i of x selects column i of w: y[i][j] = dequantized w[j][i].
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      const float want = reference::DequantizeValue<int8_t>(w.data<int8_t>()[j * 6 + i], w_qp.scales()[j], 0);
      CHECK(out->front().data<float>()[i * 4 + j] == want);
    }
  }
}

TEST_CASE("Requantize equals the reference for every input byte", "[int8_ops]") {
  const std::vector<QParams> params = {
      QParams::PerTensor(DType::kU8, 0.05f, 131).value(), QParams::PerTensor(DType::kS8, 0.031f, -9).value(),
      QParams::PerTensor(DType::kU8, 0.013f, 0, 0, 127).value(), QParams::PerTensor(DType::kS8, 0.2f, 0, -127, 127).value()};
  for (const QParams& x_qp : params) {
    for (const QParams& y_qp : params) {
      INFO(x_qp.ToString() << " -> " << y_qp.ToString());
      Tensor x = Tensor::Create(x_qp.dtype(), Shape{2, 128}).value();
      auto* p = static_cast<uint8_t*>(x.raw_data());
      for (int i = 0; i < 256; ++i) p[i] = static_cast<uint8_t>(i);
      testing::Int8OpSpec spec;
      spec.op_type = "Requantize";
      spec.inputs = {QIn(x, x_qp)};
      spec.output_qparams = y_qp;
      auto y = testing::RunInt8Op(spec);
      REQUIRE(testing::ErrorOf(y) == "");
      REQUIRE(y->dtype() == y_qp.dtype());
      const float m = reference::RequantizeQ8Multiplier(x_qp.scale(), y_qp.scale());
      const auto* q = static_cast<const uint8_t*>(y->raw_data());
      for (int i = 0; i < 256; ++i) {
        const int32_t xv = x_qp.dtype() == DType::kS8 ? static_cast<int8_t>(i) : i;
        const int32_t want = reference::RequantizeQ8Value(xv, x_qp.zero_point(), m, y_qp.zero_point(),
                                                          y_qp.quant_min(), y_qp.quant_max());
        const int32_t got = y_qp.dtype() == DType::kS8 ? static_cast<int8_t>(q[i]) : q[i];
        if (got != want) FAIL("x = " << xv << ": got " << got << ", want " << want);
      }
    }
  }
}

TEST_CASE("Quantize, Dequantize and Requantize reject missing qparams and bad attributes", "[int8_ops]") {
  const auto expect = testing::ExpectCompileError;
  const Tensor f = Tensor::Create(DType::kF32, Shape{4}).value();
  const Tensor u = Tensor::Create(DType::kU8, Shape{4}).value();
  testing::Int8OpSpec q;
  q.op_type = "Quantize";
  q.inputs = {QIn(f, std::nullopt)};
  expect(q, {"failed to compile node 'op' (Quantize)", "'y'", "qparams"});
  q.output_qparams = testing::PerTensorQ(DType::kU8, 0.1f, 0);
  q.attributes = {{"rounding", "half_up"}};
  expect(q, {"rounding", "half_up"});
  q.attributes = {{"non_finite", "zero_point"}};
  expect(q, {"non_finite", "zero_point"});
  q.attributes = {};
  q.output_qparams = QParams::PerChannel(DType::kU8, {0.1f, 0.1f}, {0, 0}, 0, 0, 255).value();
  expect(q, {"'y'"});  // 2 channels for a [4] tensor

  testing::Int8OpSpec d;
  d.op_type = "Dequantize";
  d.inputs = {QIn(u, std::nullopt)};
  expect(d, {"failed to compile node 'op' (Dequantize)", "'x'", "qparams"});
  d.inputs = {QIn(f, std::nullopt)};
  expect(d, {"'x'", "u8, s8 or s32"});

  testing::Int8OpSpec r;
  r.op_type = "Requantize";
  r.inputs = {QIn(u, testing::PerTensorQ(DType::kU8, 0.1f, 0))};
  expect(r, {"failed to compile node 'op' (Requantize)", "'y'", "qparams"});
  r.output_qparams = testing::PerTensorQ(DType::kS8, 0.1f, 0);
  r.inputs = {QIn(u, std::nullopt)};
  expect(r, {"'x'", "qparams"});
  r.inputs = {QIn(u, QParams::PerChannel(DType::kU8, {0.1f, 0.1f, 0.1f, 0.1f}, {0, 0, 0, 0}, 0, 0, 255).value())};
  expect(r, {"'x'", "per-tensor"});
}

}  // namespace
}  // namespace octet

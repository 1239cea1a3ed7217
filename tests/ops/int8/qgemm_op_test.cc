// QGemm and QMatMul as graph operators: the scalar reference (reference::QGemmAccumulate, then the output stage
// from qgemm_reference.h) bit for bit, for u8 and s8 activations, transB 0 and 1, per-tensor and per-channel
// (symmetric and affine) weights, each requantization scheme, fused Relu, s32 / f32 / no bias, odd shapes, QMatMul
// on rank-3 inputs, at 1 and 2 threads; a float sanity check against the float Gemm; and the errors of Prepare.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ops/quantize.h"
#include "ops/reference/qgemm_reference.h"
#include "tests/ops/float/float_op_tester.h"
#include "tests/ops/int8/int8_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::QAbsent;
using testing::QConst;
using testing::QIn;

struct LinearCase {
  std::vector<int64_t> x_dims;  // [..., K]
  int64_t n;
};

// w as [N, K] (output channel j = row j) from the graph's layout: [N, K] (n_major) or [K, N].
std::vector<int8_t> RowsNK(const Tensor& w, bool n_major) {
  const int64_t r = w.shape().dim(0), c = w.shape().dim(1);
  const int8_t* p = w.data<int8_t>();
  if (n_major) return std::vector<int8_t>(p, p + r * c);
  std::vector<int8_t> nk(static_cast<size_t>(r * c));
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) nk[static_cast<size_t>(j * r + i)] = p[i * c + j];
  }
  return nk;
}

std::vector<uint8_t> ReferenceLinear(const Tensor& x, const QParams& x_qp, const Tensor& w, bool n_major,
                                     const QParams& w_qp, const QParams& y_qp, QGemmStage stage, bool relu,
                                     const std::vector<int32_t>& bias_s32, const std::vector<float>& bias_f32) {
  const int64_t k = x.shape().dim(x.shape().rank() - 1);
  const int64_t m = x.NumElements() / k;
  const int64_t n = n_major ? w.shape().dim(0) : w.shape().dim(1);
  const std::vector<int8_t> nk = RowsNK(w, n_major);
  std::vector<int32_t> w_zp(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) w_zp[static_cast<size_t>(j)] = w_qp.zero_points()[w_qp.per_channel() ? j : 0];
  std::vector<int32_t> acc(static_cast<size_t>(m * n));
  const auto mm = static_cast<size_t>(m), nn = static_cast<size_t>(n), kk = static_cast<size_t>(k);
  if (x.dtype() == DType::kU8) {
    reference::QGemmAccumulate(mm, nn, kk, x.data<uint8_t>(), kk, x_qp.zero_point(), nk.data(), kk, w_zp.data(),
                               acc.data(), nn);
  } else {
    reference::QGemmAccumulate(mm, nn, kk, x.data<int8_t>(), kk, x_qp.zero_point(), nk.data(), kk, w_zp.data(),
                               acc.data(), nn);
  }
  return testing::ReferenceStage(acc, m, n, stage, x_qp.scale(), w_qp, y_qp, relu, bias_s32, bias_f32);
}

struct QGemmVariant {
  DType x_dtype;
  bool per_channel;
  bool affine;
  QGemmStage stage;
  bool relu;
  int bias;  // 0 none, 1 s32 (f32 for fbgemm), 2 f32
};

// op "QGemm" (trans_b 0 or 1) or "QMatMul" (w [K, N]).
void CheckLinear(std::mt19937_64& rng, const std::string& op, const LinearCase& c, int trans_b, const QGemmVariant& v) {
  const int64_t k = c.x_dims.back();
  const bool n_major = op == "QGemm" && trans_b == 1;
  const QParams x_qp = testing::PerTensorQ(v.x_dtype, 0.03f, v.x_dtype == DType::kU8 ? 97 : -11);
  const QParams w_qp = testing::WeightQParams(rng, v.per_channel, c.n, n_major ? 0 : 1, v.affine);
  const QParams y_qp = testing::OutputQParams(rng() & 1 ? DType::kU8 : DType::kS8, x_qp.scale(), w_qp.scale(), k);
  const Tensor x = testing::RandomBytes(rng, v.x_dtype, Shape(c.x_dims));
  const Tensor w = testing::RandomBytes(rng, DType::kS8, n_major ? Shape{c.n, k} : Shape{k, c.n});
  testing::RandomBias bias;  // QMatMul has none
  testing::Int8OpSpec spec;
  spec.op_type = op;
  spec.inputs = {QIn(x, x_qp), QConst(w, w_qp)};
  if (op == "QGemm") {
    spec.attributes.Set("transB", int64_t{trans_b});
    bias = testing::MakeRandomBias(rng, v.bias, v.stage, c.n, x_qp, w_qp, 0.02f);
    if (!bias.input.absent) spec.inputs.push_back(bias.input);
  }
  spec.attributes.Set("requantization", reference::QGemmStageName(v.stage));
  if (v.relu) spec.attributes.Set("activation", "Relu");
  spec.output_qparams = y_qp;
  INFO(fmt::format("{} x {} {} transB {} N {} w {} {} {} relu {} bias {}", op, Shape(c.x_dims), v.x_dtype, trans_b,
                   c.n, v.per_channel ? "per-channel" : "per-tensor", v.affine ? "affine" : "symmetric",
                   reference::QGemmStageName(v.stage), v.relu, v.bias));
  auto y = testing::RunInt8Op(spec);
  REQUIRE(testing::ErrorOf(y) == "");
  std::vector<int64_t> y_dims = c.x_dims;
  y_dims.back() = c.n;
  REQUIRE(y->shape() == Shape(y_dims));
  REQUIRE(y->dtype() == y_qp.dtype());
  const std::vector<uint8_t> want =
      ReferenceLinear(x, x_qp, w, n_major, w_qp, y_qp, v.stage, v.relu, bias.s32, bias.f32);
  const std::vector<uint8_t> got = testing::Bytes(*y);
  const int64_t bad = testing::FirstDifference(got, want);
  INFO("first difference at " << bad);
  REQUIRE(bad == -1);
  const auto hi = static_cast<uint8_t>(y_qp.quant_max());
  const auto lo = v.relu ? hi : static_cast<uint8_t>(y_qp.quant_min());  // Relu puts about half at the zero point
  if (want.size() >= 32) CHECK(testing::Varied(want, lo, hi));  // tiny outputs may repeat values by chance

  spec.threads = 2;
  auto two = testing::RunInt8Op(spec);
  REQUIRE(testing::ErrorOf(two) == "");
  CHECK(testing::Bytes(*two) == got);
}

QGemmVariant NthVariant(int i, DType x_dtype, bool per_channel, QGemmStage stage) {
  // Relu, bias kind and affine weights cycle at other periods than the stage, so every stage meets each.
  return QGemmVariant{x_dtype, per_channel, (i / 5) % 4 == 3, stage, (i / 3) % 2 == 1, (i / 2) % 3};
}

constexpr QGemmStage kQGemmInt8Stages[] = {QGemmStage::kFp32, QGemmStage::kQ31, QGemmStage::kFbgemm};

TEST_CASE("QGemm equals the reference for transB 0 and 1, every dtype, weight scheme, stage, relu and bias",
          "[int8_ops]") {
  std::mt19937_64 rng = testing::MakeRng("qgemm_op_reference");
  const std::vector<LinearCase> cases = {{{1, 1}, 1}, {{3, 17}, 5}, {{7, 64}, 33}, {{2, 300}, 9}, {{37, 40}, 70}};
  int i = 0;
  for (const LinearCase& c : cases) {
    for (int trans_b : {0, 1}) {
      for (DType x_dtype : {DType::kU8, DType::kS8}) {
        for (bool per_channel : {false, true}) {
          for (QGemmStage stage : kQGemmInt8Stages)
            CheckLinear(rng, "QGemm", c, trans_b, NthVariant(i++, x_dtype, per_channel, stage));
        }
      }
    }
  }
}

TEST_CASE("QMatMul equals the reference on rank 1 to 3 inputs", "[int8_ops]") {
  std::mt19937_64 rng = testing::MakeRng("qmatmul_op_reference");
  const std::vector<LinearCase> cases = {{{2, 3, 19}, 11}, {{5, 32}, 16}, {{24}, 7}};
  int i = 0;
  for (const LinearCase& c : cases) {
    for (DType x_dtype : {DType::kU8, DType::kS8}) {
      for (bool per_channel : {false, true}) {
        for (QGemmStage stage : kQGemmInt8Stages)
          CheckLinear(rng, "QMatMul", c, 0, NthVariant(i++, x_dtype, per_channel, stage));
      }
    }
  }
}

TEST_CASE("QGemm dequantized output is close to the float Gemm of the dequantized inputs", "[int8_ops]") {
  std::mt19937_64 rng = testing::MakeRng("qgemm_op_float");
  const int64_t m = 6, k = 45, n = 13;
  const QParams x_qp = testing::PerTensorQ(DType::kS8, 0.03f, 4);
  const QParams w_qp = testing::WeightQParams(rng, true, n, 0, false);
  const QParams y_qp = testing::OutputQParams(DType::kU8, x_qp.scale(), w_qp.scale(), k);
  const Tensor x = testing::RandomBytes(rng, DType::kS8, Shape{m, k});
  const Tensor w = testing::RandomBytes(rng, DType::kS8, Shape{n, k});
  std::vector<float> bias;
  for (int64_t j = 0; j < n; ++j) bias.push_back(static_cast<float>(static_cast<int>(rng() % 201) - 100) * 0.05f);
  const Tensor b = Tensor::FromValues<float>(Shape{n}, bias).value();
  testing::Int8OpSpec spec;
  spec.op_type = "QGemm";
  spec.inputs = {QIn(x, x_qp), QConst(w, w_qp), QConst(b, std::nullopt)};
  spec.attributes = {{"transB", int64_t{1}}};
  spec.output_qparams = y_qp;
  testing::ExpectOneStepFromFloat(spec, "Gemm", {{"transB", int64_t{1}}});
}

// QGemm on u8 [4, 8] with per-channel weights [6, 8] (transB = 1); tests change one thing each.
testing::Int8OpSpec ValidGemmSpec() {
  return testing::ValidLinearSpec("QGemm", Shape{4, 8}, Shape{6, 8}, {{"transB", int64_t{1}}},
                                  testing::PerTensorQ(DType::kS8, 0.3f, 0), 5);
}

TEST_CASE("QGemm and QMatMul reject bad qparams, weights, bias and attributes with clear errors", "[int8_ops]") {
  REQUIRE(testing::CompileInt8Op(ValidGemmSpec()).ok());
  const std::string node = "failed to compile node 'op' (QGemm)";
  std::mt19937_64 rng(3);
  SECTION("missing qparams") { testing::ExpectMissingQParamsErrors(ValidGemmSpec(), node); }
  SECTION("weights") {
    testing::ExpectConstantS8WeightErrors(ValidGemmSpec(), node, rng, Shape{6, 8});
    // Per channel along K with transB = 1 (8 values fit the shape, but they are not the N axis).
    auto s = ValidGemmSpec();
    s.inputs[1].qparams = testing::WeightQParams(rng, true, 8, 1, false);
    testing::ExpectCompileError(s, {node, "'w'", "axis 0"});
    s = ValidGemmSpec();  // transB = 0 wants [K, N] with channels on axis 1
    s.attributes.Set("transB", int64_t{0});
    s.inputs[1] = QConst(testing::RandomBytes(rng, DType::kS8, Shape{8, 6}), testing::WeightQParams(rng, true, 8, 0, false));
    testing::ExpectCompileError(s, {node, "'w'", "axis 1"});
    s = ValidGemmSpec();
    s.inputs[1] = QConst(testing::RandomBytes(rng, DType::kS8, Shape{6, 7}), testing::WeightQParams(rng, true, 6, 0, false));
    testing::ExpectCompileError(s, {node, "'x'", "K = 7"});
  }
  SECTION("bias") {
    auto s = ValidGemmSpec();
    s.inputs.push_back(QConst(Tensor::Create(DType::kF32, Shape{1, 6}).value(), std::nullopt));
    testing::ExpectCompileError(s, {node, "'b'", "[6]"});
    s = ValidGemmSpec();
    s.inputs.push_back(QConst(Tensor::Create(DType::kS32, Shape{6}).value(), std::nullopt));
    testing::ExpectCompileError(s, {node, "'b'", "qparams"});
  }
  SECTION("attributes") {
    auto s = ValidGemmSpec();
    s.attributes.Set("transA", int64_t{1});
    testing::ExpectCompileError(s, {node, "transA"});
    s = ValidGemmSpec();
    s.attributes.Set("alpha", 2.0f);
    testing::ExpectCompileError(s, {node, "alpha"});
    s = ValidGemmSpec();
    s.attributes.Set("requantization", "q15");
    testing::ExpectCompileError(s, {node, "requantization", "q15"});
    s = ValidGemmSpec();
    s.inputs[0] = QIn(testing::RandomBytes(rng, DType::kU8, Shape{2, 4, 8}), testing::PerTensorQ(DType::kU8, 0.02f, 1));
    testing::ExpectCompileError(s, {node, "'x'", "[M, K]"});
  }
  SECTION("QMatMul") {
    auto s = ValidGemmSpec();
    s.op_type = "QMatMul";
    s.attributes = {};
    s.inputs[1] = QConst(testing::RandomBytes(rng, DType::kS8, Shape{8, 6}), testing::WeightQParams(rng, true, 8, 0, false));
    testing::ExpectCompileError(s, {"failed to compile node 'op' (QMatMul)", "'w'", "axis 1"});
    s.inputs.push_back(QConst(Tensor::Create(DType::kF32, Shape{6}).value(), std::nullopt));
    testing::ExpectCompileError(s, {"failed to compile node 'op' (QMatMul)"});
  }
}

}  // namespace
}  // namespace octet

// QConv as a graph operator: NCHW / OIHW in, the op-level reference (reference::QConvOpAccumulate, over
// QConv2dAccumulate in NHWC / OHWI, then the output stage from qgemm_reference.h) bit for bit, for u8 and s8
// activations, per-tensor and per-channel (symmetric and affine) weights, each requantization scheme, fused Relu, s32 /
// f32 / no bias, groups, depthwise, strides, asymmetric and auto pads, dilation, 1-D, odd shapes and batch > 1, at 1,
// 2 and 3 threads; a float sanity check against the float Conv; and the errors of Prepare.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ops/quantize.h"
#include "ops/reference/qconv_op_reference.h"
#include "tests/ops/float/float_op_tester.h"
#include "tests/ops/int8/int8_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::QAbsent;
using testing::QConst;
using testing::QIn;

struct QConvOpCase {
  int64_t n, c, h, w, m, kh, kw;
  std::vector<int64_t> strides, pads, dilations;  // ONNX order (2-D: [h, w]; pads [t, l, b, r])
  int64_t group;
  bool one_d = false;
  std::string auto_pad = "NOTSET";
  const char* path = nullptr;  // expected plan path, when the case is about one
};

std::string DescribeQConvOp(const QConvOpCase& c) {
  return fmt::format("n{} c{} {}x{} -> m{} k{}x{} s[{}] p[{}] d[{}] g{}{} {}", c.n, c.c, c.h, c.w, c.m, c.kh, c.kw,
                     fmt::join(c.strides, ","), fmt::join(c.pads, ","), fmt::join(c.dilations, ","), c.group,
                     c.one_d ? " 1-D" : "", c.auto_pad);
}

// Pads [t, l, b, r] actually used (auto_pad resolved as ONNX does), as 2-D values.
std::vector<int64_t> ResolvedPads(const QConvOpCase& c) {
  const int64_t sh = c.one_d ? 1 : c.strides[0], sw = c.strides.back();
  const int64_t dh = c.one_d ? 1 : c.dilations[0], dw = c.dilations.back();
  if (c.auto_pad == "NOTSET") {
    if (c.one_d) return {0, c.pads[0], 0, c.pads[1]};
    return c.pads;
  }
  auto same = [&](int64_t in, int64_t k, int64_t s, int64_t d, bool upper) {
    const int64_t out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + d * (k - 1) + 1 - in);
    const int64_t begin = upper ? total / 2 : total - total / 2;
    return std::pair<int64_t, int64_t>{begin, total - begin};
  };
  const bool upper = c.auto_pad == "SAME_UPPER";
  const auto [t, b] = c.one_d ? std::pair<int64_t, int64_t>{0, 0} : same(c.h, c.kh, sh, dh, upper);
  const auto [l, r] = same(c.w, c.kw, sw, dw, upper);
  return {t, l, b, r};
}

AttributeMap ConvAttributes(const QConvOpCase& c) {
  AttributeMap at;
  at.Set("kernel_shape", c.one_d ? std::vector<int64_t>{c.kw} : std::vector<int64_t>{c.kh, c.kw});
  at.Set("strides", c.strides);
  at.Set("dilations", c.dilations);
  if (c.auto_pad == "NOTSET") {
    at.Set("pads", c.pads);
  } else {
    at.Set("auto_pad", c.auto_pad);
  }
  at.Set("group", c.group);
  return at;
}

// The reference output, NCHW bytes: the op-level spec (reference::QConvOpAccumulate: taps outside the image read
// x_zp) with the pads resolved here, then the output stage per pixel.
std::vector<uint8_t> ReferenceConv(const QConvOpCase& c, const Tensor& x, const QParams& x_qp, const Tensor& w,
                                   const QParams& w_qp, const QParams& y_qp, QGemmStage stage, bool relu,
                                   const std::vector<int32_t>& bias_s32, const std::vector<float>& bias_f32) {
  const std::vector<int64_t> p = ResolvedPads(c);                                    // [t, l, b, r]
  const std::vector<int64_t> pads = c.one_d ? std::vector<int64_t>{p[1], p[3]} : p;  // ONNX's [begin..., end...]
  const reference::QConvOpGeometry g =
      reference::MakeQConvOpGeometry(x.shape(), w.shape(), c.strides, c.dilations, pads, c.group);
  const int64_t oh = g.OutH(), ow = g.OutW(), pixels = c.n * oh * ow;
  std::vector<int32_t> w_zp(static_cast<size_t>(c.m));
  for (int64_t o = 0; o < c.m; ++o) w_zp[static_cast<size_t>(o)] = w_qp.zero_points()[w_qp.per_channel() ? o : 0];
  std::vector<int32_t> acc_nchw(static_cast<size_t>(pixels * c.m));
  if (x.dtype() == DType::kU8) {
    reference::QConvOpAccumulate(g, x.data<uint8_t>(), x_qp.zero_point(), w.data<int8_t>(), w_zp.data(),
                                 acc_nchw.data());
  } else {
    reference::QConvOpAccumulate(g, x.data<int8_t>(), x_qp.zero_point(), w.data<int8_t>(), w_zp.data(),
                                 acc_nchw.data());
  }
  std::vector<int32_t> acc(acc_nchw.size());  // [pixel][m], as the stage takes it
  for (int64_t b = 0; b < c.n; ++b) {
    for (int64_t q = 0; q < oh * ow; ++q) {
      for (int64_t o = 0; o < c.m; ++o) {
        acc[static_cast<size_t>((b * oh * ow + q) * c.m + o)] =
            acc_nchw[static_cast<size_t>((b * c.m + o) * oh * ow + q)];
      }
    }
  }
  const std::vector<uint8_t> y_nhwc =
      testing::ReferenceStage(acc, pixels, c.m, stage, x_qp.scale(), w_qp, y_qp, relu, bias_s32, bias_f32);
  std::vector<uint8_t> y(y_nhwc.size());
  for (int64_t b = 0; b < c.n; ++b) {
    for (int64_t q = 0; q < oh * ow; ++q) {
      for (int64_t o = 0; o < c.m; ++o) {
        y[static_cast<size_t>((b * c.m + o) * oh * ow + q)] = y_nhwc[static_cast<size_t>((b * oh * ow + q) * c.m + o)];
      }
    }
  }
  return y;
}

Shape XShape(const QConvOpCase& c) { return c.one_d ? Shape{c.n, c.c, c.w} : Shape{c.n, c.c, c.h, c.w}; }
Shape WShape(const QConvOpCase& c) {
  return c.one_d ? Shape{c.m, c.c / c.group, c.kw} : Shape{c.m, c.c / c.group, c.kh, c.kw};
}

const std::vector<QConvOpCase>& Cases() {
  static const std::vector<QConvOpCase> cases = {
      {2, 5, 6, 6, 7, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},  // 3x3, odd channels, batch 2
      {1, 3, 15, 13, 8, 7, 7, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, false, "NOTSET", "im2col"},  // stem-like
      {1, 16, 5, 3, 12, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false, "NOTSET", "1x1"},     // pointwise
      {2, 8, 7, 7, 16, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, false, "NOTSET", "1x1"},      // strided 1x1: subsampled
      {1, 24, 9, 20, 17, 1, 1, {2, 3}, {0, 0, 0, 0}, {1, 1}, 1, false, "NOTSET", "1x1"},  // uneven strides, 8x8 blocks
      {1, 19, 11, 17, 26, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},  // transposes: blocks and edges
      {1, 40, 5, 37, 35, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},   // transposes: 16x16, 8x8 and scalar edges
      {1, 6, 9, 8, 4, 3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}, 2},      // groups, dilation
      {2, 8, 6, 7, 8, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 8, false, "NOTSET", "depthwise"},
      {1, 5, 9, 9, 5, 5, 5, {2, 2}, {2, 2, 2, 2}, {1, 1}, 5},             // depthwise 5x5 stride 2
      {1, 4, 5, 6, 3, 2, 2, {1, 1}, {0, 1, 1, 0}, {1, 1}, 1},             // asymmetric pads
      {1, 3, 8, 8, 4, 3, 3, {2, 2}, {}, {1, 1}, 1, false, "SAME_UPPER"},  // auto_pad, asymmetric
      {1, 3, 7, 8, 4, 4, 4, {1, 1}, {}, {1, 1}, 1, false, "SAME_LOWER"},  // auto_pad, even kernel
      {2, 4, 1, 9, 5, 1, 3, {2}, {1, 1}, {1}, 1, true},                   // 1-D
      {1, 4, 7, 6, 6, 3, 1, {2, 1}, {1, 0, 1, 0}, {1, 2}, 2},             // 3x1, mixed strides
      // One input or output channel: the same bytes in NCHW and NHWC, so no transpose (read in place, staged with
      // pads, subsampled, written in place).
      {2, 1, 8, 8, 6, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      {1, 1, 9, 7, 1, 3, 3, {1, 1}, {0, 1, 1, 0}, {1, 1}, 1},
      {2, 6, 7, 7, 1, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, false, "NOTSET", "1x1"},
      {1, 1, 9, 9, 4, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, false, "NOTSET", "1x1"},
  };
  return cases;
}

struct QConvVariant {
  DType x_dtype;
  bool per_channel;
  bool affine;
  QGemmStage stage;
  bool relu;
  int bias;  // 0 none, 1 s32 (f32 for fbgemm), 2 f32
};

// One draw of data for a case and variant: the op equals the reference on it, at 1, 2 and 3 threads. Returns whether
// the reference output is varied enough for the comparison to mean something (testing::Varied).
bool CheckConvOnce(std::mt19937_64& rng, const QConvOpCase& c, const QConvVariant& v) {
  const int64_t cg = c.c / c.group;
  const QParams x_qp = testing::PerTensorQ(v.x_dtype, 0.02f, v.x_dtype == DType::kU8 ? 131 : 3);
  const QParams w_qp = testing::WeightQParams(rng, v.per_channel, c.m, 0, v.affine);
  const QParams y_qp = testing::OutputQParams(rng() & 1 ? DType::kU8 : DType::kS8, x_qp.scale(), w_qp.scale(),
                                              c.kh * c.kw * cg);
  const Tensor x = testing::RandomBytes(rng, v.x_dtype, XShape(c));
  const Tensor w = testing::RandomBytes(rng, DType::kS8, WShape(c));
  const testing::RandomBias bias = testing::MakeRandomBias(rng, v.bias, v.stage, c.m, x_qp, w_qp, 0.01f);
  testing::Int8OpSpec spec;
  spec.op_type = "QConv";
  spec.inputs = {QIn(x, x_qp), QConst(w, w_qp), bias.input};
  spec.attributes = ConvAttributes(c);
  spec.attributes.Set("requantization", reference::QGemmStageName(v.stage));
  if (v.relu) spec.attributes.Set("activation", "Relu");
  spec.output_qparams = y_qp;
  const std::string what = fmt::format("{} x {} w {} {} {} relu {} bias {}", DescribeQConvOp(c), v.x_dtype,
                                       v.per_channel ? "per-channel" : "per-tensor", v.affine ? "affine" : "symmetric",
                                       reference::QGemmStageName(v.stage), v.relu, v.bias);
  INFO(what);
  auto compiled = testing::CompileInt8Op(spec);
  REQUIRE(testing::ErrorOf(compiled) == "");
  if (c.path != nullptr && !(std::string(c.path) == "depthwise" && v.affine)) {
    CHECK(compiled->executor.kernel_name(0).find(c.path) != std::string::npos);
  }
  auto out = compiled->executor.Run(compiled->feeds);
  REQUIRE(testing::ErrorOf(out) == "");
  const Tensor& y = out->front();
  REQUIRE(y.dtype() == y_qp.dtype());
  const std::vector<uint8_t> want =
      ReferenceConv(c, x, x_qp, w, w_qp, y_qp, v.stage, v.relu, bias.s32, bias.f32);
  const std::vector<uint8_t> got = testing::Bytes(y);
  const int64_t bad = testing::FirstDifference(got, want);
  INFO("first difference at " << bad << " of shape " << y.shape().ToString());
  REQUIRE(bad == -1);
  // With Relu about half the outputs sit at the zero point by design: only the top bound counts as saturation.
  const auto hi = static_cast<uint8_t>(y_qp.quant_max());
  const auto lo = v.relu ? hi : static_cast<uint8_t>(y_qp.quant_min());
  const bool varied = testing::Varied(want, lo, hi);

  for (int threads : {2, 3}) {
    spec.threads = threads;
    auto more = testing::RunInt8Op(spec);
    REQUIRE(testing::ErrorOf(more) == "");
    CHECK(testing::Bytes(*more) == got);
  }
  return varied;
}

// A case with one output channel and Relu has few outputs of one weight row, and some draws clamp or collapse nearly
// all of them (seed 2258893151 did): draw again, up to 8 times, until the comparison is not vacuous. Every draw is
// compared in full.
void CheckConv(std::mt19937_64& rng, const QConvOpCase& c, const QConvVariant& v) {
  bool varied = false;
  for (int draw = 0; draw < 8 && !varied; ++draw) varied = CheckConvOnce(rng, c, v);
  CHECK(varied);
}

TEST_CASE("QConv equals the reference for every case, dtype, weight scheme, stage, relu and bias", "[int8_ops]") {
  std::mt19937_64 rng = testing::MakeRng("qconv_op_reference");
  constexpr QGemmStage kQConvStages[] = {QGemmStage::kFp32, QGemmStage::kQ31, QGemmStage::kFbgemm};
  int variant = 0;
  for (const QConvOpCase& c : Cases()) {
    for (DType x_dtype : {DType::kU8, DType::kS8}) {
      for (bool per_channel : {false, true}) {
        for (QGemmStage stage : kQConvStages) {
          QConvVariant v{x_dtype, per_channel, false, stage, false, 0};
          // Relu, bias kind and affine weights cycle at other periods than the stage, so every stage meets each.
          v.relu = (variant / 3) % 2 == 1;
          v.bias = (variant / 2) % 3;
          v.affine = (variant / 5) % 4 == 3;
          ++variant;
          CheckConv(rng, c, v);
        }
      }
    }
  }
}

TEST_CASE("QConv dequantized output is close to the float Conv of the dequantized inputs", "[int8_ops]") {
  std::mt19937_64 rng = testing::MakeRng("qconv_op_float");
  const QConvOpCase c{2, 6, 9, 8, 10, 3, 3, {2, 1}, {1, 0, 2, 1}, {1, 1}, 2};
  const QParams x_qp = testing::PerTensorQ(DType::kU8, 0.02f, 100);
  const QParams w_qp = testing::WeightQParams(rng, true, c.m, 0, false);
  const QParams y_qp = testing::OutputQParams(DType::kS8, x_qp.scale(), w_qp.scale(), c.kh * c.kw * c.c / c.group);
  const Tensor x = testing::RandomBytes(rng, DType::kU8, XShape(c));
  const Tensor w = testing::RandomBytes(rng, DType::kS8, WShape(c));
  std::vector<float> bias;
  for (int64_t o = 0; o < c.m; ++o) bias.push_back(static_cast<float>(static_cast<int>(rng() % 201) - 100) * 0.01f);
  const Tensor b = Tensor::FromValues<float>(Shape{c.m}, bias).value();
  testing::Int8OpSpec spec;
  spec.op_type = "QConv";
  spec.inputs = {QIn(x, x_qp), QConst(w, w_qp), QConst(b, std::nullopt)};
  spec.attributes = ConvAttributes(c);
  spec.output_qparams = y_qp;
  testing::ExpectOneStepFromFloat(spec, "Conv", ConvAttributes(c));
}

// A 3x3 conv spec on u8 [1, 4, 5, 5] with per-channel weights [6, 4, 3, 3]; tests change one thing each.
testing::Int8OpSpec ValidConvSpec() {
  AttributeMap attributes = {{"kernel_shape", std::vector<int64_t>{3, 3}},
                             {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  return testing::ValidLinearSpec("QConv", Shape{1, 4, 5, 5}, Shape{6, 4, 3, 3}, std::move(attributes),
                                  testing::PerTensorQ(DType::kU8, 0.5f, 128), 7);
}

TEST_CASE("QConv rejects bad qparams, weights, bias and attributes with clear errors", "[int8_ops]") {
  REQUIRE(testing::CompileInt8Op(ValidConvSpec()).ok());
  const std::string node = "failed to compile node 'op' (QConv)";
  std::mt19937_64 rng(11);
  SECTION("missing qparams") { testing::ExpectMissingQParamsErrors(ValidConvSpec(), node); }
  SECTION("activations per channel or of another dtype") {
    auto s = ValidConvSpec();
    s.inputs[0].qparams = QParams::PerChannel(DType::kU8, {0.1f, 0.1f, 0.1f, 0.1f}, {0, 0, 0, 0}, 1, 0, 255).value();
    testing::ExpectCompileError(s, {node, "'x'", "per-tensor"});
  }
  SECTION("weights") {
    testing::ExpectConstantS8WeightErrors(ValidConvSpec(), node, rng, Shape{6, 4, 3, 3});
    auto s = ValidConvSpec();  // per-channel qparams on the wrong axis (4 input channels: they fit the shape)
    s.inputs[1].qparams = QParams::PerChannel(DType::kS8, {0.1f, 0.1f, 0.1f, 0.1f}, {0, 0, 0, 0}, 1, -128, 127).value();
    testing::ExpectCompileError(s, {node, "'w'", "axis 0"});
    s = ValidConvSpec();  // a channel count that does not fit the weight: the verifier names the value
    s.inputs[1].qparams = QParams::PerChannel(DType::kS8, {0.1f, 0.1f}, {0, 0}, 0, -128, 127).value();
    testing::ExpectCompileError(s, {"'w'"});
  }
  SECTION("bias") {
    auto s = ValidConvSpec();
    s.inputs.push_back(QConst(testing::RandomBytes(rng, DType::kS8, Shape{6}), testing::PerTensorQ(DType::kS8, 1, 0)));
    testing::ExpectCompileError(s, {node, "'b'", "s32 or f32"});
    s = ValidConvSpec();
    s.inputs.push_back(QConst(Tensor::Create(DType::kF32, Shape{7}).value(), std::nullopt));
    testing::ExpectCompileError(s, {node, "'b'", "[6]"});
    s = ValidConvSpec();
    s.inputs.push_back(QConst(Tensor::Create(DType::kS32, Shape{6}).value(), std::nullopt));
    testing::ExpectCompileError(s, {node, "'b'", "qparams"});
    s = ValidConvSpec();
    s.inputs.push_back(QConst(Tensor::Create(DType::kS32, Shape{6}).value(), testing::PerTensorQ(DType::kS32, 0.5f, 0)));
    testing::ExpectCompileError(s, {node, "'b'", "scale"});
    s = ValidConvSpec();
    s.inputs.push_back(QConst(Tensor::Create(DType::kS32, Shape{6}).value(), testing::PerTensorQ(DType::kS32, 0.5f, 0)));
    s.attributes.Set("requantization", "fbgemm");
    testing::ExpectCompileError(s, {node, "'b'", "fbgemm"});
    s = ValidConvSpec();
    s.inputs.push_back(QIn(Tensor::Create(DType::kF32, Shape{6}).value(), std::nullopt));
    testing::ExpectCompileError(s, {node, "'b'", "constant"});
  }
  SECTION("attributes") {
    auto s = ValidConvSpec();
    s.attributes.Set("requantization", "fp64");
    testing::ExpectCompileError(s, {node, "requantization", "fp64"});
    s = ValidConvSpec();
    s.attributes.Set("activation", "Sigmoid");
    testing::ExpectCompileError(s, {node, "activation", "Sigmoid"});
    s = ValidConvSpec();
    s.attributes.Set("group", int64_t{3});
    testing::ExpectCompileError(s, {node, "group"});
    s = ValidConvSpec();
    s.attributes.Set("auto_pad", "SAME");
    testing::ExpectCompileError(s, {node, "auto_pad"});
    s = ValidConvSpec();
    s.attributes.Set("kernel_shape", std::vector<int64_t>{2, 2});
    testing::ExpectCompileError(s, {node, "kernel_shape"});
    s = ValidConvSpec();
    s.attributes.Set("strides", std::vector<int64_t>{0, 1});
    testing::ExpectCompileError(s, {node, "strides"});
  }
}

}  // namespace
}  // namespace octet

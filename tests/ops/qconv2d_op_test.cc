// The qconv2d reference on a hand-computed case; the operator (every path: depthwise, 1x1, im2col with groups)
// against the reference for every runnable ISA and 1, 2 and 3 threads, randomized shapes with odd channel counts,
// H or W of 1, kernels larger than the input with padding, stride, dilation, non-zero zero points, every stage;
// and its errors.
#include <catch2/catch.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "ops/qconv2d.h"
#include "ops/qdwconv.h"
#include "ops/reference/qconv2d_reference.h"
#include "ops/ukernels/qdwconv.h"
#include "tests/ops/conv_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

TEST_CASE("qconv2d reference: a hand-computed padded convolution", "[qconv2d]") {
  // x - 1 = [[0, 1], [2, 3]], w = [[1, 0], [0, 1]], pad 1: out[oy][ox] = (x - 1)[oy - 1][ox - 1] + (x - 1)[oy][ox],
  // pad taps reading the zero point (adding 0).
  const uint8_t x[] = {1, 2, 3, 4};
  const int8_t w[] = {1, 0, 0, 1};
  const int32_t w_zp[] = {0};
  reference::Conv2dGeometry g;
  g.h = 2;
  g.w = 2;
  g.kh = 2;
  g.kw = 2;
  g.pad_h = 1;
  g.pad_w = 1;
  REQUIRE(g.OutH() == 3);
  REQUIRE(g.OutW() == 3);
  int32_t acc[9];
  reference::QConv2dAccumulate(g, x, 1, w, w_zp, acc);
  CHECK(std::vector<int32_t>(acc, acc + 9) == std::vector<int32_t>{0, 1, 0, 2, 3, 1, 0, 2, 3});
  // Stride 2, dilation 2 on a 3x3 input, 2 groups of one channel each: out = sum over the 4 corners per channel.
  reference::Conv2dGeometry d;
  d.h = 3;
  d.w = 3;
  d.c_in = 2;
  d.c_out = 2;
  d.groups = 2;
  d.kh = 2;
  d.kw = 2;
  d.dilation_h = 2;
  d.dilation_w = 2;
  d.stride_h = 2;
  d.stride_w = 2;
  REQUIRE(d.OutH() == 1);
  std::vector<uint8_t> x2(18);
  for (size_t i = 0; i < 18; ++i) x2[i] = static_cast<uint8_t>(i);
  const int8_t w2[] = {1, 1, 1, 1, 1, -1, 1, -1};
  const int32_t zp2[] = {0, 1};
  int32_t acc2[2];
  reference::QConv2dAccumulate(d, x2.data(), 0, w2, zp2, acc2);
  // Channel 0 corners: x = 0, 4, 12, 16 -> 32. Channel 1: x = 1, 5, 13, 17 with (w - 1) = 0, -2, 0, -2 -> -44.
  CHECK(acc2[0] == 32);
  CHECK(acc2[1] == -44);
}

// How many op runs took the indirect path (the guard that the tests below reach it where AVX2 runs).
int g_indirect_runs = 0;

struct QConv2dCase {
  int64_t n, h, w, c_in, c_out, k_h, k_w, stride, pad, dilation, groups;
  const char* path;
  int64_t dilation_h = 0;  // rows only; 0: `dilation`
};

std::string DescribeQConv2d(const QConv2dCase& c) {
  return fmt::format("{}x{}x{}x{} -> {} k{}x{} s{} p{} d{} g{}{}", c.n, c.h, c.w, c.c_in, c.c_out, c.k_h, c.k_w,
                     c.stride, c.pad, c.dilation, c.groups,
                     c.dilation_h > 0 ? fmt::format(" row dilation {}", c.dilation_h) : "");
}

constexpr QGemmStage kQConv2dStages[] = {QGemmStage::kS32, QGemmStage::kFp32, QGemmStage::kQ31, QGemmStage::kFbgemm,
                                         QGemmStage::kF32};

// check_varied: require the reference outputs not to be mostly one value (curated shapes; random ones may be mostly
// padding on purpose).
void CheckCase(std::mt19937_64& rng, const QConv2dCase& c, DType x_dtype, QGemmStage stage, bool affine,
               bool check_varied = true) {
  Conv2dParams p;
  p.kernel_h = c.k_h;
  p.kernel_w = c.k_w;
  p.stride_h = p.stride_w = c.stride;
  p.pad_h = p.pad_w = c.pad;
  p.dilation_h = p.dilation_w = c.dilation;
  if (c.dilation_h > 0) p.dilation_h = c.dilation_h;
  p.groups = c.groups;
  const bool per_channel = rng() % 4 != 0;
  const QTensor w =
      testing::MakeLinearWeights(rng, Shape{c.c_out, c.k_h, c.k_w, c.c_in / c.groups}, per_channel, affine);
  const int32_t x_zp = x_dtype == DType::kU8 ? 117 : -9;
  const QTensor x = testing::MakeLinearInput(rng, Shape{c.n, c.h, c.w, c.c_in}, x_dtype, x_zp);
  const bool check = check_varied && stage != QGemmStage::kS32 && stage != QGemmStage::kF32;
  auto mostly_one_value = [&](const std::vector<uint8_t>& y) {
    if (!check || y.size() < 64) return false;
    size_t same = 0;
    for (uint8_t v : y) same += v == y[0];
    return same >= y.size() * 3 / 4;  // a fused ReLU alone clamps about half
  };
  // A random output scale (and fused ReLU) can clamp nearly everything for some seeds; draw again a few times, so
  // the check below catches scales that are wrong for the shape, not an unlucky draw.
  QGemmOutput out = testing::RandomConvOutput(rng, stage, c.c_out, c.k_h * c.k_w * c.c_in / c.groups);
  std::vector<uint8_t> want = testing::ReferenceQConv2d(x, w, p, out);
  for (int retry = 0; retry < 8 && mostly_one_value(want); ++retry) {
    out = testing::RandomConvOutput(rng, stage, c.c_out, c.k_h * c.k_w * c.c_in / c.groups);
    want = testing::ReferenceQConv2d(x, w, p, out);
  }
  INFO(DescribeQConv2d(c) << ": the reference outputs are mostly one value; the scales need adjusting");
  CHECK_FALSE(mostly_one_value(want));
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, std::string("qconv2d op on ") + IsaName(isa))) continue;
    const QConv2dPlan plan = QConv2dPlan::Create(testing::ContextFor(isa), w, p, x.qparams(), out).value();
    // Depthwise layers with a weight zero point go through the grouped GEMM path.
    bool zero_w_zp = true;
    for (int32_t z : w.qparams().zero_points()) zero_w_zp = zero_w_zp && z == 0;
    const bool dw_case = std::string(c.path) == "depthwise";
    CHECK(std::string(plan.path()) == (dw_case && !zero_w_zp ? "im2col" : c.path));
    for (int threads : {1, 2, 3, 7}) {
      const Context ctx = testing::ContextFor(isa, threads);
      INFO(DescribeQConv2d(c) << " " << DTypeName(x_dtype) << ", stage " << reference::QGemmStageName(stage)
                              << (per_channel ? " per-channel" : " per-tensor") << (affine ? " affine" : "") << ", isa "
                              << IsaName(isa) << ", threads " << threads);
      const Tensor y = plan.Run(ctx, x.values()).value();
      REQUIRE(y.shape() == Shape{c.n, (c.h + 2 * c.pad - p.dilation_h * (c.k_h - 1) - 1) / c.stride + 1,
                                 (c.w + 2 * c.pad - c.dilation * (c.k_w - 1) - 1) / c.stride + 1, c.c_out});
      REQUIRE(y.SizeBytes() == want.size());
      const auto* got = static_cast<const uint8_t*>(y.raw_data());
      for (size_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i]) FAIL("byte " << i << ": want " << int{want[i]} << ", got " << int{got[i]});
      }
      // An im2col plan runs the indirect kernels where they mirror the GEMM's (AVX2 without VNNI, full-range
      // activations, symmetric weights, channels in 4s).
      const std::string ran = ctx.LastKernel("qconv2d");
      CHECK((ran == plan.path() || (std::string(plan.path()) == "im2col" && ran == "indirect")));
      if (ran == "indirect") {
        ++g_indirect_runs;
        CHECK_THAT(ctx.LastKernel("qigemm"), Catch::EndsWith(std::string("__") + IsaName(isa)));
        continue;
      }
      const std::string family = std::string(plan.path()) == "depthwise" ? "qdwconv" : "qgemm";
      // The ISA's own kernel ran where the family has one for it (qgemm's may need M above its minimum).
      if (family == "qdwconv") {
        bool has = false;
        for (const auto& e : QDwConvUkernels()) has = has || e.isa == isa;
        CHECK_THAT(ctx.LastKernel("qdwconv"), Catch::EndsWith(std::string("__") + IsaName(has ? isa : Isa::kScalar)));
      } else {
        CHECK(!ctx.LastKernel("qgemm").empty());
      }
    }
  }
}

TEST_CASE("qconv2d op equals the reference on every path, ISA and thread count", "[qconv2d]") {
  auto rng = testing::MakeRng("qconv2d_op");
  const std::vector<QConv2dCase> cases = {
      // Stem-like small C_in, 7x7 stride 2 pad 3 (im2col with K = 147).
      {1, 17, 15, 3, 16, 7, 7, 2, 3, 1, 1, "im2col"},
      // 3x3 pad 1 with odd channel counts.
      {2, 6, 5, 13, 19, 3, 3, 1, 1, 1, 1, "im2col"},
      // 1x1 stride 1: the input is the GEMM's A.
      {1, 5, 7, 33, 17, 1, 1, 1, 0, 1, 1, "1x1"},
      // 1x1 stride 2 (a ResNet downsample).
      {1, 9, 8, 16, 24, 1, 1, 2, 0, 1, 1, "im2col"},
      // Groups, dilation.
      {1, 7, 9, 12, 18, 3, 3, 1, 2, 2, 3, "im2col"},
      // H of 1, W of 1.
      {1, 1, 9, 8, 5, 3, 3, 1, 1, 1, 1, "im2col"},
      {2, 9, 1, 5, 8, 3, 3, 2, 1, 1, 1, "im2col"},
      // A kernel larger than the input, with padding.
      {1, 2, 3, 6, 7, 5, 5, 1, 2, 1, 1, "im2col"},
      // K = 9216 per group: the im2col rows go in chunks of 32 output pixels (81 = 32 + 32 + 17), per group.
      {1, 9, 9, 1024, 8, 3, 3, 1, 1, 1, 1, "im2col"},
      {1, 9, 9, 2048, 6, 3, 3, 1, 1, 1, 2, "im2col"},
      // Depthwise 3x3 and 5x5, stride 1 and 2, odd channels, H/W of 1, kernel larger than the input.
      {1, 8, 7, 19, 19, 3, 3, 1, 1, 1, 19, "depthwise"},
      {2, 9, 10, 33, 33, 3, 3, 2, 1, 1, 33, "depthwise"},
      {1, 7, 6, 17, 17, 5, 5, 1, 2, 1, 17, "depthwise"},
      {1, 11, 9, 40, 40, 5, 5, 2, 2, 1, 40, "depthwise"},
      {1, 1, 7, 5, 5, 3, 3, 1, 1, 1, 5, "depthwise"},
      {1, 2, 2, 3, 3, 5, 5, 1, 2, 1, 3, "depthwise"},
      {1, 6, 6, 9, 9, 3, 3, 1, 2, 2, 9, "depthwise"},
  };
  const int indirect_before = g_indirect_runs;
  for (const QConv2dCase& c : cases) {
    for (DType x_dtype : {DType::kU8, DType::kS8}) {
      CheckCase(rng, c, x_dtype, kQConv2dStages[rng() % 5], rng() % 4 == 0);
    }
  }
  // Channels in 4s, symmetric weights: the AVX2 context runs these through the indirect kernels.
  for (const QConv2dCase& c : std::vector<QConv2dCase>{{2, 9, 7, 8, 30, 3, 3, 1, 1, 1, 1, "im2col"},
                                                       {1, 8, 11, 16, 50, 3, 3, 2, 1, 2, 2, "im2col"},
                                                       {1, 13, 13, 12, 7, 7, 7, 2, 3, 1, 1, "im2col"},
                                                       // Few pixels, many channels: tiles over (pixels, channels), the
                                                       // last channel block partial.
                                                       {1, 7, 7, 256, 200, 3, 3, 1, 1, 1, 1, "im2col"}}) {
    for (QGemmStage stage : kQConv2dStages) CheckCase(rng, c, rng() & 1 ? DType::kU8 : DType::kS8, stage, false);
  }
  if (DetectedIsas().Contains(Isa::kAvx2)) CHECK(g_indirect_runs > indirect_before);
}

TEST_CASE("qconv2d op: 7-bit activations run the indirect vpmaddubsw kernel on AVX2, equal to the reference",
          "[qconv2d]") {
  if (!testing::CanRun(Isa::kAvx2, "qconv2d indirect vpmaddubsw")) return;
  auto rng = testing::MakeRng("qconv2d_indirect_maddubs");
  for (QGemmStage stage : kQConv2dStages) {
    Conv2dParams p;
    p.kernel_h = p.kernel_w = 3;
    p.stride_h = p.stride_w = 1 + static_cast<int64_t>(rng() % 2);
    p.pad_h = p.pad_w = 1;
    const QTensor w = testing::MakeLinearWeights(rng, Shape{37, 3, 3, 12}, true, false);
    QTensor x = testing::MakeLinearInput(rng, Shape{2, 9, 10, 12}, DType::kU8, 117);
    for (uint8_t& v : x.values().values<uint8_t>()) v &= 0x7F;  // reduce_range: [0, 127]
    const QGemmOutput out = testing::RandomConvOutput(rng, stage, 37, 9 * 12);
    const std::vector<uint8_t> want = testing::ReferenceQConv2d(x, w, p, out);
    for (int threads : {1, 3}) {
      const Context ctx = testing::ContextFor(Isa::kAvx2, threads);
      const QConv2dPlan plan = QConv2dPlan::Create(ctx, w, p, x.qparams(), out).value();
      const Tensor y = plan.Run(ctx, x.values()).value();
      INFO("stage " << reference::QGemmStageName(stage) << ", " << threads << " threads");
      REQUIRE(y.SizeBytes() == want.size());
      const auto* got = static_cast<const uint8_t*>(y.raw_data());
      for (size_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i]) FAIL("byte " << i << ": want " << int{want[i]} << ", got " << int{got[i]});
      }
      CHECK(ctx.LastKernel("qconv2d") == "indirect");
      CHECK_THAT(ctx.LastKernel("qigemm"), Catch::Contains("4x16c4_maddubs__avx2"));
    }
  }
}

// Few output pixels (<= 64 tiles of rows): the indirect path's tasks are narrow column blocks over many tiles each.
// Partial last tiles and panels, more panels than blocks (several panels per block), both AVX2 kernels (7-bit
// activations: vpmaddubsw; full range: the 3x24 vpmaddwd one), 1/2/3 threads; integers compared with ==.
TEST_CASE("qconv2d op: few-pixel layers split into column blocks over many tiles equal the reference", "[qconv2d]") {
  if (!testing::CanRun(Isa::kAvx2, "qconv2d indirect few-pixel split")) return;
  auto rng = testing::MakeRng("qconv2d_indirect_few_pixels");
  struct Shape4 {
    int64_t h, w, c_in, c_out, stride;
  };
  // The last two: K = 9 x 296 = 2664 and 9 x 512 = 4608, above 2304: indirect only because the pixels are few.
  for (const Shape4& sh : std::vector<Shape4>{{7, 7, 16, 200, 1},
                                              {5, 6, 8, 800, 1},
                                              {9, 11, 12, 37, 2},
                                              {3, 3, 24, 64, 1},
                                              {14, 14, 8, 50, 1},
                                              {4, 5, 296, 64, 1},
                                              {3, 3, 512, 48, 1}}) {
    for (bool seven_bit : {true, false}) {
      Conv2dParams p;
      p.kernel_h = p.kernel_w = 3;
      p.stride_h = p.stride_w = sh.stride;
      p.pad_h = p.pad_w = 1;
      const QTensor w = testing::MakeLinearWeights(rng, Shape{sh.c_out, 3, 3, sh.c_in}, true, false);
      QTensor x = testing::MakeLinearInput(rng, Shape{1, sh.h, sh.w, sh.c_in}, DType::kU8, 117);
      if (seven_bit) {
        for (uint8_t& v : x.values().values<uint8_t>()) v &= 0x7F;
      }
      const QGemmStage stage = kQConv2dStages[rng() % 5];
      const QGemmOutput out = testing::RandomConvOutput(rng, stage, sh.c_out, 9 * sh.c_in);
      const std::vector<uint8_t> want = testing::ReferenceQConv2d(x, w, p, out);
      for (int threads : {1, 2, 3}) {
        const Context ctx = testing::ContextFor(Isa::kAvx2, threads);
        const QConv2dPlan plan = QConv2dPlan::Create(ctx, w, p, x.qparams(), out).value();
        const Tensor y = plan.Run(ctx, x.values()).value();
        INFO(sh.h << "x" << sh.w << "x" << sh.c_in << " -> " << sh.c_out << " s" << sh.stride << ", stage "
                  << reference::QGemmStageName(stage) << (seven_bit ? ", 7-bit" : ", 8-bit") << ", " << threads
                  << " threads");
        REQUIRE(y.SizeBytes() == want.size());
        const auto* got = static_cast<const uint8_t*>(y.raw_data());
        for (size_t i = 0; i < want.size(); ++i) {
          if (got[i] != want[i]) FAIL("byte " << i << ": want " << int{want[i]} << ", got " << int{got[i]});
        }
        CHECK(ctx.LastKernel("qconv2d") == "indirect");
        CHECK_THAT(ctx.LastKernel("qigemm"), Catch::Contains(seven_bit ? "4x16c4_maddubs__avx2" : "3x24c2__avx2"));
      }
    }
  }
}

// K above 2304 with many output pixels stays on im2col + GEMM (the indirect kernels are prepared, not taken); with
// few pixels it runs indirect. Both equal the reference.
TEST_CASE("qconv2d op: K above 2304 runs indirect only on few-pixel calls", "[qconv2d]") {
  if (!testing::CanRun(Isa::kAvx2, "qconv2d indirect large K")) return;
  auto rng = testing::MakeRng("qconv2d_indirect_large_k");
  Conv2dParams p;
  p.kernel_h = p.kernel_w = 3;
  p.pad_h = p.pad_w = 1;
  const QTensor w = testing::MakeLinearWeights(rng, Shape{72, 3, 3, 260}, true, false);
  const QGemmOutput out = testing::RandomConvOutput(rng, QGemmStage::kFp32, 72, 9 * 260);
  const Context ctx = testing::ContextFor(Isa::kAvx2, 2);
  struct Case {
    int64_t h, w;
    const char* path;
  };
  for (const Case& c : std::vector<Case>{{5, 6, "indirect"}, {12, 10, "indirect"}, {30, 20, "im2col"}}) {
    const QTensor x = testing::MakeLinearInput(rng, Shape{1, c.h, c.w, 260}, DType::kU8, 117);
    const QConv2dPlan plan = QConv2dPlan::Create(ctx, w, p, x.qparams(), out).value();
    const std::vector<uint8_t> want = testing::ReferenceQConv2d(x, w, p, out);
    const Tensor y = plan.Run(ctx, x.values()).value();
    INFO(c.h << "x" << c.w << " pixels");
    REQUIRE(y.SizeBytes() == want.size());
    const auto* got = static_cast<const uint8_t*>(y.raw_data());
    for (size_t i = 0; i < want.size(); ++i) {
      if (got[i] != want[i]) FAIL("byte " << i << ": want " << int{want[i]} << ", got " << int{got[i]});
    }
    CHECK(ctx.LastKernel("qconv2d") == std::string(c.path));
  }
}

// The indirect path keeps its pointer buffers (keyed by the input's address and shape) and its kernel choice (keyed
// by the activation range) between calls: new contents at the same address, a range that changes the kernel, another
// tensor and another shape must each still equal the reference.
TEST_CASE("qconv2d op: repeated calls on reused and new inputs equal the reference", "[qconv2d]") {
  if (!testing::CanRun(Isa::kAvx2, "qconv2d indirect repeated calls")) return;
  auto rng = testing::MakeRng("qconv2d_indirect_repeated");
  Conv2dParams p;
  p.kernel_h = p.kernel_w = 3;
  p.pad_h = p.pad_w = 1;
  const QTensor w = testing::MakeLinearWeights(rng, Shape{21, 3, 3, 8}, true, false);
  const QGemmOutput out = testing::RandomConvOutput(rng, QGemmStage::kFp32, 21, 9 * 8);
  QTensor x1 = testing::MakeLinearInput(rng, Shape{2, 7, 9, 8}, DType::kU8, 117);
  const QTensor x2 = testing::MakeLinearInput(rng, Shape{1, 5, 6, 8}, DType::kU8, 117);
  const Context ctx = testing::ContextFor(Isa::kAvx2, 2);
  const QConv2dPlan plan = QConv2dPlan::Create(ctx, w, p, x1.qparams(), out).value();
  auto check = [&](const QTensor& x, const char* what, const char* kernel) {
    INFO(what);
    const std::vector<uint8_t> want = testing::ReferenceQConv2d(x, w, p, out);
    const Tensor y = plan.Run(ctx, x.values()).value();
    REQUIRE(y.SizeBytes() == want.size());
    const auto* got = static_cast<const uint8_t*>(y.raw_data());
    for (size_t i = 0; i < want.size(); ++i) {
      if (got[i] != want[i]) FAIL("byte " << i << ": want " << int{want[i]} << ", got " << int{got[i]});
    }
    CHECK(ctx.LastKernel("qconv2d") == "indirect");
    CHECK_THAT(ctx.LastKernel("qigemm"), Catch::Contains(kernel));
  };
  for (uint8_t& v : x1.values().values<uint8_t>()) v &= 0x7F;
  check(x1, "7-bit input", "maddubs");
  for (uint8_t& v : x1.values().values<uint8_t>()) v = static_cast<uint8_t>(127 - v);
  check(x1, "new 7-bit contents at the same address", "maddubs");
  for (uint8_t& v : x1.values().values<uint8_t>()) v = static_cast<uint8_t>(rng());
  x1.values().values<uint8_t>()[5] = 255;
  check(x1, "full-range contents at the same address", "3x24c2");
  check(x2, "another tensor and shape", "3x24c2");
  for (uint8_t& v : x1.values().values<uint8_t>()) v &= 0x3F;
  check(x1, "the first tensor again, 6-bit", "maddubs");
}

TEST_CASE("qconv2d op: depthwise with 7-bit activations (AVX2's vpmaddubsw blocks) on every ISA and thread count",
          "[qconv2d]") {
  auto rng = testing::MakeRng("qconv2d_depthwise_seven_bit");
  struct Shape7 {
    int64_t h, w, c, k, stride;
  };
  for (const Shape7 c :
       {Shape7{7, 9, 32, 3, 1}, Shape7{9, 8, 80, 3, 2}, Shape7{6, 7, 144, 3, 1}, Shape7{8, 8, 64, 5, 2},
        Shape7{60, 50, 96, 3, 1}}) {  // 288 KB: the 7-bit check runs in two pieces
    for (QGemmStage stage : kQConv2dStages) {
      Conv2dParams p;
      p.kernel_h = p.kernel_w = c.k;
      p.stride_h = p.stride_w = c.stride;
      p.pad_h = p.pad_w = c.k / 2;
      p.groups = c.c;
      const QTensor w = testing::MakeLinearWeights(rng, ::octet::Shape{c.c, c.k, c.k, 1}, rng() % 2 == 0, false);
      QTensor x = testing::MakeLinearInput(rng, ::octet::Shape{1, c.h, c.w, c.c}, DType::kU8, 60);
      for (uint8_t& v : x.values().values<uint8_t>()) v &= 0x7F;  // reduce_range: [0, 127]
      const QGemmOutput out = testing::RandomConvOutput(rng, stage, c.c, c.k * c.k);
      const std::vector<uint8_t> want = testing::ReferenceQConv2d(x, w, p, out);
      for (Isa isa : testing::CompiledIsaList()) {
        if (!testing::CanRun(isa, std::string("qconv2d depthwise 7-bit on ") + IsaName(isa))) continue;
        const QConv2dPlan plan = QConv2dPlan::Create(testing::ContextFor(isa), w, p, x.qparams(), out).value();
        REQUIRE(std::string(plan.path()) == "depthwise");
        for (int threads : {1, 2, 3, 7}) {
          const Context ctx = testing::ContextFor(isa, threads);
          INFO(c.h << "x" << c.w << "x" << c.c << " k" << c.k << " s" << c.stride << ", stage "
                   << reference::QGemmStageName(stage) << ", isa " << IsaName(isa) << ", threads " << threads);
          const Tensor y = plan.Run(ctx, x.values()).value();
          REQUIRE(y.SizeBytes() == want.size());
          const auto* got = static_cast<const uint8_t*>(y.raw_data());
          for (size_t i = 0; i < want.size(); ++i) {
            if (got[i] != want[i]) FAIL("byte " << i << ": want " << int{want[i]} << ", got " << int{got[i]});
          }
        }
      }
    }
  }
}

TEST_CASE("qconv2d op: depthwise with full-range activations and weights in [-64, 64] (the x86 preset) on every ISA",
          "[qconv2d]") {
  auto rng = testing::MakeRng("qconv2d_depthwise_small_weights");
  for (const int64_t ch : {32, 80, 144}) {
    for (QGemmStage stage : kQConv2dStages) {
      Conv2dParams p;
      p.kernel_h = p.kernel_w = 3;
      p.stride_h = p.stride_w = 1 + ch % 2;
      p.pad_h = p.pad_w = 1;
      p.groups = ch;
      QTensor w = testing::MakeLinearWeights(rng, ::octet::Shape{ch, 3, 3, 1}, true, false);
      for (int8_t& v : w.values().values<int8_t>()) v = static_cast<int8_t>(std::clamp<int>(v, -64, 63));
      QTensor x = testing::MakeLinearInput(rng, ::octet::Shape{1, 9, 8, ch}, DType::kU8, 128);
      for (uint8_t& v : x.values().values<uint8_t>()) v = rng() % 4 == 0 ? 255 : v;  // full range, many at the top
      const QGemmOutput out = testing::RandomConvOutput(rng, stage, ch, 9);
      const std::vector<uint8_t> want = testing::ReferenceQConv2d(x, w, p, out);
      for (Isa isa : testing::CompiledIsaList()) {
        if (!testing::CanRun(isa, std::string("qconv2d depthwise small weights on ") + IsaName(isa))) continue;
        const QConv2dPlan plan = QConv2dPlan::Create(testing::ContextFor(isa), w, p, x.qparams(), out).value();
        REQUIRE(std::string(plan.path()) == "depthwise");
        for (int threads : {1, 3}) {
          INFO(ch << " channels, stage " << reference::QGemmStageName(stage) << ", isa " << IsaName(isa) << ", threads "
                  << threads);
          const Tensor y = plan.Run(testing::ContextFor(isa, threads), x.values()).value();
          REQUIRE(y.SizeBytes() == want.size());
          const auto* got = static_cast<const uint8_t*>(y.raw_data());
          for (size_t i = 0; i < want.size(); ++i) {
            if (got[i] != want[i]) FAIL("byte " << i << ": want " << int{want[i]} << ", got " << int{got[i]});
          }
        }
      }
    }
  }
}

TEST_CASE("qconv2d op: every stage on the depthwise and im2col paths", "[qconv2d]") {
  auto rng = testing::MakeRng("qconv2d_stages");
  for (QGemmStage stage : kQConv2dStages) {
    CheckCase(rng, {1, 5, 6, 21, 21, 3, 3, 1, 1, 1, 21, "depthwise"}, DType::kU8, stage, false);
    CheckCase(rng, {1, 5, 6, 7, 9, 3, 3, 2, 1, 1, 1, "im2col"}, DType::kS8, stage, false);
  }
}

// One random single-group case of kernel rows up to k_w_max taps wide, c_in channels from `c_in_for(k_w)`, pads below
// pad_end, up to extra_end - 1 more rows and columns than the kernel needs, with and without row dilation: the
// im2col row-piece copies against the reference.
template <typename CInFor>
void CheckRandomRowPieces(std::mt19937_64& rng, int64_t k_w_max, int64_t pad_end, int64_t extra_end, CInFor c_in_for) {
  QConv2dCase c{};
  c.n = 1 + static_cast<int64_t>(rng() % 2);
  c.k_h = 1 + static_cast<int64_t>(rng() % 4);
  c.k_w = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(k_w_max));
  c.c_in = c_in_for(c.k_w);
  c.c_out = 1 + static_cast<int64_t>(rng() % 20);
  c.stride = 1 + static_cast<int64_t>(rng() % 3);
  c.pad = static_cast<int64_t>(rng() % static_cast<uint64_t>(pad_end));
  c.dilation = 1;
  c.dilation_h = 1 + static_cast<int64_t>(rng() % 2);
  c.groups = 1;
  const uint64_t extra = static_cast<uint64_t>(extra_end);
  c.h = std::max<int64_t>(1, c.dilation_h * (c.k_h - 1) + 1 - 2 * c.pad) + static_cast<int64_t>(rng() % extra);
  c.w = std::max<int64_t>(1, c.k_w - 2 * c.pad) + static_cast<int64_t>(rng() % extra);
  const bool one = c.k_h == 1 && c.k_w == 1 && c.stride == 1 && c.pad == 0;
  c.path = one ? "1x1" : "im2col";
  CheckCase(rng, c, rng() & 1 ? DType::kU8 : DType::kS8, kQConv2dStages[rng() % 5], rng() % 4 == 0, false);
}

// Kernel rows of 16 to 32 contiguous bytes (one group, no column dilation) go through im2col's short-piece copies:
// 32-byte copies that run into the next piece, skipped where they would read past the input's end. Pieces at both
// bounds and between, row dilation, pad rows, the last pixel of the last image, random awkward shapes around them.
TEST_CASE("qconv2d op: im2col short kernel rows (small-C_in stems) equal the reference", "[qconv2d]") {
  auto rng = testing::MakeRng("qconv2d_short_pieces");
  const std::vector<QConv2dCase> cases = {
      {1, 17, 15, 3, 16, 7, 7, 2, 3, 1, 1, "im2col"},  // 21 bytes (the ResNet stem's)
      {2, 11, 9, 2, 5, 8, 8, 1, 0, 1, 1, "im2col"},    // 16, no padding: the last row at the input's end
      {1, 9, 12, 4, 7, 8, 8, 3, 2, 1, 1, "im2col"},    // 32
      {2, 10, 11, 5, 9, 3, 6, 2, 1, 1, 1, "im2col"},   // 30 over 3 rows
      {1, 8, 20, 17, 3, 2, 1, 1, 0, 1, 1, "im2col"},   // 17 from one tap, 2 rows
      {1, 3, 9, 3, 6, 7, 7, 1, 3, 1, 1, "im2col"},     // mostly pad rows
  };
  for (const QConv2dCase& c : cases) {
    for (DType x_dtype : {DType::kU8, DType::kS8}) {
      CheckCase(rng, c, x_dtype, kQConv2dStages[rng() % 5], rng() % 4 == 0);
    }
  }
  // Random pieces from 16 to 35 bytes (past 32: the general copies), with and without row dilation.
  for (int iter = 0; iter < 24; ++iter) {
    CheckRandomRowPieces(rng, 8, 3, 8, [&](int64_t k_w) {
      return std::max<int64_t>(1, (16 + static_cast<int64_t>(rng() % 17) + k_w - 1) / k_w);
    });
  }
}

TEST_CASE("qconv2d op: im2col kernel rows under 16 bytes (1- and 3-channel stems, padded lines) equal the reference",
          "[qconv2d]") {
  auto rng = testing::MakeRng("qconv2d_padded_lines");
  const std::vector<QConv2dCase> cases = {
      {1, 8, 8, 1, 8, 3, 3, 1, 1, 1, 1, "im2col"},     // the digits CNN's stem: 3 bytes
      {2, 17, 16, 3, 8, 3, 3, 2, 1, 1, 1, "im2col"},   // MobileNetV2's stem: 9 bytes, stride 2
      {1, 5, 9, 2, 5, 2, 5, 3, 3, 1, 1, "im2col"},     // pad 3, wider than the kernel rows it covers
      {1, 4, 3, 1, 4, 5, 5, 1, 2, 1, 1, "im2col"},     // a kernel wider than the input
      {1, 3, 700, 3, 4, 3, 3, 1, 1, 1, 1, "im2col"},   // lines past the stack buffer: the general gather
      {1, 9, 7, 3, 6, 3, 3, 1, 1, 1, 1, "im2col", 2},  // row dilation
      // Enough output pixels for several gather tasks at 2 threads and more (~16 KiB of rows each): their last
      // pieces must not run into the next task's rows, here 9 and 2 bytes per row.
      {1, 64, 64, 1, 4, 3, 3, 1, 1, 1, 1, "im2col"},
      {1, 100, 100, 1, 3, 2, 1, 1, 0, 1, 1, "im2col"},
  };
  for (const QConv2dCase& c : cases) {
    for (DType x_dtype : {DType::kU8, DType::kS8}) {
      CheckCase(rng, c, x_dtype, kQConv2dStages[rng() % 5], rng() % 4 == 0);
    }
  }
  // Random pieces of 1 to 15 bytes.
  for (int iter = 0; iter < 24; ++iter) {
    CheckRandomRowPieces(rng, 5, 4, 9, [&](int64_t) { return 1 + static_cast<int64_t>(rng() % 3); });
  }
}

TEST_CASE("qconv2d op: randomized shapes", "[.long]") {
  auto rng = testing::MakeRng("qconv2d_long");
  for (int iter = 0; iter < 60; ++iter) {
    QConv2dCase c{};
    c.n = 1 + rng() % 2;
    c.h = 1 + rng() % 12;
    c.w = 1 + rng() % 12;
    c.k_h = 1 + rng() % 5;
    c.k_w = 1 + rng() % 5;
    c.stride = 1 + rng() % 2;
    c.dilation = 1 + rng() % 2;
    c.pad = rng() % 3;
    if (c.h + 2 * c.pad < c.dilation * (c.k_h - 1) + 1) c.h = c.dilation * (c.k_h - 1) + 1;
    if (c.w + 2 * c.pad < c.dilation * (c.k_w - 1) + 1) c.w = c.dilation * (c.k_w - 1) + 1;
    const bool dw = rng() % 2 == 0;
    if (dw) {
      c.c_in = c.c_out = c.groups = static_cast<int64_t>(testing::RandomSize(rng, 70));
      c.path = c.groups > 1 ? "depthwise" : "im2col";  // one channel: a plain convolution
      if (c.groups == 1 && c.k_h == 1 && c.k_w == 1 && c.stride == 1 && c.pad == 0) c.path = "1x1";
    } else {
      c.groups = 1 + rng() % 3;
      c.c_in = c.groups * static_cast<int64_t>(testing::RandomSize(rng, 20));
      c.c_out = c.groups * static_cast<int64_t>(testing::RandomSize(rng, 20));
      const bool one = c.k_h == 1 && c.k_w == 1 && c.stride == 1 && c.pad == 0 && c.groups == 1;
      c.path = one ? "1x1" : "im2col";
      if (c.groups > 1 && c.c_in == c.groups && c.c_out == c.groups) c.path = "depthwise";
    }
    CheckCase(rng, c, rng() & 1 ? DType::kU8 : DType::kS8, kQConv2dStages[rng() % 5], rng() % 4 == 0, false);
  }
}

TEST_CASE("qconv2d op: clear errors naming the value", "[qconv2d]") {
  auto rng = testing::MakeRng("qconv2d_errors");
  const Context ctx = testing::ContextFor(Isa::kScalar);
  const QParams xq = QParams::PerTensor(DType::kU8, 0.02f, 117).value();
  const QTensor w = testing::MakeLinearWeights(rng, Shape{8, 3, 3, 4}, true, false);
  Conv2dParams p;
  p.kernel_h = p.kernel_w = 3;
  auto error = [&](const Conv2dParams& params, const QTensor& weights = QTensor()) {
    const QTensor& ww = weights.values().empty() ? w : weights;
    auto r = QConv2dPlan::Create(ctx, ww, params, xq, QGemmOutput::Int32());
    REQUIRE(!r.ok());
    return r.status().message();
  };
  Conv2dParams bad = p;
  bad.stride_h = 0;
  CHECK_THAT(error(bad), Catch::Contains("stride_h must be >= 1, got 0"));
  bad = p;
  bad.pad_w = -1;
  CHECK_THAT(error(bad), Catch::Contains("pad_w must be >= 0, got -1"));
  bad = p;
  bad.dilation_h = 0;
  CHECK_THAT(error(bad), Catch::Contains("dilation_h must be >= 1, got 0"));
  bad = p;
  bad.groups = 3;
  CHECK_THAT(error(bad), Catch::Contains("groups = 3 must divide c_out = 8"));
  bad = p;
  bad.kernel_w = 5;
  CHECK_THAT(error(bad), Catch::Contains("do not match kernel 3x5"));
  // Bias of the wrong size.
  auto r = QConv2dPlan::Create(ctx, w, p, xq, QGemmOutput::Int32({1, 2, 3}));
  REQUIRE(!r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("c_out = 8 values, got 3"));
  // Input shape errors at run time.
  const QConv2dPlan plan = QConv2dPlan::Create(ctx, w, p, xq, QGemmOutput::Int32()).value();
  const Tensor x5 = Tensor::Create(DType::kU8, Shape{1, 6, 6, 5}).value();
  auto run = plan.Run(ctx, x5);
  REQUIRE(!run.ok());
  CHECK_THAT(run.status().message(), Catch::Contains("c_in = groups * 4 = 4 channels, got shape"));
  const Tensor small = Tensor::Create(DType::kU8, Shape{1, 2, 6, 4}).value();
  run = plan.Run(ctx, small);
  REQUIRE(!run.ok());
  CHECK_THAT(run.status().message(), Catch::Contains("does not fit the input 2x6"));
  const Tensor s8 = Tensor::Create(DType::kS8, Shape{1, 6, 6, 4}).value();
  run = plan.Run(ctx, s8);
  REQUIRE(!run.ok());
  CHECK_THAT(run.status().message(), Catch::Contains("the input must be u8, got s8"));
  // qdwconv rejects affine weights and too many taps by value.
  const QTensor dw_affine = testing::MakeLinearWeights(rng, Shape{6, 3, 3, 1}, true, true);
  Conv2dParams dp = p;
  dp.groups = 6;
  auto d = QDwConvPlan::Create(ctx, dw_affine, dp, xq, QGemmOutput::Int32());
  bool any_nonzero = false;
  for (int32_t z : dw_affine.qparams().zero_points()) any_nonzero = any_nonzero || z != 0;
  if (any_nonzero) {
    REQUIRE(!d.ok());
    CHECK_THAT(d.status().message(), Catch::Contains("weights must be symmetric, got zero point"));
  }
  // ...but qconv2d runs them through the grouped GEMM path.
  CHECK(std::string(QConv2dPlan::Create(ctx, dw_affine, dp, xq, QGemmOutput::Int32()).value().path()) ==
        (any_nonzero ? "im2col" : "depthwise"));
}

}  // namespace
}  // namespace octet

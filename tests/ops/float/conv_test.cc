// Conv and ConvTranspose against plain-loop references on random shapes, groups, strides, dilations and
// asymmetric pads; every kernel path (depthwise, pointwise, im2col), 1 vs 3 threads, 2-D tiles at 1-7 threads.
#include <catch2/catch.hpp>

#include "ops/float/sgemm.h"
#include "tests/ops/float/float_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::Absent;
using testing::Const;
using testing::In;

struct ConvCase {
  int64_t n, c, h, w, oc, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, group;
  bool bias;

  int64_t OutH() const { return (h + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
  int64_t OutW() const { return (w + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
  AttributeMap Attributes() const {
    return {{"kernel_shape", std::vector<int64_t>{kh, kw}},
            {"strides", std::vector<int64_t>{sh, sw}},
            {"dilations", std::vector<int64_t>{dh, dw}},
            {"pads", std::vector<int64_t>{pt, pl, pb, pr}},
            {"group", group}};
  }
};

// A case's random input, weight and bias (drawn in that order), and the op inputs reading them: the weight and bias
// as constants or as graph inputs.
struct ConvOperands {
  Tensor x, w, b;
  std::vector<testing::OpInput> ins;
};

ConvOperands RandomConvOperands(const ConvCase& p, std::mt19937_64& rng, bool weights_constant) {
  ConvOperands o{testing::RandomTensor(rng, Shape{p.n, p.c, p.h, p.w}),
                 testing::RandomTensor(rng, Shape{p.oc, p.c / p.group, p.kh, p.kw}),
                 testing::RandomTensor(rng, Shape{p.oc}),
                 {}};
  o.ins = {In(o.x), weights_constant ? Const(o.w) : In(o.w)};
  if (p.bias) o.ins.push_back(weights_constant ? Const(o.b) : In(o.b));
  return o;
}

std::vector<float> ReferenceConv(const ConvCase& p, const Tensor& x, const Tensor& wt, const Tensor* b, int64_t oh,
                                 int64_t ow) {
  std::vector<float> y(static_cast<size_t>(p.n * p.oc * oh * ow));
  const int64_t cg = p.c / p.group, ocg = p.oc / p.group;
  const float* px = x.data<float>();
  const float* pw = wt.data<float>();
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.oc; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = b ? b->data<float>()[o] : 0.0;
          const int64_t g = o / ocg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t u = 0; u < p.kh; ++u)
              for (int64_t v = 0; v < p.kw; ++v) {
                const int64_t ih = i * p.sh - p.pt + u * p.dh, iw = j * p.sw - p.pl + v * p.dw;
                if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
                acc += double{px[((n * p.c + g * cg + c) * p.h + ih) * p.w + iw]} *
                       pw[((o * cg + c) * p.kh + u) * p.kw + v];
              }
          y[static_cast<size_t>(((n * p.oc + o) * oh + i) * ow + j)] = static_cast<float>(acc);
        }
  return y;
}

void CheckConv(const ConvCase& p, std::mt19937_64& rng, bool weights_constant) {
  // Windows larger than the padded input are an error (tested separately).
  if (p.h + p.pt + p.pb < p.dh * (p.kh - 1) + 1 || p.w + p.pl + p.pr < p.dw * (p.kw - 1) + 1) return;
  const int64_t oh = p.OutH(), ow = p.OutW();
  const ConvOperands o = RandomConvOperands(p, rng, weights_constant);
  const std::vector<testing::OpInput>& ins = o.ins;
  const AttributeMap attrs = p.Attributes();
  const std::vector<float> want = ReferenceConv(p, o.x, o.w, p.bias ? &o.b : nullptr, oh, ow);
  INFO("conv n=" << p.n << " c=" << p.c << " h=" << p.h << " w=" << p.w << " oc=" << p.oc << " k=" << p.kh << "x"
                 << p.kw << " s=" << p.sh << "," << p.sw << " d=" << p.dh << "," << p.dw << " pads=" << p.pt << ","
                 << p.pl << "," << p.pb << "," << p.pr << " g=" << p.group);
  auto one = testing::RunFloatOp("Conv", ins, attrs, 1, 1);
  REQUIRE(one.ok());
  CHECK((*one)[0].shape() == Shape{p.n, p.oc, oh, ow});
  testing::ExpectClose((*one)[0], want, 1e-4f, 1e-4f);
  auto three = testing::RunFloatOp("Conv", ins, attrs, 1, 3);
  REQUIRE(three.ok());
  CHECK(testing::BitEqual((*one)[0], (*three)[0]));
}

TEST_CASE("Conv matches the reference on random shapes, groups, strides, dilations and pads", "[float_ops]") {
  auto rng = testing::MakeRng("conv");
  for (int iter = 0; iter < 40; ++iter) {
    ConvCase p{};
    p.group = std::array<int64_t, 3>{1, 2, 3}[rng() % 3];
    p.n = testing::RandomDim(rng, 1, 2);
    p.c = p.group * testing::RandomDim(rng, 1, 4);
    p.oc = p.group * testing::RandomDim(rng, 1, 4);
    p.h = testing::RandomDim(rng, 1, 9);
    p.w = testing::RandomDim(rng, 1, 9);
    p.kh = testing::RandomDim(rng, 1, 3);
    p.kw = testing::RandomDim(rng, 1, 3);
    p.sh = testing::RandomDim(rng, 1, 3);
    p.sw = testing::RandomDim(rng, 1, 3);
    p.dh = testing::RandomDim(rng, 1, 2);
    p.dw = testing::RandomDim(rng, 1, 2);
    p.pt = testing::RandomDim(rng, 0, 2);
    p.pl = testing::RandomDim(rng, 0, 2);
    p.pb = testing::RandomDim(rng, 0, 2);
    p.pr = testing::RandomDim(rng, 0, 2);
    p.bias = rng() % 2 == 0;
    CheckConv(p, rng, rng() % 2 == 0);
  }
}

// Outputs wider than one im2col chunk (256 columns), rows split across B panels, and strided convs that read a
// phase-split input (kernel >= stride), with odd sizes, asymmetric pads and dilation; constant and runtime weights.
TEST_CASE("Conv im2col over several chunks and through the strided phase split", "[float_ops]") {
  auto rng = testing::MakeRng("conv-chunks");
  //          n  c   h   w  oc kh kw sh sw dh dw pt pl pb pr  g  bias
  CheckConv({1, 3, 41, 38, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 2, 1, true}, rng, true);    // ResNet stem, smaller
  CheckConv({1, 8, 23, 25, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true}, rng, true);    // 3x3, 575 columns
  CheckConv({2, 6, 33, 29, 10, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 2, false}, rng, false);  // stride 2, grouped
  CheckConv({1, 5, 30, 31, 9, 3, 4, 3, 2, 2, 1, 2, 0, 1, 2, 1, true}, rng, true);     // strides 3x2, dilation 2
  CheckConv({1, 16, 7, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true}, rng, true);     // ResNet layer4: 49 columns
  CheckConv({1, 4, 20, 20, 8, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, true}, rng, true);     // 1x1 stride 2: no split
}

// Layers whose product is cut into 2-D tiles (several row tiles per 128-channel block, narrow pixel tiles, the
// im2col of each pixel tile shared by the row tiles) and a wide one with a single row tile: the output at 2, 3 and 7
// threads equals the 1-thread output bit for bit, which matches the reference.
TEST_CASE("Conv's 2-D tiles over channels and pixels give the same output at 1, 2, 3 and 7 threads", "[float_ops]") {
  auto rng = testing::MakeRng("conv-tiles");
  //                           n  c    h   w   oc  kh kw sh sw dh dw pt pl pb pr  g  bias
  const ConvCase cases[] = {{1, 160, 9, 9, 300, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true},    // 3 blocks, k 1440
                            {1, 256, 7, 7, 200, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false},   // layer4-like, k 2304
                            {2, 40, 15, 13, 130, 3, 3, 2, 1, 1, 1, 1, 0, 1, 1, 2, true},   // groups, stride, batch 2
                            {1, 16, 40, 37, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true},    // one row tile, wide
                            {1, 64, 12, 12, 160, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true}};  // pointwise
  for (const ConvCase& p : cases) {
    for (bool constant : {true, false}) {
      const ConvOperands o = RandomConvOperands(p, rng, constant);
      const std::vector<testing::OpInput>& ins = o.ins;
      const AttributeMap attrs = p.Attributes();
      INFO("conv c=" << p.c << " h=" << p.h << " w=" << p.w << " oc=" << p.oc << " k=" << p.kh << "x" << p.kw
                     << " g=" << p.group << " constant weights " << constant);
      auto one = testing::RunFloatOp("Conv", ins, attrs, 1, 1);
      REQUIRE(one.ok());
      testing::ExpectClose((*one)[0], ReferenceConv(p, o.x, o.w, p.bias ? &o.b : nullptr, p.OutH(), p.OutW()), 1e-3f,
                           1e-4f);
      for (int threads : {2, 3, 7}) {
        auto many = testing::RunFloatOp("Conv", ins, attrs, 1, threads);
        REQUIRE(many.ok());
        INFO(threads << " threads");
        CHECK(testing::BitEqual((*one)[0], (*many)[0]));
      }
    }
  }
}

TEST_CASE("Conv's depthwise and pointwise paths match the reference", "[float_ops]") {
  auto rng = testing::MakeRng("conv-paths");
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  for (int iter = 0; iter < 12; ++iter) {
    const int64_t c = testing::RandomDim(rng, 1, 8);
    // depthwise 3x3 with stride 1 or 2 and asymmetric pads
    CheckConv({1, c, testing::RandomDim(rng, 3, 12), testing::RandomDim(rng, 3, 12), c, 3, 3,
               testing::RandomDim(rng, 1, 2), testing::RandomDim(rng, 1, 2), 1, 1, 1, 0, 1, 2, c, true},
              rng, true);
    // pointwise 1x1, grouped or not
    const int64_t g = testing::RandomDim(rng, 1, 2);
    CheckConv({2, g * c, 5, 7, g * testing::RandomDim(rng, 1, 6), 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, g, iter % 2 == 0},
              rng, true);
  }
  // The kernel chosen once at Prepare is visible through the executor.
  Graph graph("g");
  const ValueId x = graph.AddInput("x", DType::kF32, Shape{1, 4, 5, 5}).value();
  const ValueId w = graph.AddConstant("w", testing::RandomTensor(rng, Shape{4, 1, 3, 3})).value();
  const ValueId y = graph.AddNodeValue("y").value();
  graph.AddNode(Node{"dw", "Conv", "", {{"group", 4}}, {x, w}, {y}}).value();
  REQUIRE(graph.AddOutput(y).ok());
  auto exec = Executor::Compile(graph, context, testing::FloatRegistry());
  REQUIRE(exec.ok());
  CHECK(exec->kernel_name(0) == "conv_f32_depthwise+dwconv_f32_ukernel__scalar");
  CHECK(context.LastKernel("Conv") == "conv_f32_depthwise+dwconv_f32_ukernel__scalar");
}

// A 1x1 convolution with several row tiles builds its B panels once per column tile (the im2col path, one run per
// panel) on the packed sgemm tiers, and reads X directly on the others; both match the reference on every tier.
TEST_CASE("Conv's pointwise layers with several row tiles pack the input once, on every tier", "[float_ops]") {
  auto rng = testing::MakeRng("conv-pointwise-packed");
  //                   n  c   h   w   oc  kh kw sh sw dh dw pt pl pb pr  g  bias
  const ConvCase p = {1, 96, 14, 13, 160, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true};
  const ConvOperands o = RandomConvOperands(p, rng, true);
  const std::vector<float> want = ReferenceConv(p, o.x, o.w, &o.b, p.OutH(), p.OutW());
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, std::string("pointwise conv ") + IsaName(isa))) continue;
    const Context context = testing::ContextFor(isa, 1);
    Graph graph("g");
    const ValueId x = graph.AddInput("x", DType::kF32, o.x.shape()).value();
    const ValueId w = graph.AddConstant("w", o.w).value();
    const ValueId b = graph.AddConstant("b", o.b).value();
    const ValueId y = graph.AddNodeValue("y").value();
    graph.AddNode(Node{"pw", "Conv", "", p.Attributes(), {x, w, b}, {y}}).value();
    REQUIRE(graph.AddOutput(y).ok());
    auto exec = Executor::Compile(graph, context, testing::FloatRegistry());
    REQUIRE(exec.ok());
    const bool packed = float_ops::SgemmPanelCols(float_ops::SelectSgemm(context).fn) > 0;
    INFO(IsaName(isa) << ": " << exec->kernel_name(0));
    CHECK(exec->kernel_name(0).rfind(packed ? "conv_f32_pointwise_packed+" : "conv_f32_pointwise+", 0) == 0);
    auto out = exec->Run(std::vector<Tensor>{o.x});
    REQUIRE(out.ok());
    testing::ExpectClose((*out)[0], want, 1e-3f, 1e-4f);
  }
}

// No input channels: the products are empty, so every output is its channel's bias (0 without one), on the 1x1,
// packed 1x1 and im2col paths alike.
TEST_CASE("Conv with no input channels gives the bias", "[float_ops]") {
  for (int64_t k : {1, 3}) {
    for (int64_t oc : {3, 160}) {
      Tensor x = testing::FloatTensor(Shape{1, 0, 6, 5}, {});
      Tensor w = testing::FloatTensor(Shape{oc, 0, k, k}, {});
      std::vector<float> bias(static_cast<size_t>(oc));
      for (int64_t c = 0; c < oc; ++c) bias[static_cast<size_t>(c)] = 0.25f * static_cast<float>(c) - 3.0f;
      Tensor b = testing::FloatTensor(Shape{oc}, bias);
      auto y = testing::RunFloatOp("Conv", {In(x), Const(w), Const(b)},
                                   {{"kernel_shape", std::vector<int64_t>{k, k}},
                                    {"pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2}}});
      INFO("k=" << k << " oc=" << oc);
      REQUIRE(y.ok());
      REQUIRE((*y)[0].shape() == Shape{1, oc, 6, 5});
      const float* got = (*y)[0].data<float>();
      for (int64_t c = 0; c < oc; ++c) {
        for (int64_t q = 0; q < 30; ++q) REQUIRE(got[c * 30 + q] == bias[static_cast<size_t>(c)]);
      }
    }
  }
}

TEST_CASE("Conv 1-D and auto_pad SAME", "[float_ops]") {
  auto rng = testing::MakeRng("conv1d");
  // 1-D as a 2-D conv of height 1.
  Tensor x = testing::RandomTensor(rng, Shape{2, 3, 11});
  Tensor w = testing::RandomTensor(rng, Shape{4, 3, 3});
  auto y = testing::RunFloatOp("Conv", {In(x), Const(w)},
                               {{"strides", std::vector<int64_t>{2}}, {"pads", std::vector<int64_t>{1, 2}}});
  REQUIRE(y.ok());
  CHECK((*y)[0].shape() == Shape{2, 4, 6});
  Tensor x4 = x.Reshaped(Shape{2, 3, 1, 11}).value();
  Tensor w4 = w.Reshaped(Shape{4, 3, 1, 3}).value();
  ConvCase p{2, 3, 1, 11, 4, 1, 3, 1, 2, 1, 1, 0, 1, 0, 2, 1, false};
  testing::ExpectClose((*y)[0], ReferenceConv(p, x4, w4, nullptr, 1, 6), 1e-4f, 1e-4f);

  // SAME_UPPER: output = ceil(in / stride), the extra pad at the end.
  Tensor xs = testing::RandomTensor(rng, Shape{1, 2, 6, 7});
  Tensor ws = testing::RandomTensor(rng, Shape{3, 2, 4, 4});
  auto same = testing::RunFloatOp("Conv", {In(xs), Const(ws)},
                                  {{"auto_pad", "SAME_UPPER"}, {"strides", std::vector<int64_t>{2, 2}}});
  REQUIRE(same.ok());
  CHECK((*same)[0].shape() == Shape{1, 3, 3, 4});
  // total pad rows: (3-1)*2+4-6 = 2 -> 1/1; cols: (4-1)*2+4-7 = 3 -> 1/2
  ConvCase q{1, 2, 6, 7, 3, 4, 4, 2, 2, 1, 1, 1, 1, 1, 2, 1, false};
  testing::ExpectClose((*same)[0], ReferenceConv(q, xs, ws, nullptr, 3, 4), 1e-4f, 1e-4f);
}

// A 3-D Conv (the direct N-D path, ops/float/conv_nd.cc) is the sum over its depth taps of 2-D Convs (the im2col
// path, checked against the reference above) of the matching depth slices of X and W.
TEST_CASE("Conv 3-D equals the sum of 2-D Convs over the depth taps", "[float_ops]") {
  auto rng = testing::MakeRng("conv3d");
  const int64_t n = 2, c = 4, d = 4, h = 5, wd = 6, oc = 4, group = 2, kd = 2, sd = 2;
  Tensor x = testing::RandomTensor(rng, Shape{n, c, d, h, wd});
  Tensor w = testing::RandomTensor(rng, Shape{oc, c / group, kd, 3, 3});
  Tensor b = testing::RandomTensor(rng, Shape{oc});
  auto y = testing::RunFloatOp("Conv", {In(x), Const(w), Const(b)},
                               {{"group", group},
                                {"strides", std::vector<int64_t>{sd, 1, 2}},
                                {"pads", std::vector<int64_t>{0, 1, 0, 0, 1, 1}}});
  REQUIRE(y.ok());
  const int64_t od = (d - kd) / sd + 1;
  // A depth slice: X[:, :, z] or W[:, :, z].
  auto slice = [](const Tensor& t, int64_t z) {
    const Shape& s = t.shape();
    const int64_t plane = s.dim(3) * s.dim(4);
    std::vector<float> v;
    for (int64_t i = 0; i < s.dim(0) * s.dim(1); ++i) {
      const float* p = t.data<float>() + (i * s.dim(2) + z) * plane;
      v.insert(v.end(), p, p + plane);
    }
    return testing::FloatTensor(Shape{s.dim(0), s.dim(1), s.dim(3), s.dim(4)}, v);
  };
  std::vector<float> want;
  std::vector<std::vector<float>> per_depth;
  int64_t oh = 0, ow = 0;
  for (int64_t z = 0; z < od; ++z) {
    std::vector<float> sum;
    for (int64_t t = 0; t < kd; ++t) {
      auto y2 = testing::RunFloatOp(
          "Conv", {In(slice(x, z * sd + t)), Const(slice(w, t))},
          {{"group", group}, {"strides", std::vector<int64_t>{1, 2}}, {"pads", std::vector<int64_t>{1, 0, 1, 1}}});
      REQUIRE(y2.ok());
      oh = (*y2)[0].shape().dim(2), ow = (*y2)[0].shape().dim(3);
      const float* p = (*y2)[0].data<float>();
      sum.resize(static_cast<size_t>((*y2)[0].NumElements()), 0.0f);
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += p[i];
    }
    per_depth.push_back(sum);
  }
  REQUIRE((*y)[0].shape() == Shape{n, oc, od, oh, ow});
  for (int64_t i = 0; i < n * oc; ++i) {
    for (int64_t z = 0; z < od; ++z) {
      for (int64_t q = 0; q < oh * ow; ++q) {
        want.push_back(per_depth[static_cast<size_t>(z)][static_cast<size_t>(i * oh * ow + q)] +
                       b.data<float>()[i % oc]);
      }
    }
  }
  testing::ExpectClose((*y)[0], want, 1e-5f, 1e-4f);
}

TEST_CASE("Conv rejects malformed nodes with clear errors", "[float_ops]") {
  auto rng = testing::MakeRng("conv-bad");
  Tensor x = testing::RandomTensor(rng, Shape{1, 4, 5, 5});
  auto bad_group = testing::RunFloatOp("Conv", {In(x), Const(testing::RandomTensor(rng, Shape{6, 2, 3, 3}))},
                                       {{"group", 3}});
  REQUIRE_FALSE(bad_group.ok());
  CHECK_THAT(bad_group.status().message(), Catch::Contains("node 'op' (Conv)") && Catch::Contains("group 3"));
  auto too_big = testing::RunFloatOp("Conv", {In(x), Const(testing::RandomTensor(rng, Shape{2, 4, 7, 7}))});
  REQUIRE_FALSE(too_big.ok());
  CHECK_THAT(too_big.status().message(), Catch::Contains("larger than the padded input"));
  auto bad_rank = testing::RunFloatOp("Conv", {In(testing::RandomTensor(rng, Shape{4, 5})), Const(x)});
  REQUIRE_FALSE(bad_rank.ok());
  auto bad_pads = testing::RunFloatOp("Conv", {In(x), Const(testing::RandomTensor(rng, Shape{2, 4, 3, 3}))},
                                      {{"pads", std::vector<int64_t>{1, 1}}});
  REQUIRE_FALSE(bad_pads.ok());
  CHECK_THAT(bad_pads.status().message(), Catch::Contains("pads must have 4 values"));
  auto zero_stride = testing::RunFloatOp("Conv", {In(x), Const(testing::RandomTensor(rng, Shape{2, 4, 3, 3}))},
                                         {{"strides", std::vector<int64_t>{0, 1}}});
  REQUIRE_FALSE(zero_stride.ok());
  auto bias_len = testing::RunFloatOp("Conv", {In(x), Const(testing::RandomTensor(rng, Shape{2, 4, 3, 3})),
                                               Const(testing::RandomTensor(rng, Shape{3}))});
  REQUIRE_FALSE(bias_len.ok());
  CHECK_THAT(bias_len.status().message(), Catch::Contains("B must be [2]"));
}

std::vector<float> ReferenceConvTranspose(const Tensor& x, const Tensor& w, const Tensor* b, int64_t group,
                                          int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt, int64_t pl,
                                          int64_t oh, int64_t ow) {
  const int64_t n = x.shape().dim(0), c = x.shape().dim(1), h = x.shape().dim(2), wd = x.shape().dim(3);
  const int64_t ocg = w.shape().dim(1), kh = w.shape().dim(2), kw = w.shape().dim(3);
  const int64_t cg = c / group, oc = ocg * group;
  std::vector<double> y(static_cast<size_t>(n * oc * oh * ow), 0.0);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < wd; ++j)
          for (int64_t o = 0; o < ocg; ++o)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t v = 0; v < kw; ++v) {
                const int64_t yh = i * sh - pt + u * dh, yw = j * sw - pl + v * dw;
                if (yh < 0 || yh >= oh || yw < 0 || yw >= ow) continue;
                const int64_t g = ic / cg;
                y[static_cast<size_t>(((in * oc + g * ocg + o) * oh + yh) * ow + yw)] +=
                    double{x.data<float>()[((in * c + ic) * h + i) * wd + j]} *
                    w.data<float>()[((ic * ocg + o) * kh + u) * kw + v];
              }
  std::vector<float> out(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    out[i] = static_cast<float>(y[i] + (b ? b->data<float>()[(static_cast<int64_t>(i) / (oh * ow)) % oc] : 0.0));
  }
  return out;
}

TEST_CASE("ConvTranspose matches the reference", "[float_ops]") {
  auto rng = testing::MakeRng("conv-transpose");
  for (int iter = 0; iter < 20; ++iter) {
    const int64_t group = testing::RandomDim(rng, 1, 2);
    const int64_t c = group * testing::RandomDim(rng, 1, 3), ocg = testing::RandomDim(rng, 1, 3);
    const int64_t h = testing::RandomDim(rng, 1, 6), w = testing::RandomDim(rng, 1, 6);
    const int64_t kh = testing::RandomDim(rng, 1, 3), kw = testing::RandomDim(rng, 1, 3);
    const int64_t sh = testing::RandomDim(rng, 1, 3), sw = testing::RandomDim(rng, 1, 3);
    const int64_t dh = testing::RandomDim(rng, 1, 2), dw = testing::RandomDim(rng, 1, 2);
    const int64_t pt = testing::RandomDim(rng, 0, 1), pl = testing::RandomDim(rng, 0, 1);
    const int64_t pb = testing::RandomDim(rng, 0, 1), pr = testing::RandomDim(rng, 0, 1);
    const int64_t oph = testing::RandomDim(rng, 0, std::max(sh, dh) - 1);
    const int64_t opw = testing::RandomDim(rng, 0, std::max(sw, dw) - 1);
    const int64_t oh = sh * (h - 1) + oph + (kh - 1) * dh + 1 - pt - pb;
    const int64_t ow = sw * (w - 1) + opw + (kw - 1) * dw + 1 - pl - pr;
    if (oh < 1 || ow < 1) continue;
    Tensor x = testing::RandomTensor(rng, Shape{2, c, h, w});
    Tensor wt = testing::RandomTensor(rng, Shape{c, ocg, kh, kw});
    Tensor b = testing::RandomTensor(rng, Shape{ocg * group});
    INFO("iter " << iter);
    auto y = testing::RunFloatOp("ConvTranspose", {In(x), Const(wt), Const(b)},
                                 {{"group", group},
                                  {"strides", std::vector<int64_t>{sh, sw}},
                                  {"dilations", std::vector<int64_t>{dh, dw}},
                                  {"pads", std::vector<int64_t>{pt, pl, pb, pr}},
                                  {"output_padding", std::vector<int64_t>{oph, opw}}});
    REQUIRE(y.ok());
    REQUIRE((*y)[0].shape() == Shape{2, ocg * group, oh, ow});
    testing::ExpectClose((*y)[0], ReferenceConvTranspose(x, wt, &b, group, sh, sw, dh, dw, pt, pl, oh, ow), 1e-4f,
                         1e-4f);
  }
  // output_shape fixes the pads.
  Tensor x = testing::RandomTensor(rng, Shape{1, 2, 3, 3});
  Tensor wt = testing::RandomTensor(rng, Shape{2, 1, 3, 3});
  auto y = testing::RunFloatOp("ConvTranspose", {In(x), Const(wt), Absent()},
                               {{"strides", std::vector<int64_t>{2, 2}}, {"output_shape", std::vector<int64_t>{6, 6}}});
  REQUIRE(y.ok());
  CHECK((*y)[0].shape() == Shape{1, 1, 6, 6});
}

TEST_CASE("ConvTranspose grows to an output_shape larger than it produces, as ONNX's reference does", "[float_ops]") {
  // X [1, 2, 3, 3], strides [3, 2], kernel 3: 9 x 7 without pads. output_shape [11, 8] gives total pads -2 and -1,
  // split as in the spec with floor division: begin = total - floor(total / 2) (NOTSET, SAME_LOWER) or
  // floor(total / 2) (SAME_UPPER). A negative begin pad shifts the result down or right; the new cells hold the bias.
  auto rng = testing::MakeRng("convtranspose-output-shape");
  Tensor x = testing::RandomTensor(rng, Shape{1, 2, 3, 3});
  Tensor wt = testing::RandomTensor(rng, Shape{2, 2, 3, 3});
  Tensor b = testing::RandomTensor(rng, Shape{2});
  struct Case {
    const char* auto_pad;
    int64_t pt, pl;
  };
  for (const Case& c : {Case{"NOTSET", -1, 0}, Case{"SAME_LOWER", -1, 0}, Case{"SAME_UPPER", -1, -1}}) {
    INFO(c.auto_pad);
    auto y = testing::RunFloatOp("ConvTranspose", {In(x), Const(wt), Const(b)},
                                 {{"strides", std::vector<int64_t>{3, 2}},
                                  {"output_shape", std::vector<int64_t>{11, 8}},
                                  {"auto_pad", std::string(c.auto_pad)}});
    REQUIRE(y.ok());
    REQUIRE((*y)[0].shape() == Shape{1, 2, 11, 8});
    testing::ExpectClose((*y)[0], ReferenceConvTranspose(x, wt, &b, 1, 3, 2, 1, 1, c.pt, c.pl, 11, 8), 1e-5f, 1e-5f);
  }
  // Beyond what int64 geometry allows: an error naming the attribute, not an overflow.
  auto huge = testing::RunFloatOp("ConvTranspose", {In(x), Const(wt), Absent()},
                                  {{"output_shape", std::vector<int64_t>{int64_t{1} << 40, 8}}});
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.status().message(),
             Catch::Contains("output_shape [1099511627776, 8] must be in [1, 2^30] on axis 0"));
}

// A 3-D ConvTranspose (the direct N-D path, ops/float/conv_nd.cc) is, at each output depth z, the sum of the 2-D
// ConvTransposes (the col2im path, checked against the reference above) of the input depth slices i and weight
// depth slices t with z = i * stride - pad + t * dilation.
TEST_CASE("ConvTranspose 3-D equals the sum of 2-D ConvTransposes over the depth taps", "[float_ops]") {
  auto rng = testing::MakeRng("convtranspose3d");
  const int64_t n = 2, c = 4, d = 3, h = 3, wd = 4, ocg = 3, group = 2, kd = 3, sd = 2, dd = 2, pd0 = 1, pd1 = 2,
                opd = 1;
  Tensor x = testing::RandomTensor(rng, Shape{n, c, d, h, wd});
  Tensor w = testing::RandomTensor(rng, Shape{c, ocg, kd, 2, 3});
  Tensor b = testing::RandomTensor(rng, Shape{ocg * group});
  const AttributeMap plane = {{"group", group},
                              {"strides", std::vector<int64_t>{2, 1}},
                              {"pads", std::vector<int64_t>{0, 1, 1, 0}},
                              {"output_padding", std::vector<int64_t>{1, 0}}};
  auto y = testing::RunFloatOp("ConvTranspose", {In(x), Const(w), Const(b)},
                               {{"group", group},
                                {"strides", std::vector<int64_t>{sd, 2, 1}},
                                {"dilations", std::vector<int64_t>{dd, 1, 1}},
                                {"pads", std::vector<int64_t>{pd0, 0, 1, pd1, 1, 0}},
                                {"output_padding", std::vector<int64_t>{opd, 1, 0}}});
  REQUIRE(y.ok());
  const int64_t od = sd * (d - 1) + opd + (kd - 1) * dd + 1 - pd0 - pd1;
  // A depth slice: X[:, :, z] or W[:, :, z].
  auto slice = [](const Tensor& t, int64_t z) {
    const Shape& s = t.shape();
    const int64_t area = s.dim(3) * s.dim(4);
    std::vector<float> v;
    for (int64_t i = 0; i < s.dim(0) * s.dim(1); ++i) {
      const float* p = t.data<float>() + (i * s.dim(2) + z) * area;
      v.insert(v.end(), p, p + area);
    }
    return testing::FloatTensor(Shape{s.dim(0), s.dim(1), s.dim(3), s.dim(4)}, v);
  };
  std::vector<std::vector<float>> per_depth(static_cast<size_t>(od));
  int64_t oh = 0, ow = 0;
  for (int64_t i = 0; i < d; ++i) {
    for (int64_t t = 0; t < kd; ++t) {
      const int64_t z = i * sd - pd0 + t * dd;
      if (z < 0 || z >= od) continue;
      auto y2 = testing::RunFloatOp("ConvTranspose", {In(slice(x, i)), Const(slice(w, t))}, plane);
      REQUIRE(y2.ok());
      oh = (*y2)[0].shape().dim(2), ow = (*y2)[0].shape().dim(3);
      const float* p = (*y2)[0].data<float>();
      std::vector<float>& sum = per_depth[static_cast<size_t>(z)];
      sum.resize(static_cast<size_t>((*y2)[0].NumElements()), 0.0f);
      for (size_t k = 0; k < sum.size(); ++k) sum[k] += p[k];
    }
  }
  const int64_t oc = ocg * group;
  REQUIRE((*y)[0].shape() == Shape{n, oc, od, oh, ow});
  std::vector<float> want;
  for (int64_t i = 0; i < n * oc; ++i) {
    for (int64_t z = 0; z < od; ++z) {
      const std::vector<float>& sum = per_depth[static_cast<size_t>(z)];
      for (int64_t q = 0; q < oh * ow; ++q) {
        // A depth no tap reaches holds only the bias.
        want.push_back((sum.empty() ? 0.0f : sum[static_cast<size_t>(i * oh * ow + q)]) + b.data<float>()[i % oc]);
      }
    }
  }
  testing::ExpectClose((*y)[0], want, 1e-5f, 1e-4f);
}

}  // namespace
}  // namespace octet

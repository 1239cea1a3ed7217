// The float fusion pass (ops/float/float_fusion.h) and the fused activation in the sgemm and depthwise kernels' store:
// a fused graph's outputs equal the unfused graph's bit for bit (NaN included) on every tier and thread count, and
// the pass leaves alone what it cannot fuse.
#include "ops/float/float_fusion.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "core/executor.h"
#include "core/float_op_table.h"
#include "ops/float/sgemm.h"
#include "ops/float/ukernels/dwconv.h"
#include "ops/float/ukernels/sgemm.h"
#include "tests/ops/float/float_op_tester.h"
#include "tests/ops/float/sgemm_workspace.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using float_ops::FusedActivation;

// The activations the tests fuse: Relu, ReLU6, a Clip with both bounds inside the values' range, one-sided Clips.
std::vector<FusedActivation> Activations() {
  using K = FusedActivation::Kind;
  return {{K::kRelu, -INFINITY, INFINITY},
          {K::kClip, 0.0f, 6.0f},
          {K::kClip, -0.3f, 0.25f},
          {K::kClip, -0.1f, INFINITY},
          {K::kClip, -INFINITY, 0.2f}};
}

// Same bits (== would call NaN unequal to itself; -0 and +0 equal).
bool SameBits(const float* a, const float* b, size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

TEST_CASE("Every sgemm kernel's fused activation equals the product followed by the activation, bit for bit",
          "[float_ops]") {
  auto rng = testing::MakeRng("sgemm-activation");
  const testing::SgemmWorkspace workspace = testing::MakeSgemmWorkspace();
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const auto& kernel : float_ops::SgemmUkernels()) {
    if (!testing::CanRun(kernel.isa, std::string(kernel.name) + " activation")) continue;
    // Full and edge tiles, the 1-2 row path, several k slices (the activation only after the last).
    const std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1},   {2, 49, 300},  {8, 32, 256},  {6, 16, 513},
                                                        {9, 49, 40}, {13, 17, 257}, {128, 256, 5}, {7, 200, 3}};
    for (const auto& [m, n, k] : shapes) {
      for (const FusedActivation& act : Activations()) {
        std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), bias(static_cast<size_t>(m));
        for (float& v : a) v = u(rng);
        for (float& v : b) v = u(rng);
        for (float& v : bias) v = 8.0f * u(rng);  // outputs on both sides of every bound
        // A NaN in A makes a row of NaNs: Relu turns them into 0, Clip keeps them.
        a[static_cast<size_t>(rng() % a.size())] = std::numeric_limits<float>::quiet_NaN();
        const bool accumulate = rng() % 2 == 0;
        std::vector<float> c0(static_cast<size_t>(m * n));
        for (float& v : c0) v = u(rng);
        std::vector<float> fused = c0, separate = c0;
        float_ops::SgemmBlockArgs g;
        g.m = m, g.n = n, g.k = k;
        g.a = a.data(), g.lda = k, g.b = b.data(), g.ldb = n, g.ldc = n;
        g.accumulate = accumulate, g.bias = bias.data(), g.workspace = workspace.get();
        g.c = separate.data();
        kernel.fn(g);
        act.Apply(separate.data(), m * n);
        g.c = fused.data();
        g.activation = act;
        kernel.fn(g);
        INFO(kernel.name << " m=" << m << " n=" << n << " k=" << k << " lo=" << act.lo << " hi=" << act.hi);
        REQUIRE(SameBits(fused.data(), separate.data(), fused.size()));
      }
    }
  }
}

TEST_CASE("Every depthwise kernel's fused activation equals the plane followed by the activation, bit for bit",
          "[float_ops]") {
  auto rng = testing::MakeRng("dwconv-activation");
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const auto& kernel : float_ops::DwconvUkernels()) {
    if (!testing::CanRun(kernel.isa, std::string(kernel.name) + " activation")) continue;
    for (int iter = 0; iter < 40; ++iter) {
      float_ops::DwconvPlaneArgs g;
      g.h = 1 + static_cast<int64_t>(testing::RandomSize(rng, 30));
      g.w = 1 + static_cast<int64_t>(testing::RandomSize(rng, 50));
      g.kh = g.kw = iter % 2 == 0 ? 3 : 5;
      g.sh = g.sw = 1 + iter % 3;  // stride 3 takes the scalar fallback of the SIMD kernels
      g.pad_top = g.pad_left = g.kh / 2;
      g.oh = (g.h + 2 * g.pad_top - g.kh) / g.sh + 1;
      g.ow = (g.w + 2 * g.pad_left - g.kw) / g.sw + 1;
      if (g.oh < 1 || g.ow < 1) continue;
      std::vector<float> x(static_cast<size_t>(g.h * g.w)), w(static_cast<size_t>(g.kh * g.kw));
      for (float& v : x) v = 4.0f * u(rng);
      for (float& v : w) v = u(rng);
      if (iter % 4 == 0) x[static_cast<size_t>(rng() % x.size())] = std::numeric_limits<float>::quiet_NaN();
      g.bias = u(rng);
      g.x = x.data();
      g.weights = w.data();
      for (const FusedActivation& act : Activations()) {
        std::vector<float> fused(static_cast<size_t>(g.oh * g.ow)), separate(fused.size());
        g.activation = FusedActivation();
        g.y = separate.data();
        kernel.fn(g);
        act.Apply(separate.data(), static_cast<int64_t>(separate.size()));
        g.activation = act;
        g.y = fused.data();
        kernel.fn(g);
        INFO(kernel.name << " h=" << g.h << " w=" << g.w << " k=" << g.kh << " s=" << g.sh << " lo=" << act.lo
                         << " hi=" << act.hi);
        REQUIRE(SameBits(fused.data(), separate.data(), fused.size()));
      }
    }
  }
}

// A float graph built node by node.
struct GraphBuilder {
  Graph graph{"g"};
  ValueId Input(const std::string& name, const Shape& shape) {
    return graph.AddInput(name, DType::kF32, shape).value();
  }
  ValueId Constant(const std::string& name, Tensor t) { return graph.AddConstant(name, std::move(t)).value(); }
  ValueId Scalar(const std::string& name, float v) { return Constant(name, testing::FloatTensor(Shape{}, {v})); }
  ValueId Node(const std::string& name, FloatOp op, std::vector<ValueId> inputs, AttributeMap attributes = {}) {
    const ValueId y = graph.AddNodeValue(name + "_out").value();
    octet::Node n{name, std::string(FloatOpName(op)), "", std::move(attributes), std::move(inputs), {y}};
    graph.AddNode(std::move(n)).value();
    return y;
  }
};

// Runs `graph` and its fused copy on every tier at 1 and 3 threads; the outputs must have the same bits.
void ExpectSameOutputs(const Graph& graph, const std::vector<Tensor>& feeds, int want_fused) {
  int fused = -1;
  const Graph planned = float_ops::FuseFloatActivations(graph, &fused);
  REQUIRE(fused == want_fused);
  REQUIRE(planned.num_nodes() == graph.num_nodes() - want_fused);
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, std::string("float fusion ") + IsaName(isa))) continue;
    for (int threads : {1, 3}) {
      const Context context = testing::ContextFor(isa, threads);
      auto plain = Executor::Compile(graph, context, testing::FloatRegistry());
      auto fast = Executor::Compile(planned, context, testing::FloatRegistry());
      REQUIRE(plain.ok());
      INFO(fast.status().message());
      REQUIRE(fast.ok());
      auto want = plain->Run(feeds);
      auto got = fast->Run(feeds);
      REQUIRE(want.ok());
      REQUIRE(got.ok());
      REQUIRE(want->size() == got->size());
      for (size_t i = 0; i < want->size(); ++i) {
        INFO(IsaName(isa) << " threads=" << threads << " output " << i);
        REQUIRE((*want)[i].shape() == (*got)[i].shape());
        REQUIRE(
            SameBits((*want)[i].data<float>(), (*got)[i].data<float>(), static_cast<size_t>((*want)[i].NumElements())));
      }
    }
  }
}

AttributeMap ConvAttributes(int64_t k, int64_t stride, int64_t group) {
  AttributeMap a;
  a.Set("kernel_shape", std::vector<int64_t>{k, k});
  a.Set("strides", std::vector<int64_t>{stride, stride});
  a.Set("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
  a.Set("group", group);
  return a;
}

TEST_CASE("The float fusion pass folds Relu and Clip into Conv and Gemm with bit-identical outputs", "[float_ops]") {
  auto rng = testing::MakeRng("float-fusion-graph");
  GraphBuilder b;
  const ValueId x = b.Input("x", Shape{1, 8, 15, 13});
  // A 3x3 im2col conv -> ReLU6, a depthwise conv -> ReLU6, a 1x1 conv -> Relu, a strided 3x3 conv -> Clip with a
  // min only, then Flatten -> Gemm -> Relu (the MobileNetV2 / ResNet patterns).
  const ValueId c1 = b.Node("c1", FloatOp::kConv,
                            {x, b.Constant("w1", testing::RandomTensor(rng, Shape{16, 8, 3, 3})),
                             b.Constant("b1", testing::RandomTensor(rng, Shape{16}, -3.0f, 3.0f))},
                            ConvAttributes(3, 1, 1));
  const ValueId r1 = b.Node("r1", FloatOp::kClip, {c1, b.Scalar("zero", 0.0f), b.Scalar("six", 6.0f)});
  const ValueId c2 = b.Node("c2", FloatOp::kConv,
                            {r1, b.Constant("w2", testing::RandomTensor(rng, Shape{16, 1, 3, 3}, -2.0f, 2.0f)),
                             b.Constant("b2", testing::RandomTensor(rng, Shape{16}))},
                            ConvAttributes(3, 2, 16));
  const ValueId r2 = b.Node("r2", FloatOp::kClip, {c2, b.Scalar("zero2", 0.0f), b.Scalar("six2", 6.0f)});
  const ValueId c3 =
      b.Node("c3", FloatOp::kConv, {r2, b.Constant("w3", testing::RandomTensor(rng, Shape{24, 16, 1, 1}))},
             ConvAttributes(1, 1, 1));
  const ValueId r3 = b.Node("r3", FloatOp::kRelu, {c3});
  const ValueId c4 = b.Node("c4", FloatOp::kConv,
                            {r3, b.Constant("w4", testing::RandomTensor(rng, Shape{8, 24, 3, 3})),
                             b.Constant("b4", testing::RandomTensor(rng, Shape{8}))},
                            ConvAttributes(3, 2, 1));
  const ValueId r4 = b.Node("r4", FloatOp::kClip, {c4, b.Scalar("lo", -0.5f), kNoValue});
  AttributeMap flat;
  flat.Set("axis", int64_t{1});
  const ValueId f = b.Node("flat", FloatOp::kFlatten, {r4}, flat);
  AttributeMap gemm;
  gemm.Set("transB", int64_t{1});
  const ValueId g = b.Node("fc", FloatOp::kGemm,
                           {f, b.Constant("wf", testing::RandomTensor(rng, Shape{10, 8 * 4 * 4})),
                            b.Constant("bf", testing::RandomTensor(rng, Shape{10}))},
                           gemm);
  const ValueId out = b.Node("r5", FloatOp::kRelu, {g});
  REQUIRE(b.graph.AddOutput(out).ok());
  Tensor input = testing::RandomTensor(rng, Shape{1, 8, 15, 13}, -2.0f, 2.0f);
  SECTION("finite inputs") { ExpectSameOutputs(b.graph, {input}, 5); }
  SECTION("a NaN input: Relu makes 0 of it, Clip keeps it") {
    input.data<float>()[37] = std::numeric_limits<float>::quiet_NaN();
    ExpectSameOutputs(b.graph, {input}, 5);
  }
  SECTION("the fused nodes say so in their kernel names") {
    const Graph planned = float_ops::FuseFloatActivations(b.graph);
    auto exec = Executor::Compile(planned, Context::ForIsas(DetectedIsas()), testing::FloatRegistry());
    REQUIRE(exec.ok());
    CHECK(exec->kernel_name(0).find("+clip") != std::string::npos);
    CHECK(exec->kernel_name(1).find("+clip") != std::string::npos);
    CHECK(exec->kernel_name(2).find("+relu") != std::string::npos);
    CHECK(exec->kernel_name(5).find("+relu") != std::string::npos);
  }
}

TEST_CASE("The float fusion pass leaves alone what it cannot fuse", "[float_ops]") {
  auto rng = testing::MakeRng("float-fusion-not");
  GraphBuilder b;
  const ValueId x = b.Input("x", Shape{1, 4, 9, 9});
  const ValueId lo = b.Input("lo", Shape{});
  // c1's output also feeds an Add: the Relu stays.
  const ValueId c1 = b.Node("c1", FloatOp::kConv, {x, b.Constant("w1", testing::RandomTensor(rng, Shape{4, 4, 3, 3}))},
                            ConvAttributes(3, 1, 1));
  const ValueId r1 = b.Node("r1", FloatOp::kRelu, {c1});
  const ValueId s = b.Node("s", FloatOp::kAdd, {r1, c1});
  // c2's Clip has a min known only at run time.
  const ValueId c2 = b.Node("c2", FloatOp::kConv, {s, b.Constant("w2", testing::RandomTensor(rng, Shape{4, 4, 3, 3}))},
                            ConvAttributes(3, 1, 1));
  const ValueId r2 = b.Node("r2", FloatOp::kClip, {c2, lo, b.Scalar("hi", 1.0f)});
  // c3 is a graph output itself.
  const ValueId c3 = b.Node("c3", FloatOp::kConv, {r2, b.Constant("w3", testing::RandomTensor(rng, Shape{4, 4, 1, 1}))},
                            ConvAttributes(1, 1, 1));
  const ValueId r3 = b.Node("r3", FloatOp::kRelu, {c3});
  // c4's weight is an input (not constant), and a Relu after a Relu has no Conv before it.
  const ValueId w4 = b.Input("w4", Shape{4, 4, 1, 1});
  const ValueId c4 = b.Node("c4", FloatOp::kConv, {r3, w4}, ConvAttributes(1, 1, 1));
  const ValueId r4 = b.Node("r4", FloatOp::kRelu, {c4});
  const ValueId r5 = b.Node("r5", FloatOp::kRelu, {r4});
  REQUIRE(b.graph.AddOutput(c3).ok());
  REQUIRE(b.graph.AddOutput(r5).ok());
  const std::vector<Tensor> feeds = {testing::RandomTensor(rng, Shape{1, 4, 9, 9}),
                                     testing::FloatTensor(Shape{}, {-0.25f}),
                                     testing::RandomTensor(rng, Shape{4, 4, 1, 1})};
  ExpectSameOutputs(b.graph, feeds, 0);
  // A Clip whose min exceeds its max is left to report the error itself.
  GraphBuilder bad;
  const ValueId bx = bad.Input("x", Shape{1, 2, 4, 4});
  const ValueId bc =
      bad.Node("c", FloatOp::kConv, {bx, bad.Constant("w", testing::RandomTensor(rng, Shape{2, 2, 1, 1}))},
               ConvAttributes(1, 1, 1));
  REQUIRE(
      bad.graph.AddOutput(bad.Node("clip", FloatOp::kClip, {bc, bad.Scalar("lo", 2.0f), bad.Scalar("hi", 1.0f)})).ok());
  int fused = -1;
  const Graph planned = float_ops::FuseFloatActivations(bad.graph, &fused);
  CHECK(fused == 0);
  auto exec = Executor::Compile(planned, Context::ForIsas(DetectedIsas()), testing::FloatRegistry());
  REQUIRE_FALSE(exec.ok());
  CHECK(exec.status().message().find("must not exceed") != std::string::npos);
}

TEST_CASE("Fused-activation attributes with bad values are refused with their names", "[float_ops]") {
  AttributeMap a;
  a.Set(float_ops::kFusedActivationAttribute, "Sigmoid");
  auto r = float_ops::ReadFusedActivation(a);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("fused_activation") != std::string::npos);
  a.Set(float_ops::kFusedActivationAttribute, std::string(FloatOpName(FloatOp::kClip)));
  a.Set(float_ops::kFusedMinAttribute, 3.0f);
  a.Set(float_ops::kFusedMaxAttribute, 1.0f);
  r = float_ops::ReadFusedActivation(a);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("fused_min") != std::string::npos);
  a.Erase(float_ops::kFusedMaxAttribute);
  r = float_ops::ReadFusedActivation(a);
  REQUIRE(r.ok());
  CHECK(r->kind == FusedActivation::Kind::kClip);
  CHECK(r->lo == 3.0f);
  CHECK(std::isinf(r->hi));
}

}  // namespace
}  // namespace octet

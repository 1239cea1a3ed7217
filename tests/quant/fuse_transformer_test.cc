// Decomposed LayerNorm and GELU chains (as torch 1.13, tf2onnx and paddle2onnx export them) fuse into one
// LayerNormalization / Gelu node that computes the same values within float rounding; chains whose intermediate values
// escape, or whose constants differ, stay as they are.
#include "quant/fuse_transformer.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "core/builder.h"
#include "core/executor.h"
#include "quant/fuse.h"
#include "quant/fused_ops.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::RandomTensor;

const AttributeMap kLastAxisMean = {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}};

struct LnVariant {
  std::string name;
  bool square_by_mul = false;  // Mul(d, d) rather than Pow(d, 2)
  bool reciprocal = false;     // Mul(d, Reciprocal(s)) rather than Div(d, s)
  bool gamma = true, beta = true;
};

// x [N, T, D] -> decomposed LayerNorm -> Relu (a consumer after the chain).
Graph DecomposedLayerNorm(const LnVariant& v, uint64_t seed, int64_t d_model) {
  GraphBuilder b("ln", seed);
  const ValueId x = b.Input("x", DType::kF32, Shape{2, 5, d_model});
  const ValueId mean = b.Op1("ReduceMean", "ln.mean", {x}, kLastAxisMean);
  const ValueId d = b.Sub("ln.sub", x, mean);
  const ValueId sq =
      v.square_by_mul ? b.Mul("ln.sq", d, d) : b.Op1("Pow", "ln.pow", {d, b.Constant("two", b.Filled(Shape{}, 2.0f))});
  const ValueId var = b.Op1("ReduceMean", "ln.var", {sq}, kLastAxisMean);
  const ValueId s = b.Op1("Sqrt", "ln.sqrt", {b.Add("ln.add_eps", var, b.Constant("eps", b.Filled(Shape{}, 1e-5f)))});
  ValueId y = v.reciprocal ? b.Mul("ln.div", d, b.Op1("Reciprocal", "ln.rec", {s})) : b.Div("ln.div", d, s);
  if (v.gamma) y = b.Mul("ln.gamma", y, b.Constant("ln.weight", b.UniformTensor(Shape{d_model}, 1.0f)));
  if (v.beta) y = b.Add("ln.beta", b.Constant("ln.bias", b.UniformTensor(Shape{d_model}, 1.0f)), y);
  b.Output(b.ReLU("relu", y));
  return std::move(b).Build().value();
}

Tensor Run(const Graph& g, const Tensor& x) {
  return testing::RunFirstOutput(g, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1), QuantFloatRegistry(), x);
}

float MaxAbsDiff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  float m = 0.0f;
  for (int64_t i = 0; i < a.NumElements(); ++i) m = std::max(m, std::fabs(a.data<float>()[i] - b.data<float>()[i]));
  return m;
}

int CountOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op_type == op ? 1 : 0;
  return n;
}

TEST_CASE(
    "Decomposed LayerNorm variants fuse into LayerNormalization, equal "
    "within float rounding",
    "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("fuse layernorm");
  for (const LnVariant& v :
       {LnVariant{"torch"}, LnVariant{"mul square", true}, LnVariant{"reciprocal", false, true},
        LnVariant{"no beta", false, false, true, false}, LnVariant{"beta only", true, true, false, true}}) {
    INFO(v.name);
    const Graph g = DecomposedLayerNorm(v, rng(), 64);
    Graph fused = g;
    auto names = FuseLayerNorms(fused);
    REQUIRE(names.ok());
    REQUIRE(names->size() == 1);
    CHECK(CountOps(fused, "LayerNormalization") == 1);
    CHECK(CountOps(fused, "ReduceMean") == 0);
    CHECK(CountOps(fused, "Sqrt") == 0);
    const Node& ln = fused.node(fused.FindNode(names->front()));
    CHECK(ln.attributes.GetFloat("epsilon").value() == 1e-5f);
    const Tensor x = RandomTensor(rng, Shape{2, 5, 64}, -4.0f, 4.0f);
    const Tensor want = Run(g, x), got = Run(fused, x);
    // Outputs are O(1..3): a few float ulps of the mean / variance order of summation.
    CHECK(MaxAbsDiff(want, got) <= 2e-5f);
  }
}

TEST_CASE(
    "A LayerNorm chain whose intermediate is used elsewhere, or over "
    "another axis, does not fuse",
    "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("fuse layernorm negative");
  {
    Graph g = DecomposedLayerNorm(LnVariant{"torch"}, rng(), 16);
    // Expose the centred value as a second graph output: the chain must stay.
    const ValueId d = g.node(g.FindNode("ln.sub")).outputs[0];
    g.mutable_outputs().push_back(d);
    auto names = FuseLayerNorms(g);
    REQUIRE(names.ok());
    CHECK(names->empty());
  }
  {
    Graph g = DecomposedLayerNorm(LnVariant{"torch"}, rng(), 16);
    g.mutable_node(g.FindNode("ln.var")).attributes.Set("axes", std::vector<int64_t>{1});
    auto names = FuseLayerNorms(g);
    REQUIRE(names.ok());
    CHECK(names->empty());
  }
}

enum class GeluForm { kErfDivTorch, kErfMulHalfFirst, kErfHalfOnSum, kTanhPow, kTanhMulCube };

// x [2, 33] -> Linear -> decomposed GELU -> Linear.
Graph DecomposedGelu(GeluForm form, uint64_t seed) {
  GraphBuilder b("gelu", seed);
  const ValueId in = b.Input("x", DType::kF32, Shape{2, 33});
  const ValueId x = b.Linear("fc1", in, 33, 40);
  auto c = [&](const std::string& name, float v) { return b.Constant(name, b.Filled(Shape{}, v)); };
  ValueId f = kNoValue;
  if (form == GeluForm::kTanhPow || form == GeluForm::kTanhMulCube) {
    const ValueId cube = form == GeluForm::kTanhPow ? b.Op1("Pow", "g.pow", {x, c("three", 3.0f)})
                                                    : b.Mul("g.cube", x, b.Mul("g.square", x, x));
    const ValueId inner = b.Add("g.inner", x, b.Mul("g.cubic", c("k", 0.044715f), cube));
    f = b.Op1("Tanh", "g.tanh", {b.Mul("g.scale", inner, c("s", 0.7978845608f))});
  } else if (form == GeluForm::kErfDivTorch) {
    f = b.Op1("Erf", "g.erf", {b.Div("g.div", x, c("sqrt2", 1.4142135381698608f))});
  } else {
    f = b.Op1("Erf", "g.erf", {b.Mul("g.div", c("rsqrt2", 0.70710678f), x)});
  }
  const ValueId a = b.Add("g.one", f, c("one", 1.0f));
  ValueId y = kNoValue;
  if (form == GeluForm::kErfMulHalfFirst) {
    y = b.Mul("g.out", b.Mul("g.half", x, c("half", 0.5f)), a);
  } else if (form == GeluForm::kErfHalfOnSum) {
    y = b.Mul("g.out", x, b.Mul("g.half", a, c("half", 0.5f)));
  } else {
    y = b.Mul("g.out", b.Mul("g.x", x, a), c("half", 0.5f));
  }
  b.Output(b.Linear("fc2", y, 40, 7));
  return std::move(b).Build().value();
}

TEST_CASE(
    "Decomposed GELU (erf and tanh forms) fuses into Gelu, equal within "
    "float rounding",
    "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("fuse gelu");
  for (GeluForm form : {GeluForm::kErfDivTorch, GeluForm::kErfMulHalfFirst, GeluForm::kErfHalfOnSum, GeluForm::kTanhPow,
                        GeluForm::kTanhMulCube}) {
    INFO("form " << static_cast<int>(form));
    const Graph g = DecomposedGelu(form, rng());
    Graph fused = g;
    auto names = FuseGelus(fused);
    REQUIRE(names.ok());
    REQUIRE(names->size() == 1);
    CHECK(names->front() == "g.out");
    const Node& gelu = fused.node(fused.FindNode("g.out"));
    CHECK(gelu.op_type == "Gelu");
    const bool tanh = form == GeluForm::kTanhPow || form == GeluForm::kTanhMulCube;
    CHECK(gelu.attributes.GetString("approximate", "none").value() == (tanh ? "tanh" : "none"));
    CHECK(CountOps(fused, "Erf") + CountOps(fused, "Tanh") == 0);
    CHECK(fused.num_nodes() == 3);  // fc1, Gelu, fc2
    const Tensor x = RandomTensor(rng, Shape{2, 33}, -3.0f, 3.0f);
    CHECK(MaxAbsDiff(Run(g, x), Run(fused, x)) <= 2e-5f);
  }
}

TEST_CASE("A GELU chain with another constant does not fuse", "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("fuse gelu negative");
  Graph g = DecomposedGelu(GeluForm::kErfDivTorch, rng());
  g.mutable_value(g.FindValue("half")).data.data<float>()[0] = 0.25f;
  auto names = FuseGelus(g);
  REQUIRE(names.ok());
  CHECK(names->empty());
  CHECK(CountOps(g, "Erf") == 1);
}

TEST_CASE("Fuse reports the LayerNorm and GELU chains it fused", "[quant]") {
  std::mt19937_64 rng = testing::MakeRng("fuse report");
  Graph g = DecomposedLayerNorm(LnVariant{"torch"}, rng(), 8);
  auto report = Fuse(g);
  REQUIRE(report.ok());
  CHECK(report->fused_layer_norms == std::vector<std::string>{"ln.beta"});
  CHECK(report->fused_gelus.empty());
}

}  // namespace
}  // namespace octet

// FuseInt8Activations (quant/fuse_int8_activation.h): the QClamps of a converted graph fold into the QConv, QGemm
// and QAdd that feed them, the ones that cannot fold stay, and the fused graph's outputs equal the unfused graph's
// bit for bit on every ISA this machine runs, at 1 and 3 threads, for the fp32 and q31 output stages.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/builder.h"
#include "core/executor.h"
#include "core/op_table.h"
#include "ops/float/registry.h"
#include "ops/reference/fused_activation_reference.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fuse_int8_activation.h"
#include "quant/prepare.h"
#include "quant/qconfig_mapping.h"
#include "quant/quantized_registry.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::RandomTensor;

constexpr int64_t kFuseC = 3, kFuseH = 6, kFuseW = 6, kFuseO = 8, kFuseClasses = 10;

ValueId Clip(GraphBuilder& b, const std::string& name, ValueId x, float lo, float hi) {
  const float lo_v[] = {lo}, hi_v[] = {hi};
  return b.Op1("Clip", name,
               {x, b.Constant(name + ".min", Tensor::FromValues<float>(Shape{}, lo_v).value()),
                b.Constant(name + ".max", Tensor::FromValues<float>(Shape{}, hi_v).value())});
}

// conv1 -> ReLU6 -> conv2 -> Clip(-0.5, 0.8) -> conv3 -> (ReLU6, and conv3's output again) -> Add -> Clip(0, 4)
// -> Flatten -> fc -> Clip(fc_lo, fc_hi). conv3's output has two consumers, so its ReLU6 cannot fold.
Graph Model(uint64_t seed, float fc_lo, float fc_hi) {
  GraphBuilder b("fuse_int8_activation", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, kFuseC, kFuseH, kFuseW});
  Conv2dOptions c;
  c.in_channels = kFuseC;
  c.out_channels = kFuseO;
  c.padding = {1, 1};
  x = b.ReLU6("relu6", b.Conv2d("conv1", x, c));
  c.in_channels = kFuseO;
  x = Clip(b, "clip", b.Conv2d("conv2", x, c), -0.5f, 0.8f);
  const ValueId c3 = b.Conv2d("conv3", x, c);
  x = b.Add("add", c3, b.ReLU6("relu6_shared", c3));
  x = Clip(b, "add_clip", x, 0.0f, 4.0f);
  x = b.Flatten("flatten", x);
  x = Clip(b, "fc_clip", b.Linear("fc", x, kFuseO * kFuseH * kFuseW, kFuseClasses), fc_lo, fc_hi);
  b.Output(x);
  return std::move(b).Build().value();
}

std::map<std::string, int> CountOps(const Graph& g) {
  std::map<std::string, int> n;
  for (const Node& node : g.nodes()) ++n[node.op_type];
  return n;
}

const Node& FuseNodeNamed(const Graph& g, const std::string& name) {
  const int i = g.FindNode(name);
  REQUIRE(i >= 0);
  return g.node(i);
}

// Runs `g` on x; when `changed` is given, counts per QClamp node how many elements it moved.
Tensor Run(const Graph& g, const Context& context, const Tensor& x, std::map<std::string, int64_t>* changed) {
  CompileOptions co;
  co.input_shapes = {{"x", x.shape()}};
  auto exec = Executor::Compile(g, context, QuantizedGraphRegistry(), co);
  INFO(exec.status().message());
  REQUIRE(exec.ok());
  RunOptions run;
  if (changed != nullptr) {
    run.after_node.push_back([&](const NodeCall& call) -> Status {
      if (!IsInt8Op(call.node, Int8Op::kQClamp)) return OkStatus();
      const auto* in = static_cast<const uint8_t*>(call.inputs[0].raw_data());
      const auto* out = static_cast<const uint8_t*>(call.outputs[0].raw_data());
      for (int64_t i = 0; i < call.outputs[0].NumElements(); ++i) (*changed)[call.node.name] += in[i] != out[i];
      return OkStatus();
    });
  }
  auto y = exec->Run(std::vector<Tensor>{x}, run);
  INFO(y.status().message());
  REQUIRE(y.ok());
  return (*y)[0];
}

TEST_CASE("Int8 activations fold into their producers and the outputs stay the same bit for bit", "[convert]") {
  std::mt19937_64 rng = testing::MakeRng("fuse_int8_activation");
  const uint64_t seed = rng();
  std::vector<std::vector<Tensor>> batches;
  for (int i = 0; i < 3; ++i) batches.push_back({RandomTensor(rng, Shape{4, kFuseC, kFuseH, kFuseW}, -2.0f, 2.0f)});
  // The last clamp keeps the middle half of fc's float range, so it clips whatever the seeded weights give.
  const Graph probe = Model(seed, -1.0f, 1.0f);
  const std::string fc_out = probe.value(FuseNodeNamed(probe, "fc").outputs[0]).name;
  const auto [fc_min, fc_max] =
      testing::MinMaxOf(testing::RunAndRecord(probe, FloatOpRegistry(), batches, {fc_out})[fc_out]);
  const float fc_lo = fc_min + 0.25f * (fc_max - fc_min), fc_hi = fc_max - 0.25f * (fc_max - fc_min);
  const Graph original = Model(seed, fc_lo, fc_hi);
  auto prepared = Prepare(original, GetDefaultQConfigMapping("x86").value());
  INFO(prepared.status().message());
  REQUIRE(prepared.ok());
  testing::CalibrateQuietly(*prepared, batches);
  const Tensor x = RandomTensor(rng, Shape{8, kFuseC, kFuseH, kFuseW}, -2.5f, 2.5f);

  for (NumericsProfile profile : {NumericsProfile::kReference, NumericsProfile::kTflite}) {
    INFO("profile " << NumericsProfileName(profile));
    ConvertOptions options;
    options.profile = profile;
    options.fuse_activations = false;
    auto unfused = Convert(*prepared, options);
    INFO(unfused.status().message());
    REQUIRE(unfused.ok());
    options.fuse_activations = true;
    auto fused = Convert(*prepared, options);
    INFO(fused.status().message());
    REQUIRE(fused.ok());

    CHECK(CountOps(*unfused)[std::string(Int8OpName(Int8Op::kQClamp))] == 5);
    CHECK(CountOps(*fused)[std::string(Int8OpName(Int8Op::kQClamp))] == 1);
    CHECK(IsInt8Op(FuseNodeNamed(*fused, "relu6_shared"), Int8Op::kQClamp));
    const std::vector<std::pair<std::string, std::pair<float, float>>> clips = {
        {"conv1", {0.0f, 6.0f}}, {"conv2", {-0.5f, 0.8f}}, {"add", {0.0f, 4.0f}}, {"fc", {fc_lo, fc_hi}}};
    for (const auto& [name, bounds] : clips) {
      INFO("node " << name);
      const Node& n = FuseNodeNamed(*fused, name);
      CHECK(n.attributes.GetString("activation").value() == "Clip");
      CHECK(n.attributes.GetFloat(reference::kActivationMinAttribute).value() == bounds.first);
      CHECK(n.attributes.GetFloat(reference::kActivationMaxAttribute).value() == bounds.second);
    }
    // The fused producers write the clamps' outputs, under the clamps' names.
    CHECK(fused->value(FuseNodeNamed(*fused, "conv1").outputs[0]).name == "relu6");
    CHECK(fused->value(FuseNodeNamed(*fused, "fc").outputs[0]).name ==
          unfused->value(FuseNodeNamed(*unfused, "fc_clip").outputs[0]).name);

    // Not vacuous: every clamp that folds moves some elements, and the output is neither constant nor saturated.
    std::map<std::string, int64_t> changed;
    const Tensor expect = Run(*unfused, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1), x, &changed);
    for (const char* clamp : {"relu6", "clip", "add_clip", "fc_clip"}) {
      INFO("clamp " << clamp);
      CHECK(changed[clamp] > 0);
    }
    const std::set<float> distinct(expect.data<float>(), expect.data<float>() + expect.NumElements());
    CHECK(distinct.size() > 10);

    for (Isa isa : testing::CompiledIsaList()) {
      if (!testing::CanRun(isa, "fused int8 activations")) continue;
      for (int threads : {1, 3}) {
        INFO("isa " << IsaName(isa) << ", " << threads << " threads");
        const Context context = testing::ContextFor(isa, threads);
        const Tensor y = Run(*fused, context, x, nullptr);
        REQUIRE(y.NumElements() == expect.NumElements());
        for (int64_t i = 0; i < y.NumElements(); ++i) {
          INFO("element " << i);
          REQUIRE(y.data<float>()[i] == expect.data<float>()[i]);
        }
      }
    }
  }
}

// A QConv (with `conv_attributes`) feeding a QClamp; `second_use` makes the QConv's output a graph output too.
Graph ConvClamp(AttributeMap conv_attributes, AttributeMap clamp_attributes, bool second_use) {
  Graph g("clamp");
  const QParams q = QParams::PerTensor(DType::kU8, 0.05f, 10).value();
  const QParams wq = QParams::PerTensor(DType::kS8, 0.01f, 0).value();
  const ValueId x = g.AddInput("x", DType::kU8, Shape{1, 1, 2, 2}).value();
  g.mutable_value(x).qparams = q;
  const int8_t w_v[] = {1};
  const ValueId w = g.AddConstant("w", Tensor::FromValues<int8_t>(Shape{1, 1, 1, 1}, w_v).value()).value();
  g.mutable_value(w).qparams = wq;
  const ValueId c = g.AddNodeValue("c", DType::kU8).value();
  g.mutable_value(c).qparams = q;
  const ValueId y = g.AddNodeValue("y", DType::kU8).value();
  g.mutable_value(y).qparams = q;
  const std::string domain(kInt8Domain), qconv(Int8OpName(Int8Op::kQConv)), qclamp(Int8OpName(Int8Op::kQClamp));
  REQUIRE(g.AddNode(Node{"conv", qconv, domain, std::move(conv_attributes), {x, w}, {c}}).ok());
  REQUIRE(g.AddNode(Node{"clamp", qclamp, domain, std::move(clamp_attributes), {c}, {y}}).ok());
  REQUIRE(g.AddOutput(y).ok());
  if (second_use) REQUIRE(g.AddOutput(c).ok());
  return g;
}

TEST_CASE("FuseInt8Activations combines bounds and leaves clamps it cannot fold", "[convert]") {
  AttributeMap relu;
  relu.Set("activation", "Relu");
  AttributeMap min0, relu6, neg;
  min0.Set("min", 0.0f);
  relu6.Set("min", 0.0f);
  relu6.Set("max", 6.0f);
  neg.Set("min", -3.0f);
  neg.Set("max", -1.0f);

  SECTION("a Relu clamp on a plain producer becomes activation Relu") {
    Graph g = ConvClamp({}, min0, false);
    REQUIRE(FuseInt8Activations(g).value() == 1);
    REQUIRE(g.num_nodes() == 1);
    CHECK(g.node(0).attributes.GetString("activation").value() == "Relu");
    CHECK(g.value(g.node(0).outputs[0]).name == "y");
  }
  SECTION("ReLU6 after a fused Relu keeps [0, 6]") {
    Graph g = ConvClamp(relu, relu6, false);
    REQUIRE(FuseInt8Activations(g).value() == 1);
    CHECK(g.node(0).attributes.GetString("activation").value() == "Clip");
    CHECK(g.node(0).attributes.GetFloat(reference::kActivationMinAttribute).value() == 0.0f);
    CHECK(g.node(0).attributes.GetFloat(reference::kActivationMaxAttribute).value() == 6.0f);
  }
  SECTION("disjoint bounds (a Relu, then a clamp below 0) stay two nodes") {
    Graph g = ConvClamp(relu, neg, false);
    CHECK(FuseInt8Activations(g).value() == 0);
    CHECK(g.num_nodes() == 2);
  }
  SECTION("a producer output with another use stays") {
    Graph g = ConvClamp({}, relu6, true);
    CHECK(FuseInt8Activations(g).value() == 0);
    CHECK(g.num_nodes() == 2);
  }
}

TEST_CASE("Fused activation bounds are QClamp's codes of the real bounds", "[int8_ops]") {
  // scale 0.05, zero point 10, u8: 0 -> 10, 6 -> 130, -1 -> -10 clamped to 0, 20 -> 410 clamped to 255.
  AttributeMap a;
  CHECK(reference::FusedActivationBounds(a, 0.05f, 10, 0, 255).value().lo == 0);
  a.Set("activation", "Relu");
  CHECK(reference::FusedActivationBounds(a, 0.05f, 10, 0, 255).value().lo == 10);
  a.Set("activation", "Clip");
  a.Set(reference::kActivationMinAttribute, 0.0f);
  a.Set(reference::kActivationMaxAttribute, 6.0f);
  const auto b = reference::FusedActivationBounds(a, 0.05f, 10, 0, 255).value();
  CHECK(b.lo == 10);
  CHECK(b.hi == 130);
  a.Set(reference::kActivationMinAttribute, -1.0f);
  a.Set(reference::kActivationMaxAttribute, 20.0f);
  const auto c = reference::FusedActivationBounds(a, 0.05f, 10, 0, 255).value();
  CHECK(c.lo == 0);
  CHECK(c.hi == 255);
  a.Set(reference::kActivationMinAttribute, 2.0f);
  a.Set(reference::kActivationMaxAttribute, 1.0f);
  auto bad = reference::FusedActivationBounds(a, 0.05f, 10, 0, 255);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("activation_min") != std::string::npos);
  a.Set("activation", "Tanh");
  CHECK_FALSE(reference::FusedActivationBounds(a, 0.05f, 10, 0, 255).ok());
}

}  // namespace
}  // namespace octet

// The NHWC layout pass (ops/int8/nhwc_layout.h): which values it keeps NHWC, and graphs run with it equal the same
// graphs without it byte for byte, on every ISA tier this machine runs at 1, 2 and 3 threads. The graph covers every
// path of the operators that take the layout: QConv with NCHW or NHWC input and output, in place or staged (asymmetric
// pads, a strided 1x1), depthwise and im2col; QAdd same-shape and broadcast over the stored shapes; QMaxPool with pads;
// QGlobalAveragePool and QGlobalMaxPool; a graph output in the middle of the region; u8 and s8 activations.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/executor.h"
#include "ops/int8/nhwc_layout.h"
#include "tests/ops/int8/int8_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::PerTensorQ;
using testing::RandomBytes;

// Builds an int8 graph node by node: activations per tensor with random-ish qparams, weights s8 per channel.
class QGraphBuilder {
 public:
  QGraphBuilder(DType dtype, std::mt19937_64& rng) : dtype_(dtype), rng_(rng) {}

  ValueId Input(const Shape& shape) {
    const ValueId id = g_.AddInput("x", dtype_, shape).value();
    g_.mutable_value(id).qparams = ActivationQ();
    return id;
  }

  // QConv of x (c_in channels) to m channels with a k x k kernel; pads [t, l, b, r].
  ValueId Conv(ValueId x, int64_t c_in, int64_t m, int64_t k, int64_t stride, std::vector<int64_t> pads,
               int64_t group = 1) {
    const Shape w_shape{m, c_in / group, k, k};
    Tensor w = RandomBytes(rng_, DType::kS8, w_shape);
    const ValueId wid = g_.AddConstant(Name("w"), w).value();
    g_.mutable_value(wid).qparams = testing::WeightQParams(rng_, true, m, 0, false);
    AttributeMap at;
    at.Set("kernel_shape", std::vector<int64_t>{k, k});
    at.Set("strides", std::vector<int64_t>{stride, stride});
    at.Set("pads", std::move(pads));
    at.Set("group", group);
    const float spread = 0.05f * 0.004f * 74.0f * 74.0f * std::sqrt(static_cast<float>(c_in / group * k * k));
    return Add("QConv", {x, wid}, std::move(at), PerTensorQ(dtype_, spread / 40.0f, ZeroPoint()));
  }

  ValueId QAdd(ValueId a, ValueId b) { return Add("QAdd", {a, b}, {}, ActivationQ()); }

  // 3x3 stride 2 pads 1 (the generic path) or 2x2 stride 2 (the tiling path on even sizes).
  ValueId MaxPool(ValueId x, bool two_by_two) {
    AttributeMap at;
    const int64_t k = two_by_two ? 2 : 3, pad = two_by_two ? 0 : 1;
    at.Set("kernel_shape", std::vector<int64_t>{k, k});
    at.Set("strides", std::vector<int64_t>{2, 2});
    at.Set("pads", std::vector<int64_t>{pad, pad, pad, pad});
    return Add("QMaxPool", {x}, std::move(at), *g_.value(x).qparams);
  }

  ValueId GlobalPool(ValueId x, bool is_max) {
    return Add(is_max ? "QGlobalMaxPool" : "QGlobalAveragePool", {x}, {},
               is_max ? *g_.value(x).qparams : ActivationQ());
  }

  void Output(ValueId id) { REQUIRE(g_.AddOutput(id).ok()); }
  const Graph& graph() const { return g_; }

 private:
  QParams ActivationQ() { return PerTensorQ(dtype_, 0.05f + 0.01f * static_cast<float>(rng_() % 5), ZeroPoint()); }
  int32_t ZeroPoint() {
    return dtype_ == DType::kU8 ? 100 + static_cast<int32_t>(rng_() % 40) : static_cast<int32_t>(rng_() % 21) - 10;
  }
  std::string Name(const char* what) { return fmt::format("{}{}", what, counter_++); }

  ValueId Add(const char* op, std::vector<ValueId> inputs, AttributeMap at, const QParams& y_qp) {
    Node n;
    n.name = Name(op);
    n.op_type = op;
    n.domain = "octet";
    n.attributes = std::move(at);
    n.inputs = std::move(inputs);
    const ValueId y = g_.AddNodeValue(Name("v"), dtype_).value();
    g_.mutable_value(y).qparams = y_qp;
    n.outputs = {y};
    REQUIRE(g_.AddNode(std::move(n)).ok());
    return y;
  }

  Graph g_{"nhwc"};
  DType dtype_;
  std::mt19937_64& rng_;
  int counter_ = 0;
};

struct BuiltGraph {
  Graph graph;
  Shape input;
};

// x -> stem conv (NCHW in) -> 2x2 max pool -> {asymmetric-pad conv, depthwise conv} -> add -> strided 1x1 -> a
// "whole image" conv [N, 8, 1, 1] added back by broadcast -> 1x1 (NCHW out, a graph output), the global average pool
// and a 3x3 max pool then the global max pool; with `middle_output`, the depthwise conv's output is a graph output too
// (so that its QAdd group stays NCHW).
BuiltGraph MakeGraph(DType dtype, std::mt19937_64& rng, bool middle_output) {
  QGraphBuilder b(dtype, rng);
  const Shape input{2, 5, 14, 12};
  const ValueId x = b.Input(input);
  const ValueId stem = b.Conv(x, 5, 16, 3, 1, {1, 1, 1, 1});                  // [2,16,14,12]
  const ValueId pool = b.MaxPool(stem, true);                                 // [2,16,7,6]
  const ValueId asym = b.Conv(pool, 16, 16, 3, 1, {2, 1, 0, 1});              // [2,16,7,6]
  const ValueId dw = b.Conv(pool, 16, 16, 3, 1, {1, 1, 1, 1}, /*group=*/16);  // [2,16,7,6]
  const ValueId sum = b.QAdd(asym, dw);
  const ValueId sub = b.Conv(sum, 16, 8, 1, 2, {0, 0, 0, 0});      // [2,8,4,3]
  const ValueId whole = b.Conv(sub, 8, 8, 3, 1, {0, 0, 0, 1});     // [2,8,2,2]
  const ValueId whole2 = b.Conv(whole, 8, 8, 2, 1, {0, 0, 0, 0});  // [2,8,1,1]
  const ValueId bsum = b.QAdd(sub, whole2);                        // broadcast
  b.Output(b.Conv(bsum, 8, 4, 1, 1, {0, 0, 0, 0}));
  b.Output(b.GlobalPool(bsum, false));
  b.Output(b.GlobalPool(b.MaxPool(bsum, false), true));  // [2,8,2,2] -> [2,8,1,1]
  if (middle_output) b.Output(dw);
  return BuiltGraph{b.graph(), input};
}

int64_t IntAttribute(const Node& n, const char* name) { return n.attributes.GetInt(name, 0).value(); }

TEST_CASE("The NHWC layout pass keeps the int8 region NHWC and stops at graph outputs", "[int8_ops]") {
  auto rng = testing::MakeRng("nhwc-layout-plan");
  for (const bool middle_output : {false, true}) {
    const BuiltGraph built = MakeGraph(DType::kU8, rng, middle_output);
    int nhwc_values = 0;
    const Graph g = int8_ops::PlanNhwcLayout(built.graph, &nhwc_values);
    // Nodes in order: stem, pool, asym, dw, add, sub, whole, whole2, badd, conv out, gap, pool, gmp.
    const Node& stem = g.node(0);
    CHECK(IntAttribute(stem, int8_ops::kNhwcInputAttribute) == 0);  // x is a graph input
    CHECK(IntAttribute(stem, int8_ops::kNhwcOutputAttribute) == 1);
    CHECK(IntAttribute(g.node(1), int8_ops::kNhwcAttribute) == 1);
    // dw is a graph output with middle_output: its QAdd group (asym, dw, sum) stays NCHW.
    const int64_t group = middle_output ? 0 : 1;
    CHECK(IntAttribute(g.node(2), int8_ops::kNhwcOutputAttribute) == group);
    CHECK(IntAttribute(g.node(3), int8_ops::kNhwcOutputAttribute) == group);
    CHECK(IntAttribute(g.node(4), int8_ops::kNhwcAttribute) == group);
    CHECK(IntAttribute(g.node(5), int8_ops::kNhwcInputAttribute) == group);
    CHECK(IntAttribute(g.node(8), int8_ops::kNhwcAttribute) == 1);
    CHECK(IntAttribute(g.node(9), int8_ops::kNhwcInputAttribute) == 1);
    CHECK(IntAttribute(g.node(9), int8_ops::kNhwcOutputAttribute) == 0);  // a graph output
    CHECK(IntAttribute(g.node(10), int8_ops::kNhwcInputAttribute) == 1);
    CHECK(IntAttribute(g.node(11), int8_ops::kNhwcAttribute) == 1);
    CHECK(IntAttribute(g.node(12), int8_ops::kNhwcInputAttribute) == 1);
    CHECK(nhwc_values == (middle_output ? 7 : 10));
    // Planning again gives the same attributes (stale ones are replaced, not stacked).
    const Graph again = int8_ops::PlanNhwcLayout(g);
    CHECK(again.ToString() == g.ToString());
  }
}

TEST_CASE("Graphs run with the NHWC layout pass equal the graphs without it, every ISA, 1-3 threads", "[int8_ops]") {
  auto rng = testing::MakeRng("nhwc-layout-run");
  const OpRegistry& registry = testing::Int8Registry();
  for (const DType dtype : {DType::kU8, DType::kS8}) {
    for (const bool middle_output : {false, true}) {
      const BuiltGraph built = MakeGraph(dtype, rng, middle_output);
      const Graph planned = int8_ops::PlanNhwcLayout(built.graph);
      const Tensor x = RandomBytes(rng, dtype, built.input);
      const std::vector<Tensor> expected =
          testing::RunWithInputShapes(built.graph, testing::ScalarContext(), registry, {x});
      for (Isa isa : testing::CompiledIsaList()) {
        if (!testing::CanRun(isa, std::string("nhwc layout ") + IsaName(isa))) continue;
        for (int threads = 1; threads <= 3; ++threads) {
          INFO(DTypeName(dtype) << " middle output " << middle_output << " " << IsaName(isa) << " threads " << threads);
          const Context context = testing::ContextFor(isa, threads);
          const std::vector<Tensor> plain = testing::RunWithInputShapes(built.graph, context, registry, {x});
          const std::vector<Tensor> nhwc = testing::RunWithInputShapes(planned, context, registry, {x});
          REQUIRE(nhwc.size() == expected.size());
          for (size_t k = 0; k < nhwc.size(); ++k) {
            CHECK(testing::Bytes(plain[k]) == testing::Bytes(expected[k]));
            CHECK(testing::Bytes(nhwc[k]) == testing::Bytes(expected[k]));
          }
        }
      }
      // The comparison can fail: the last QConv told its NHWC input is NCHW reads other bytes.
      Graph wrong = planned;
      wrong.mutable_node(9).attributes.Erase(int8_ops::kNhwcInputAttribute);
      const std::vector<Tensor> misread = testing::RunWithInputShapes(wrong, testing::ScalarContext(), registry, {x});
      CHECK(testing::Bytes(misread[0]) != testing::Bytes(expected[0]));
    }
  }
}

TEST_CASE("The NHWC layout attributes are refused where they do not apply", "[int8_ops]") {
  auto rng = testing::MakeRng("nhwc-layout-errors");
  // A 1-D QConv with nhwc_input.
  testing::Int8OpSpec spec;
  spec.op_type = "QConv";
  spec.inputs = {testing::QIn(RandomBytes(rng, DType::kU8, Shape{1, 4, 9}), PerTensorQ(DType::kU8, 0.05f, 120)),
                 testing::QConst(RandomBytes(rng, DType::kS8, Shape{4, 4, 3}),
                                 QParams::PerTensor(DType::kS8, 0.01f, 0, -128, 127).value())};
  spec.attributes.Set(int8_ops::kNhwcInputAttribute, int64_t{1});
  spec.output_qparams = PerTensorQ(DType::kU8, 0.1f, 120);
  Result<Tensor> r = testing::RunInt8Op(spec);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("nhwc_input") && Catch::Contains("2-D convolution"));
  // An average pool with nhwc.
  testing::Int8OpSpec pool;
  pool.op_type = "QAveragePool";
  pool.inputs = {testing::QIn(RandomBytes(rng, DType::kU8, Shape{1, 4, 6, 6}), PerTensorQ(DType::kU8, 0.05f, 120))};
  pool.attributes.Set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.attributes.Set(int8_ops::kNhwcAttribute, int64_t{1});
  pool.output_qparams = PerTensorQ(DType::kU8, 0.05f, 120);
  r = testing::RunInt8Op(pool);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("nhwc") && Catch::Contains("QMaxPool"));
}

}  // namespace
}  // namespace octet

// Graph IR: attributes, values, nodes, topological sort (with cycle reports), the verifier's errors, the memory
// planner.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>

#include "core/graph.h"
#include "core/memory_plan.h"
#include "core/verifier.h"
#include "tests/test_util.h"

namespace octet {
namespace {

Tensor Zeros(Shape s) { return Tensor::Create(DType::kF32, std::move(s)).value(); }

// x -> a -> b -> y, with a weight constant.
Graph Chain() {
  Graph g("chain");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{1, 4}).value();
  const ValueId w = g.AddConstant("fc.weight", Zeros(Shape{4, 4})).value();
  const ValueId a = g.AddNodeValue("a").value();
  const ValueId b = g.AddNodeValue("b").value();
  g.AddNode(Node{"fc", "MatMul", "", {}, {x, w}, {a}}).value();
  g.AddNode(Node{"relu", "Relu", "", {}, {a}, {b}}).value();
  REQUIRE(g.AddOutput(b).ok());
  return g;
}

TEST_CASE("Attributes are typed and their getters explain mismatches", "[graph]") {
  AttributeMap a{{"axis", 1}, {"alpha", 0.5f}, {"mode", "constant"}, {"pads", std::vector<int64_t>{1, 2}}};
  CHECK(a.GetInt("axis").value() == 1);
  CHECK(a.GetInt("missing", 7).value() == 7);
  CHECK(a.GetFloat("alpha").value() == 0.5f);
  CHECK(a.GetString("mode").value() == "constant");
  CHECK(a.GetInts("pads").value() == std::vector<int64_t>{1, 2});
  auto wrong = a.GetFloat("axis");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message() == "attribute 'axis' must be float, got int");
  auto wrong_default = a.GetInts("mode", {});
  REQUIRE_FALSE(wrong_default.ok());
  auto missing = a.GetInt("group");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "required attribute 'group' is missing");
  CHECK(a.Find("pads")->ToString() == "[1, 2]");
  a.Set("t", Zeros(Shape{3}));
  CHECK(a.GetTensor("t").value().shape() == Shape{3});
  CHECK(a.Find("t")->ToString() == "tensor f32 [3]");
}

TEST_CASE("Graph keeps values addressable by unique names", "[graph]") {
  Graph g = Chain();
  CHECK(g.num_values() == 4);
  CHECK(g.FindValue("fc.weight") == 1);
  CHECK(g.FindValue("nope") == kNoValue);
  CHECK(g.FindNode("relu") == 1);
  CHECK(g.value(g.FindValue("x")).kind == ValueKind::kInput);
  auto dup = g.AddNodeValue("a");
  REQUIRE_FALSE(dup.ok());
  CHECK_THAT(dup.status().message(), Catch::Contains("a value of that name exists"));
  REQUIRE_FALSE(g.AddInput("bad", DType::kF32, Shape{-2}).ok());
  REQUIRE_FALSE(g.AddNode(Node{"n", "Relu", "", {}, {99}, {}}).ok());
  REQUIRE(g.RenameValue(g.FindValue("a"), "fc.out").ok());
  CHECK(g.FindValue("fc.out") == 2);
  CHECK(g.FindValue("a") == kNoValue);
  REQUIRE_FALSE(g.RenameValue(2, "b").ok());
  CHECK(g.NumParameters() == 16);
  CHECK(VerifyGraph(g).ok());
  const std::string text = g.ToString();
  CHECK_THAT(text, Catch::Contains("node fc.out = MatMul(x, fc.weight)  # fc"));
  CHECK_THAT(text, Catch::Contains("constant fc.weight: f32 [4, 4]"));
}

TEST_CASE("SortTopologically orders nodes stably and names the nodes of a cycle", "[graph]") {
  Graph g = Chain();
  std::swap(g.mutable_nodes()[0], g.mutable_nodes()[1]);
  const Status out_of_order = VerifyGraph(g);
  REQUIRE_FALSE(out_of_order.ok());
  CHECK_THAT(out_of_order.message(),
             Catch::Contains("node 'relu' (Relu) uses 'a' before node 'fc' produces it"));
  REQUIRE(g.SortTopologically().ok());
  CHECK(g.node(0).name == "fc");
  CHECK(VerifyGraph(g).ok());

  // a = f(c), b = g(a), c = h(b): a three-node cycle, plus an independent node.
  Graph c("cyclic");
  const ValueId x = c.AddInput("x", DType::kF32, Shape{1}).value();
  const ValueId a = c.AddNodeValue("a").value();
  const ValueId b = c.AddNodeValue("b").value();
  const ValueId d = c.AddNodeValue("c").value();
  const ValueId e = c.AddNodeValue("e").value();
  c.AddNode(Node{"free", "Relu", "", {}, {x}, {e}}).value();
  c.AddNode(Node{"f", "Add", "", {}, {x, d}, {a}}).value();
  c.AddNode(Node{"g", "Relu", "", {}, {a}, {b}}).value();
  c.AddNode(Node{"h", "Relu", "", {}, {b}, {d}}).value();
  REQUIRE(c.AddOutput(e).ok());
  const Status cycle = c.SortTopologically();
  REQUIRE_FALSE(cycle.ok());
  CHECK_THAT(cycle.message(), Catch::Contains("cycle") && Catch::Contains("'f'") && Catch::Contains("'g'") &&
                                  Catch::Contains("'h'") && !Catch::Contains("'free'"));
  const Status verified = VerifyGraph(c);
  REQUIRE_FALSE(verified.ok());
  CHECK_THAT(verified.message(), Catch::Contains("cycle"));

  Graph self("self");
  const ValueId s = self.AddNodeValue("s").value();
  self.AddNode(Node{"loop", "Relu", "", {}, {s}, {s}}).value();
  REQUIRE(self.AddOutput(s).ok());
  CHECK_THAT(VerifyGraph(self).message(), Catch::Contains("node 'loop' (Relu) reads its own output 's'"));
}

TEST_CASE("The verifier names the node and value of each structural error", "[graph]") {
  struct Case {
    const char* what;
    std::function<void(Graph&)> break_it;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"duplicate node name", [](Graph& g) { g.mutable_node(1).name = "fc"; }, "two nodes are named 'fc'"},
      {"empty node name", [](Graph& g) { g.mutable_node(0).name = ""; }, "node #0 (MatMul) has an empty name"},
      {"control char", [](Graph& g) { g.mutable_node(0).name = "a\nb"; }, "control characters"},
      {"undefined input",
       [](Graph& g) { g.mutable_node(1).inputs[0] = g.AddNodeValue("ghost").value(); },
       "node 'relu' (Relu) input 0 'ghost' is not defined"},
      {"two producers", [](Graph& g) { g.mutable_node(1).outputs[0] = 2; },
       "value 'a' is produced by two nodes, 'fc' and 'relu'"},
      {"writes a constant", [](Graph& g) { g.mutable_node(1).outputs[0] = 1; }, "node 'relu' (Relu) writes constant"},
      {"no outputs", [](Graph& g) { g.mutable_outputs().clear(); }, "has no outputs"},
      {"dangling output", [](Graph& g) { g.mutable_outputs()[0] = g.AddNodeValue("nobody").value(); },
       "graph output 'nobody' is not produced"},
      {"constant dtype", [](Graph& g) { g.mutable_value(1).dtype = DType::kS8; }, "constant 'fc.weight' declares s8"},
      {"missing op", [](Graph& g) { g.mutable_node(0).op_type = ""; }, "node 'fc' has no op type"},
  };
  for (const Case& c : cases) {
    Graph g = Chain();
    c.break_it(g);
    const Status st = VerifyGraph(g);
    INFO(c.what);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains(c.message));
    CHECK_THAT(st.message(), Catch::StartsWith("failed to verify graph 'chain'"));
  }
}

TEST_CASE("PlanMemory never overlaps buffers that are alive together and reuses dead space", "[graph]") {
  auto rng = testing::MakeRng("memory-plan");
  for (int iter = 0; iter < 50; ++iter) {
    const int n = static_cast<int>(testing::RandomSize(rng, 40));
    std::vector<BufferRequest> req;
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng() % 20);
      req.push_back({static_cast<int64_t>(rng() % 5000), first, first + static_cast<int>(rng() % 6)});
    }
    const MemoryPlan plan = PlanMemory(req);
    REQUIRE(plan.offsets.size() == req.size());
    int64_t peak_live = 0;
    for (int step = 0; step < 26; ++step) {
      int64_t live = 0;
      for (const auto& r : req) {
        if (r.first_step <= step && step <= r.last_step) live += (r.size_bytes + 64 + 63) / 64 * 64;
      }
      peak_live = std::max(peak_live, live);
    }
    CHECK(plan.arena_bytes >= peak_live);
    int64_t total = 0;
    for (size_t i = 0; i < req.size(); ++i) {
      total += (req[i].size_bytes + 64 + 63) / 64 * 64;
      CHECK(plan.offsets[i] % 64 == 0);
      for (size_t j = i + 1; j < req.size(); ++j) {
        const bool alive_together =
            req[i].first_step <= req[j].last_step && req[j].first_step <= req[i].last_step;
        if (!alive_together) continue;
        const int64_t ei = plan.offsets[i] + req[i].size_bytes + 64, ej = plan.offsets[j] + req[j].size_bytes + 64;
        const bool disjoint = ei <= plan.offsets[j] || ej <= plan.offsets[i];
        if (!disjoint) FAIL("buffers " << i << " and " << j << " overlap while both alive");
      }
    }
    CHECK(plan.arena_bytes <= total);
  }
  // A chain reuses: three 1 KiB buffers each alive for two steps need two slots, not three.
  const std::vector<BufferRequest> chain = {{1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}};
  CHECK(PlanMemory(chain).arena_bytes == 2 * (1024 + 64));
}

}  // namespace
}  // namespace octet

namespace octet {
namespace {

TEST_CASE("WithoutUnusedConstants drops constants nobody reads and keeps everything else", "[graph]") {
  Graph g("prune");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{2}).value();
  const ValueId unused = g.AddConstant("old.weight", Tensor::Create(DType::kF32, Shape{2}).value()).value();
  const ValueId w = g.AddConstant("new.weight", Tensor::Create(DType::kF32, Shape{2}).value()).value();
  const ValueId k = g.AddConstant("as_output", Tensor::Create(DType::kF32, Shape{1}).value()).value();
  const ValueId y = g.AddNodeValue("y").value();
  REQUIRE(g.AddNode(Node{"mul", "Mul", "", {}, {x, w}, {y}}).ok());
  REQUIRE(g.AddOutput(y).ok());
  REQUIRE(g.AddOutput(k).ok());
  (void)unused;
  const Graph p = g.WithoutUnusedConstants();
  CHECK(p.num_values() == g.num_values() - 1);
  CHECK(p.FindValue("old.weight") == kNoValue);
  REQUIRE(p.FindValue("new.weight") != kNoValue);
  CHECK(p.node(0).inputs == std::vector<ValueId>{p.FindValue("x"), p.FindValue("new.weight")});
  CHECK(p.node(0).outputs == std::vector<ValueId>{p.FindValue("y")});
  CHECK(p.inputs() == std::vector<ValueId>{p.FindValue("x")});
  CHECK(p.outputs() == std::vector<ValueId>{p.FindValue("y"), p.FindValue("as_output")});
  CHECK(VerifyGraph(p).ok());
}

}  // namespace
}  // namespace octet

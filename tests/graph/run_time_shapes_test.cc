// Shapes computed at run time: a graph whose output shape depends on a graph input's data (Reshape's shape, Slice's
// starts, Range's limit) compiles, and each Run compiles it for that data (cached), running every node with hooks;
// Clip reads a min computed at run time without recompiling; bad data fails cleanly at Run, naming the node.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "core/executor.h"
#include "ops/float/registry.h"
#include "tests/ops/float/float_op_tester.h"

namespace octet {
namespace {

const Context& SerialRunTimeContext() {
  static const Context c = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  return c;
}

// y = Relu(Reshape(x, shape + 0)): the shape goes through an Add so that the executor must compute it.
Graph ReshapeByInput() {
  Graph g("reshape_by_input");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{2, 6}).value();
  const ValueId shape = g.AddInput("shape", DType::kS32, Shape{2}).value();
  const ValueId zero = g.AddConstant("zero", testing::IntTensor(Shape{1}, {0})).value();
  const ValueId s2 = g.AddNodeValue("s2").value();
  const ValueId r = g.AddNodeValue("r").value();
  const ValueId y = g.AddNodeValue("y").value();
  g.AddNode(Node{"add", "Add", "", {}, {shape, zero}, {s2}}).value();
  g.AddNode(Node{"reshape", "Reshape", "", {}, {x, s2}, {r}}).value();
  g.AddNode(Node{"relu", "Relu", "", {}, {r}, {y}}).value();
  REQUIRE(g.AddOutput(y).ok());
  return g;
}

Tensor Iota(const Shape& shape, float first) {
  std::vector<float> v(static_cast<size_t>(shape.NumElements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + static_cast<float>(i);
  return testing::FloatTensor(shape, v);
}

TEST_CASE("A shape fed as a graph input is computed at each run", "[graph]") {
  const Graph g = ReshapeByInput();
  auto exec = Executor::Compile(g, SerialRunTimeContext(), testing::FloatRegistry());
  REQUIRE(exec.ok());
  CHECK(exec->kernel_name(1) == "compiled per run");
  CHECK_FALSE(exec->is_folded(1));
  const Tensor x = Iota(Shape{2, 6}, -5);
  std::vector<std::string> seen;
  RunOptions ro;
  ro.after_node.push_back([&](const NodeCall& call) {
    seen.push_back(call.node.name);
    return OkStatus();
  });
  for (const auto& dims : std::vector<std::vector<int32_t>>{{3, 4}, {-1, 2}, {3, 4}, {12, 1}}) {
    auto y = exec->Run(std::vector<Tensor>{x, testing::IntTensor(Shape{2}, dims)}, ro);
    REQUIRE(y.ok());
    const int64_t rows = dims[0] == -1 ? 12 / dims[1] : dims[0];
    CHECK((*y)[0].shape() == Shape{rows, 12 / rows});
    for (int64_t i = 0; i < 12; ++i) CHECK((*y)[0].data<float>()[i] == std::max(-5.0f + static_cast<float>(i), 0.0f));
  }
  // Every node ran in every call (the shape's Add too), so hooks see the whole graph.
  CHECK(seen.size() == 12);
  CHECK(seen[0] == "add");
  CHECK(seen[2] == "relu");

  // Data that does not fit fails at Run, naming the node and the shape.
  auto bad = exec->Run(std::vector<Tensor>{x, testing::IntTensor(Shape{2}, {5, 5})});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'reshape' (Reshape)"));
}

TEST_CASE("Run-time shapes: concurrent calls with different data get their own shapes", "[graph]") {
  const Graph g = ReshapeByInput();
  auto exec = Executor::Compile(g, SerialRunTimeContext(), testing::FloatRegistry());
  REQUIRE(exec.ok());
  const Tensor x = Iota(Shape{2, 6}, 1);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  const std::vector<int32_t> rows = {1, 2, 3, 4, 6, 12, 2, 3, 1, 12, 6, 4};  // more than the cache keeps
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t]() {
      for (size_t k = 0; k < rows.size(); ++k) {
        const int32_t r = rows[(k + static_cast<size_t>(t) * 5) % rows.size()];
        auto y = exec->Run(std::vector<Tensor>{x, testing::IntTensor(Shape{2}, {r, 12 / r})});
        if (!y.ok() || (*y)[0].shape() != Shape{r, 12 / r} || (*y)[0].data<float>()[11] != 12.0f) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(wrong == 0);
}

TEST_CASE("Slice starts and Range limit computed from graph inputs; constants still fold", "[graph]") {
  Graph g("slice_range");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{10}).value();
  const ValueId start = g.AddInput("start", DType::kS32, Shape{1}).value();
  const ValueId ends = g.AddConstant("ends", testing::IntTensor(Shape{1}, {100})).value();
  const ValueId n = g.AddInput("n", DType::kS32, Shape{}).value();
  const ValueId zero = g.AddConstant("zero", testing::IntTensor(Shape{}, {0})).value();
  const ValueId one = g.AddConstant("one", testing::IntTensor(Shape{}, {1})).value();
  const ValueId sliced = g.AddNodeValue("sliced").value();
  const ValueId range = g.AddNodeValue("range").value();
  const ValueId fixed = g.AddNodeValue("fixed").value();
  g.AddNode(Node{"slice", "Slice", "", {}, {x, start, ends}, {sliced}}).value();
  g.AddNode(Node{"range", "Range", "", {}, {zero, n, one}, {range}}).value();
  g.AddNode(Node{"fixed", "Range", "", {}, {zero, one, one}, {fixed}}).value();
  REQUIRE(g.AddOutput(sliced).ok());
  REQUIRE(g.AddOutput(range).ok());
  REQUIRE(g.AddOutput(fixed).ok());
  auto exec = Executor::Compile(g, SerialRunTimeContext(), testing::FloatRegistry());
  REQUIRE(exec.ok());
  const Tensor x10 = Iota(Shape{10}, 0);
  for (int32_t s : {7, -3, 0}) {
    for (int32_t count : {0, 4}) {
      auto y =
          exec->Run(std::vector<Tensor>{x10, testing::IntTensor(Shape{1}, {s}), testing::IntTensor(Shape{}, {count})});
      REQUIRE(y.ok());
      const int64_t first = s < 0 ? 10 + s : s;
      REQUIRE((*y)[0].shape() == Shape{10 - first});
      CHECK((*y)[0].data<float>()[0] == static_cast<float>(first));
      REQUIRE((*y)[1].shape() == Shape{count});
      for (int32_t i = 0; i < count; ++i) CHECK((*y)[1].data<int32_t>()[i] == i);
      REQUIRE((*y)[2].shape() == Shape{1});
    }
  }
}

TEST_CASE("Clip's min computed at run time is read per call; the graph compiles once", "[graph]") {
  Graph g("clip_min");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{2, 3}).value();
  const ValueId lo = g.AddNodeValue("lo").value();
  const ValueId y = g.AddNodeValue("y").value();
  g.AddNode(Node{"mean", "ReduceMean", "", {{"keepdims", int64_t{0}}}, {x}, {lo}}).value();
  g.AddNode(Node{"clip", "Clip", "", {}, {x, lo}, {y}}).value();
  REQUIRE(g.AddOutput(y).ok());
  auto exec = Executor::Compile(g, SerialRunTimeContext(), testing::FloatRegistry());
  REQUIRE(exec.ok());
  CHECK(exec->kernel_name(1) == "clip_runtime_bounds_f32");
  for (float first : {-4.0f, 10.0f}) {
    const Tensor in = Iota(Shape{2, 3}, first);
    auto out = exec->Run(std::vector<Tensor>{in});
    REQUIRE(out.ok());
    const float mean = first + 2.5f;
    for (int i = 0; i < 6; ++i) CHECK((*out)[0].data<float>()[i] == std::max(first + static_cast<float>(i), mean));
  }
}

}  // namespace
}  // namespace octet

// Executor: compile errors (unsupported ops listed at once, node-named shape errors, input shapes), constant
// folding, hooks, concurrent Run calls, the arena plan; GraphBuilder's names and parameters run end to end.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <thread>

#include "core/builder.h"
#include "core/executor.h"
#include "core/verifier.h"
#include "ops/float/registry.h"
#include "tests/ops/float/float_op_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

const Context& Serial() {
  static const Context c = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  return c;
}

// A registry with one test op: "Scale" multiplies by attribute k and counts its runs.
struct Counting {
  std::atomic<int> runs{0};
};

OpRegistry ScaleRegistry(Counting* counter) {
  OpRegistry r;
  REQUIRE(r.Register("test", "Scale", [counter](const OpPrepareArgs& a) -> Result<PreparedOp> {
               OCTET_ASSIGN_OR_RETURN(float k, a.node.attributes.GetFloat("k"));
               PreparedOp op;
               op.outputs = {{DType::kF32, a.inputs[0].shape}};
               op.kernel_name = "scale_test";
               op.scratch_bytes = 128;
               op.kernel = MakeKernel([k, counter](const OpRunArgs& r) -> Status {
                 ++counter->runs;
                 REQUIRE(r.scratch.size() >= 128);
                 REQUIRE(reinterpret_cast<uintptr_t>(r.scratch.data()) % 64 == 0);
                 for (int64_t i = 0; i < r.outputs[0].NumElements(); ++i) {
                   r.outputs[0].data<float>()[i] = k * r.inputs[0].data<float>()[i];
                 }
                 return OkStatus();
               });
               return op;
             }).ok());
  return r;
}

Graph ScaleChain(int n) {
  Graph g("scales");
  ValueId v = g.AddInput("x", DType::kF32, Shape{kUnknownDim, 3}).value();
  for (int i = 0; i < n; ++i) {
    const ValueId out = g.AddNodeValue(fmt::format("v{}", i)).value();
    g.AddNode(Node{fmt::format("s{}", i), "Scale", "test", {{"k", 2.0f}}, {v}, {out}}).value();
    v = out;
  }
  REQUIRE(g.AddOutput(v).ok());
  return g;
}

TEST_CASE("Compile binds unknown input dims, plans one arena and reuses it", "[graph]") {
  Counting counter;
  const OpRegistry reg = ScaleRegistry(&counter);
  Graph g = ScaleChain(6);
  auto unbound = Executor::Compile(g, Serial(), reg);
  REQUIRE_FALSE(unbound.ok());
  CHECK_THAT(unbound.status().message(), Catch::Contains("input 'x' has shape [-1, 3] with unknown dimension 0"));
  CompileOptions opts;
  opts.input_shapes = {{"x", Shape{2, 3}}};
  auto exec = Executor::Compile(g, Serial(), reg, opts);
  REQUIRE(exec.ok());
  CHECK(exec->value_shape(g.FindValue("v3")) == Shape{2, 3});
  CHECK(exec->kernel_name(0) == "scale_test");
  // Five arena values in a chain need two slots of 24 bytes (+ padding, 64-aligned), plus 128 scratch bytes.
  CHECK(exec->arena_bytes() == 2 * 128 + 128);
  Tensor x = testing::FloatTensor(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  for (int rep = 0; rep < 3; ++rep) {
    auto y = exec->Run(std::vector<Tensor>{x});
    REQUIRE(y.ok());
    testing::ExpectClose((*y)[0], {64, 128, 192, 256, 320, 384}, 0, 0);
  }
  CHECK(counter.runs == 18);
  auto wrong = exec->Run(std::vector<Tensor>{testing::FloatTensor(Shape{3, 2}, {1, 2, 3, 4, 5, 6})});
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message() == "failed to run graph 'scales': input 'x' must be f32 [2, 3], got f32 [3, 2]");
  REQUIRE_FALSE(exec->Run(std::vector<Tensor>{}).ok());
  auto named = exec->RunNamed({{"x", x}});
  REQUIRE(named.ok());
  REQUIRE_FALSE(exec->RunNamed({{"y", x}}).ok());
  opts.input_shapes = {{"x", Shape{2, 4}}};
  REQUIRE_FALSE(Executor::Compile(g, Serial(), reg, opts).ok());
  opts.input_shapes = {{"x", Shape{2, 3}}};
  opts.max_arena_bytes = 100;
  auto limited = Executor::Compile(g, Serial(), reg, opts);
  REQUIRE_FALSE(limited.ok());
  CHECK_THAT(limited.status().message(), Catch::Contains("over the limit of 100"));
}

TEST_CASE("Compile lists every unsupported node in one error", "[graph]") {
  Graph g("mixed");
  const ValueId x = g.AddInput("x", DType::kF32, Shape{1, 3}).value();
  const ValueId a = g.AddNodeValue("a").value();
  const ValueId b = g.AddNodeValue("b").value();
  const ValueId c = g.AddNodeValue("c").value();
  g.AddNode(Node{"block.0.weird", "Frobnicate", "", {}, {x}, {a}}).value();
  g.AddNode(Node{"block.1.relu", "Relu", "", {}, {a}, {b}}).value();
  g.AddNode(Node{"block.2.custom", "Thing", "com.acme", {}, {b}, {c}}).value();
  REQUIRE(g.AddOutput(c).ok());
  auto exec = Executor::Compile(g, Serial(), testing::FloatRegistry());
  REQUIRE_FALSE(exec.ok());
  CHECK(exec.status().code() == StatusCode::kUnimplemented);
  CHECK(exec.status().message() ==
        "failed to compile graph 'mixed': 2 node(s) use operators octet does not support: 'block.0.weird' "
        "(Frobnicate), 'block.2.custom' (com.acme.Thing)");
}

TEST_CASE("Shape errors name the node; constants fold at Compile", "[graph]") {
  GraphBuilder b("net", 1);
  ValueId x = b.Input("x", DType::kF32, Shape{2, 8});
  {
    auto s = b.Scope("head");
    x = b.Linear("fc", x, 9, 4);  // wrong in_features: 8 inputs, weight [4, 9]
  }
  b.Output(x);
  auto g = std::move(b).Build();
  REQUIRE(g.ok());
  auto exec = Executor::Compile(*g, Serial(), testing::FloatRegistry());
  REQUIRE_FALSE(exec.ok());
  CHECK_THAT(exec.status().message(),
             Catch::StartsWith("failed to compile node 'head.fc' (Gemm): inner dimensions differ"));

  // Transpose(constant) + MatMul: the transpose folds, only MatMul runs.
  Graph f("fold");
  const ValueId in = f.AddInput("x", DType::kF32, Shape{1, 2}).value();
  const ValueId w = f.AddConstant("w", testing::FloatTensor(Shape{3, 2}, {1, 2, 3, 4, 5, 6})).value();
  const ValueId wt = f.AddNodeValue("wt").value();
  const ValueId y = f.AddNodeValue("y").value();
  f.AddNode(Node{"t", "Transpose", "", {}, {w}, {wt}}).value();
  f.AddNode(Node{"mm", "MatMul", "", {}, {in, wt}, {y}}).value();
  REQUIRE(f.AddOutput(y).ok());
  auto fe = Executor::Compile(f, Serial(), testing::FloatRegistry());
  REQUIRE(fe.ok());
  CHECK(fe->is_folded(0));
  CHECK_FALSE(fe->is_folded(1));
  int calls = 0;
  RunOptions ro;
  ro.before_node.push_back([&](const NodeCall& call) {
    ++calls;
    CHECK(call.node.name == "mm");
    return OkStatus();
  });
  auto out = fe->Run(std::vector<Tensor>{testing::FloatTensor(Shape{1, 2}, {1, 1})}, ro);
  REQUIRE(out.ok());
  testing::ExpectClose((*out)[0], {3, 7, 11}, 0, 0);
  CHECK(calls == 1);
}

TEST_CASE("Hooks see every node's inputs and outputs, may edit outputs, and can stop a run", "[graph]") {
  auto rng = testing::MakeRng("hooks");
  GraphBuilder b("mlp", 3);
  ValueId x = b.Input("x", DType::kF32, Shape{4, 6});
  x = b.Linear("fc1", x, 6, 5);
  x = b.ReLU("relu1", x);
  x = b.Linear("fc2", x, 5, 3);
  b.Output(x);
  Graph g = std::move(b).Build().value();
  auto exec = Executor::Compile(g, Serial(), testing::FloatRegistry()).value();
  Tensor in = testing::RandomTensor(rng, Shape{4, 6});

  std::vector<std::string> before, after;
  Tensor relu_out;
  RunOptions ro;
  ro.before_node.push_back([&](const NodeCall& c) {
    before.push_back(c.node.name);
    CHECK(c.inputs.size() == c.node.inputs.size());
    return OkStatus();
  });
  ro.after_node.push_back([&](const NodeCall& c) {
    after.push_back(c.node.name);
    if (c.node.name == "relu1") {
      for (int64_t i = 0; i < c.outputs[0].NumElements(); ++i) CHECK(c.outputs[0].data<float>()[i] >= 0.0f);
      relu_out = c.outputs[0].ToTensor().value();
    }
    return OkStatus();
  });
  auto y = exec.Run(std::vector<Tensor>{in}, ro);
  REQUIRE(y.ok());
  CHECK(before == std::vector<std::string>{"fc1", "relu1", "fc2"});
  CHECK(after == before);
  CHECK(relu_out.shape() == Shape{4, 5});

  // An after-hook that zeroes relu1's output makes fc2 see zeros: the output is fc2's bias in every row.
  RunOptions zero;
  zero.after_node.push_back([](const NodeCall& c) {
    if (c.node.name == "relu1") std::fill(c.outputs[0].data<float>(), c.outputs[0].data<float>() + 20, 0.0f);
    return OkStatus();
  });
  auto z = exec.Run(std::vector<Tensor>{in}, zero);
  REQUIRE(z.ok());
  const Tensor& bias = g.value(g.FindValue("fc2.bias")).data;
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 3; ++c) CHECK((*z)[0].data<float>()[r * 3 + c] == bias.data<float>()[c]);
  }

  RunOptions stop;
  stop.before_node.push_back([](const NodeCall& c) {
    return c.node.name == "fc2" ? InvalidArgument("observer saw NaN") : OkStatus();
  });
  auto stopped = exec.Run(std::vector<Tensor>{in}, stop);
  REQUIRE_FALSE(stopped.ok());
  CHECK(stopped.status().message() == "hook before node 'fc2' (Gemm): observer saw NaN");
}

TEST_CASE("Concurrent Run calls on one executor give identical results", "[graph]") {
  auto rng = testing::MakeRng("concurrent");
  GraphBuilder b("cnn", 5);
  ValueId x = b.Input("x", DType::kF32, Shape{2, 3, 12, 12});
  x = b.Conv2d("conv1", x, {.in_channels = 3, .out_channels = 8, .kernel_size = {3, 3}, .padding = {1, 1}});
  x = b.BatchNorm2d("bn1", x, 8);
  x = b.ReLU("relu1", x);
  x = b.MaxPool2d("pool", x, {.kernel_size = {2, 2}});
  x = b.AdaptiveAvgPool2d1("gap", x);
  x = b.Flatten("flatten", x);
  x = b.Linear("fc", x, 8, 10);
  x = b.Softmax("softmax", x);
  b.Output(x);
  Graph g = std::move(b).Build().value();
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 2);
  auto exec = Executor::Compile(g, context, testing::FloatRegistry()).value();
  std::vector<Tensor> inputs, expected;
  for (int i = 0; i < 4; ++i) {
    inputs.push_back(testing::RandomTensor(rng, Shape{2, 3, 12, 12}));
    expected.push_back(exec.Run(std::vector<Tensor>{inputs.back()}).value()[0]);
  }
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 10; ++rep) {
        const int i = (t + rep) % 4;
        auto y = exec.Run(std::vector<Tensor>{inputs[static_cast<size_t>(i)]});
        if (!y.ok()) {
          ++failures;
        } else if (!testing::BitEqual((*y)[0], expected[static_cast<size_t>(i)])) {
          ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  CHECK(mismatches == 0);
  // Softmax rows sum to one: the network computed something real.
  for (int r = 0; r < 2; ++r) {
    float s = 0;
    for (int c = 0; c < 10; ++c) s += expected[0].data<float>()[r * 10 + c];
    CHECK(s == Approx(1.0f).epsilon(1e-5));
  }
}

TEST_CASE("GraphBuilder names nodes and parameters hierarchically, like torch.nn", "[graph]") {
  GraphBuilder b("resnet_block", 7);
  ValueId x = b.Input("x", DType::kF32, Shape{1, 4, 8, 8});
  ValueId y = kNoValue;
  {
    auto l1 = b.Scope("layer1");
    auto l0 = b.Scope("0");
    y = b.Conv2d("conv1", x, {.in_channels = 4, .out_channels = 4, .padding = {1, 1}, .bias = false});
    y = b.BatchNorm2d("bn1", y, 4);
    y = b.ReLU("relu", y);
    CHECK(b.FullName("conv2") == "layer1.0.conv2");
    y = b.Add("add", y, x);
  }
  b.Output(y);
  Graph g = std::move(b).Build().value();
  CHECK(g.node(0).name == "layer1.0.conv1");
  CHECK(g.node(3).name == "layer1.0.add");
  CHECK(g.FindValue("layer1.0.conv1.weight") != kNoValue);
  CHECK(g.FindValue("layer1.0.conv1.bias") == kNoValue);
  CHECK(g.FindValue("layer1.0.bn1.running_var") != kNoValue);
  const Tensor& w = g.value(g.FindValue("layer1.0.conv1.weight")).data;
  CHECK(w.shape() == Shape{4, 4, 3, 3});
  // kaiming_uniform(a = sqrt 5): uniform in +-1/sqrt(fan_in), fan_in = 36.
  float lo = 1, hi = -1;
  for (float v : w.values<float>()) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  CHECK(hi <= 1.0f / 6.0f);
  CHECK(lo >= -1.0f / 6.0f);
  CHECK(hi - lo > 0.2f);
  // Same seed, same parameters.
  GraphBuilder b2("again", 7);
  ValueId x2 = b2.Input("x", DType::kF32, Shape{1, 4, 8, 8});
  b2.Output(b2.Conv2d("layer1.0.conv1", x2, {.in_channels = 4, .out_channels = 4, .padding = {1, 1}, .bias = false}));
  Graph g2 = std::move(b2).Build().value();
  CHECK(testing::BitEqual(g2.value(g2.FindValue("layer1.0.conv1.weight")).data, w));

  // Errors are sticky and the first one is reported.
  GraphBuilder bad("bad");
  ValueId in = bad.Input("x", DType::kF32, Shape{1, 4});
  ValueId a = bad.ReLU("act", in);
  ValueId dup = bad.ReLU("act", a);
  CHECK(dup == kNoValue);
  bad.Output(bad.ReLU("later", dup));
  auto built = std::move(bad).Build();
  REQUIRE_FALSE(built.ok());
  CHECK_THAT(built.status().message(), Catch::Contains("'act'"));
}

TEST_CASE("GraphBuilder's LSTM stacks layers and runs", "[graph]") {
  auto rng = testing::MakeRng("builder-lstm");
  GraphBuilder b("lm", 11);
  ValueId tokens = b.Input("tokens", DType::kS32, Shape{5, 2});
  ValueId h0 = b.Input("h0", DType::kF32, Shape{2, 2, 6});
  ValueId c0 = b.Input("c0", DType::kF32, Shape{2, 2, 6});
  ValueId emb = b.Embedding("encoder", tokens, 20, 4);
  RnnOutputs rnn = b.LSTM("rnn", emb, {.input_size = 4, .hidden_size = 6, .num_layers = 2}, h0, c0);
  ValueId logits = b.Linear("decoder", b.Reshape("flat", rnn.output, {-1, 6}), 6, 20);
  b.Output(logits);
  b.Output(rnn.h_n);
  b.Output(rnn.c_n);
  Graph g = std::move(b).Build().value();
  CHECK(g.FindNode("rnn.l0") >= 0);
  CHECK(g.FindNode("rnn.l1") >= 0);
  CHECK(g.FindValue("rnn.l1.W") != kNoValue);
  auto exec = Executor::Compile(g, Serial(), testing::FloatRegistry());
  REQUIRE(exec.ok());
  std::vector<int32_t> ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 19};
  auto y = exec->Run(std::vector<Tensor>{testing::IntTensor(Shape{5, 2}, ids), testing::RandomTensor(rng, Shape{2, 2, 6}),
                                         testing::RandomTensor(rng, Shape{2, 2, 6})});
  REQUIRE(y.ok());
  CHECK((*y)[0].shape() == Shape{10, 20});
  CHECK((*y)[1].shape() == Shape{2, 2, 6});
  CHECK((*y)[2].shape() == Shape{2, 2, 6});
  CHECK(testing::NotConstant(testing::Values((*y)[0])));
  auto bad_token = exec->Run(std::vector<Tensor>{testing::IntTensor(Shape{5, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 20}),
                                                 testing::RandomTensor(rng, Shape{2, 2, 6}),
                                                 testing::RandomTensor(rng, Shape{2, 2, 6})});
  REQUIRE_FALSE(bad_token.ok());
  CHECK_THAT(bad_token.status().message(), Catch::Contains("node 'encoder' (Gather)"));
}

}  // namespace
}  // namespace octet

namespace octet {
namespace {

// Quantized graphs: a value's qparams reach the operator's Prepare (ValueInfo::qparams for inputs,
// OpPrepareArgs::output_qparams for outputs), and the verifier and Compile refuse qparams that contradict a dtype.
TEST_CASE("Compile hands value qparams to Prepare and checks them against dtypes", "[graph]") {
  OpRegistry reg;
  std::vector<std::string> seen;
  REQUIRE(reg.Register("test", "Requant", [&seen](const OpPrepareArgs& a) -> Result<PreparedOp> {
               seen.push_back(a.inputs[0].qparams ? a.inputs[0].qparams->ToString() : "none");
               seen.push_back(a.output_qparams[0] ? a.output_qparams[0]->ToString() : "none");
               PreparedOp op;
               op.outputs = {{DType::kS8, a.inputs[0].shape}};
               op.kernel = MakeKernel([](const OpRunArgs&) { return OkStatus(); });
               return op;
             }).ok());
  Graph g("q");
  const ValueId x = g.AddInput("x", DType::kU8, Shape{4}).value();
  const ValueId y = g.AddNodeValue("y", DType::kS8).value();
  g.mutable_value(x).qparams = QParams::PerTensor(DType::kU8, 0.5f, 3).value();
  g.mutable_value(y).qparams = QParams::PerTensor(DType::kS8, 0.25f, -1).value();
  REQUIRE(g.AddNode(Node{"r", "Requant", "test", {}, {x}, {y}}).ok());
  REQUIRE(g.AddOutput(y).ok());
  REQUIRE(Executor::Compile(g, Serial(), reg).ok());
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == "per_tensor_affine u8 [0, 255] scale 0.5 zero_point 3");
  CHECK(seen[1] == "per_tensor_affine s8 [-128, 127] scale 0.25 zero_point -1");
  CHECK_THAT(g.ToString(), Catch::Contains("qparams y: per_tensor_affine s8"));

  Graph wrong_output = g;
  wrong_output.mutable_value(y).qparams = QParams::PerTensor(DType::kU8, 0.25f, 1).value();
  auto compiled = Executor::Compile(wrong_output, Serial(), reg);
  REQUIRE_FALSE(compiled.ok());
  CHECK_THAT(compiled.status().message(), Catch::Contains("output 'y' is s8 but its qparams are u8"));

  Graph wrong_input = g;
  wrong_input.mutable_value(x).qparams = QParams::PerTensor(DType::kS8, 0.5f, 0).value();
  CHECK_THAT(VerifyGraph(wrong_input).message(), Catch::Contains("value 'x' is u8 but its qparams are s8"));

  Graph wrong_channels("c");
  Tensor w = Tensor::Create(DType::kS8, Shape{3, 2}).value();
  const ValueId wid = wrong_channels.AddConstant("w", w).value();
  wrong_channels.mutable_value(wid).qparams =
      QParams::PerChannel(DType::kS8, {0.1f, 0.2f}, {0, 0}, 0, -128, 127).value();
  CHECK_THAT(VerifyGraph(wrong_channels).message(), Catch::Contains("w"));
  CHECK_FALSE(VerifyGraph(wrong_channels).ok());
}

}  // namespace
}  // namespace octet

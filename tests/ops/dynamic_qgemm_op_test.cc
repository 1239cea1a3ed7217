// Dynamic quantization's operators: ChooseQuantizationParams against PyTorch 1.13 (tests/data/dynamic, from its
// generate.py); DynamicQGemm / DynamicQMatMul equal the reference composition (reference::DynamicQGemm) bit for bit
// on every runnable ISA at 1 and 2 threads; and their errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/executor.h"
#include "ops/int8/int8_ops.h"
#include "ops/reference/dynamic_qgemm_reference.h"
#include "ops/reference/per_token_qgemm_reference.h"
#include "ops/reference/quantize_reference.h"
#include "tests/test_util.h"

namespace octet {
namespace {

OpRegistry Int8Registry() {
  OpRegistry r;
  REQUIRE(RegisterInt8Ops(r).ok());
  return r;
}

TEST_CASE("ChooseQuantizationParams and the dynamic activation qparams equal PyTorch 1.13", "[dynamic]") {
  std::ifstream f(std::string(OCTET_TEST_DATA_DIR) + "/dynamic/choose_qparams.json");
  REQUIRE(f.good());
  const nlohmann::json data = nlohmann::json::parse(f);
  const auto& cases = data.at("cases");
  REQUIRE(cases.size() >= 200);
  int with_values = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const auto min = c.at("min").get<float>(), max = c.at("max").get<float>();
    const bool rr = c.at("reduce_range").get<bool>();
    INFO("case " << i << ": [" << min << ", " << max << "] reduce_range " << rr);
    const reference::ChosenQParams q = reference::ChooseQuantizationParams(min, max, 0, 255, false, false, rr);
    CHECK(q.scale == c.at("scale").get<double>());
    CHECK(q.zero_point == c.at("zero_point").get<int32_t>());
    if (!c.contains("x")) continue;
    ++with_values;
    const std::vector<float> x = c.at("x").get<std::vector<float>>();
    const std::vector<int> expected = c.at("q").get<std::vector<int>>();
    const reference::DynamicActivationQParams a = reference::ChooseDynamicActivationQParams(x.size(), x.data(), rr);
    CHECK(a.scale == static_cast<float>(c.at("q_scale").get<double>()));
    CHECK(a.zero_point == c.at("q_zero_point").get<int32_t>());
    CHECK(a.quant_max == (rr ? 127 : 255));
    std::vector<int> got;
    for (float v : x) got.push_back(reference::QuantizeValue<uint8_t>(v, 1.0f / a.scale, a.zero_point, 0, a.quant_max));
    CHECK(got == expected);
  }
  CHECK(with_values >= 50);
}

TEST_CASE("ChooseQuantizationParams: hand-checked ranges, symmetric and power-of-two options", "[dynamic]") {
  // [-1, 2] over [0, 255]: scale 3/255; zero point from min (error 0 - 85 < 255 - 170): 85.
  auto q = reference::ChooseQuantizationParams(-1.0f, 2.0f, 0, 255);
  CHECK(q.scale == 3.0 / 255);
  CHECK(q.zero_point == 85);
  // reduce_range halves the range: [0, 127].
  q = reference::ChooseQuantizationParams(-1.0f, 2.0f, 0, 255, false, false, true);
  CHECK(q.scale == 3.0 / 127);
  CHECK(q.zero_point == 42);
  // preserve_sparsity on [-128, 127]: the range widens to max(1/128, 2/127) * [-128, 127], so the scale is 2/127
  // (up to float rounding of the widened ends) and the zero point the midpoint -0.5 rounded half to even: 0.
  q = reference::ChooseQuantizationParams(-1.0f, 2.0f, -128, 127, true);
  CHECK(q.zero_point == 0);
  CHECK(std::fabs(q.scale - 2.0 / 127) < 1e-8);
  // Power of two, rounded up: 3/255 = 0.0118 -> 2^-6.
  q = reference::ChooseQuantizationParams(-1.0f, 2.0f, 0, 255, false, true);
  CHECK(q.scale == 1.0 / 64);
  // All zero: scale 0.1, zero point 0 (PyTorch's fallback).
  q = reference::ChooseQuantizationParams(0.0f, 0.0f, 0, 255);
  CHECK(q.scale == 0.1);
  CHECK(q.zero_point == 0);
}

struct GemmCase {
  int64_t m = 1, k = 1, n = 1;
  bool per_channel = true;
  bool reduce_range = false;
  bool trans_b = true;
  bool bias = true;
  bool matmul = false;
  bool per_token = false;
};

struct GemmData {
  Tensor x;                    // f32 [m, k]
  std::vector<int8_t> w;       // [n, k] (output channel major)
  std::vector<float> scales;   // per output channel (repeated for per-tensor)
  std::vector<float> bias;     // empty or n
  Graph graph;
};

GemmData MakeGemm(const GemmCase& c, std::mt19937_64& rng) {
  GemmData d;
  d.x = Tensor::Create(DType::kF32, Shape{c.m, c.k}).value();
  // Live ranges not centred on 0, so zero points vary; sometimes one-sided.
  std::uniform_real_distribution<float> shift(-2.0f, 2.0f), width(0.01f, 4.0f);
  const float lo = shift(rng), hi = lo + width(rng);
  std::uniform_real_distribution<float> xd(lo, hi);
  for (float& v : d.x.values<float>()) v = xd(rng);
  std::uniform_int_distribution<int> wd(-128, 127);
  d.w.resize(static_cast<size_t>(c.n * c.k));
  for (int8_t& v : d.w) v = static_cast<int8_t>(wd(rng));
  std::uniform_real_distribution<float> sd(0.001f, 0.05f);
  const float one = sd(rng);
  for (int64_t j = 0; j < c.n; ++j) d.scales.push_back(c.per_channel ? sd(rng) : one);
  if (c.bias) {
    std::uniform_real_distribution<float> bd(-1.0f, 1.0f);
    for (int64_t j = 0; j < c.n; ++j) d.bias.push_back(bd(rng));
  }
  // The graph: weight as stored by the operator's layout ([N, K] for transB = 1, else [K, N]).
  const bool nk = c.trans_b && !c.matmul;
  Tensor wt = Tensor::Create(DType::kS8, nk ? Shape{c.n, c.k} : Shape{c.k, c.n}).value();
  for (int64_t j = 0; j < c.n; ++j) {
    for (int64_t p = 0; p < c.k; ++p) {
      wt.data<int8_t>()[nk ? j * c.k + p : p * c.n + j] = d.w[static_cast<size_t>(j * c.k + p)];
    }
  }
  const int axis = nk ? 0 : 1;
  QParams q = c.per_channel ? QParams::Create(QScheme::kPerChannelSymmetric, DType::kS8, -128, 127, d.scales,
                                              std::vector<int32_t>(static_cast<size_t>(c.n), 0), axis)
                                  .value()
                            : QParams::Create(QScheme::kPerTensorSymmetric, DType::kS8, -128, 127, {one}, {0}).value();
  Graph& g = d.graph;
  const ValueId x = g.AddInput("x", DType::kF32, Shape{c.m, c.k}).value();
  const ValueId w = g.AddConstant("w", wt).value();
  g.mutable_value(w).qparams = q;
  Node node;
  node.name = "fc";
  node.domain = std::string(kInt8Domain);
  node.op_type = c.matmul ? "DynamicQMatMul" : "DynamicQGemm";
  node.inputs = {x, w};
  if (!c.matmul) node.attributes.Set("transB", int64_t{c.trans_b ? 1 : 0});
  node.attributes.Set("reduce_range", int64_t{c.reduce_range ? 1 : 0});
  if (c.per_token) node.attributes.Set("per_token", int64_t{1});
  if (c.bias && !c.matmul) {
    node.inputs.push_back(g.AddConstant("b", Tensor::FromValues<float>(Shape{c.n}, d.bias).value()).value());
  }
  const ValueId y = g.AddNodeValue("y").value();
  node.outputs = {y};
  REQUIRE(g.AddNode(node).ok());
  REQUIRE(g.AddOutput(y).ok());
  return d;
}

// Trial `trial` of the reference comparisons: random sizes, and every combination of the flags over the trials.
GemmCase TrialCase(int trial, bool per_token, std::mt19937_64& rng) {
  GemmCase c;
  c.m = static_cast<int64_t>(testing::RandomSize(rng, 17));
  c.k = static_cast<int64_t>(testing::RandomSize(rng, 90));
  c.n = static_cast<int64_t>(testing::RandomSize(rng, 40));
  c.per_channel = trial % 2 == 0;
  c.reduce_range = (trial / 2) % 2 == 0;
  c.trans_b = (trial / 4) % 2 == 0;
  c.bias = trial % 3 != 0;
  c.matmul = trial % 5 == 0;
  c.per_token = per_token;
  if (c.matmul) c.bias = false;
  return c;
}

// Runs d's graph on every ISA that can run here at each thread count and requires output bit-identical to
// `expected`; returns how many runs it compared.
int CompareOnEveryIsa(const GemmData& d, const OpRegistry& registry, const std::vector<float>& expected,
                      std::initializer_list<int> thread_counts, const std::string& what) {
  int compared = 0;
  for (Isa isa : testing::CompiledIsaList()) {
    if (!testing::CanRun(isa, what + " on " + IsaName(isa))) continue;
    for (int threads : thread_counts) {
      INFO(IsaName(isa) << ", " << threads << " threads");
      const Context ctx = testing::ContextFor(isa, threads);
      auto exec = Executor::Compile(d.graph, ctx, registry);
      REQUIRE(exec.ok());
      auto y = exec->Run(std::vector<Tensor>{d.x});
      REQUIRE(y.ok());
      const float* got = (*y)[0].data<float>();
      for (size_t i = 0; i < expected.size(); ++i) {
        if (std::memcmp(&got[i], &expected[i], sizeof(float)) != 0) {
          FAIL("element " << i << ": got " << got[i] << ", reference " << expected[i]);
        }
      }
      ++compared;
    }
  }
  return compared;
}

TEST_CASE("DynamicQGemm and DynamicQMatMul equal the reference composition on every ISA and thread count",
          "[dynamic]") {
  auto rng = testing::MakeRng("dynamic qgemm op");
  const OpRegistry registry = Int8Registry();
  int compared = 0;
  for (int trial = 0; trial < 48; ++trial) {
    const GemmCase c = TrialCase(trial, /*per_token=*/false, rng);
    INFO("m " << c.m << " k " << c.k << " n " << c.n << " per_channel " << c.per_channel << " reduce_range "
              << c.reduce_range << " transB " << c.trans_b << " bias " << c.bias << " matmul " << c.matmul);
    const GemmData d = MakeGemm(c, rng);
    std::vector<float> expected(static_cast<size_t>(c.m * c.n));
    const std::vector<int32_t> zps(static_cast<size_t>(c.n), 0);
    reference::DynamicQGemm(static_cast<size_t>(c.m), static_cast<size_t>(c.n), static_cast<size_t>(c.k),
                            d.x.data<float>(), static_cast<size_t>(c.k), d.w.data(), static_cast<size_t>(c.k),
                            d.scales.data(), zps.data(), d.bias.empty() ? nullptr : d.bias.data(), c.reduce_range,
                            expected.data(), static_cast<size_t>(c.n));
    // Not vacuous: the outputs differ from each other when there is more than one.
    if (expected.size() > 2) {
      CHECK(std::adjacent_find(expected.begin(), expected.end(), std::not_equal_to<>()) != expected.end());
    }
    compared += CompareOnEveryIsa(d, registry, expected, {1, 2}, "dynamic qgemm op");
  }
  CHECK(compared >= 96);
}

TEST_CASE("Per-token DynamicQGemm and DynamicQMatMul equal the reference on every ISA and thread count", "[dynamic]") {
  auto rng = testing::MakeRng("per-token qgemm op");
  const OpRegistry registry = Int8Registry();
  int compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const GemmCase c = TrialCase(trial, /*per_token=*/true, rng);
    INFO("m " << c.m << " k " << c.k << " n " << c.n << " per_channel " << c.per_channel << " reduce_range "
              << c.reduce_range << " transB " << c.trans_b << " bias " << c.bias << " matmul " << c.matmul);
    GemmData d = MakeGemm(c, rng);
    // Rows of very different ranges (tokens with outliers, all-zero and one-sided rows): the per-row qparams differ.
    std::uniform_real_distribution<float> gain(0.01f, 60.0f), offset(-3.0f, 3.0f);
    for (int64_t i = 0; i < c.m; ++i) {
      const float g = i % 7 == 3 ? 0.0f : gain(rng), o = i % 7 == 3 ? 0.0f : offset(rng);
      for (int64_t p = 0; p < c.k; ++p) {
        float& v = d.x.data<float>()[i * c.k + p];
        v = v * g + o;
      }
    }
    std::vector<float> expected(static_cast<size_t>(c.m * c.n));
    const std::vector<int32_t> zps(static_cast<size_t>(c.n), 0);
    const auto rows = reference::PerTokenDynamicQGemm(
        static_cast<size_t>(c.m), static_cast<size_t>(c.n), static_cast<size_t>(c.k), d.x.data<float>(),
        static_cast<size_t>(c.k), d.w.data(), static_cast<size_t>(c.k), d.scales.data(), zps.data(),
        d.bias.empty() ? nullptr : d.bias.data(), c.reduce_range, expected.data(), static_cast<size_t>(c.n));
    REQUIRE(rows.size() == static_cast<size_t>(c.m));
    // Not vacuous: each row's qparams come from that row alone.
    for (int64_t i = 0; i < c.m; ++i) {
      const auto q = reference::ChooseDynamicActivationQParams(static_cast<size_t>(c.k), d.x.data<float>() + i * c.k,
                                                               c.reduce_range);
      CHECK(rows[static_cast<size_t>(i)].scale == q.scale);
      CHECK(rows[static_cast<size_t>(i)].zero_point == q.zero_point);
    }
    compared += CompareOnEveryIsa(d, registry, expected, {1, 2, 3}, "per-token qgemm op");
  }
  CHECK(compared >= 120);
}

TEST_CASE("Per-token quantization keeps small rows accurate next to an outlier row", "[dynamic]") {
  auto rng = testing::MakeRng("per-token outlier row");
  GemmCase c;
  c.m = 8;
  c.k = 64;
  c.n = 16;
  c.bias = false;
  GemmData per_tensor = MakeGemm(c, rng);
  c.per_token = true;
  GemmData per_token = MakeGemm(c, rng);
  // Same weights and activations in both graphs; row 0 is 100x the others.
  per_token.x = per_tensor.x;
  per_token.graph.mutable_value(per_token.graph.FindValue("w")).data =
      per_tensor.graph.value(per_tensor.graph.FindValue("w")).data;
  per_token.graph.mutable_value(per_token.graph.FindValue("w")).qparams =
      per_tensor.graph.value(per_tensor.graph.FindValue("w")).qparams;
  for (int64_t p = 0; p < c.k; ++p) per_tensor.x.data<float>()[p] *= 100.0f;
  per_token.x = per_tensor.x;
  // The float product with the dequantized weights, and the error of each graph on rows 1..m-1.
  auto error = [&](const GemmData& d) {
    const Context ctx = testing::ContextFor(Isa::kScalar);
    const OpRegistry registry = Int8Registry();
    const Tensor y = Executor::Compile(d.graph, ctx, registry).value().Run(std::vector<Tensor>{d.x}).value()[0];
    double err = 0;
    for (int64_t i = 1; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double ref = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          ref += double{per_tensor.x.data<float>()[i * c.k + p]} * per_tensor.w[static_cast<size_t>(j * c.k + p)] *
                 per_tensor.scales[static_cast<size_t>(j)];
        }
        err += std::pow(y.data<float>()[i * c.n + j] - ref, 2);
      }
    }
    return err;
  };
  const double e_tensor = error(per_tensor), e_token = error(per_token);
  INFO("squared error per tensor " << e_tensor << ", per token " << e_token);
  CHECK(e_token * 100 < e_tensor);
}

TEST_CASE("DynamicQMatMul takes batched activations [..., K]", "[dynamic]") {
  auto rng = testing::MakeRng("dynamic matmul batched");
  GemmCase c;
  c.m = 6;
  c.k = 19;
  c.n = 7;
  c.matmul = true;
  c.bias = false;
  GemmData d = MakeGemm(c, rng);
  // Reshape x to [2, 3, 19]: the same rows, so the same result as the [6, 19] call.
  Graph g = d.graph;
  g.mutable_value(g.inputs()[0]).shape = Shape{2, 3, 19};
  const Tensor x3 = d.x.Reshaped(Shape{2, 3, 19}).value();
  const Context ctx = testing::ContextFor(Isa::kScalar);
  const OpRegistry registry = Int8Registry();
  auto y2 = Executor::Compile(d.graph, ctx, registry).value().Run(std::vector<Tensor>{d.x}).value();
  auto y3 = Executor::Compile(g, ctx, registry).value().Run(std::vector<Tensor>{x3}).value();
  CHECK(y3[0].shape() == Shape{2, 3, 7});
  CHECK(std::memcmp(y2[0].raw_data(), y3[0].raw_data(), y2[0].SizeBytes()) == 0);
}

TEST_CASE("Dynamic GEMM operators reject bad weights, attributes and non-finite activations clearly", "[dynamic]") {
  auto rng = testing::MakeRng("dynamic qgemm errors");
  const OpRegistry registry = Int8Registry();
  const Context ctx = testing::ContextFor(Isa::kScalar);
  GemmCase c;
  c.m = 3;
  c.k = 5;
  c.n = 4;
  auto compile_error = [&](const Graph& g) {
    auto exec = Executor::Compile(g, ctx, registry);
    REQUIRE_FALSE(exec.ok());
    return exec.status().message();
  };
  {
    GemmData d = MakeGemm(c, rng);
    d.graph.mutable_value(d.graph.FindValue("w")).qparams.reset();
    const std::string m = compile_error(d.graph);
    CHECK_THAT(m, Catch::Contains("'fc'") && Catch::Contains("no qparams"));
  }
  {
    GemmData d = MakeGemm(c, rng);
    d.graph.mutable_node(0).attributes.Set("alpha", 2.0f);
    CHECK_THAT(compile_error(d.graph), Catch::Contains("alpha and beta must be 1"));
  }
  {
    GemmData d = MakeGemm(c, rng);
    d.graph.mutable_node(0).attributes.Set("reduce_range", int64_t{2});
    CHECK_THAT(compile_error(d.graph), Catch::Contains("reduce_range must be 0 or 1"));
  }
  {
    GemmData d = MakeGemm(c, rng);
    d.graph.mutable_node(0).attributes.Set("per_token", int64_t{3});
    CHECK_THAT(compile_error(d.graph), Catch::Contains("per_token must be 0 or 1"));
  }
  {
    GemmData d = MakeGemm(c, rng);  // per channel on axis 0 of [N, K]; claim transB = 0 ([K, N], axis 1)
    d.graph.mutable_node(0).attributes.Set("transB", int64_t{0});
    CHECK_THAT(compile_error(d.graph), Catch::Contains("output-channel axis 1"));
  }
  {
    GemmData d = MakeGemm(c, rng);
    d.graph.mutable_value(d.graph.FindValue("w")).qparams =
        QParams::PerTensor(DType::kS8, 0.01f, 3).value();
    CHECK_THAT(compile_error(d.graph), Catch::Contains("symmetrically"));
  }
  {
    GemmData d = MakeGemm(c, rng);
    d.graph.mutable_value(d.graph.inputs()[0]).shape = Shape{3, 6};
    CHECK_THAT(compile_error(d.graph), Catch::Contains("inner dimensions differ"));
  }
  {
    GemmData d = MakeGemm(c, rng);
    auto exec = Executor::Compile(d.graph, ctx, registry);
    REQUIRE(exec.ok());
    d.x.data<float>()[7] = std::nanf("");
    auto y = exec->Run(std::vector<Tensor>{d.x});
    REQUIRE_FALSE(y.ok());
    CHECK_THAT(y.status().message(), Catch::Contains("element 7") && Catch::Contains("not finite"));
    d.x.data<float>()[7] = INFINITY;
    CHECK_FALSE(exec->Run(std::vector<Tensor>{d.x}).ok());
  }
  {
    GemmCase pt = c;
    pt.per_token = true;
    GemmData d = MakeGemm(pt, rng);
    auto exec = Executor::Compile(d.graph, ctx, registry);
    REQUIRE(exec.ok());
    d.x.data<float>()[12] = -INFINITY;  // row 2, column 2: the message counts from the start of x
    auto y = exec->Run(std::vector<Tensor>{d.x});
    REQUIRE_FALSE(y.ok());
    CHECK_THAT(y.status().message(), Catch::Contains("element 12") && Catch::Contains("not finite"));
  }
}

}  // namespace
}  // namespace octet

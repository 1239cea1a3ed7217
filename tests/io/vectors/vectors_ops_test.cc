// Test vectors of a hand-built int8 graph for what Convert does not emit on the models of vectors_test.cc: s8
// activations, Requantize, a 1-D QConv with asymmetric pads and affine (zero point != 0) weights in q31, QGemm with
// transB = 0 and an f32 bias quantized at Prepare, QMaxPool with ceil_mode and pads, QAveragePool without
// count_include_pad, QGlobalMaxPool, QLookup s8 -> u8, Squeeze, Unsqueeze and Transpose. Every node replays
// bit-exactly, and a changed element is caught.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/cpu_features.h"
#include "core/graph.h"
#include "io/file_util.h"
#include "io/npy.h"
#include "io/vectors/vectors.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::RandomTensor;

struct HandGraph {
  Graph g{"hand"};

  ValueId Value(const std::string& name, std::optional<QParams> qp) {
    const ValueId id = g.AddNodeValue(name).value();
    g.mutable_value(id).qparams = std::move(qp);
    return id;
  }
  ValueId Constant(const std::string& name, Tensor data, std::optional<QParams> qp) {
    const ValueId id = g.AddConstant(name, std::move(data)).value();
    g.mutable_value(id).qparams = std::move(qp);
    return id;
  }
  void Op(const std::string& name, const std::string& op, const std::string& domain, std::vector<ValueId> in,
          std::vector<ValueId> out, AttributeMap attributes = {}) {
    Node n;
    n.name = name;
    n.op_type = op;
    n.domain = domain;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attributes = std::move(attributes);
    REQUIRE(g.AddNode(std::move(n)).ok());
  }
};

template <typename T>
Tensor Codes(std::mt19937_64& rng, DType dtype, Shape shape, int lo, int hi) {
  Tensor t = Tensor::Create(dtype, std::move(shape)).value();
  std::uniform_int_distribution<int> d(lo, hi);
  for (T& v : t.values<T>()) v = static_cast<T>(d(rng));
  return t;
}

Graph Build(std::mt19937_64& rng) {
  HandGraph h;
  const QParams xs8 = QParams::PerTensor(DType::kS8, 0.02f, -3).value();
  const QParams rs8 = QParams::PerTensor(DType::kS8, 0.027f, 5).value();
  const QParams yu8 = QParams::PerTensor(DType::kU8, 0.05f, 100).value();
  const ValueId x = h.g.AddInput("x", DType::kF32, Shape{kUnknownDim, 3, 7, 9}).value();
  const ValueId z = h.g.AddInput("z", DType::kF32, Shape{kUnknownDim, 6}).value();
  const ValueId xq = h.Value("x.q", xs8);
  h.Op("x.quantize", "Quantize", "octet", {x}, {xq}, {{"rounding", "half_away"}});
  const ValueId xr = h.Value("x.rq", rs8);
  h.Op("x.requantize", "Requantize", "octet", {xq}, {xr});

  // Pools and a lookup on the s8 values.
  const ValueId mp = h.Value("maxpool", rs8);
  h.Op("maxpool", "QMaxPool", "octet", {xr}, {mp},
       {{"kernel_shape", std::vector<int64_t>{3, 3}},
        {"strides", std::vector<int64_t>{2, 2}},
        {"pads", std::vector<int64_t>{1, 0, 1, 1}},
        {"ceil_mode", int64_t{1}}});
  const ValueId gm = h.Value("gmax", rs8);
  h.Op("gmax", "QGlobalMaxPool", "octet", {mp}, {gm});
  const QParams aq = QParams::PerTensor(DType::kS8, 0.011f, -7).value();
  const ValueId ap = h.Value("avgpool", aq);
  h.Op("avgpool", "QAveragePool", "octet", {xr}, {ap},
       {{"kernel_shape", std::vector<int64_t>{2, 3}},
        {"strides", std::vector<int64_t>{2, 2}},
        {"pads", std::vector<int64_t>{1, 1, 1, 1}},
        {"count_include_pad", int64_t{0}},
        {"ceil_mode", int64_t{1}}});
  const ValueId lk = h.Value("tanh", QParams::PerTensor(DType::kU8, 1.0f / 128, 128).value());
  h.Op("tanh", "QLookup", "octet", {ap}, {lk}, {{"function", "Tanh"}});
  const ValueId tr = h.Value("transpose", QParams::PerTensor(DType::kU8, 1.0f / 128, 128).value());
  h.Op("transpose", "Transpose", "", {lk}, {tr}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}});

  // A 1-D convolution: squeeze [N, 3, 7, 9] row 0 away after a Gather-free reshape: take x.rq as [N, 21, 9].
  const ValueId shape =
      h.Constant("shape", Tensor::FromValues<int32_t>(Shape{3}, std::vector<int32_t>{0, 21, 9}).value(), std::nullopt);
  const ValueId flat = h.Value("x.ncw", rs8);
  h.Op("to_ncw", "Reshape", "", {xr, shape}, {flat});
  const float w_scale = 0.004f;
  const QParams wq = QParams::PerTensor(DType::kS8, w_scale, 3).value();  // affine weights
  const ValueId w = h.Constant("conv.weight", Codes<int8_t>(rng, DType::kS8, Shape{5, 21, 4}, -128, 127), wq);
  const ValueId b = h.Constant("conv.bias", Codes<int32_t>(rng, DType::kS32, Shape{5}, -3000, 3000),
                               QParams::PerTensor(DType::kS32, 0.027f * w_scale, 0).value());
  const ValueId cv = h.Value("conv", QParams::PerTensor(DType::kU8, 0.08f, 30).value());
  h.Op("conv", "QConv", "octet", {flat, w, b}, {cv},
       {{"pads", std::vector<int64_t>{2, 1}},
        {"strides", std::vector<int64_t>{2}},
        {"dilations", std::vector<int64_t>{1}},
        {"requantization", "q31"},
        {"activation", "Relu"}});
  const ValueId un = h.Value("unsqueeze", QParams::PerTensor(DType::kU8, 0.08f, 30).value());
  const ValueId axes =
      h.Constant("axes", Tensor::FromValues<int32_t>(Shape{1}, std::vector<int32_t>{1}).value(), std::nullopt);
  h.Op("unsqueeze", "Unsqueeze", "", {cv, axes}, {un});
  const ValueId sq = h.Value("squeeze", QParams::PerTensor(DType::kU8, 0.08f, 30).value());
  h.Op("squeeze", "Squeeze", "", {un, axes}, {sq});

  // QGemm with W [K, N] (transB = 0), per-channel on axis 1, and an f32 bias.
  const QParams zq = QParams::PerTensor(DType::kU8, 0.01f, 128).value();
  const ValueId zz = h.Value("z.q", zq);
  h.Op("z.quantize", "Quantize", "octet", {z}, {zz});
  const QParams gw = QParams::PerChannel(DType::kS8, {0.01f, 0.02f, 0.015f, 0.03f}, {0, 0, 0, 0}, 1, -128, 127).value();
  const ValueId gwv = h.Constant("fc.weight", Codes<int8_t>(rng, DType::kS8, Shape{6, 4}, -128, 127), gw);
  const ValueId gb = h.Constant("fc.bias", RandomTensor(rng, Shape{4}, -0.5f, 0.5f), std::nullopt);
  const ValueId fc = h.Value("fc", QParams::PerTensor(DType::kU8, 0.03f, 120).value());
  h.Op("fc", "QGemm", "octet", {zz, gwv, gb}, {fc}, {{"transB", int64_t{0}}});

  int k = 0;
  for (ValueId v : {gm, tr, sq, fc}) {
    const ValueId out = h.g.AddNodeValue(fmt::format("out{}", k)).value();
    h.Op(fmt::format("dequantize{}", k++), "Dequantize", "octet", {v}, {out});
    REQUIRE(h.g.AddOutput(out).ok());
  }
  return std::move(h.g);
}

TEST_CASE(
    "Vectors of a hand-built int8 graph replay bit-exactly: s8, 1-D and asymmetric convolution, pools, "
    "transposes",
    "[vectors]") {
  auto rng = testing::MakeRng("vectors_hand_graph");
  const Graph g = Build(rng);
  const Tensor x = RandomTensor(rng, Shape{2, 3, 7, 9}, -1.5f, 1.5f);
  const Tensor z = RandomTensor(rng, Shape{5, 6}, -1.0f, 1.0f);
  const fs::path tmp = fs::temp_directory_path() / fmt::format("octet_vectors_hand_{}", ::getpid());
  fs::remove_all(tmp);
  const std::string dir = (tmp / "v").string();
  auto summary = WriteVectors(g, {{"z", z}, {"x", x}}, dir, Context::ForIsas(DetectedIsas(), 2));
  INFO(summary.status().message());
  REQUIRE(summary.ok());
  CHECK(summary->nodes.size() == static_cast<size_t>(g.num_nodes()));
  CHECK(summary->not_replayed.empty());
  auto report = ReplayVectors(dir);
  INFO(report.status().message());
  REQUIRE(report.ok());
  CHECK(report->replayed.size() == static_cast<size_t>(g.num_nodes()));

  const json manifest = json::parse(ReadFile(dir + "/manifest.json").value());
  std::map<std::string, json> nodes;
  for (const json& n : manifest["nodes"]) nodes[n["name"]] = n;
  CHECK(nodes["conv"]["params"]["geometry"]["pads"] == json({0, 2, 0, 1}));
  CHECK(nodes["conv"]["params"]["requantization"]["scheme"] == "q31");
  CHECK(nodes["maxpool"]["params"]["geometry"]["output"] == json({4, 5}));
  CHECK(nodes["x.requantize"]["params"]["requantization"].contains("multiplier"));
  CHECK(nodes["tanh"]["params"]["lookup"]["function"] == "Tanh");
  // The accumulators of the affine conv and the outputs of the pools are not constant (not a vacuous replay).
  for (const auto& [name, role] : std::vector<std::pair<std::string, std::string>>{
           {"conv", "accumulator"}, {"fc", "accumulator"}, {"avgpool", "output"}, {"maxpool", "output"}}) {
    INFO(name);
    for (const json& f : nodes[name]["files"]) {
      if (f["role"] != role) continue;
      const Tensor t = ReadNpy(dir + "/" + f["file"].get<std::string>()).value();
      std::set<int32_t> distinct;
      for (int64_t i = 0; i < t.NumElements(); ++i) {
        distinct.insert(t.dtype() == DType::kS32  ? t.data<int32_t>()[i]
                        : t.dtype() == DType::kS8 ? int32_t{t.data<int8_t>()[i]}
                                                  : int32_t{t.data<uint8_t>()[i]});
      }
      CHECK(distinct.size() > 5);
    }
  }

  // A changed element of the transposed output and of the affine conv's accumulator are caught.
  for (const auto& [name, role] : std::vector<std::pair<std::string, std::string>>{
           {"transpose", "output"}, {"conv", "accumulator"}, {"fc", "bias_acc"}}) {
    INFO(name << " " << role);
    std::string path;
    for (const json& f : nodes[name]["files"]) {
      if (f["role"] == role) path = dir + "/" + f["file"].get<std::string>();
    }
    REQUIRE(!path.empty());
    const Tensor original = ReadNpy(path).value();
    Tensor changed = original.Clone().value();
    static_cast<uint8_t*>(changed.raw_data())[0] ^= 0x04;
    REQUIRE(WriteNpy(path, changed).ok());
    auto tampered = ReplayVectors(dir);
    REQUIRE_FALSE(tampered.ok());
    CHECK_THAT(tampered.status().message(),
               Catch::Contains("node '" + name + "'") && Catch::Contains("differs at element 0"));
    REQUIRE(WriteNpy(path, original).ok());
  }
  CHECK(ReplayVectors(dir).ok());
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace octet

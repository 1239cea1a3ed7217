// Test vectors (io/vectors/vectors.h) of a converted builder model that uses most int8 operators (QConv, its
// depthwise case, QAveragePool, QLookup, QAdd, QMul, QConcat, QClamp, QGlobalAveragePool, QGemm, QMatMul,
// Quantize, Dequantize, Flatten) in the reference, tflite (q31) and pytorch-fbgemm profiles: every node replays bit
// for bit; a changed output, accumulator or multiplier makes the replay fail naming node, tensor and element; the
// manifest has its documented fields; bad inputs, unknown nodes and occupied folders are refused without leaving
// anything behind.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/builder.h"
#include "core/cpu_features.h"
#include "io/file_util.h"
#include "io/npy.h"
#include "io/vectors/vectors.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "tests/quant/quant_test_util.h"
#include "tests/qconfig_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::RandomTensor;

constexpr int64_t kC = 3, kH = 8, kW = 8;

// conv -> relu -> avgpool -> {sigmoid, depthwise conv} -> add -> mul -> concat -> relu6 -> global avgpool ->
// flatten -> linear -> matmul (constant weight).
Graph Mixed(uint64_t seed) {
  GraphBuilder b("mixed", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, kC, kH, kW});
  Conv2dOptions c1;
  c1.in_channels = kC;
  c1.out_channels = 4;
  c1.padding = {1, 1};
  x = b.ReLU("relu1", b.Conv2d("conv1", x, c1));
  Pool2dOptions avg;
  avg.padding = {1, 1};
  avg.stride = {2, 2};
  avg.kernel_size = {3, 3};
  const ValueId p = b.AvgPool2d("avgpool", x, avg);
  const ValueId s = b.Sigmoid("sigmoid", p);
  Conv2dOptions dw;
  dw.in_channels = dw.out_channels = dw.groups = 4;
  dw.padding = {1, 1};
  const ValueId d = b.Conv2d("dwconv", p, dw);
  const ValueId a = b.Add("add", s, d);
  const ValueId m = b.Mul("mul", a, p);
  const ValueId cat = b.Concat("concat", {m, s}, 1);
  const ValueId r6 = b.ReLU6("relu6", cat);
  const ValueId g = b.Flatten("flatten", b.AdaptiveAvgPool2d1("gap", r6));
  const ValueId fc = b.Linear("fc", g, 8, 6);
  std::mt19937_64 rng(seed);
  const ValueId w = b.Constant("proj.weight", RandomTensor(rng, Shape{6, 5}, -0.5f, 0.5f));
  b.Output(b.MatMul("proj", fc, w));
  return std::move(b).Build().value();
}

struct Model {
  PreparedGraph prepared;
  Tensor x;
};

Model Calibrated() {
  std::mt19937_64 rng = testing::MakeRng("vectors_mixed");
  const Graph original = Mixed(rng());
  PreparedGraph prepared =
      testing::CalibratedOnRandom(original, testing::X86Mapping(ObserverKind::kMinMax), rng, Shape{4, kC, kH, kW});
  return {std::move(prepared), RandomTensor(rng, Shape{5, kC, kH, kW}, -1.2f, 1.2f)};
}

Graph Converted(const Model& m, NumericsProfile profile) {
  ConvertOptions options;
  options.profile = profile;
  auto g = Convert(m.prepared, options);
  INFO(g.status().message());
  REQUIRE(g.ok());
  return std::move(*g);
}

// A fresh folder under the system's temporary folder, removed at the end of the test.
struct TempFolder {
  fs::path path;
  explicit TempFolder(const std::string& salt) {
    path = fs::temp_directory_path() / fmt::format("octet_vectors_{}_{}_{}", salt, ::getpid(), counter()++);
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

json ReadManifest(const std::string& dir) { return json::parse(ReadFile(dir + "/manifest.json").value()); }

const json& NodeEntry(const json& manifest, const std::string& name) {
  for (const json& n : manifest["nodes"]) {
    if (n["name"] == name) return n;
  }
  FAIL("no node " << name << " in the manifest");
  return manifest;
}

std::string FileOf(const json& node, const std::string& role) {
  for (const json& f : node["files"]) {
    if (f["role"] == role) return f["file"];
  }
  FAIL("node " << node["name"] << " has no " << role);
  return "";
}

const Context kScalar = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);

TEST_CASE("Vectors of a converted model replay bit-exactly for every node in each requantization scheme", "[vectors]") {
  const Model m = Calibrated();
  for (NumericsProfile profile :
       {NumericsProfile::kReference, NumericsProfile::kTflite, NumericsProfile::kPytorchFbgemm}) {
    INFO("profile " << NumericsProfileName(profile));
    const Graph g = Converted(m, profile);
    TempFolder tmp("mixed");
    const std::string dir = tmp / "v";
    const Context detected = Context::ForIsas(DetectedIsas(), 3);
    for (const Context* context : {&kScalar, &detected}) {
      VectorsOptions options;
      options.force = true;
      auto summary = WriteVectors(g, {{"x", m.x}}, dir, *context, options);
      INFO(summary.status().message());
      REQUIRE(summary.ok());
      CHECK(summary->not_replayed.empty());
      auto report = ReplayVectors(dir);
      INFO(report.status().message());
      REQUIRE(report.ok());
      CHECK(report->replayed.size() == summary->nodes.size());
      CHECK(report->skipped.empty());
      CHECK(report->elements > 1000);
    }
    // Every op kind the model converts to is there, and each recorded its documented tensors.
    const json manifest = ReadManifest(dir);
    std::set<std::string> ops;
    for (const json& n : manifest["nodes"]) {
      ops.insert(n["op"].get<std::string>());
      CHECK(n["replay"] == "reference");
    }
    for (const char* op : {"Quantize", "QConv", "QAveragePool", "QLookup", "QAdd", "QMul", "QConcat", "QClamp",
                           "QGlobalAveragePool", "Flatten", "QGemm", "QMatMul", "Dequantize"}) {
      INFO(op);
      CHECK(ops.count(op) == 1);
    }
    const std::string scheme = profile == NumericsProfile::kTflite          ? "q31"
                               : profile == NumericsProfile::kPytorchFbgemm ? "fbgemm"
                                                                            : "fp32";
    for (const char* name : {"conv1", "dwconv", "fc", "proj"}) {
      const json& n = NodeEntry(manifest, name);
      INFO(name);
      CHECK(n["params"]["requantization"]["scheme"] == scheme);
      std::set<std::string> roles;
      for (const json& f : n["files"]) roles.insert(f["role"].get<std::string>());
      CHECK(roles.count("input") == 1);
      CHECK(roles.count("weight") == 1);
      CHECK(roles.count("accumulator") == 1);
      CHECK(roles.count("bias_acc") == 1);
      CHECK(roles.count("output") == 1);
      CHECK(roles.count(scheme == "q31" ? "q31_shift" : "multiplier") == 1);
      // Not vacuous: the accumulators and outputs take many values (at least a third of them distinct; the
      // smallest, proj, has few elements, and on some seeds only 10 distinct values).
      const Tensor acc = ReadNpy(dir + "/" + FileOf(n, "accumulator")).value();
      const Tensor y = ReadNpy(dir + "/" + FileOf(n, "output")).value();
      std::set<int32_t> distinct_acc(acc.values<int32_t>().begin(), acc.values<int32_t>().end());
      INFO(acc.NumElements() << " accumulators, " << distinct_acc.size() << " distinct");
      CHECK(distinct_acc.size() >= std::min<size_t>(10, static_cast<size_t>(acc.NumElements()) / 3));
      std::set<int32_t> distinct_y;
      for (int64_t i = 0; i < y.NumElements(); ++i) {
        distinct_y.insert(y.dtype() == DType::kU8 ? int32_t{y.data<uint8_t>()[i]} : int32_t{y.data<int8_t>()[i]});
      }
      CHECK(distinct_y.size() > 3);
    }
    CHECK(NodeEntry(manifest, "dwconv")["params"]["geometry"]["group"] == 4);
    CHECK(NodeEntry(manifest, "avgpool")["params"]["geometry"]["pads"] == json({1, 1, 1, 1}));
  }
}

TEST_CASE("A changed output, accumulator or parameter makes the replay fail naming node, tensor and element",
          "[vectors]") {
  const Model m = Calibrated();
  const Graph g = Converted(m, NumericsProfile::kTflite);
  TempFolder tmp("tamper");
  const std::string dir = tmp / "v";
  REQUIRE(WriteVectors(g, {{"x", m.x}}, dir, kScalar).ok());
  const json manifest = ReadManifest(dir);
  struct Case {
    std::string node, role, expect;
    int64_t element;
  };
  for (const Case& c : {Case{"conv1", "output", "output 0 differs at element 37", 37},
                        Case{"dwconv", "accumulator", "accumulator differs at element 5", 5},
                        Case{"fc", "q31_multiplier", "q31_multiplier differs at element 2", 2},
                        Case{"add", "output", "output 0 differs at element 11", 11},
                        Case{"gap", "output", "output 0 differs at element 0", 0}}) {
    INFO(c.node << " " << c.role);
    const std::string path = dir + "/" + FileOf(NodeEntry(manifest, c.node), c.role);
    const Tensor original = ReadNpy(path).value();
    Tensor changed = original.Clone().value();
    switch (changed.dtype()) {
      case DType::kU8: changed.data<uint8_t>()[c.element] ^= 1; break;
      case DType::kS8: changed.data<int8_t>()[c.element] ^= 1; break;
      case DType::kS32: changed.data<int32_t>()[c.element] += 1; break;
      case DType::kF32: changed.data<float>()[c.element] *= 1.5f; break;
    }
    REQUIRE(WriteNpy(path, changed).ok());
    auto report = ReplayVectors(dir);
    REQUIRE_FALSE(report.ok());
    INFO(report.status().message());
    CHECK(report.status().code() == StatusCode::kDataLoss);
    CHECK_THAT(report.status().message(), Catch::Contains("node '" + c.node + "'"));
    CHECK_THAT(report.status().message(), Catch::Contains(c.expect));
    CHECK_THAT(report.status().message(), Catch::Contains("expected"));
    REQUIRE(WriteNpy(path, original).ok());
    REQUIRE(ReplayVectors(dir).ok());
  }
  // A file whose shape disagrees with the manifest, a missing file, a wrong schema version.
  const std::string bias = dir + "/" + FileOf(NodeEntry(manifest, "fc"), "bias_acc");
  const Tensor kept = ReadNpy(bias).value();
  REQUIRE(WriteNpy(bias, Tensor::Create(DType::kS32, Shape{2}).value()).ok());
  auto report = ReplayVectors(dir);
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.status().message(), Catch::Contains("node 'fc'") && Catch::Contains("the manifest says s32 [6]"));
  fs::remove(bias);
  report = ReplayVectors(dir);
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.status().message(), Catch::Contains("bias_acc.npy"));
  REQUIRE(WriteNpy(bias, kept).ok());
  json changed = manifest;
  changed["schema_version"] = 99;
  REQUIRE(WriteFileAtomically(dir + "/manifest.json", changed.dump()).ok());
  report = ReplayVectors(dir);
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.status().message(), Catch::Contains("schema_version 99"));
}

TEST_CASE("The vectors manifest has the documented fields", "[vectors]") {
  const Model m = Calibrated();
  const Graph g = Converted(m, NumericsProfile::kReference);
  TempFolder tmp("manifest");
  const std::string dir = tmp / "v";
  VectorsOptions options;
  options.model_name = "mixed.octet";
  REQUIRE(WriteVectors(g, {{"x", m.x}}, dir, kScalar, options).ok());
  const json manifest = ReadManifest(dir);
  CHECK(manifest["schema_version"] == kVectorsSchemaVersion);
  CHECK(manifest["model"] == "mixed.octet");
  CHECK(manifest["graph"] == "mixed");
  CHECK(manifest["inputs"] == json::array({{{"name", "x"}, {"dtype", "f32"}, {"shape", {5, kC, kH, kW}}}}));
  REQUIRE(manifest["nodes"].size() == static_cast<size_t>(g.num_nodes()));
  std::set<std::string> files_seen;
  for (const json& n : manifest["nodes"]) {
    INFO(n.dump().substr(0, 200));
    for (const char* key : {"index", "name", "op", "domain", "kernel", "replay", "attributes", "params", "files"}) {
      CHECK(n.contains(key));
    }
    CHECK(g.node(n["index"].get<int>()).name == n["name"]);
    for (const json& f : n["files"]) {
      const Tensor t = ReadNpy(dir + "/" + f["file"].get<std::string>()).value();
      CHECK(f["dtype"] == DTypeName(t.dtype()));
      CHECK(f["shape"] == t.shape().dims());
      CHECK(files_seen.insert(f["file"].get<std::string>()).second);
      const std::string role = f["role"];
      if (role == "input" || role == "output" || role == "weight" || role == "bias") {
        CHECK(f.contains("slot"));
        CHECK(f.contains("value"));
      }
      if (t.dtype() == DType::kU8 || t.dtype() == DType::kS8) {  // every integer activation and weight
        REQUIRE(f.contains("qparams"));
        for (const char* key : {"scheme", "dtype", "quant_min", "quant_max", "scales", "zero_points", "axis"}) {
          CHECK(f["qparams"].contains(key));
        }
      }
    }
  }
  const json& conv = NodeEntry(manifest, "conv1");
  CHECK(conv["op"] == "QConv");
  CHECK(conv["domain"] == "octet");
  CHECK(conv["attributes"]["activation"] == "Relu");
  const json& r = conv["params"]["requantization"];
  for (const char* key :
       {"scheme", "activation", "channels", "channel_axis", "output_dtype", "zero_point", "lo", "hi"}) {
    CHECK(r.contains(key));
  }
  CHECK(r["lo"] == r["zero_point"]);  // the fused Relu
  const json& w = [&]() -> const json& {
    for (const json& f : conv["files"]) {
      if (f["role"] == "weight") return f;
    }
    FAIL("no weight");
    return conv;
  }();
  CHECK(w["qparams"]["scheme"] == "per_channel_symmetric");
  CHECK(w["qparams"]["scales"].size() == 4);
  // Only the selected nodes, when asked.
  const std::string some = tmp / "some";
  options.nodes = {"fc", "conv1"};
  auto summary = WriteVectors(g, {{"x", m.x}}, some, kScalar, options);
  REQUIRE(summary.ok());
  CHECK(summary->nodes == std::vector<std::string>{"conv1", "fc"});
  CHECK(ReadManifest(some)["nodes"].size() == 2);
}

TEST_CASE("Vectors refuse bad inputs, unknown nodes and occupied folders, leaving nothing behind", "[vectors]") {
  const Model m = Calibrated();
  const Graph g = Converted(m, NumericsProfile::kReference);
  TempFolder tmp("errors");
  const std::string dir = tmp / "v";
  auto fails = [&](const std::vector<std::pair<std::string, Tensor>>& inputs, const VectorsOptions& options,
                   const std::string& expect) {
    auto r = WriteVectors(g, inputs, dir, kScalar, options);
    REQUIRE_FALSE(r.ok());
    INFO(r.status().message());
    CHECK_THAT(r.status().message(), Catch::Contains(expect));
    CHECK(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()) == 0);  // no dir, no staging
  };
  fails({}, {}, "input 'x' of graph 'mixed' is not given");
  fails({{"x", m.x}, {"y", m.x}}, {}, "has no input named 'y'");
  fails({{"x", Tensor::Create(DType::kF32, Shape{5, kC, kH}).value()}}, {}, "input 'x' must have shape");
  fails({{"x", Tensor::Create(DType::kF32, Shape{5, kC + 1, kH, kW}).value()}}, {}, "input 'x' must have shape");
  fails({{"x", Tensor::Create(DType::kU8, Shape{5, kC, kH, kW}).value()}}, {}, "input 'x' must be f32, got u8");
  VectorsOptions unknown;
  unknown.nodes = {"conv1", "conv9"};
  fails({{"x", m.x}}, unknown, "has no node named 'conv9'");

  // An existing non-empty folder is refused unless forced, and then replaced whole.
  fs::create_directories(dir);
  REQUIRE(WriteFileAtomically(dir + "/keep.txt", "x").ok());
  auto r = WriteVectors(g, {{"x", m.x}}, dir, kScalar);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("not empty"));
  CHECK(fs::exists(dir + "/keep.txt"));
  VectorsOptions force;
  force.force = true;
  REQUIRE(WriteVectors(g, {{"x", m.x}}, dir, kScalar, force).ok());
  CHECK_FALSE(fs::exists(dir + "/keep.txt"));
  CHECK(ReplayVectors(dir).ok());
  CHECK(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()) == 1);  // no staging left
  // An empty folder is fine without --force.
  const std::string empty = tmp / "empty";
  fs::create_directories(empty);
  CHECK(WriteVectors(g, {{"x", m.x}}, empty, kScalar).ok());
  // Replay of a folder without vectors.
  auto missing = ReplayVectors(tmp / "nothing");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("manifest.json"));
}

}  // namespace
}  // namespace octet

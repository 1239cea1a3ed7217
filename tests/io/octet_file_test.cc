// Tests of .octet model files (io/octet_file.h): round trips of every field, runs that give bit-identical outputs,
// the data alignment, atomic writes, and malformed files (each with its exact message).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/builder.h"
#include "core/executor.h"
#include "io/crc32.h"
#include "io/file_util.h"
#include "io/octet_file.h"
#include "io/octet_format.h"
#include "quant/quantized_registry.h"
#include "tests/io/octet_test_util.h"
#include "tests/io/temp_dir.h"
#include "tests/test_util.h"

namespace octet {
namespace {

namespace fs = std::filesystem;
namespace of = octet_format;
using testing::AssembleOctet;
using testing::Bytes;
using testing::Crc;
using testing::ExpectSameGraph;
using testing::OctetSections;

// A fresh folder for each test, removed at scope exit.
class OctetFileTempDir : public testing::TempDir {
 public:
  OctetFileTempDir() : testing::TempDir("octet_file_test") {}
};

std::span<const std::byte> AsBytes(const std::string& s) { return std::as_bytes(std::span<const char>(s)); }

Result<OctetModel> ParseOctetBytes(const std::string& bytes, std::string_view name = "bad.octet") {
  return ParseOctet(AsBytes(bytes), name);
}

template <typename T>
Tensor MakeTensor(Shape shape, std::vector<T> values) {
  return Tensor::FromValues<T>(std::move(shape), std::span<const T>(values)).value();
}

// A graph that uses every feature of the format: each dtype for inputs and constants, unknown dims, per-tensor and
// per-channel qparams (including a 4-bit range and s32), an empty and a scalar constant, a node value with a shape
// and qparams, every attribute type (NaN, -0 and infinity in floats, NUL and newline in strings, empty lists, a
// tensor attribute), omitted inputs and outputs, a domain, and a constant added before an input.
Graph KitchenSinkGraph() {
  Graph g("kitchen sink");
  const ValueId w = g.AddConstant("layer1.w_s8", MakeTensor<int8_t>({3, 4}, {-127, -5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 127}))
                        .value();
  g.mutable_value(w).qparams =
      QParams::Create(QScheme::kPerChannelSymmetric, DType::kS8, -127, 127, {0.5f, 0.25f, 0.125f}, {0, 0, 0}, 0)
          .value();
  const ValueId x = g.AddInput("x", DType::kF32, Shape{kUnknownDim, 4}).value();
  const ValueId tokens = g.AddInput("tokens", DType::kS32, Shape{kUnknownDim}).value();
  const ValueId q_in = g.AddInput("q_in", DType::kU8, Shape{2, 3}).value();
  g.mutable_value(q_in).qparams = QParams::PerTensor(DType::kU8, 0.5f, 128).value();
  const ValueId b =
      g.AddConstant("layer1.b_s32", MakeTensor<int32_t>({3}, {-7, 0, std::numeric_limits<int32_t>::max()})).value();
  g.mutable_value(b).qparams =
      QParams::PerChannel(DType::kS32, {0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0, std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max())
          .value();
  const ValueId u = g.AddConstant("table.u8", MakeTensor<uint8_t>({5}, {0, 1, 2, 3, 15})).value();
  g.mutable_value(u).qparams = QParams::PerTensor(DType::kU8, 0.25f, 3, 0, 15).value();
  const ValueId s8_axis1 = g.AddConstant("w_axis1", MakeTensor<int8_t>({2, 2}, {1, -1, 2, -2})).value();
  g.mutable_value(s8_axis1).qparams =
      QParams::PerChannel(DType::kS8, {1.5f, 3.0f}, {-1, 2}, 1, -128, 127).value();
  const ValueId empty = g.AddConstant("empty", MakeTensor<float>({0, 3}, {})).value();
  const ValueId scalar = g.AddConstant("scalar", MakeTensor<float>(Shape{}, {-0.0f})).value();
  const ValueId y = g.AddNodeValue("y", DType::kU8).value();
  g.mutable_value(y).shape = Shape{kUnknownDim, 3};
  g.mutable_value(y).qparams = QParams::PerTensor(DType::kU8, 0.0625f, 7).value();
  const ValueId z = g.AddNodeValue("z").value();

  Node sink;
  sink.name = "layer1/sink:0";
  sink.op_type = "Sink";
  sink.domain = "octet.test";
  sink.attributes.Set("i", int64_t{-1234567890123});
  sink.attributes.Set("f_nan", std::numeric_limits<float>::quiet_NaN());
  sink.attributes.Set("f_negzero", -0.0f);
  sink.attributes.Set("s", std::string("a\0b\nc", 5));
  sink.attributes.Set("s_empty", "");
  sink.attributes.Set("t", MakeTensor<int32_t>({2, 1}, {5, -6}));
  sink.attributes.Set("t_f32", MakeTensor<float>({3}, {1.5f, -2.0f, 1e-30f}));
  sink.attributes.Set("t_u8_empty", MakeTensor<uint8_t>({0}, {}));
  sink.attributes.Set("ints", std::vector<int64_t>{1, -2, std::numeric_limits<int64_t>::min()});
  sink.attributes.Set("ints_empty", std::vector<int64_t>{});
  sink.attributes.Set("floats", std::vector<float>{0.5f, std::numeric_limits<float>::infinity(), -3.0f});
  sink.attributes.Set("strings", std::vector<std::string>{"NOTSET", "", "x y"});
  sink.inputs = {x, kNoValue, w, b};
  sink.outputs = {y, kNoValue};
  REQUIRE(g.AddNode(std::move(sink)).ok());

  Node other;
  other.name = "other";
  other.op_type = "Other";
  other.inputs = {y, tokens, u, q_in, empty, scalar, s8_axis1, kNoValue};
  other.outputs = {z};
  REQUIRE(g.AddNode(std::move(other)).ok());
  REQUIRE(g.AddOutput(z).ok());
  REQUIRE(g.AddOutput(y).ok());
  return g;
}

const OctetMetadata kMetadata = {
    {"producer", "octet test"}, {"mode", "static"}, {"profile", "reference"}, {"octet_version", "0.1.0"},
    {"note", std::string("multi\nline\0value", 16)}};

TEST_CASE("crc32 matches zlib's check value and continues across pieces", "[octet_file]") {
  const std::string s = "123456789";
  CHECK(Crc(s) == 0xCBF43926u);
  CHECK(Crc32(AsBytes(s).subspan(4), Crc32(AsBytes(s).first(4))) == 0xCBF43926u);
  CHECK(Crc("") == 0u);
}

TEST_CASE("octet file round trip keeps every field of a graph", "[octet_file]") {
  const Graph g = KitchenSinkGraph();
  const std::string bytes = SerializeOctet(g, kMetadata, "mem.octet").value();
  const Result<OctetModel> model = ParseOctet(AsBytes(bytes), "mem.octet");
  REQUIRE(model.ok());
  CHECK(model->format_version == kOctetFormatVersion);
  CHECK(model->metadata == kMetadata);
  ExpectSameGraph(g, model->graph);
  // The inputs come first in the file, so the loaded graph's input order is the original's even though a constant
  // was added before them.
  CHECK(model->graph.inputs() == std::vector<ValueId>{0, 1, 2});
  // Deterministic, and the loaded graph serialises to the same bytes.
  CHECK(SerializeOctet(g, kMetadata, "again").value() == bytes);
  CHECK(SerializeOctet(model->graph, model->metadata, "reloaded").value() == bytes);
}

// If's branches (Node::subgraphs) round-trip: each is stored as a whole .octet file inside the node's record.
TEST_CASE("octet file round trip keeps a node's subgraphs", "[octet_file]") {
  auto branch = [](const std::string& op) {
    auto b = std::make_shared<Graph>(op + "_branch");
    const ValueId x = b->AddInput("x", DType::kF32, Shape{4}).value();
    const ValueId y = b->AddNodeValue(op + "_y").value();
    Node n;
    n.name = op;
    n.op_type = op;
    n.inputs = {x};
    n.outputs = {y};
    REQUIRE(b->AddNode(std::move(n)).ok());
    REQUIRE(b->AddOutput(y).ok());
    return std::shared_ptr<const Graph>(b);
  };
  Graph g("if_graph");
  const ValueId cond = g.AddInput("cond", DType::kU8, Shape{}).value();
  const ValueId x = g.AddInput("x", DType::kF32, Shape{4}).value();
  const ValueId y = g.AddNodeValue("y").value();
  Node n;
  n.name = "if";
  n.op_type = "If";
  n.inputs = {cond, x};
  n.outputs = {y};
  n.attributes.Set("octet_outer_inputs", Attribute(int64_t{1}));
  n.subgraphs["then_branch"] = branch("Relu");
  n.subgraphs["else_branch"] = branch("Neg");
  REQUIRE(g.AddNode(std::move(n)).ok());
  REQUIRE(g.AddOutput(y).ok());
  const Result<std::string> bytes = SerializeOctet(g, kMetadata, "if.octet");
  INFO(bytes.status().message());
  REQUIRE(bytes.ok());
  const Result<OctetModel> model = ParseOctet(AsBytes(*bytes), "if.octet");
  INFO(model.status().message());
  REQUIRE(model.ok());
  ExpectSameGraph(g, model->graph);
  const Node& loaded = model->graph.nodes()[0];
  CHECK(loaded.subgraphs.size() == 2);
  for (const auto& [name, op] : {std::pair<std::string, std::string>{"then_branch", "Relu"}, {"else_branch", "Neg"}}) {
    INFO(name);
    const auto it = loaded.subgraphs.find(name);
    REQUIRE(it != loaded.subgraphs.end());
    REQUIRE(it->second != nullptr);
    ExpectSameGraph(*g.nodes()[0].subgraphs.at(name), *it->second);
    REQUIRE(it->second->nodes().size() == 1);
    CHECK(it->second->nodes()[0].op_type == op);
  }
  // A graph without subgraphs is written as before: the nested records appear only where a node holds them.
  Graph plain = g;
  plain.mutable_node(0).subgraphs.clear();
  const Result<OctetModel> reread = ParseOctet(AsBytes(SerializeOctet(plain, kMetadata, "p.octet").value()), "p");
  REQUIRE(reread.ok());
  CHECK(reread->graph.nodes()[0].subgraphs.empty());
}

TEST_CASE("octet file constant data starts at multiples of 64 bytes", "[octet_file]") {
  // Odd sizes, so unaligned packing would show; distinct bytes, so each tensor can be found in the file.
  Graph g("aligned");
  const ValueId x = g.AddInput("x", DType::kU8, Shape{3}).value();
  std::vector<Tensor> tensors = {MakeTensor<uint8_t>({3}, {0xA1, 0xA2, 0xA3}),
                                 MakeTensor<float>({5}, {11.5f, 12.5f, 13.5f, 14.5f, 15.5f}),
                                 MakeTensor<int8_t>({7}, {-91, -92, -93, -94, -95, -96, -97})};
  std::vector<ValueId> ids = {x};
  for (size_t k = 0; k < tensors.size(); ++k) ids.push_back(g.AddConstant(fmt::format("c{}", k), tensors[k]).value());
  const ValueId y = g.AddNodeValue("y").value();
  Node n;
  n.name = "n";
  n.op_type = "Concat";
  n.attributes.Set("blob", MakeTensor<int32_t>({3}, {0x5151, 0x5252, 0x5353}));
  tensors.push_back(n.attributes.Find("blob")->t());
  n.inputs = ids;
  n.outputs = {y};
  REQUIRE(g.AddNode(std::move(n)).ok());
  REQUIRE(g.AddOutput(y).ok());
  const std::string bytes = SerializeOctet(g, {}, "aligned.octet").value();
  for (const Tensor& t : tensors) {
    const std::string needle(static_cast<const char*>(t.raw_data()), t.SizeBytes());
    const size_t at = bytes.find(needle);
    REQUIRE(at != std::string::npos);
    CHECK(at % 64 == 0);
    CHECK(bytes.find(needle, at + 1) == std::string::npos);
  }
}

// Runs `graph` on `inputs` with QuantizedGraphRegistry().
std::vector<Tensor> RunOctetGraph(const Graph& graph, const std::vector<Tensor>& inputs) {
  static const OpRegistry registry = QuantizedGraphRegistry();
  return testing::RunWithInputShapes(graph, Context::ForIsas(IsaSet::Of({Isa::kScalar})), registry, inputs);
}

void ExpectSameOutputsAfterRoundTrip(const Graph& graph, const std::vector<Tensor>& inputs) {
  OctetFileTempDir dir;
  const std::string path = dir.File("model.octet");
  REQUIRE(WriteOctetFile(path, graph, {{"producer", "test"}}).ok());
  const Result<OctetModel> loaded = ReadOctetFile(path);
  REQUIRE(loaded.ok());
  ExpectSameGraph(graph, loaded->graph);
  const std::vector<Tensor> want = RunOctetGraph(graph, inputs);
  const std::vector<Tensor> got = RunOctetGraph(loaded->graph, inputs);
  REQUIRE(want.size() == got.size());
  for (size_t k = 0; k < want.size(); ++k) testing::ExpectSameTensor(got[k], want[k], fmt::format("output {}", k));
  // Guard against a vacuous comparison: the outputs carry information.
  const auto v = want[0].values<float>();
  CHECK(std::any_of(v.begin(), v.end(), [&](float f) { return f != v[0]; }));
}

TEST_CASE("octet file save, load and run gives bit-identical outputs", "[octet_file]") {
  std::mt19937_64 rng = testing::MakeRng("octet_file_run");
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  auto random_tensor = [&](Shape shape) {
    Tensor t = Tensor::Create(DType::kF32, std::move(shape)).value();
    for (float& f : t.values<float>()) f = dist(rng);
    return t;
  };

  SECTION("a small CNN with an LSTM head (omitted optional inputs)") {
    GraphBuilder b("cnn_lstm", 7);
    const ValueId x = b.Input("image", DType::kF32, Shape{kUnknownDim, 1, 6, 6});
    Conv2dOptions conv;
    conv.in_channels = 1;
    conv.out_channels = 4;
    conv.kernel_size = {3, 3};
    ValueId h = b.ReLU("relu1", b.Conv2d("conv1", x, conv));
    h = b.Reshape("to_seq", h, {0, 4, 16});
    RnnOptions rnn;
    rnn.input_size = 16;
    rnn.hidden_size = 5;
    const RnnOutputs lstm = b.LSTM("lstm", h, rnn);
    b.Output(b.Linear("fc", b.Flatten("flat", lstm.output), 20, 3));
    const Graph g = std::move(b).Build().value();
    ExpectSameOutputsAfterRoundTrip(g, {random_tensor({2, 1, 6, 6})});
  }

  SECTION("a quantized-looking graph: s8 per-channel weights, s32 bias and u8 table dequantized by Cast and Mul") {
    Graph g("qlike");
    const ValueId x = g.AddInput("x", DType::kF32, Shape{kUnknownDim, 4}).value();
    std::vector<int8_t> wq(12);
    std::uniform_int_distribution<int> q(-127, 127);
    for (int8_t& v : wq) v = static_cast<int8_t>(q(rng));
    const ValueId w = g.AddConstant("fc.weight", MakeTensor<int8_t>({3, 4}, wq)).value();
    g.mutable_value(w).qparams =
        QParams::Create(QScheme::kPerChannelSymmetric, DType::kS8, -127, 127, {0.02f, 0.03f, 0.05f}, {0, 0, 0}, 0)
            .value();
    const ValueId w_scale = g.AddConstant("fc.weight_scale", MakeTensor<float>({3, 1}, {0.02f, 0.03f, 0.05f})).value();
    const ValueId bias = g.AddConstant("fc.bias", MakeTensor<int32_t>({3}, {-300, 41, 977})).value();
    g.mutable_value(bias).qparams = QParams::Create(QScheme::kPerChannelSymmetric, DType::kS32,
                                                    std::numeric_limits<int32_t>::min() + 1,
                                                    std::numeric_limits<int32_t>::max(), {1e-3f, 1e-3f, 1e-3f},
                                                    {0, 0, 0}, 0)
                                        .value();
    const ValueId b_scale = g.AddConstant("fc.bias_scale", MakeTensor<float>(Shape{}, {1e-3f})).value();
    std::vector<ValueId> v;
    auto node = [&](const std::string& name, const std::string& op, std::vector<ValueId> ins, AttributeMap attrs) {
      const ValueId out = g.AddNodeValue(name + ".out").value();
      Node n;
      n.name = name;
      n.op_type = op;
      n.attributes = std::move(attrs);
      n.inputs = std::move(ins);
      n.outputs = {out};
      REQUIRE(g.AddNode(std::move(n)).ok());
      return out;
    };
    const ValueId wf = node("fc.weight_cast", "Cast", {w}, {{"to", 1}});
    const ValueId wd = node("fc.weight_dq", "Mul", {wf, w_scale}, {});
    const ValueId bf = node("fc.bias_cast", "Cast", {bias}, {{"to", 1}});
    const ValueId bd = node("fc.bias_dq", "Mul", {bf, b_scale}, {});
    const ValueId y = node("fc", "Gemm", {x, wd, bd}, {{"transB", 1}, {"alpha", 1.0f}});
    const ValueId r = node("relu", "Relu", {y}, {});
    REQUIRE(g.AddOutput(r).ok());
    REQUIRE(g.AddOutput(y).ok());
    ExpectSameOutputsAfterRoundTrip(g, {random_tensor({5, 4})});
  }
}

TEST_CASE("octet file writes are atomic and leave nothing behind on failure", "[octet_file]") {
  OctetFileTempDir dir;
  const Graph g = KitchenSinkGraph();

  SECTION("into a missing folder") {
    const std::string path = dir.File("missing/model.octet");
    const Status s = WriteOctetFile(path, g);
    CHECK(s.code() == StatusCode::kIoError);
    CHECK(s.message() == fmt::format("failed to write file '{}': cannot create a temporary file in its folder: No "
                                     "such file or directory",
                                     path));
    CHECK(dir.List().empty());
  }

  SECTION("an invalid graph leaves the old file as it was") {
    const std::string path = dir.File("model.octet");
    REQUIRE(WriteOctetFile(path, g, kMetadata).ok());
    const std::string before = ReadFile(path).value();
    Graph bad = g;
    bad.mutable_outputs().clear();
    const Status s = WriteOctetFile(path, bad);
    CHECK(s.message() ==
          fmt::format("failed to write .octet file '{}': failed to verify graph 'kitchen sink': the graph has no "
                      "outputs",
                      path));
    CHECK(ReadFile(path).value() == before);
    CHECK(dir.List() == std::vector<std::string>{"model.octet"});
  }

  SECTION("names with control characters and empty metadata keys are refused") {
    Graph bad = g;
    bad.mutable_node(0).op_type = "Si\tnk";
    CHECK(SerializeOctet(bad, {}, "m.octet").status().message() ==
          "failed to write .octet file 'm.octet': node 'layer1/sink:0' op type \"Si\\tnk\" contains control "
          "characters");
    CHECK(SerializeOctet(g, {{"", "x"}}, "m.octet").status().message() ==
          "failed to write .octet file 'm.octet': metadata key is empty");
  }

  SECTION("reading a missing file names it") {
    const Result<OctetModel> r = ReadOctetFile(dir.File("none.octet"));
    CHECK(r.status().code() == StatusCode::kNotFound);
    CHECK_THAT(r.status().message(), Catch::Matchers::Contains("none.octet"));
  }

  SECTION("IsOctetFile tells .octet files by their magic") {
    const std::string path = dir.File("renamed.bin");
    REQUIRE(WriteOctetFile(path, g).ok());
    CHECK(IsOctetFile(path));
    std::ofstream(dir.File("text.octet")) << "hello";
    CHECK_FALSE(IsOctetFile(dir.File("text.octet")));
    CHECK_FALSE(IsOctetFile(dir.File("none")));
  }
}

TEST_CASE("octet files written by an independent encoder (tests/fuzz/make_octet_seeds.py) load", "[octet_file]") {
  const std::string dir = std::string(OCTET_TEST_DATA_DIR) + "/../fuzz/corpus/octet/";

  const Result<OctetModel> minimal = ReadOctetFile(dir + "minimal.octet");
  REQUIRE(minimal.ok());
  CHECK(minimal->metadata == OctetMetadata{{"producer", "make_octet_seeds.py"}});
  const std::vector<Tensor> y = RunOctetGraph(minimal->graph, {MakeTensor<float>({2, 2}, {1.0f, 2.0f, -3.0f, 0.25f})});
  CHECK(std::vector<float>(y[0].values<float>().begin(), y[0].values<float>().end()) ==
        std::vector<float>{2.5f, 0.0f, -1.5f, -1.75f});

  const Result<OctetModel> every = ReadOctetFile(dir + "every_field.octet");
  REQUIRE(every.ok());
  const Graph& g = every->graph;
  CHECK(g.name() == "every field");
  CHECK(every->metadata.at("mode") == "static");
  const Value& w = g.value(g.FindValue("w"));
  REQUIRE(w.qparams.has_value());
  CHECK(w.qparams->scheme() == QScheme::kPerChannelSymmetric);
  CHECK(w.qparams->scales() == std::vector<float>{0.25f, 0.125f});
  CHECK(std::vector<int8_t>(w.data.values<int8_t>().begin(), w.data.values<int8_t>().end()) ==
        std::vector<int8_t>{-127, 0, 1, 2, 3, 127});
  CHECK(g.value(g.FindValue("y")).shape == Shape{kUnknownDim, 2});
  CHECK(g.value(g.FindValue("y")).qparams->quant_max() == 15);
  const Node& q = g.node(0);
  CHECK(q.domain == "octet");
  CHECK(q.inputs.back() == kNoValue);
  CHECK(q.outputs.back() == kNoValue);
  CHECK(q.attributes.GetInts("ints").value() == std::vector<int64_t>{1, 2, -1});
  CHECK(q.attributes.GetStrings("strings").value() == std::vector<std::string>{"a", ""});
  CHECK(q.attributes.GetTensor("t")->values<float>()[1] == 1.5f);
  // The independent encoder and octet's writer agree byte for byte.
  CHECK(SerializeOctet(g, every->metadata, "x").value() == ReadFile(dir + "every_field.octet").value());

  const Result<OctetModel> mlp = ReadOctetFile(dir + "mlp.octet");
  REQUIRE(mlp.ok());
  CHECK(RunOctetGraph(mlp->graph, {MakeTensor<float>({1, 4}, {1.0f, -1.0f, 0.5f, 2.0f})})[0].shape() == Shape{1, 2});

  const Result<OctetModel> newer = ReadOctetFile(dir + "newer_version.octet");
  CHECK(newer.status().message() ==
        fmt::format("failed to read .octet file '{}newer_version.octet': format version 2 is newer than this build "
                    "of octet reads (up to 1); use a newer octet",
                    dir));
}

// ---------------------------------------------------------------------------------------------------------------
// Malformed files.

const std::string kPrefix = "failed to read .octet file 'bad.octet': ";

// A minimal valid file, record by record, so each case can break exactly one field:
// y = Add(x f32 [?, 2], w f32 [2]).
struct MinimalFile {
  std::string metadata = Bytes().U32(1).Str("producer").Str("test").str();
  std::string graph = Bytes().Str("g").U32(1).I32(0).U32(1).I32(2).str();
  uint32_t value_count = 3;
  std::string x = Bytes().Str("x").U8(0).U8(0).U8(of::kValueHasShape).U32(2).I64(-1).I64(2).str();
  std::string w = Bytes().Str("w").U8(1).U8(0).U8(of::kValueHasShape).U32(1).I64(2).U64(0).U64(8).str();
  std::string y = Bytes().Str("y").U8(2).U8(0).U8(0).str();
  std::string node_head = Bytes().U32(1).Str("add").Str("Add").Str("").str();
  std::string attributes = Bytes().U32(0).str();
  std::string node_ids = Bytes().U32(2).I32(0).I32(1).U32(1).I32(2).str();
  std::string data = Bytes().F32(1.5f).F32(-2.0f).str();

  std::string values() const { return Bytes().U32(value_count).Raw(x).Raw(w).Raw(y).str(); }
  OctetSections Sections() const {
    return {metadata, graph, values(), node_head + attributes + node_ids, data};
  }
  std::string File() const { return AssembleOctet(Sections()); }
};

// The error of parsing `file`, which must fail.
std::string ErrorOf(const std::string& file) {
  const Result<OctetModel> r = ParseOctetBytes(file);
  REQUIRE_FALSE(r.ok());
  return r.status().message();
}

TEST_CASE("octet file: the hand-assembled minimal file is valid", "[octet_file]") {
  const Result<OctetModel> r = ParseOctetBytes(MinimalFile().File());
  REQUIRE(r.ok());
  CHECK(r->graph.ToString() == ParseOctetBytes(SerializeOctet(r->graph, r->metadata, "x").value())->graph.ToString());
  CHECK(SerializeOctet(r->graph, r->metadata, "x").value() == MinimalFile().File());
}

TEST_CASE("octet file: malformed records give their exact messages", "[octet_file]") {
  MinimalFile m;
  std::string want;
  StatusCode code = StatusCode::kInvalidArgument;

  SECTION("bad dtype") {
    m.w = Bytes().Str("w").U8(1).U8(9).U8(1).U32(1).I64(2).U64(0).U64(8).str();
    want = "section 'values' entry 1 ('w'): dtype 9 is not one of f32 (0), u8 (1), s8 (2), s32 (3)";
  }
  SECTION("bad kind") {
    m.x = Bytes().Str("x").U8(7).U8(0).U8(1).U32(2).I64(-1).I64(2).str();
    want = "section 'values' entry 0 ('x'): kind 7 is not one of input (0), constant (1), node output (2)";
  }
  SECTION("unknown flag bits") {
    m.y = Bytes().Str("y").U8(2).U8(0).U8(0x80).str();
    want = "section 'values' entry 2 ('y'): flags 0x80 has unknown bits";
  }
  SECTION("a huge value count") {
    m.value_count = 0xFFFFFFFFu;
    code = StatusCode::kDataLoss;
    want = fmt::format("section 'values': value count 4294967295 needs at least 30064771065 bytes, {} left in the "
                       "section",
                       m.values().size() - 4);
  }
  SECTION("a huge rank") {
    code = StatusCode::kDataLoss;
    m.w = Bytes().Str("w").U8(1).U8(0).U8(1).U32(0x10000000).str();
    want = fmt::format("section 'values' entry 1 ('w'): rank 268435456 needs at least 2147483648 bytes, {} left in "
                       "the section",
                       m.y.size());
  }
  SECTION("a rank over the limit") {
    Bytes w;
    w.Str("w").U8(1).U8(0).U8(1).U32(65);
    for (int d = 0; d < 65; ++d) w.I64(1);
    m.w = w.U64(0).U64(4).str();
    want = "section 'values' entry 1 ('w'): rank 65 exceeds the limit of 64";
  }
  SECTION("data past the end of the data section") {
    code = StatusCode::kDataLoss;
    m.w = Bytes().Str("w").U8(1).U8(0).U8(1).U32(1).I64(2).U64(64).U64(8).str();
    want = "section 'values' entry 1 ('w'): data of 8 bytes at offset 64 overruns the data section (0 bytes left)";
  }
  SECTION("data longer than the data section") {
    code = StatusCode::kDataLoss;
    m.w = Bytes().Str("w").U8(1).U8(0).U8(1).U32(1).I64(1024).U64(0).U64(4096).str();
    want = "section 'values' entry 1 ('w'): data of 4096 bytes at offset 0 overruns the data section (8 bytes left)";
  }
  SECTION("a data offset near 2^64") {
    code = StatusCode::kDataLoss;
    m.w = Bytes().Str("w").U8(1).U8(0).U8(1).U32(1).I64(2).U64(0xFFFFFFFFFFFFFFC0ull).U64(128).str();
    want = "section 'values' entry 1 ('w'): data of 128 bytes at offset 18446744073709551552 overruns the data "
           "section (0 bytes left)";
  }
  SECTION("unaligned data") {
    code = StatusCode::kDataLoss;
    m.w = Bytes().Str("w").U8(1).U8(0).U8(1).U32(1).I64(1).U64(4).U64(4).str();
    want = "section 'values' entry 1 ('w'): data offset 4 is not a multiple of 64";
  }
  SECTION("two tensors sharing data") {
    code = StatusCode::kDataLoss;
    m.attributes = Bytes().U32(1).Str("t").U8(3).U8(0).U32(1).I64(2).U64(0).U64(8).str();
    want = "section 'nodes' entry 0 ('add') attribute 't': data at offset 0 overlaps the previous tensor's, which "
           "ends at offset 8";
  }
  SECTION("data size disagreeing with the shape") {
    code = StatusCode::kDataLoss;
    m.w = Bytes().Str("w").U8(1).U8(0).U8(1).U32(1).I64(3).U64(0).U64(8).str();
    want = "section 'values' entry 1 ('w'): data is 8 bytes, f32 [3] needs 12";
  }
  SECTION("a negative dimension") {
    m.w = Bytes().Str("w").U8(1).U8(0).U8(1).U32(1).I64(-1).U64(0).U64(8).str();
    want = "section 'values' entry 1 ('w'): dimension 0 is -1, must be >= 0";
  }
  SECTION("an input dimension below -1") {
    m.x = Bytes().Str("x").U8(0).U8(0).U8(1).U32(2).I64(-1).I64(-2).str();
    want = "section 'values' entry 0 ('x'): dimension 1 is -2, must be >= 0 or -1 (unknown)";
  }
  SECTION("an element count that overflows") {
    m.w = Bytes().Str("w").U8(1).U8(0).U8(1).U32(2).I64(int64_t{1} << 40).I64(int64_t{1} << 40).U64(0).U64(8).str();
    code = StatusCode::kOutOfRange;
    want = "section 'values' entry 1 ('w'): failed to create shape [1099511627776, 1099511627776]: more than 2^48 "
           "elements";
  }
  SECTION("a constant without a shape") {
    m.w = Bytes().Str("w").U8(1).U8(0).U8(0).U64(0).U64(8).str();
    want = "section 'values' entry 1 ('w'): constant 'w' needs a shape";
  }
  SECTION("qparams with scale 0") {
    m.y = Bytes().Str("y").U8(2).U8(1).U8(of::kValueHasQParams).U8(0).U8(1).I32(0).I32(255).I32(0).U32(1).F32(0.0f)
              .I32(0).str();
    want = "section 'values' entry 2 ('y'): failed to create per_tensor_affine qparams: scale must be finite and > "
           "0, got 0 (channel 0)";
  }
  SECTION("qparams with an unknown scheme") {
    m.y = Bytes().Str("y").U8(2).U8(1).U8(of::kValueHasQParams).U8(4).U8(1).I32(0).I32(255).I32(0).U32(1).F32(1.0f)
              .I32(0).str();
    want = "section 'values' entry 2 ('y'): qparams scheme 4 is not one of per_tensor_affine (0), "
           "per_tensor_symmetric (1), per_channel_affine (2), per_channel_symmetric (3)";
  }
  SECTION("qparams on a float constant") {
    m.w = Bytes().Str("w").U8(1).U8(0).U8(3).U32(1).I64(2).U8(0).U8(1).I32(0).I32(255).I32(0).U32(1).F32(1.0f)
              .I32(0).U64(0).U64(8).str();
    want = "failed to verify graph 'g': value 'w' is f32 but its qparams are u8";
  }
  SECTION("a value name with a control character") {
    m.x = Bytes().Str("x\n").U8(0).U8(0).U8(1).U32(2).I64(-1).I64(2).str();
    want = "section 'values' entry 0: name \"x\\n\" contains control characters";
  }
  SECTION("a duplicate value name") {
    m.y = Bytes().Str("x").U8(2).U8(0).U8(0).str();
    want = "section 'values' entry 2 ('x'): failed to add value 'x' to graph 'g': a value of that name exists";
  }
  SECTION("a string that overruns its section") {
    code = StatusCode::kDataLoss;
    m.node_head = Bytes().U32(1).U32(1000).Raw("add").str();
    want = fmt::format("section 'nodes' entry 0: name of 1000 bytes overruns the section ({} bytes left)",
                       3 + m.attributes.size() + m.node_ids.size());
  }
  SECTION("an unknown attribute type") {
    m.attributes = Bytes().U32(1).Str("alpha").U8(9).str();
    want = "section 'nodes' entry 0 ('add') attribute 'alpha': type 9 is not one of int (0), float (1), string (2), "
           "tensor (3), ints (4), floats (5), strings (6)";
  }
  // Subgraphs (type of::kAttrGraph): a size, then a whole .octet file, whose own errors name where it sits.
  SECTION("a subgraph overrunning the section") {
    m.attributes = Bytes().U32(1).Str("body").U8(of::kAttrGraph).U64(1000).str();
    want = "section 'nodes' entry 0 ('add') attribute 'body': subgraph of 1000 bytes overruns the section (20 bytes "
           "left)";
    code = StatusCode::kDataLoss;
  }
  SECTION("a subgraph that is not an .octet file") {
    m.attributes = Bytes().U32(1).Str("body").U8(of::kAttrGraph).U64(4).Raw("abcd").str();
    want = "section 'nodes' entry 0 ('add') attribute 'body': not an .octet file (bad magic bytes)";
    code = StatusCode::kDataLoss;
  }
  SECTION("a subgraph named like an attribute") {
    const std::string sub = MinimalFile().File();
    m.attributes = Bytes().U32(2).Str("a").U8(0).I64(1).Str("a").U8(of::kAttrGraph).U64(sub.size()).Raw(sub).str();
    want = "section 'nodes' entry 0 ('add') attribute 'a': the attribute appears twice";
  }
  SECTION("a duplicate attribute") {
    m.attributes = Bytes().U32(2).Str("a").U8(0).I64(1).Str("a").U8(0).I64(2).str();
    want = "section 'nodes' entry 0 ('add') attribute 'a': the attribute appears twice";
  }
  SECTION("a tensor attribute with a bad dtype") {
    m.attributes = Bytes().U32(1).Str("t").U8(3).U8(200).U32(0).U64(0).U64(4).str();
    want = "section 'nodes' entry 0 ('add') attribute 't': tensor dtype 200 is not one of f32 (0), u8 (1), s8 (2), "
           "s32 (3)";
  }
  SECTION("a huge attribute list") {
    code = StatusCode::kDataLoss;
    m.attributes = Bytes().U32(1).Str("l").U8(4).U32(0x7FFFFFFF).str();
    want = fmt::format("section 'nodes' entry 0 ('add') attribute 'l': list length 2147483647 needs at least "
                       "17179869176 bytes, {} left in the section",
                       m.node_ids.size());
  }
  SECTION("a node input out of range") {
    m.node_ids = Bytes().U32(2).I32(0).I32(7).U32(1).I32(2).str();
    want = "section 'nodes' entry 0 ('add'): input 1 is value #7, out of range [0, 3)";
  }
  SECTION("a graph output out of range") {
    m.graph = Bytes().Str("g").U32(1).I32(0).U32(1).I32(3).str();
    want = "section 'graph': output 0 is value #3, out of range [0, 3)";
  }
  SECTION("graph inputs that are not the input values") {
    m.graph = Bytes().Str("g").U32(1).I32(1).U32(1).I32(2).str();
    want = "section 'graph': the graph inputs are values [1], but the input values are [0] (they must come first, "
           "in input order)";
  }
  SECTION("a graph that fails verification") {
    m.graph = Bytes().Str("g").U32(1).I32(0).U32(0).str();
    want = "failed to verify graph 'g': the graph has no outputs";
  }
  SECTION("a duplicate metadata key") {
    m.metadata = Bytes().U32(2).Str("producer").Str("a").Str("producer").Str("b").str();
    want = "section 'metadata' entry 1 ('producer'): the key appears twice";
  }
  SECTION("bytes left over in a section") {
    code = StatusCode::kDataLoss;
    m.y += "!";
    want = "section 'values': 1 bytes left over after the last record";
  }
  const Result<OctetModel> r = ParseOctetBytes(m.File());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == kPrefix + want);
  CHECK(r.status().code() == code);
}

uint64_t Read64(const std::string& f, size_t at) {
  uint64_t v;
  std::memcpy(&v, f.data() + at, 8);
  return v;
}
uint32_t Read32(const std::string& f, size_t at) {
  uint32_t v;
  std::memcpy(&v, f.data() + at, 4);
  return v;
}
template <typename T>
void Write(std::string& f, size_t at, T v) {
  std::memcpy(f.data() + at, &v, sizeof(T));
}
size_t EntryAt(size_t s) { return of::kHeaderBytes + s * of::kSectionEntryBytes; }

TEST_CASE("octet file: broken headers and section tables give their exact messages", "[octet_file]") {
  const std::string good = SerializeOctet(KitchenSinkGraph(), kMetadata, "bad.octet").value();
  REQUIRE(ParseOctetBytes(good).ok());
  std::string f = good;

  SECTION("bad magic") {
    f[1] = 'X';
    CHECK(ErrorOf(f) == kPrefix + "not an .octet file (bad magic bytes)");
    CHECK(ErrorOf("hello") == kPrefix + "not an .octet file (bad magic bytes)");
    CHECK(ErrorOf("") == kPrefix + "the file has 0 bytes, fewer than the 32-byte header (truncated?)");
  }
  SECTION("a newer version") {
    Write<uint32_t>(f, of::kVersionOffset, 2);
    const Result<OctetModel> r = ParseOctetBytes(f);
    CHECK(r.status().code() == StatusCode::kUnimplemented);
    CHECK(r.status().message() ==
          kPrefix + "format version 2 is newer than this build of octet reads (up to 1); use a newer octet");
  }
  SECTION("version 0") {
    Write<uint32_t>(f, of::kVersionOffset, 0);
    CHECK(ErrorOf(f) == kPrefix + "unknown format version 0");
  }
  SECTION("a wrong section count") {
    Write<uint32_t>(f, of::kSectionCountOffset, 0x40000000);
    CHECK(ErrorOf(f) == kPrefix + "the header lists 1073741824 sections, format version 1 has 5");
  }
  SECTION("a changed header field fails the header checksum") {
    Write<uint64_t>(f, of::kFileSizeOffset, Read64(f, of::kFileSizeOffset) + 1);
    CHECK(ErrorOf(f) == kPrefix + fmt::format("header checksum mismatch: stored {:#010x}, computed {:#010x} (the file "
                                              "is corrupt)",
                                              Read32(good, of::kHeaderCrcOffset),
                                              Crc32(AsBytes(f).subspan(32, 160), Crc32(AsBytes(f).first(28)))));
  }
  SECTION("a nonzero reserved field") {
    Write<uint32_t>(f, of::kReservedOffset, 1);
    testing::ResealHeader(f);
    CHECK(ErrorOf(f) == kPrefix + "reserved header field is not 0");
  }
  SECTION("trailing bytes") {
    f += "xyz";
    CHECK(ErrorOf(f) == kPrefix + fmt::format("the file has {} bytes, the header says {} (trailing bytes)",
                                              good.size() + 3, good.size()));
    Write<uint64_t>(f, of::kFileSizeOffset, f.size());
    testing::ResealHeader(f);
    CHECK(ErrorOf(f) == kPrefix + "3 bytes after the last section");
  }
  SECTION("an unknown section name") {
    std::memcpy(f.data() + EntryAt(1), "grape", 5);
    testing::ResealHeader(f);
    CHECK(ErrorOf(f) ==
          kPrefix + "section table entry 1: unknown section 'grape' (format version 1 has metadata, graph, values, "
                    "nodes, data)");
  }
  SECTION("sections out of order") {
    std::memcpy(f.data() + EntryAt(1), "values\0", 7);
    testing::ResealHeader(f);
    CHECK(ErrorOf(f) == kPrefix + "section table entry 1 is 'values', expected 'graph'");
  }
  SECTION("a name that is not NUL-padded") {
    f[EntryAt(0) + 11] = 'x';
    testing::ResealHeader(f);
    CHECK(ErrorOf(f) == kPrefix + "section table entry 0: the name is not NUL-padded text");
  }
  SECTION("a section that starts elsewhere") {
    const uint64_t at = Read64(f, EntryAt(2) + of::kSectionOffsetOffset);
    Write<uint64_t>(f, EntryAt(2) + of::kSectionOffsetOffset, at + 1);
    testing::ResealHeader(f);
    CHECK(ErrorOf(f) == kPrefix + fmt::format("section 'values' starts at offset {}, expected {} (right after "
                                              "section 'graph')",
                                              at + 1, at));
  }
  SECTION("a section size past the end of the file") {
    const uint64_t at = Read64(f, EntryAt(4) + of::kSectionOffsetOffset);
    Write<uint64_t>(f, EntryAt(4) + of::kSectionSizeOffset, uint64_t{1} << 62);
    testing::ResealHeader(f);
    CHECK(ErrorOf(f) == kPrefix + fmt::format("section 'data' of 4611686018427387904 bytes at offset {} overruns the "
                                              "file ({} bytes left)",
                                              at, f.size() - at));
  }
  SECTION("nonzero padding before the data section") {
    const uint64_t nodes_end =
        Read64(f, EntryAt(3) + of::kSectionOffsetOffset) + Read64(f, EntryAt(3) + of::kSectionSizeOffset);
    REQUIRE(nodes_end % 64 != 0);  // the kitchen sink has padding there
    f[nodes_end] = 1;
    CHECK(ErrorOf(f) == kPrefix + fmt::format("padding byte at offset {} before section 'data' is not 0", nodes_end));
  }
}

TEST_CASE("octet file: truncation at every section boundary and flipped bytes are caught", "[octet_file]") {
  const std::string good = SerializeOctet(KitchenSinkGraph(), kMetadata, "bad.octet").value();
  std::vector<size_t> boundaries = {0, 8, 31, 32, 100, 191};
  for (size_t s = 0; s < of::kSectionNames.size(); ++s) {
    const uint64_t at = Read64(good, EntryAt(s) + of::kSectionOffsetOffset);
    const uint64_t size = Read64(good, EntryAt(s) + of::kSectionSizeOffset);
    for (uint64_t cut : {at, at + 1, at + size / 2, at + size - 1}) boundaries.push_back(cut);
  }
  for (size_t cut : boundaries) {
    INFO("truncated to " << cut << " bytes");
    std::string want;
    if (cut < 32) {
      want = fmt::format("the file has {} bytes, fewer than the 32-byte header (truncated?)", cut);
    } else if (cut < 192) {
      want = fmt::format("the file has {} bytes, fewer than the header and section table (192 bytes; truncated?)",
                         cut);
    } else {
      want = fmt::format("the file is truncated: the header says {} bytes, it has {}", good.size(), cut);
    }
    const Result<OctetModel> r = ParseOctetBytes(good.substr(0, cut));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kDataLoss);
    CHECK(r.status().message() == kPrefix + want);
  }

  // A flipped byte inside a section fails that section's checksum.
  for (size_t s = 0; s < of::kSectionNames.size(); ++s) {
    const uint64_t at = Read64(good, EntryAt(s) + of::kSectionOffsetOffset);
    const uint64_t size = Read64(good, EntryAt(s) + of::kSectionSizeOffset);
    for (uint64_t pos : {at, at + size / 2, at + size - 1}) {
      std::string f = good;
      f[pos] = static_cast<char>(f[pos] ^ 0x10);
      INFO("section " << of::kSectionNames[s] << ", byte " << pos);
      CHECK(ErrorOf(f) == kPrefix + fmt::format("section '{}' checksum mismatch: stored {:#010x}, computed {:#010x} "
                                                "(the file is corrupt)",
                                                of::kSectionNames[s], Read32(good, EntryAt(s) + 12),
                                                Crc(f.substr(at, size))));
    }
  }

  // Every byte matters: flipping any one of them is an error (never a different graph), and so is every
  // truncation.
  for (size_t pos = 0; pos < good.size(); ++pos) {
    std::string f = good;
    f[pos] = static_cast<char>(f[pos] ^ 0x01);
    const Result<OctetModel> r = ParseOctetBytes(f);
    if (r.ok()) FAIL("flipping byte " << pos << " went unnoticed");
  }
  for (size_t cut = 0; cut < good.size(); ++cut) {
    if (ParseOctetBytes(good.substr(0, cut)).ok()) FAIL("truncation to " << cut << " bytes went unnoticed");
  }
}

}  // namespace
}  // namespace octet

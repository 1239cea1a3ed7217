// A small encoder block written out as torch 1.13 exports it (decomposed LayerNorm and GELU, attention with a constant
// scale division and two activation MatMuls) quantizes statically with no float island: every node becomes an int8
// operator, and the int8 output stays close to float. The numeric suite's per-layer tables cover the fused nodes.
#include <fmt/ranges.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/builder.h"
#include "core/executor.h"
#include "numeric_suite/compare_model.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "quant/qconfig_mapping.h"
#include "quant/quantized_registry.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::RandomTensor;

ValueId DecomposedLayerNorm(GraphBuilder& b, const std::string& name, ValueId x, int64_t d) {
  const AttributeMap mean = {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}};
  auto c = [&](const std::string& n, float v) { return b.Constant(name + "." + n, b.Filled(Shape{}, v)); };
  const ValueId centred = b.Sub(name + ".sub", x, b.Op1("ReduceMean", name + ".mean", {x}, mean));
  const ValueId var =
      b.Op1("ReduceMean", name + ".var", {b.Op1("Pow", name + ".pow", {centred, c("two", 2.0f)})}, mean);
  const ValueId s = b.Op1("Sqrt", name + ".sqrt", {b.Add(name + ".add_eps", var, c("eps", 1e-5f))});
  ValueId y = b.Div(name + ".div", centred, s);
  y = b.Mul(name + ".mul", y, b.Constant(name + ".weight", b.UniformTensor(Shape{d}, 1.0f)));
  return b.Add(name + ".add", y, b.Constant(name + ".bias", b.UniformTensor(Shape{d}, 0.2f)));
}

// x [T, D] -> single-head attention + residual + LayerNorm -> MLP with GELU + residual + LayerNorm.
Graph EncoderBlock(uint64_t seed, int64_t t, int64_t d) {
  GraphBuilder b("block", seed);
  auto c = [&](const std::string& n, float v) { return b.Constant(n, b.Filled(Shape{}, v)); };
  const ValueId x = b.Input("x", DType::kF32, Shape{t, d});
  const ValueId q = b.Linear("q", x, d, d), k = b.Linear("k", x, d, d), v = b.Linear("v", x, d, d);
  const ValueId scores = b.Div("scale", b.MatMul("qk", q, b.Transpose("kt", k, {1, 0})), c("sqrt_d", 4.0f));
  const ValueId attn = b.MatMul("pv", b.Softmax("softmax", scores), v);
  const ValueId h = DecomposedLayerNorm(b, "ln1", b.Add("res1", x, b.Linear("proj", attn, d, d)), d);
  const ValueId f = b.Linear("ff1", h, d, 2 * d);
  const ValueId erf = b.Op1("Erf", "erf", {b.Div("erf_in", f, c("sqrt2", 1.4142135381698608f))});
  const ValueId gelu = b.Mul("gelu", b.Mul("gelu_x", f, b.Add("erf_1", erf, c("one", 1.0f))), c("half", 0.5f));
  b.Output(DecomposedLayerNorm(b, "ln2", b.Add("res2", h, b.Linear("ff2", gelu, 2 * d, d)), d));
  return std::move(b).Build().value();
}

TEST_CASE(
    "A decomposed encoder block quantizes with no float island and stays "
    "close to float",
    "[convert]") {
  std::mt19937_64 rng = testing::MakeRng("encoder block");
  const Graph g = EncoderBlock(rng(), 12, 16);
  auto prepared = Prepare(g, GetDefaultQConfigMapping("x86").value());
  REQUIRE(prepared.ok());
  CHECK(prepared->fuse_report().fused_layer_norms.size() == 2);
  CHECK(prepared->fuse_report().fused_gelus.size() == 1);
  CHECK(prepared->fuse_report().scale_divisions == std::vector<std::string>{"scale"});
  std::vector<std::vector<Tensor>> calib;
  for (int i = 0; i < 8; ++i) calib.push_back({RandomTensor(rng, Shape{12, 16}, -2.0f, 2.0f)});
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  REQUIRE(Calibrate(*prepared, context, calib).ok());
  ConvertReport report;
  auto q = Convert(*prepared, {}, &report);
  REQUIRE(q.ok());
  for (const auto& f : report.kept_float) INFO(f.node << " (" << f.op_type << "): " << f.reason);
  CHECK(report.kept_float.empty());
  std::multiset<std::string> ops;
  for (const Node& n : q->nodes()) ops.insert(n.op_type);
  CHECK(ops.count("QLayerNorm") == 2);
  CHECK(ops.count("QSoftmax") == 1);
  CHECK(ops.count("QBatchMatMul") == 2);
  CHECK(ops.count("QLookup") == 1);
  CHECK(ops.count("Quantize") == 1);    // the graph input
  CHECK(ops.count("Dequantize") == 1);  // the graph output
  // Float and int8 on held-out inputs.
  auto float_exec = Executor::Compile(g, context, QuantFloatRegistry());
  auto int8_exec = Executor::Compile(*q, context, QuantizedGraphRegistry());
  REQUIRE(float_exec.ok());
  REQUIRE(int8_exec.ok());
  for (int i = 0; i < 3; ++i) {
    const Tensor x = RandomTensor(rng, Shape{12, 16}, -2.0f, 2.0f);
    const Tensor want = float_exec->Run(std::vector<Tensor>{x}).value()[0];
    const Tensor got = int8_exec->Run(std::vector<Tensor>{x}).value()[0];
    CHECK(testing::TensorSqnrDb(want, got) > 20.0);
  }
}

TEST_CASE("The numeric suite compares the fused transformer nodes with their float twins", "[convert][numeric]") {
  // One fixed block and data set, not one per run's seed: on a block this small (T = 12, d = 16) the shadow SQNR of
  // the 7-bit P x V product varies with the random weights from about 13 to 20 dB, so a per-seed model made the
  // 15 dB check below fail on about 1 seed in 60 (seen on x86 and under qemu).
  std::mt19937_64 rng(0x5EED2026);
  const Graph g = EncoderBlock(rng(), 12, 16);
  auto prepared = Prepare(g, GetDefaultQConfigMapping("x86").value());
  REQUIRE(prepared.ok());
  std::vector<std::vector<Tensor>> calib;
  for (int i = 0; i < 8; ++i) calib.push_back({RandomTensor(rng, Shape{12, 16}, -2.0f, 2.0f)});
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  REQUIRE(Calibrate(*prepared, context, calib).ok());
  auto q = Convert(*prepared, {});
  REQUIRE(q.ok());
  std::vector<std::vector<Tensor>> batches;
  for (int i = 0; i < 2; ++i) batches.push_back({RandomTensor(rng, Shape{12, 16}, -2.0f, 2.0f)});
  CompareOptions options;
  options.context = &context;
  options.shadow = true;
  auto prepared_outputs = PrepareModelOutputs(g, *q, options);
  REQUIRE(prepared_outputs.ok());
  for (const auto& batch : batches) REQUIRE((*prepared_outputs)->Run(batch).ok());
  // The fused nodes keep the name of their chain's last node (quant/fuse_transformer.h).
  struct Want {
    std::string node, op, float_op;
  };
  const std::vector<Want> wants = {{"qk", "QBatchMatMul", "MatMul"}, {"softmax", "QSoftmax", "Softmax"},
                                   {"pv", "QBatchMatMul", "MatMul"}, {"ln1.add", "QLayerNorm", "LayerNormalization"},
                                   {"gelu", "QLookup", "Gelu"},      {"ln2.add", "QLayerNorm", "LayerNormalization"}};
  for (const auto* table : {&(*prepared_outputs)->shadow(), &(*prepared_outputs)->activations()}) {
    for (const Want& w : wants) {
      INFO(w.node << " (" << w.op << ")");
      int found = 0;
      for (const ValueComparison& c : *table) {
        if (c.node != w.node) continue;
        ++found;
        CHECK(c.op == w.op);
        CHECK(c.float_op == w.float_op);
        CHECK(c.sums.count > 0);
        // One requantization to 7-bit codes (x86) on the float twin's own inputs, or the propagated error: far
        // from float only when the suite compared the wrong values.
        CHECK(std::isfinite(c.sqnr_db()));
        CHECK(c.sqnr_db() > 15.0);
      }
      CHECK(found == 1);
    }
  }
}

// The quant ranges of the converted block's activations (input B of QBatchMatMul, and the others) and weights.
struct Ranges {
  std::set<int64_t> b_operand_max, other_max, weight_min, weight_max;
  std::set<std::string> narrow;  // u8 activations with 7 bits
};

Ranges ConvertedRanges(const std::string& backend) {
  std::mt19937_64 rng = testing::MakeRng("encoder block ranges");
  const Graph g = EncoderBlock(rng(), 12, 16);
  auto prepared = Prepare(g, GetDefaultQConfigMapping(backend).value());
  REQUIRE(prepared.ok());
  std::vector<std::vector<Tensor>> calib;
  for (int i = 0; i < 4; ++i) calib.push_back({RandomTensor(rng, Shape{12, 16}, -2.0f, 2.0f)});
  REQUIRE(Calibrate(*prepared, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1), calib).ok());
  auto q = Convert(*prepared, {});
  REQUIRE(q.ok());
  std::set<ValueId> b_operands, weights;
  for (const Node& n : q->nodes()) {
    if (n.op_type == "QGemm" || n.op_type == "QMatMul") weights.insert(n.inputs[1]);
    if (n.op_type == "QBatchMatMul") b_operands.insert(n.inputs[1]);
  }
  Ranges r;
  for (ValueId v = 0; v < q->num_values(); ++v) {
    const Value& val = q->value(v);
    if (!val.qparams.has_value()) continue;
    if (weights.count(v) != 0) {
      r.weight_min.insert(val.qparams->quant_min());
      r.weight_max.insert(val.qparams->quant_max());
      continue;
    }
    if (val.kind == ValueKind::kConstant || val.qparams->dtype() != DType::kU8) continue;
    (b_operands.count(v) != 0 ? r.b_operand_max : r.other_max).insert(val.qparams->quant_max());
    if (val.qparams->quant_max() == 127) r.narrow.insert(val.name);
  }
  return r;
}

TEST_CASE("x86 takes reduce_range's bit from the weights; fbgemm from every activation", "[convert]") {
  const Ranges x86 = ConvertedRanges("x86");
  INFO("7-bit activations: " << fmt::format("{}", fmt::join(x86.narrow, ", ")));
  CHECK(x86.weight_min == std::set<int64_t>{-64});
  CHECK(x86.weight_max == std::set<int64_t>{63});
  CHECK(x86.b_operand_max == std::set<int64_t>{127});  // K^T and V: QBatchMatMul's fast path
  // Only K^T, the K it is transposed from (one observer) and V have 7 bits; the GEMM inputs, residual sums, logits,
  // GELU and Softmax outputs 8.
  CHECK(x86.narrow == std::set<std::string>{"k", "kt", "v"});
  CHECK(x86.other_max.count(255) == 1);
  const Ranges fbgemm = ConvertedRanges("fbgemm");
  CHECK(fbgemm.weight_min == std::set<int64_t>{-128});
  CHECK(fbgemm.weight_max == std::set<int64_t>{127});
  CHECK(fbgemm.b_operand_max == std::set<int64_t>{127});
  CHECK(fbgemm.other_max == std::set<int64_t>{127});
}

}  // namespace
}  // namespace octet

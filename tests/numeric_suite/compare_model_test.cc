// The numeric suite on small builder graphs (static, dynamic, weight-only): weight matching and dequantization,
// loggers (every batch kept, the whole batch in the shadow logger, running sums equal to stored tensors), shadows
// that see no propagated error, clipping and int32 accumulator counters against independent loops, the allow list,
// errors, and the JSON report against the schema validator.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include "core/builder.h"
#include "core/executor.h"
#include "numeric_suite/compare_model.h"
#include "numeric_suite/compare_weights.h"
#include "numeric_suite/report_json.h"
#include "numeric_suite/report_validate.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/dynamic.h"
#include "quant/prepare.h"
#include "quant/quantized_registry.h"
#include "quant/weight_only.h"
#include "tests/qconfig_test_util.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::MakeRng;
using testing::RandomTensor;

struct StaticModel {
  Graph float_graph;
  Graph quantized;
  std::vector<std::vector<Tensor>> batches;  // calibration = comparison batches
};

StaticModel QuantizedSmallCnn(std::mt19937_64& rng, NumericsProfile profile = NumericsProfile::kReference) {
  StaticModel m;
  m.float_graph = testing::SmallCnn(rng());
  for (int b = 0; b < 3; ++b) m.batches.push_back({RandomTensor(rng, Shape{4, 3, 8, 8}, -1.0f, 1.0f)});
  QConfigMapping mapping;
  mapping.SetGlobal(testing::MinMaxPerChannelQConfig());
  PreparedGraph prepared = Prepare(m.float_graph, mapping).value();
  REQUIRE(Calibrate(prepared, Context::Create().value(), m.batches).ok());
  ConvertOptions co;
  co.profile = profile;
  m.quantized = Convert(prepared, co).value();
  return m;
}

const ValueComparison& Find(const std::vector<ValueComparison>& v, const std::string& name) {
  for (const ValueComparison& c : v) {
    if (c.name == name) return c;
  }
  FAIL("no comparison named '" << name << "'");
  return v.front();
}

TEST_CASE("CompareWeights: per-channel weights dequantized channel by channel, matched by node name",
          "[numeric_suite]") {
  std::mt19937_64 rng = MakeRng("ns_weights");
  const StaticModel m = QuantizedSmallCnn(rng);
  const Graph fused = FloatReferenceGraph(m.float_graph, true).value();
  const std::vector<WeightComparison> weights = CompareWeights(fused, m.quantized).value();
  std::set<std::string> nodes;
  for (const WeightComparison& w : weights) nodes.insert(w.node);
  CHECK(nodes == std::set<std::string>{"conv1", "fc1", "fc2"});
  for (const WeightComparison& w : weights) {
    INFO(w.name);
    REQUIRE(w.qparams.per_channel());
    CHECK(w.slot == 1);
    CHECK(w.channel_axis == 0);
    // scale[c] * q, channel c = row of the [out, ...] weight, written out independently.
    const int64_t per = w.quantized.NumElements() / w.quantized.shape().dim(0);
    for (int64_t i = 0; i < w.quantized.NumElements(); ++i) {
      const float s = w.qparams.scales()[static_cast<size_t>(i / per)];
      REQUIRE(w.dequantized.data<float>()[i] == s * static_cast<float>(w.quantized.data<int8_t>()[i]));
      // Round to nearest: at most half a step from the float weight.
      REQUIRE(std::abs(w.dequantized.data<float>()[i] - w.float_weight.data<float>()[i]) <= 0.5f * s * 1.0001f);
    }
    CHECK(Sqnr(w.float_weight, w.dequantized).value() > 35.0);
  }
  // Without BatchNorm folding the conv's float weight is not what was quantized (same shape, different values).
  const std::vector<WeightComparison> unfused = CompareWeights(m.float_graph, m.quantized).value();
  CHECK(Sqnr(unfused[0].float_weight, unfused[0].dequantized).value() < Sqnr(weights[0].float_weight,
                                                                                weights[0].dequantized).value());
}

TEST_CASE("CompareWeights: a float twin whose weight has another shape is an error naming both",
          "[numeric_suite]") {
  std::mt19937_64 rng = MakeRng("ns_weights_error");
  const StaticModel m = QuantizedSmallCnn(rng);
  Graph fused = FloatReferenceGraph(m.float_graph, true).value();
  const int fc2 = fused.FindNode("fc2");
  const ValueId w = fused.node(fc2).inputs[1];
  fused.mutable_value(w).data = Tensor::Create(DType::kF32, Shape{5, 15}).value();
  auto r = CompareWeights(fused, m.quantized);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("fc2") && Catch::Contains("[5, 15]") && Catch::Contains("[5, 16]"));
}

TEST_CASE("CompareModelOutputs: loggers see every batch; running sums equal the stored tensors' metrics",
          "[numeric_suite]") {
  std::mt19937_64 rng = MakeRng("ns_outputs");
  const StaticModel m = QuantizedSmallCnn(rng);
  auto prepared = PrepareModelOutputs(m.float_graph, m.quantized).value();
  RunningSqnrLogger running;
  CompareOptions o;
  o.shadow = true;
  auto with_running = PrepareModelOutputs(m.float_graph, m.quantized, o, &running).value();
  for (const auto& batch : m.batches) {
    REQUIRE(prepared->Run(batch).ok());
    REQUIRE(with_running->Run(batch).ok());
  }
  const auto activations = GetMatchingActivations(*prepared).value();
  // Matched nodes: every int8 compute node with a float twin (the fused conv1 and fc1 carry their ReLU).
  std::set<std::string> names;
  for (const auto& [name, stats] : activations) names.insert(name);
  CHECK(names == std::set<std::string>{"conv1", "pool1", "fc1", "fc2"});
  for (const auto& [name, stats] : activations) {
    INFO(name);
    REQUIRE(stats.float_values.size() == 3);
    REQUIRE(stats.quantized_values.size() == 3);
    CHECK(stats.float_values[0].shape().dim(0) == 4);
    // The running logger's SQNR over three batches equals the SQNR of the stored tensors, concatenated.
    ErrorSums sums;
    for (size_t b = 0; b < 3; ++b) REQUIRE(sums.Accumulate(stats.float_values[b], stats.quantized_values[b]).ok());
    CHECK(running.Sqnr(name).value() == Approx(sums.Sqnr()).epsilon(1e-12));
    CHECK(Find(prepared->activations(), name).sqnr_db() == Approx(sums.Sqnr()).epsilon(1e-12));
    CHECK(std::isfinite(sums.Sqnr()));
    CHECK(sums.Sqnr() > 20.0);
  }
  // fc1 (fused ReLU) dequantized outputs: multiples of the scale, non-negative.
  const QParams& q = *Find(prepared->activations(), "fc1").qparams;
  for (float v : activations.at("fc1").quantized_values[0].values<float>()) {
    CHECK(v >= 0.0f);
    CHECK(std::abs(v / q.scale() - std::nearbyint(v / q.scale())) < 1e-3);
  }
  CHECK_FALSE(running.Sqnr("nope").ok());
  CHECK_FALSE(GetMatchingActivations(*with_running).ok());  // its activation logger keeps no tensors
}

TEST_CASE("CompareModelStub: the ShadowLogger keeps whole batches; with the int8 weights in the float twin the "
          "shadow error is the output rounding, at most half an LSB", "[numeric_suite]") {
  std::mt19937_64 rng = MakeRng("ns_shadow");
  const StaticModel m = QuantizedSmallCnn(rng);
  ShadowLogger logger;
  const std::vector<ValueComparison> shadow =
      CompareModelStub(m.float_graph, m.quantized, m.batches, {}, &logger).value();
  for (const std::string& name : logger.names()) {
    INFO(name);
    const StoringLogger::Stats* s = logger.stats(name).value();
    REQUIRE(s->float_values.size() == 3);
    CHECK(s->float_values[0].shape() == Find(shadow, name).shape);
    CHECK(s->float_values[0].shape().dim(0) == 4);  // not PyTorch's first sample
  }
  // Propagated vs shadow on the last layer: the shadow has no error from earlier layers. Upstream errors can
  // partly cancel fc2's own, so the shadow is not always better: over --rng-seed 1..3000 it was at worst 1.30 dB
  // below (seed 2633; seed 1613585501: 1.01 dB), hence 2 dB of slack.
  const std::vector<ValueComparison> propagated = CompareModelOutputs(m.float_graph, m.quantized, m.batches).value();
  CHECK(Find(shadow, "fc2").sqnr_db() > Find(propagated, "fc2").sqnr_db() - 2.0);

  // Float twins holding exactly the dequantized int8 weights (and biases): the float node on the int8 node's own
  // inputs computes the int8 accumulator in float, so only the output rounding (0.5 LSB) and clamping remain.
  Graph twin = FloatReferenceGraph(m.float_graph, true).value();
  const std::vector<WeightComparison> twin_weights = CompareWeights(twin, m.quantized).value();
  for (const WeightComparison& w : twin_weights) {
    const int node = twin.FindNode(w.node);
    twin.mutable_value(twin.node(node).inputs[1]).data = w.dequantized;
    const ValueId qb = m.quantized.node(m.quantized.FindNode(w.node)).inputs[2];
    const Value& bias = m.quantized.value(qb);
    twin.mutable_value(twin.node(node).inputs[2]).data = DequantizedCopy(bias.data, &*bias.qparams, bias.name).value();
  }
  CompareOptions o;
  o.fuse_float = false;  // `twin` is fused already
  ShadowLogger twin_logger;
  const std::vector<ValueComparison> exact = CompareModelStub(twin, m.quantized, m.batches, o, &twin_logger).value();
  for (const char* name : {"conv1", "fc1", "fc2"}) {
    INFO(name);
    const ValueComparison& c = Find(exact, name);
    const QParams& q = *c.qparams;
    // Outputs at the ends of the range were clamped (the twin's float result may pass the calibrated range); every
    // other one is the float result rounded to the nearest step.
    const double lo = (q.quant_min() - q.zero_point()) * double{q.scale()};
    const double hi = (q.quant_max() - q.zero_point()) * double{q.scale()};
    const StoringLogger::Stats* st = twin_logger.stats(name).value();
    double worst = 0;
    int64_t inside = 0;
    for (size_t b = 0; b < st->float_values.size(); ++b) {
      const auto f = st->float_values[b].values<float>();
      const auto y = st->quantized_values[b].values<float>();
      for (size_t i = 0; i < f.size(); ++i) {
        if (y[i] <= lo + 1e-6 || y[i] >= hi - 1e-6) continue;
        ++inside;
        worst = std::max(worst, std::abs(double{f[i]} - y[i]) / q.scale());
      }
    }
    CHECK(inside > 0);
    CHECK(worst <= 0.5 + 1e-3);
    CHECK(worst > 0.0);  // the int8 output is rounded
  }
}

// int32 accumulators of conv1 (NCHW, OIHW, pads 1) and fc1, by direct loops over the int8 values the node saw.
TEST_CASE("Per-layer counters: accumulator headroom from the int8 inputs, clipping when the data exceed the "
          "calibrated range", "[numeric_suite]") {
  std::mt19937_64 rng = MakeRng("ns_counters");
  const StaticModel m = QuantizedSmallCnn(rng);
  const Context context = Context::Create().value();
  // The int8 inputs of conv1 and fc1, captured independently of the suite.
  std::map<std::string, Tensor> seen;
  RunOptions run;
  run.before_node.push_back([&](const NodeCall& call) -> Status {
    if (call.node.name == "conv1" || call.node.name == "fc1") seen[call.node.name] = call.inputs[0].ToTensor().value();
    return OkStatus();
  });
  CompileOptions co;
  co.input_shapes = {{"x", m.batches[2][0].shape()}};
  const OpRegistry registry = QuantizedGraphRegistry();
  Executor e = Executor::Compile(m.quantized, context, registry, co).value();
  REQUIRE(e.Run(m.batches[2], run).ok());

  auto expected_max = [&](const std::string& node) {
    const Node& n = m.quantized.node(m.quantized.FindNode(node));
    const Tensor& x = seen.at(node);
    const Value& wv = m.quantized.value(n.inputs[1]);
    const int32_t zp = m.quantized.value(n.inputs[0]).qparams->zero_point();
    auto xval = [&](int64_t i) {
      return x.dtype() == DType::kU8 ? int64_t{x.data<uint8_t>()[i]} : int64_t{x.data<int8_t>()[i]};
    };
    int64_t best = 0;
    const int8_t* w = wv.data.data<int8_t>();
    if (node == "fc1") {  // x [N, K], w [N_out, K] (transB)
      const int64_t k = x.shape().dim(1), nout = wv.data.shape().dim(0);
      for (int64_t r = 0; r < x.shape().dim(0); ++r)
        for (int64_t j = 0; j < nout; ++j) {
          int64_t acc = 0;
          for (int64_t i = 0; i < k; ++i) acc += (xval(r * k + i) - zp) * w[j * k + i];
          best = std::max<int64_t>(best, std::llabs(acc));
        }
      return best;
    }
    const int64_t nb = x.shape().dim(0), c = x.shape().dim(1), h = x.shape().dim(2), wd = x.shape().dim(3);
    const int64_t o = wv.data.shape().dim(0);
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t oc = 0; oc < o; ++oc)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t xx = 0; xx < wd; ++xx) {
            int64_t acc = 0;
            for (int64_t ic = 0; ic < c; ++ic)
              for (int64_t ky = 0; ky < 3; ++ky)
                for (int64_t kx = 0; kx < 3; ++kx) {
                  const int64_t iy = y + ky - 1, ix = xx + kx - 1;
                  if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                  acc += (xval(((b * c + ic) * h + iy) * wd + ix) - zp) * w[((oc * c + ic) * 3 + ky) * 3 + kx];
                }
            best = std::max<int64_t>(best, std::llabs(acc));
          }
    return best;
  };
  auto p = PrepareModelOutputs(m.float_graph, m.quantized).value();
  REQUIRE(p->Run(m.batches[2]).ok());
  for (const char* node : {"conv1", "fc1"}) {
    INFO(node);
    const ValueComparison& c = Find(p->activations(), node);
    REQUIRE(c.max_abs_accumulator.has_value());
    CHECK(*c.max_abs_accumulator == expected_max(node));
    CHECK(*c.max_abs_accumulator > 0);
  }
  CHECK_FALSE(Find(p->activations(), "pool1").max_abs_accumulator.has_value());
  CHECK_FALSE(Find(p->activations(), "pool1").clipping.has_value());  // max pools do not requantize
  CHECK(AccumulatorHeadroomBits(1 << 20) == Approx(11.0));

  // fc2's output scale divided by 8 (the input quantization would clamp larger data, so shrink an output range
  // instead; only the Dequantize after fc2 reads it): most outputs saturate, at both ends (no ReLU).
  Graph narrow = m.quantized;
  Value& fc2_out = narrow.mutable_value(narrow.node(narrow.FindNode("fc2")).outputs[0]);
  const QParams old = *fc2_out.qparams;
  fc2_out.qparams =
      QParams::PerTensor(old.dtype(), old.scale() / 8, old.zero_point(), old.quant_min(), old.quant_max()).value();
  auto scaled = PrepareModelOutputs(m.float_graph, narrow).value();
  const Status scaled_run = scaled->Run(m.batches[2]);
  INFO(scaled_run.message());
  REQUIRE(scaled_run.ok());
  const ClipCount calibrated = *Find(p->activations(), "fc2").clipping;
  const ClipCount clipped = *Find(scaled->activations(), "fc2").clipping;
  CHECK(calibrated.total == 4 * 5);
  CHECK(clipped.total == calibrated.total);
  CHECK(clipped.clipped >= calibrated.clipped + calibrated.total / 4);
  // The same count, from the dequantized int8 outputs at the ends of the range.
  const auto acts = GetMatchingActivations(*scaled).value();
  const QParams& q = *Find(scaled->activations(), "fc2").qparams;
  const float lo = static_cast<float>(q.quant_min() - q.zero_point()) * q.scale();
  const float hi = static_cast<float>(q.quant_max() - q.zero_point()) * q.scale();
  int64_t ends = 0;
  for (float v : acts.at("fc2").quantized_values[0].values<float>()) ends += (v == lo || v == hi);
  CHECK(clipped.clipped == ends);
}

TEST_CASE("Allow list, dynamic and weight-only graphs, and errors", "[numeric_suite]") {
  std::mt19937_64 rng = MakeRng("ns_modes");
  const StaticModel m = QuantizedSmallCnn(rng);
  CompareOptions o;
  o.allow_list = {"fc2", "Conv"};
  const auto only = CompareModelOutputs(m.float_graph, m.quantized, m.batches, o).value();
  REQUIRE(only.size() == 2);
  CHECK(only[0].name == "conv1");
  CHECK(only[1].name == "fc2");
  o.allow_list = {"nothing"};
  auto none = CompareModelOutputs(m.float_graph, m.quantized, m.batches, o);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.status().message(), Catch::Contains("allow list"));
  auto wrong_inputs = PrepareModelOutputs(m.float_graph, m.quantized).value()->Run(std::vector<Tensor>{});
  CHECK_FALSE(wrong_inputs.ok());

  // Dynamic (on the unfused graph, as quantize_dynamic): f32 outputs, no qparams, no clipping; the float twin of
  // DynamicQGemm is the Gemm.
  QConfigMapping dyn;
  dyn.SetGlobal(GetDefaultDynamicQConfig(true));
  const Graph d = QuantizeDynamic(m.float_graph, dyn).value();
  CompareOptions so;
  so.shadow = true;
  so.fuse_float = false;
  auto pd = PrepareModelOutputs(m.float_graph, d, so).value();
  for (const auto& b : m.batches) REQUIRE(pd->Run(b).ok());
  REQUIRE(pd->activations().size() == 2);
  for (const ValueComparison& c : pd->activations()) {
    INFO(c.name);
    CHECK(c.op == "DynamicQGemm");
    CHECK_FALSE(c.qparams.has_value());
    CHECK_FALSE(c.clipping.has_value());
    CHECK(std::isnan(c.max_abs_error_lsb()));
    CHECK(c.sqnr_db() > 25.0);
    CHECK(Find(pd->shadow(), c.name).sqnr_db() > 25.0);
  }
  CHECK(CompareWeights(m.float_graph, d).value().size() == 2);  // fc1, fc2 (the conv stays float)

  // Weight-only: float operators on dequantized int8 weights. conv1 is the first node, so its propagated and shadow
  // comparisons see the same input and agree.
  QConfigMapping wo;
  wo.SetGlobal(testing::MinMaxPerChannelQConfig());
  const Graph w = QuantizeWeightOnly(m.float_graph, wo).value();
  const std::vector<MatchedNode> matches = MatchNodes(m.float_graph, w);
  REQUIRE(matches.size() == 3);
  for (const MatchedNode& mn : matches) CHECK(mn.weight_only);
  const std::vector<WeightComparison> ww = CompareWeights(m.float_graph, w).value();
  REQUIRE(ww.size() == 3);
  for (const WeightComparison& c : ww) CHECK(Sqnr(c.float_weight, c.dequantized).value() > 35.0);
  auto pw = PrepareModelOutputs(m.float_graph, w, so).value();
  REQUIRE(pw->Run(m.batches[0]).ok());
  CHECK(Find(pw->shadow(), "conv1").sqnr_db() > 30.0);
  CHECK(Find(pw->activations(), "conv1").sqnr_db() == Approx(Find(pw->shadow(), "conv1").sqnr_db()));
}

TEST_CASE("BuildReportJson: schema version 1, histograms and channels, exact SQNR as null", "[numeric_suite]") {
  std::mt19937_64 rng = MakeRng("ns_report");
  const StaticModel m = QuantizedSmallCnn(rng);
  const Graph fused = FloatReferenceGraph(m.float_graph, true).value();
  const std::vector<WeightComparison> weights = CompareWeights(fused, m.quantized).value();
  CompareOptions o;
  o.shadow = true;
  auto p = PrepareModelOutputs(m.float_graph, m.quantized, o).value();
  REQUIRE(p->Run(m.batches[0]).ok());
  ReportSources sources{"small.onnx", "small.octet", {{"x", "x.npy", Shape{4, 3, 8, 8}}}};
  const nlohmann::json r =
      BuildReportJson(sources, weights, p->activations(), p->shadow(), p->outputs()).value();
  Status valid = ValidateReportJson(r);
  INFO(valid.message() << "\n" << r.dump(1).substr(0, 2000));
  REQUIRE(valid.ok());
  CHECK(r["schema_version"] == 1);
  CHECK(r["inputs"][0]["shape"] == nlohmann::json({4, 3, 8, 8}));
  REQUIRE(r["weights"].size() == 3);
  for (size_t i = 0; i < weights.size(); ++i) {
    const nlohmann::json& w = r["weights"][i];
    CHECK(w["histogram"]["float"].size() == kWeightHistogramBins);
    int64_t nf = 0, nq = 0;
    for (int64_t c : w["histogram"]["float"]) nf += c;
    for (int64_t c : w["histogram"]["quantized"]) nq += c;
    CHECK(nf == weights[i].float_weight.NumElements());
    CHECK(nq == nf);
    CHECK(w["channels"].size() == static_cast<size_t>(weights[i].float_weight.shape().dim(0)));
    CHECK(w["qscheme"] == "per_channel_symmetric");
    CHECK(w["sqnr_db"].get<double>() == Approx(Sqnr(weights[i].float_weight, weights[i].dequantized).value()));
    CHECK(w["max_abs_error_lsb"].get<double>() <= 0.5 + 1e-3);
    CHECK(w["channels"][0]["scale"].get<double>() == Approx(weights[i].qparams.scales()[0]));
  }
  const nlohmann::json& conv = r["activations"][0];
  CHECK(conv["name"] == "conv1");
  CHECK(conv.contains("accumulator_headroom_bits"));
  CHECK(conv.contains("clipped_fraction"));
  // The max pool's shadow is exact: null with "exact": true.
  bool found = false;
  for (const nlohmann::json& s : r["shadow"]) {
    if (s["name"] != "pool1") continue;
    found = true;
    CHECK(s["sqnr_db"].is_null());
    CHECK(s["exact"] == true);
  }
  CHECK(found);
}

}  // namespace
}  // namespace octet

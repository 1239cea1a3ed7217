// DynamicQLSTM and DynamicQGRU: one step equals the reference composition (reference::DynamicQGemm projections,
// float gates) bit for bit; longer runs (both directions, sequence_lens, initial states, both GRU forms) track the
// float operators on the dequantized weights (SQNR bound) and are bit-identical on every ISA at 1 and 2 threads;
// and their errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/executor.h"
#include "ops/float/registry.h"
#include "ops/int8/int8_ops.h"
#include "ops/reference/dynamic_qgemm_reference.h"
#include "tests/test_util.h"

namespace octet {
namespace {

struct RnnCase {
  bool lstm = true;
  int64_t seq = 1, batch = 2, input = 5, hidden = 3, dirs = 1;
  bool linear_before_reset = true;
  bool lens = false, initial = false;
  bool reduce_range = false;
};

struct RnnData {
  Tensor x;
  std::vector<int8_t> w, r;         // [dirs, G*H, I], [dirs, G*H, H]
  std::vector<float> w_scales, r_scales;  // per gate row (axis 1)
  std::vector<float> bias;          // [dirs, 2*G*H]
  Graph dynamic, reference;         // DynamicQ* on s8 weights; the float operator on the dequantized weights
};

Tensor RandomF32(std::mt19937_64& rng, const Shape& s, float lo, float hi) {
  Tensor t = Tensor::Create(DType::kF32, s).value();
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& v : t.values<float>()) v = d(rng);
  return t;
}

RnnData MakeRnn(const RnnCase& c, std::mt19937_64& rng) {
  RnnData d;
  const int64_t G = c.lstm ? 4 : 3, GH = G * c.hidden;
  d.x = RandomF32(rng, Shape{c.seq, c.batch, c.input}, -1.5f, 2.0f);
  std::uniform_int_distribution<int> wd(-127, 127);
  std::uniform_real_distribution<float> sd(0.002f, 0.01f);
  d.w.resize(static_cast<size_t>(c.dirs * GH * c.input));
  d.r.resize(static_cast<size_t>(c.dirs * GH * c.hidden));
  for (int8_t& v : d.w) v = static_cast<int8_t>(wd(rng));
  for (int8_t& v : d.r) v = static_cast<int8_t>(wd(rng));
  for (int64_t j = 0; j < GH; ++j) {
    d.w_scales.push_back(sd(rng));
    d.r_scales.push_back(sd(rng));
  }
  std::uniform_real_distribution<float> bd(-0.5f, 0.5f);
  for (int64_t j = 0; j < c.dirs * 2 * GH; ++j) d.bias.push_back(bd(rng));

  auto s8 = [](const std::vector<int8_t>& v, Shape s) { return Tensor::FromValues<int8_t>(std::move(s), v).value(); };
  auto dequantized = [&](const std::vector<int8_t>& v, const std::vector<float>& scales, int64_t k) {
    std::vector<float> f(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      f[i] = static_cast<float>(v[i]) * scales[(i / static_cast<size_t>(k)) % scales.size()];
    }
    return Tensor::FromValues<float>(Shape{c.dirs, GH, k}, f).value();
  };
  auto qparams = [&](const std::vector<float>& scales) {
    return QParams::Create(QScheme::kPerChannelSymmetric, DType::kS8, -128, 127, scales,
                           std::vector<int32_t>(scales.size(), 0), 1)
        .value();
  };
  Tensor lens = Tensor::Create(DType::kS32, Shape{c.batch}).value();
  std::uniform_int_distribution<int> ld(0, static_cast<int>(c.seq));
  for (int32_t& v : lens.values<int32_t>()) v = c.lens ? ld(rng) : static_cast<int32_t>(c.seq);
  const Tensor h0 = RandomF32(rng, Shape{c.dirs, c.batch, c.hidden}, -0.5f, 0.5f);
  const Tensor c0 = RandomF32(rng, Shape{c.dirs, c.batch, c.hidden}, -0.5f, 0.5f);
  for (bool dynamic : {true, false}) {
    Graph& g = dynamic ? d.dynamic : d.reference;
    Node n;
    n.name = "rnn";
    n.op_type = dynamic ? (c.lstm ? "DynamicQLSTM" : "DynamicQGRU") : (c.lstm ? "LSTM" : "GRU");
    n.domain = dynamic ? std::string(kInt8Domain) : "";
    n.attributes.Set("hidden_size", c.hidden);
    if (c.dirs == 2) n.attributes.Set("direction", "bidirectional");
    if (!c.lstm) n.attributes.Set("linear_before_reset", int64_t{c.linear_before_reset ? 1 : 0});
    if (dynamic) n.attributes.Set("reduce_range", int64_t{c.reduce_range ? 1 : 0});
    const ValueId x = g.AddInput("X", DType::kF32, Shape{c.seq, c.batch, c.input}).value();
    ValueId w, r;
    if (dynamic) {
      w = g.AddConstant("W", s8(d.w, Shape{c.dirs, GH, c.input})).value();
      r = g.AddConstant("R", s8(d.r, Shape{c.dirs, GH, c.hidden})).value();
      g.mutable_value(w).qparams = qparams(d.w_scales);
      g.mutable_value(r).qparams = qparams(d.r_scales);
    } else {
      w = g.AddConstant("W", dequantized(d.w, d.w_scales, c.input)).value();
      r = g.AddConstant("R", dequantized(d.r, d.r_scales, c.hidden)).value();
    }
    const ValueId b = g.AddConstant("B", Tensor::FromValues<float>(Shape{c.dirs, 2 * GH}, d.bias).value()).value();
    n.inputs = {x, w, r, b};
    n.inputs.push_back(c.lens ? g.AddConstant("lens", lens).value() : kNoValue);
    n.inputs.push_back(c.initial ? g.AddConstant("h0", h0).value() : kNoValue);
    if (c.lstm) n.inputs.push_back(c.initial ? g.AddConstant("c0", c0).value() : kNoValue);
    n.outputs = {g.AddNodeValue("Y").value(), g.AddNodeValue("Y_h").value()};
    if (c.lstm) n.outputs.push_back(g.AddNodeValue("Y_c").value());
    REQUIRE(g.AddNode(n).ok());
    for (ValueId o : n.outputs) REQUIRE(g.AddOutput(o).ok());
  }
  return d;
}

OpRegistry RnnRegistry() {
  OpRegistry r = FloatOpRegistry();
  REQUIRE(RegisterInt8Ops(r).ok());
  return r;
}

std::vector<Tensor> Run(const Graph& g, const Context& ctx, const Tensor& x) {
  const OpRegistry registry = RnnRegistry();
  auto exec = Executor::Compile(g, ctx, registry);
  REQUIRE(exec.ok());
  auto y = exec->Run(std::vector<Tensor>{x});
  REQUIRE(y.ok());
  return *y;
}

float Sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

TEST_CASE("One step of DynamicQLSTM / DynamicQGRU equals the reference projections with float gates", "[dynamic]") {
  auto rng = testing::MakeRng("dynamic rnn one step");
  for (int variant = 0; variant < 6; ++variant) {
    RnnCase c;
    c.lstm = variant < 3;
    c.dirs = variant % 2 == 0 ? 1 : 2;
    c.reduce_range = variant % 3 == 1;
    c.batch = 3;
    c.input = 7;
    c.hidden = 5;
    INFO((c.lstm ? "LSTM" : "GRU") << " dirs " << c.dirs << " reduce_range " << c.reduce_range);
    const RnnData d = MakeRnn(c, rng);
    const std::vector<Tensor> y = Run(d.dynamic, testing::ContextFor(Isa::kScalar), d.x);
    const int64_t H = c.hidden, G = c.lstm ? 4 : 3, GH = G * H, B = c.batch, I = c.input;
    // With no initial state h = 0: its projection quantizes zeros (scale 0.1, zero point 0) and gives exactly 0.
    for (int64_t dir = 0; dir < c.dirs; ++dir) {
      std::vector<float> xw(static_cast<size_t>(B * GH));
      const std::vector<int32_t> zps(static_cast<size_t>(GH), 0);
      reference::DynamicQGemm(static_cast<size_t>(B), static_cast<size_t>(GH), static_cast<size_t>(I),
                              d.x.data<float>(), static_cast<size_t>(I), d.w.data() + dir * GH * I,
                              static_cast<size_t>(I), d.w_scales.data(), zps.data(), nullptr, c.reduce_range,
                              xw.data(), static_cast<size_t>(GH));
      const float* bias = d.bias.data() + dir * 2 * GH;
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t k = 0; k < H; ++k) {
          auto xr = [&](int64_t gate) {
            const int64_t j = gate * H + k;
            float v = bias[j];
            if (c.lstm || gate < 2) v += bias[GH + j];  // GRU's Rbh stays inside the reset product
            return xw[static_cast<size_t>(b * GH + j)] + v;
          };
          float h = 0.0f;
          if (c.lstm) {
            const float iv = Sigmoid(xr(0) + 0.0f + 0.0f), fv = Sigmoid(xr(2) + 0.0f + 0.0f);
            const float gv = std::tanh(xr(3) + 0.0f);
            const float cn = fv * 0.0f + iv * gv;
            const float ov = Sigmoid(xr(1) + 0.0f + 0.0f);
            h = ov * std::tanh(cn);
            CHECK(y[2].data<float>()[(dir * B + b) * H + k] == cn);
          } else {
            const float zv = Sigmoid(xr(0) + 0.0f), rv = Sigmoid(xr(1) + 0.0f);
            const float nv = std::tanh(xr(2) + rv * (0.0f + bias[GH + 2 * H + k]));
            h = (1.0f - zv) * nv + zv * 0.0f;
          }
          CHECK(y[0].data<float>()[(dir * B + b) * H + k] == h);
          CHECK(y[1].data<float>()[(dir * B + b) * H + k] == h);
        }
      }
    }
  }
}

TEST_CASE("DynamicQLSTM / DynamicQGRU track the float operators and are bit-identical across ISAs and threads",
          "[dynamic]") {
  auto rng = testing::MakeRng("dynamic rnn sequences");
  for (int variant = 0; variant < 8; ++variant) {
    RnnCase c;
    c.lstm = variant % 2 == 0;
    c.seq = 6;
    c.batch = 3;
    c.input = 11;
    c.hidden = 9;
    c.dirs = variant % 4 < 2 ? 1 : 2;
    c.lens = variant >= 4;
    c.initial = variant % 3 != 0;
    c.linear_before_reset = variant % 4 != 1;
    c.reduce_range = variant % 3 == 2;
    INFO((c.lstm ? "LSTM" : "GRU") << " dirs " << c.dirs << " lens " << c.lens << " initial " << c.initial
                                   << " linear_before_reset " << c.linear_before_reset << " reduce_range "
                                   << c.reduce_range);
    const RnnData d = MakeRnn(c, rng);
    const std::vector<Tensor> expected = Run(d.reference, testing::ContextFor(Isa::kScalar), d.x);
    const std::vector<Tensor> first = Run(d.dynamic, testing::ContextFor(Isa::kScalar), d.x);
    REQUIRE(first.size() == expected.size());
    for (size_t o = 0; o < first.size(); ++o) {
      const double sqnr = testing::TensorSqnrDb(expected[o], first[o]);
      INFO("output " << o << " SQNR " << sqnr << " dB");
      // 8-bit activations (7 with reduce_range) against float on the same int8 weights, over 6 steps.
      CHECK(sqnr > (c.reduce_range ? 25.0 : 30.0));
    }
    for (Isa isa : testing::CompiledIsaList()) {
      if (!testing::CanRun(isa, std::string("dynamic rnn on ") + IsaName(isa))) continue;
      for (int threads : {1, 2}) {
        const std::vector<Tensor> y = Run(d.dynamic, testing::ContextFor(isa, threads), d.x);
        for (size_t o = 0; o < y.size(); ++o) {
          INFO(IsaName(isa) << ", " << threads << " threads, output " << o);
          CHECK(std::memcmp(y[o].raw_data(), first[o].raw_data(), y[o].SizeBytes()) == 0);
        }
      }
    }
  }
}

TEST_CASE("DynamicQLSTM rejects float or non-constant weights and per-channel qparams on the wrong axis",
          "[dynamic]") {
  auto rng = testing::MakeRng("dynamic rnn errors");
  RnnCase c;
  const Context ctx = testing::ContextFor(Isa::kScalar);
  const OpRegistry registry = RnnRegistry();
  auto error = [&](const Graph& g) {
    auto exec = Executor::Compile(g, ctx, registry);
    REQUIRE_FALSE(exec.ok());
    return exec.status().message();
  };
  {
    RnnData d = MakeRnn(c, rng);
    const QParams& q = *d.dynamic.value(d.dynamic.FindValue("W")).qparams;
    // 12 gate rows: per channel over axis 0 would need 1 channel; build a valid per-channel qparams of axis 2.
    d.dynamic.mutable_value(d.dynamic.FindValue("W")).qparams =
        QParams::Create(q.scheme(), DType::kS8, -128, 127, std::vector<float>(5, 0.01f), std::vector<int32_t>(5, 0), 2)
            .value();
    CHECK_THAT(error(d.dynamic), Catch::Contains("'rnn'") && Catch::Contains("axis 1"));
  }
  {
    RnnData d = MakeRnn(c, rng);
    d.dynamic.mutable_value(d.dynamic.FindValue("R")).qparams.reset();
    CHECK_THAT(error(d.dynamic), Catch::Contains("R (input 2) has no qparams"));
  }
  {
    RnnData d = MakeRnn(c, rng);
    Graph g = d.reference;
    g.mutable_node(0).op_type = "DynamicQLSTM";
    g.mutable_node(0).domain = std::string(kInt8Domain);
    CHECK_THAT(error(g), Catch::Contains("s8"));
  }
}

}  // namespace
}  // namespace octet

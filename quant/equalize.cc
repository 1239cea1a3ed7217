// Cross-layer equalization and high-bias absorption (see equalize.h for the maths and when a pair qualifies).
#include "quant/equalize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "core/float_op_table.h"
#include "quant/graph_rewrite.h"

namespace octet {
namespace {

// Where channel data sits in a Conv or Gemm weight.
struct WeightLayout {
  int64_t out = 0;           // output channels
  int64_t in = 0;            // input channels (all groups)
  int64_t in_per_group = 0;  // Conv: W.dim(1); Gemm: in
  int64_t groups = 1;
  int64_t kernel = 1;  // spatial elements per (o, j)
  bool gemm = false;
  bool trans_b = true;  // Gemm: weight [N, K]

  // Calls fn(o, index) for every weight element that reads input channel c.
  void ForEachInput(int64_t c, const std::function<void(int64_t, int64_t)>& fn) const {
    if (gemm) {
      for (int64_t o = 0; o < out; ++o) fn(o, trans_b ? o * in + c : c * out + o);
      return;
    }
    const int64_t g = c / in_per_group, j = c % in_per_group, out_per_group = out / groups;
    for (int64_t o = g * out_per_group; o < (g + 1) * out_per_group; ++o) {
      for (int64_t k = 0; k < kernel; ++k) fn(o, (o * in_per_group + j) * kernel + k);
    }
  }
  // Calls fn(index) for every weight element of output channel o.
  void ForEachOutput(int64_t o, const std::function<void(int64_t)>& fn) const {
    if (gemm && !trans_b) {
      for (int64_t k = 0; k < in; ++k) fn(k * out + o);
      return;
    }
    const int64_t per = gemm ? in : in_per_group * kernel;
    for (int64_t k = 0; k < per; ++k) fn(o * per + k);
  }
};

bool IsFloatConstant(const Graph& g, ValueId id) {
  return id != kNoValue && g.value(id).kind == ValueKind::kConstant && g.value(id).data.dtype() == DType::kF32;
}

// The layout of node n's weight, or false when n is no Conv/Gemm with constant f32 weight (and 1-D bias) that the pass
// can rescale.
Result<bool> LayoutOf(const Graph& g, const Node& n, WeightLayout* l) {
  if (!n.domain.empty() || n.inputs.size() < 2 || !IsFloatConstant(g, n.inputs[1])) return false;
  const Tensor& w = g.value(n.inputs[1]).data;
  const ValueId bias = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
  if (bias != kNoValue && !IsFloatConstant(g, bias)) return false;
  if (n.op_type == FloatOpName(FloatOp::kConv)) {
    if (w.shape().rank() < 3) return false;
    OCTET_ASSIGN_OR_RETURN(const int64_t groups, n.attributes.GetInt("group", 1));
    l->gemm = false;
    l->out = w.shape().dim(0);
    l->in_per_group = w.shape().dim(1);
    l->groups = groups;
    l->in = groups * l->in_per_group;
    l->kernel = w.NumElements() / std::max<int64_t>(1, l->out * l->in_per_group);
    if (groups < 1 || l->out % groups != 0) return false;
  } else if (n.op_type == FloatOpName(FloatOp::kGemm)) {
    if (w.shape().rank() != 2) return false;
    OCTET_ASSIGN_OR_RETURN(const float alpha, n.attributes.GetFloat("alpha", 1.0f));
    OCTET_ASSIGN_OR_RETURN(const float beta, n.attributes.GetFloat("beta", 1.0f));
    OCTET_ASSIGN_OR_RETURN(const int64_t trans_a, n.attributes.GetInt("transA", 0));
    OCTET_ASSIGN_OR_RETURN(const int64_t trans_b, n.attributes.GetInt("transB", 0));
    if (alpha != 1.0f || beta != 1.0f || trans_a != 0) return false;
    l->gemm = true;
    l->trans_b = trans_b != 0;
    l->out = w.shape().dim(l->trans_b ? 0 : 1);
    l->in = w.shape().dim(l->trans_b ? 1 : 0);
    l->in_per_group = l->in;
  } else {
    return false;
  }
  if (bias != kNoValue && (g.value(bias).data.shape().rank() != 1 || g.value(bias).data.NumElements() != l->out)) {
    return false;
  }
  return true;
}

// Whether a Conv reads no zero padding (so a constant shift of its input is a constant shift of every output).
Result<bool> HasNoPadding(const Node& n) {
  if (n.op_type != FloatOpName(FloatOp::kConv)) return true;
  OCTET_ASSIGN_OR_RETURN(const std::string auto_pad, n.attributes.GetString("auto_pad", "NOTSET"));
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  OCTET_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, n.attributes.GetInts("pads", {}));
  return std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; });
}

// The scalar value of constant input `slot` of n, or nullopt (absent: `absent`).
std::optional<float> ScalarInput(const Graph& g, const Node& n, size_t slot, float absent) {
  if (slot >= n.inputs.size() || n.inputs[slot] == kNoValue) return absent;
  if (!IsFloatConstant(g, n.inputs[slot]) || g.value(n.inputs[slot]).data.NumElements() != 1) return std::nullopt;
  return g.value(n.inputs[slot]).data.data<float>()[0];
}

struct PairPlan {
  int first = -1, second = -1;
  std::vector<int> between;  // node indices in between
  bool relu = false;
  std::string through;
  WeightLayout l1, l2;
};

// A tensor a pass may write, always a fresh buffer (copies of a Graph share constant buffers): node n's input `slot`
// under its own name when nobody else reads it, else under a fresh name (a shared weight must not change for its other
// readers). Creates a zero bias when the slot is empty.
Result<float*> Writable(Graph& g, int node, size_t slot, int64_t zeros_if_absent, const std::string& fresh_name) {
  Node& n = g.mutable_node(node);
  const ValueId old = slot < n.inputs.size() ? n.inputs[slot] : kNoValue;
  if (old != kNoValue && CountUses(g)[static_cast<size_t>(old)] == 1) {
    // Copies of a Graph share constant buffers (Tensor copies do): write a private clone, never the shared buffer.
    OCTET_ASSIGN_OR_RETURN(Tensor mine, g.value(old).data.Clone());
    g.mutable_value(old).data = std::move(mine);
    return g.mutable_value(old).data.data<float>();
  }
  Tensor data;
  if (old != kNoValue) {
    OCTET_ASSIGN_OR_RETURN(data, g.value(old).data.Clone());
  } else {
    OCTET_ASSIGN_OR_RETURN(data, Tensor::Create(DType::kF32, Shape{zeros_if_absent}));
    std::fill_n(data.data<float>(), zeros_if_absent, 0.0f);
  }
  OCTET_ASSIGN_OR_RETURN(const ValueId id, g.AddConstant(UniqueValueName(g, fresh_name), std::move(data)));
  Node& m = g.mutable_node(node);
  if (m.inputs.size() <= slot) m.inputs.resize(slot + 1, kNoValue);
  m.inputs[slot] = id;
  return g.mutable_value(id).data.data<float>();
}

float MaxAbs(const float* w, const WeightLayout& l, bool output, int64_t c) {
  float r = 0.0f;
  if (output) {
    l.ForEachOutput(c, [&](int64_t i) { r = std::max(r, std::fabs(w[i])); });
  } else {
    l.ForEachInput(c, [&](int64_t, int64_t i) { r = std::max(r, std::fabs(w[i])); });
  }
  return r;
}

EqualizeReport::Layer Measure(const Graph& g, const Node& n, const WeightLayout& l) {
  const Tensor& w = g.value(n.inputs[1]).data;
  EqualizeReport::Layer m;
  m.node = n.name;
  float max_abs = 0.0f, lo = std::numeric_limits<float>::infinity(), hi = 0.0f;
  for (int64_t o = 0; o < l.out; ++o) {
    const float r = MaxAbs(w.data<float>(), l, true, o);
    max_abs = std::max(max_abs, r);
    hi = std::max(hi, r);
    if (r > 0.0f) lo = std::min(lo, r);
  }
  m.scale_before = max_abs / 127.5f;
  m.sqnr_db_before = PerTensorWeightSqnrDb(w);
  // The channel the shared scale hurts most (a channel rounded to all zeros: 0 dB).
  m.worst_channel_sqnr_db_before = std::numeric_limits<float>::infinity();
  const float inv = max_abs > 0.0f ? 127.5f / max_abs : 0.0f;
  for (int64_t o = 0; o < l.out && max_abs > 0.0f; ++o) {
    double signal = 0.0, noise = 0.0;
    l.ForEachOutput(o, [&](int64_t i) {
      const float x = w.data<float>()[i];
      const float q = std::clamp(std::nearbyint(x * inv), -128.0f, 127.0f) * m.scale_before;
      signal += static_cast<double>(x) * x;
      noise += static_cast<double>(x - q) * (x - q);
    });
    if (signal > 0.0 && noise > 0.0) {
      m.worst_channel_sqnr_db_before =
          std::min(m.worst_channel_sqnr_db_before, static_cast<float>(10.0 * std::log10(signal / noise)));
    }
  }
  m.spread_before = hi > 0.0f ? hi / lo : 1.0f;
  return m;
}

// Finds the pairs (see equalize.h). Clip nodes to turn into Relu are changed here under kReplaceWithRelu.
Result<std::vector<PairPlan>> FindPairs(Graph& g, const EqualizeOptions& options, EqualizeReport& report) {
  std::vector<std::vector<int>> readers(static_cast<size_t>(g.num_values()));
  for (int i = 0; i < g.num_nodes(); ++i) {
    for (ValueId v : g.node(i).inputs) {
      if (v != kNoValue) readers[static_cast<size_t>(v)].push_back(i);
    }
  }
  const std::vector<int> uses = CountUses(g);
  // The one node reading v, or -1 (several readers, a graph output, or none).
  auto sole_reader = [&](ValueId v) {
    if (v == kNoValue || uses[static_cast<size_t>(v)] != 1 || readers[static_cast<size_t>(v)].size() != 1) return -1;
    const int r = readers[static_cast<size_t>(v)][0];
    return g.node(r).inputs.empty() || g.node(r).inputs[0] != v ? -1 : r;
  };
  std::vector<PairPlan> plans;
  for (int i = 0; i < g.num_nodes(); ++i) {
    PairPlan p;
    OCTET_ASSIGN_OR_RETURN(const bool first_ok, LayoutOf(g, g.node(i), &p.l1));
    if (!first_ok || g.node(i).outputs.empty()) continue;
    p.first = i;
    ValueId v = g.node(i).outputs[0];
    std::vector<std::string> through;
    std::string refusal;
    int clip_to_replace = -1;
    bool pooled = false;
    while (true) {
      const int r = sole_reader(v);
      if (r < 0) break;
      const Node& n = g.node(r);
      if (!n.domain.empty()) break;
      if (n.op_type == FloatOpName(FloatOp::kRelu) && !p.relu && !pooled) {
        p.relu = true;
      } else if (n.op_type == FloatOpName(FloatOp::kClip) && !p.relu && !pooled) {
        const std::optional<float> lo = ScalarInput(g, n, 1, -std::numeric_limits<float>::infinity());
        const std::optional<float> hi = ScalarInput(g, n, 2, std::numeric_limits<float>::infinity());
        if (!lo || !hi || *lo != 0.0f) break;
        if (std::isfinite(*hi)) {
          if (options.relu6 == Relu6Policy::kRefuse) {
            refusal = fmt::format(
                "'{}' clips at {} (ReLU6): rescaling channel c by "
                "s[c] would need the bound {}/s[c] per channel, "
                "which one Clip cannot express; --equalize-relu6 "
                "relu replaces it by Relu first (as AIMET does; "
                "the float model then differs wherever an "
                "activation exceeds {})",
                n.name, *hi, *hi, *hi);
          }
          clip_to_replace = r;
        }
        p.relu = true;
      } else if (n.op_type == FloatOpName(FloatOp::kGlobalAveragePool) && !pooled) {
        pooled = true;
      } else if (n.op_type == FloatOpName(FloatOp::kFlatten) && pooled) {
        OCTET_ASSIGN_OR_RETURN(const int64_t axis, n.attributes.GetInt("axis", 1));
        if (axis != 1) break;
      } else {
        OCTET_ASSIGN_OR_RETURN(const bool second_ok, LayoutOf(g, n, &p.l2));
        if (second_ok && (n.op_type == FloatOpName(FloatOp::kConv) || pooled)) p.second = r;
        if (second_ok && n.op_type == FloatOpName(FloatOp::kGemm) && pooled) {
          // A Gemm after GlobalAveragePool must be behind a Flatten (its input is 2-D).
          if (through.empty() || through.back() != FloatOpName(FloatOp::kFlatten)) p.second = -1;
        }
        // A Gemm reads no 4-D channel axis.
        if (second_ok && n.op_type == FloatOpName(FloatOp::kGemm) && !pooled) p.second = -1;
        break;
      }
      through.push_back(n.op_type);
      p.between.push_back(r);
      if (n.outputs.empty()) break;
      v = n.outputs[0];
    }
    if (p.second < 0) continue;
    const std::string first = g.node(p.first).name, second = g.node(p.second).name;
    if (!refusal.empty()) {
      report.skipped.push_back({first, second, refusal});
      continue;
    }
    if (p.l1.out != p.l2.in) {
      report.skipped.push_back(
          {first, second,
           fmt::format("'{}' has {} output channels but '{}' reads {}", first, p.l1.out, second, p.l2.in)});
      continue;
    }
    if (clip_to_replace >= 0) {
      Node& clip = g.mutable_node(clip_to_replace);
      clip.op_type = FloatOpName(FloatOp::kRelu);
      clip.inputs.resize(1);
      clip.attributes = AttributeMap();
      report.relu6_replaced.push_back(clip.name);
      for (std::string& t : through) {
        if (t == FloatOpName(FloatOp::kClip)) {
          t = fmt::format("{} (was {})", FloatOpName(FloatOp::kRelu), FloatOpName(FloatOp::kClip));
        }
      }
    }
    p.through = through.empty() ? "nothing" : fmt::format("{}", fmt::join(through, ", "));
    plans.push_back(std::move(p));
  }
  return plans;
}

}  // namespace

float PerTensorWeightSqnrDb(const Tensor& w) {
  const float* x = w.data<float>();
  float max_abs = 0.0f;
  for (int64_t i = 0; i < w.NumElements(); ++i) max_abs = std::max(max_abs, std::fabs(x[i]));
  if (max_abs == 0.0f) return std::numeric_limits<float>::infinity();
  const float scale = max_abs / 127.5f, inv = 1.0f / scale;
  double signal = 0.0, noise = 0.0;
  for (int64_t i = 0; i < w.NumElements(); ++i) {
    const float q = std::clamp(std::nearbyint(x[i] * inv), -128.0f, 127.0f) * scale;
    signal += static_cast<double>(x[i]) * x[i];
    noise += static_cast<double>(x[i] - q) * (x[i] - q);
  }
  if (noise == 0.0) return std::numeric_limits<float>::infinity();
  return static_cast<float>(10.0 * std::log10(signal / noise));
}

Result<EqualizeReport> EqualizeCrossLayer(Graph& graph, PreActivationStats* stats, const EqualizeOptions& options) {
  EqualizeReport report;
  OCTET_ASSIGN_OR_RETURN(std::vector<PairPlan> plans, FindPairs(graph, options, report));
  if (plans.empty()) return report;

  // Every layer in some pair, measured before, in graph order.
  std::map<int, WeightLayout> layers;
  for (const PairPlan& p : plans) {
    layers[p.first] = p.l1;
    layers[p.second] = p.l2;
  }
  for (const auto& [index, layout] : layers) report.layers.push_back(Measure(graph, graph.node(index), layout));

  // Make every weight and bias written here private to its node first (copies of shared ones), once.
  std::map<int, float*> weights, biases;
  for (const auto& [index, layout] : layers) {
    const std::string name = graph.node(index).name;
    OCTET_ASSIGN_OR_RETURN(weights[index], Writable(graph, index, 1, 0, name + ".weight"));
  }
  for (const PairPlan& p : plans) {
    const Node& n = graph.node(p.first);
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue && biases.count(p.first) == 0) {
      OCTET_ASSIGN_OR_RETURN(biases[p.first], Writable(graph, p.first, 2, 0, n.name + ".bias"));
    }
  }
  // Writable may add constants, which can move value storage: take the pointers again.
  for (auto& [index, ptr] : weights) ptr = graph.mutable_value(graph.node(index).inputs[1]).data.data<float>();
  for (auto& [index, ptr] : biases) ptr = graph.mutable_value(graph.node(index).inputs[2]).data.data<float>();

  for (report.sweeps = 1; report.sweeps <= options.max_sweeps; ++report.sweeps) {
    double largest_move = 0.0;
    for (const PairPlan& p : plans) {
      float* w1 = weights[p.first];
      float* w2 = weights[p.second];
      ChannelStats* s1 = nullptr;
      if (stats != nullptr) {
        auto it = stats->find(graph.node(p.first).name);
        if (it != stats->end() && static_cast<int64_t>(it->second.mean.size()) == p.l1.out) s1 = &it->second;
      }
      for (int64_t c = 0; c < p.l1.out; ++c) {
        const float r1 = MaxAbs(w1, p.l1, true, c), r2 = MaxAbs(w2, p.l2, false, c);
        if (!(r1 > 0.0f) || !(r2 > 0.0f)) continue;  // a dead channel: nothing to balance
        const float s = std::sqrt(r1 / r2);
        if (!std::isfinite(s) || s == 1.0f) continue;
        largest_move = std::max(largest_move, std::fabs(std::log(static_cast<double>(s))));
        const float inv = 1.0f / s;
        p.l1.ForEachOutput(c, [&](int64_t i) { w1[i] *= inv; });
        if (biases.count(p.first)) biases[p.first][c] *= inv;
        p.l2.ForEachInput(c, [&](int64_t, int64_t i) { w2[i] *= s; });
        if (s1 != nullptr) {
          s1->mean[static_cast<size_t>(c)] *= inv;
          s1->std[static_cast<size_t>(c)] *= inv;
        }
      }
    }
    if (largest_move < 1e-3) break;
  }
  report.sweeps = std::min(report.sweeps, options.max_sweeps);

  for (const PairPlan& p : plans) {
    report.pairs.push_back({graph.node(p.first).name, graph.node(p.second).name, p.through, p.l1.out, 0, 0.0f});
  }
  if (options.absorb_high_bias && stats != nullptr) {
    for (size_t k = 0; k < plans.size(); ++k) {
      const PairPlan& p = plans[k];
      auto it = stats->find(graph.node(p.first).name);
      if (!p.relu || it == stats->end() || static_cast<int64_t>(it->second.mean.size()) != p.l1.out ||
          biases.count(p.first) == 0) {
        continue;
      }
      OCTET_ASSIGN_OR_RETURN(const bool unpadded, HasNoPadding(graph.node(p.second)));
      if (!unpadded) continue;
      std::vector<float> h(static_cast<size_t>(p.l1.out), 0.0f);
      EqualizeReport::Pair& out = report.pairs[k];
      for (int64_t c = 0; c < p.l1.out; ++c) {
        h[c] = std::max(0.0f, it->second.mean[c] - 3.0f * it->second.std[c]);
        if (h[c] > 0.0f) {
          ++out.absorbed_channels;
          out.max_absorbed = std::max(out.max_absorbed, h[c]);
        }
      }
      if (out.absorbed_channels == 0) continue;
      const std::string second = graph.node(p.second).name;
      OCTET_ASSIGN_OR_RETURN(float* b2, Writable(graph, p.second, 2, p.l2.out, second + ".bias"));
      std::vector<double> shift(static_cast<size_t>(p.l2.out), 0.0);
      const float* w2 = graph.value(graph.node(p.second).inputs[1]).data.data<float>();
      for (int64_t c = 0; c < p.l1.out; ++c) {
        if (h[c] == 0.0f) continue;
        p.l2.ForEachInput(c, [&](int64_t o, int64_t i) { shift[o] += static_cast<double>(w2[i]) * h[c]; });
      }
      for (int64_t o = 0; o < p.l2.out; ++o) b2[o] += static_cast<float>(shift[o]);
      float* b1 = graph.mutable_value(graph.node(p.first).inputs[2]).data.data<float>();
      for (int64_t c = 0; c < p.l1.out; ++c) {
        b1[c] -= h[c];
        it->second.mean[c] -= h[c];
      }
    }
  }

  for (EqualizeReport::Layer& m : report.layers) {
    const int index = graph.FindNode(m.node);
    const EqualizeReport::Layer after = Measure(graph, graph.node(index), layers[index]);
    m.scale_after = after.scale_before;
    m.sqnr_db_after = after.sqnr_db_before;
    m.worst_channel_sqnr_db_after = after.worst_channel_sqnr_db_before;
    m.spread_after = after.spread_before;
  }
  return report;
}

}  // namespace octet

// SmoothQuant: per-channel factors from calibration maxima, folded into LayerNormalization and the weights that read
// its output (see smoothquant.h).
#include "quant/smoothquant.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "core/executor.h"
#include "core/float_op_table.h"
#include "quant/float_batch_runs.h"
#include "quant/fuse.h"
#include "quant/fuse_transformer.h"
#include "quant/fused_ops.h"
#include "quant/graph_rewrite.h"

namespace octet {
namespace {

// A consumer of the LayerNorm's output whose weight takes the factors: W[c, j] is at c * c_stride + j * j_stride.
struct SmoothWeightUse {
  int node = -1;
  size_t slot = 1;
  int64_t c_stride = 0, j_stride = 0, n = 0;
};

struct SmoothCandidate {
  int node = -1;
  int64_t channels = 0;
  std::vector<SmoothWeightUse> uses;
};

const Value* SmoothConstantF32(const Graph& g, const Node& n, size_t slot) {
  if (slot >= n.inputs.size() || n.inputs[slot] == kNoValue) return nullptr;
  const Value& v = g.value(n.inputs[slot]);
  return v.kind == ValueKind::kConstant && v.data.dtype() == DType::kF32 ? &v : nullptr;
}

int64_t SmoothIntAttr(const Node& n, const char* name, int64_t def) {
  const Attribute* a = n.attributes.Find(name);
  return a != nullptr && a->type() == AttrType::kInt ? a->i() : def;
}

// The LayerNormalization at node index `i` as a candidate, or why it is left alone.
std::optional<SmoothCandidate> SmoothPlan(const Graph& g, int i, const std::vector<std::vector<int>>& readers,
                                          std::string& why) {
  const Node& ln = g.node(i);
  const Value* scale = SmoothConstantF32(g, ln, 1);
  if (scale == nullptr || scale->data.shape().rank() != 1) {
    why = "Scale (input 1) is not a constant f32 vector";
    return std::nullopt;
  }
  const int64_t c = scale->data.shape().dim(0);
  if (ln.inputs.size() > 2 && ln.inputs[2] != kNoValue) {
    const Value* b = SmoothConstantF32(g, ln, 2);
    if (b == nullptr || b->data.shape() != Shape{c}) {
      why = fmt::format("B (input 2) is not a constant f32 vector of {} values", c);
      return std::nullopt;
    }
  }
  const int64_t axis = SmoothIntAttr(ln, "axis", -1);
  const std::optional<Shape>& x_shape = g.value(ln.inputs[0]).shape;
  if (axis != -1 && !(x_shape && x_shape->rank() > 0 && axis == x_shape->rank() - 1)) {
    why = fmt::format("axis {} is not the last axis", axis);
    return std::nullopt;
  }
  if (ln.outputs.empty() || ln.outputs[0] == kNoValue) {
    why = "no output";
    return std::nullopt;
  }
  const ValueId y = ln.outputs[0];
  if (std::find(g.outputs().begin(), g.outputs().end(), y) != g.outputs().end()) {
    why = "its output is a graph output";
    return std::nullopt;
  }
  if (ln.outputs.size() > 1 &&
      std::any_of(ln.outputs.begin() + 1, ln.outputs.end(), [](ValueId v) { return v != kNoValue; })) {
    why = "it has Mean / InvStdDev outputs";
    return std::nullopt;
  }
  SmoothCandidate cand;
  cand.node = i;
  cand.channels = c;
  const std::vector<int>& users = readers[static_cast<size_t>(y)];
  if (users.empty()) {
    why = "its output has no readers";
    return std::nullopt;
  }
  for (int u : users) {
    const Node& n = g.node(u);
    const bool reads_as_x =
        n.inputs.size() >= 2 && n.inputs[0] == y && std::count(n.inputs.begin(), n.inputs.end(), y) == 1;
    const Value* w = SmoothConstantF32(g, n, 1);
    if (!n.domain.empty() || !reads_as_x || w == nullptr || w->data.shape().rank() != 2) {
      why = fmt::format("'{}' ({}) reads its output and is no MatMul or Gemm with a constant f32 weight matrix", n.name,
                        n.op_type);
      return std::nullopt;
    }
    const Shape& ws = w->data.shape();
    SmoothWeightUse use;
    use.node = u;
    if (n.op_type == FloatOpName(FloatOp::kMatMul)) {
      if (ws.dim(0) != c) {
        why = fmt::format("'{}': weight {} does not have {} rows", n.name, ws, c);
        return std::nullopt;
      }
      use.n = ws.dim(1);
      use.c_stride = ws.dim(1);
      use.j_stride = 1;
    } else if (n.op_type == FloatOpName(FloatOp::kGemm) && SmoothIntAttr(n, "transA", 0) == 0) {
      const bool trans_b = SmoothIntAttr(n, "transB", 0) != 0;
      if (ws.dim(trans_b ? 1 : 0) != c) {
        why = fmt::format("'{}': weight {} (transB {}) does not read {} channels", n.name, ws, trans_b ? 1 : 0, c);
        return std::nullopt;
      }
      use.n = ws.dim(trans_b ? 0 : 1);
      use.c_stride = trans_b ? 1 : ws.dim(1);
      use.j_stride = trans_b ? ws.dim(1) : 1;
    } else {
      why = fmt::format("'{}' ({}) reads its output: only MatMul and Gemm (transA 0) take the factors", n.name,
                        n.op_type);
      return std::nullopt;
    }
    cand.uses.push_back(use);
  }
  return cand;
}

float SmoothMedian(std::vector<float> v) {
  if (v.empty()) return 0.0f;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Per channel max|Y_c| of each candidate's output over the batches (the float graph with those values as outputs).
Result<std::vector<std::vector<float>>> SmoothChannelMaxima(const Graph& graph,
                                                            const std::vector<SmoothCandidate>& cands,
                                                            std::span<const std::vector<Tensor>> batches,
                                                            const Context& context) {
  Graph twin = graph;
  twin.mutable_outputs().clear();
  for (const SmoothCandidate& c : cands) OCTET_RETURN_IF_ERROR(twin.AddOutput(graph.node(c.node).outputs[0]));
  std::vector<std::vector<float>> maxima(cands.size());
  for (size_t k = 0; k < cands.size(); ++k) maxima[k].assign(static_cast<size_t>(cands[k].channels), 0.0f);
  const auto measure = [&](size_t b, const std::vector<Tensor>& outs) -> Status {
    for (size_t k = 0; k < cands.size(); ++k) {
      const Tensor& y = outs[k];
      const auto c = static_cast<size_t>(cands[k].channels);
      const auto values = y.values<float>();
      if (c == 0 || values.size() % c != 0) {
        return InvalidArgument("smoothquant: '{}' gives shape {}, not [..., {}]", graph.node(cands[k].node).name,
                               y.shape(), c);
      }
      for (size_t i = 0; i < values.size(); ++i) {
        const float a = std::fabs(values[i]);
        if (!std::isfinite(a)) {
          return InvalidArgument("smoothquant: '{}' gives {} in calibration batch {}", graph.node(cands[k].node).name,
                                 values[i], b);
        }
        float& m = maxima[k][i % c];
        m = std::max(m, a);
      }
    }
    return OkStatus();
  };
  OCTET_RETURN_IF_ERROR(ForEachFloatBatchRun(twin, batches, context, "smoothquant", measure));
  return maxima;
}

// A copy of the constant at `node`'s input `slot` under a fresh name, rewired into that slot (shared constants stay
// unchanged for their other readers). Returns the copy's data to change.
Result<Tensor*> SmoothOwnCopy(Graph& g, int node, size_t slot, const std::string& suffix) {
  const Value& v = g.value(g.node(node).inputs[slot]);
  OCTET_ASSIGN_OR_RETURN(Tensor data, v.data.Clone());
  OCTET_ASSIGN_OR_RETURN(ValueId id, g.AddConstant(UniqueValueName(g, v.name + suffix), std::move(data)));
  g.mutable_node(node).inputs[slot] = id;
  return &g.mutable_value(id).data;
}

}  // namespace

Result<SmoothQuantReport> SmoothQuant(Graph& graph, std::span<const std::vector<Tensor>> batches,
                                      const Context& context, const SmoothQuantOptions& options) {
  if (!(options.alpha >= 0.0f && options.alpha <= 1.0f)) {
    return InvalidArgument("--smoothquant alpha must be in [0, 1], got {}", options.alpha);
  }
  if (batches.empty()) return InvalidArgument("--smoothquant needs calibration data (--calib)");
  FoldConstantNodes(graph);
  OCTET_RETURN_IF_ERROR(FuseTransformerPatterns(graph).status());
  std::vector<std::vector<int>> readers(static_cast<size_t>(graph.num_values()));
  for (int i = 0; i < graph.num_nodes(); ++i) {
    for (ValueId v : graph.node(i).inputs) {
      if (v == kNoValue) continue;
      auto& r = readers[static_cast<size_t>(v)];
      if (r.empty() || r.back() != i) r.push_back(i);
    }
  }
  SmoothQuantReport report;
  std::vector<SmoothCandidate> cands;
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& n = graph.node(i);
    if (!n.domain.empty() || n.op_type != FloatOpName(FloatOp::kLayerNormalization)) continue;
    std::string why;
    if (auto c = SmoothPlan(graph, i, readers, why)) {
      cands.push_back(std::move(*c));
    } else {
      report.skipped.push_back({n.name, why});
    }
  }
  if (cands.empty()) return report;
  OCTET_ASSIGN_OR_RETURN(const auto maxima, SmoothChannelMaxima(graph, cands, batches, context));
  for (size_t k = 0; k < cands.size(); ++k) {
    const SmoothCandidate& cand = cands[k];
    const auto c = static_cast<size_t>(cand.channels);
    // max|W_c| over every consumer's outputs.
    std::vector<float> w_max(c, 0.0f);
    for (const SmoothWeightUse& u : cand.uses) {
      const float* w = graph.value(graph.node(u.node).inputs[u.slot]).data.data<float>();
      for (size_t ch = 0; ch < c; ++ch) {
        for (int64_t j = 0; j < u.n; ++j) {
          w_max[ch] = std::max(w_max[ch], std::fabs(w[static_cast<int64_t>(ch) * u.c_stride + j * u.j_stride]));
        }
      }
    }
    // The paper's factor, clamped below at 1e-5 as its reference code does; channels that are all zero in the
    // activations or the weights keep factor 1.
    std::vector<float> s(c, 1.0f);
    for (size_t ch = 0; ch < c; ++ch) {
      const float a = maxima[k][ch];
      if (a > 0.0f && w_max[ch] > 0.0f) {
        const double f = std::pow(double{a}, options.alpha) / std::pow(double{w_max[ch]}, 1.0 - options.alpha);
        s[ch] = std::max(1e-5f, static_cast<float>(f));
      }
    }
    const int ln = cand.node;
    OCTET_ASSIGN_OR_RETURN(Tensor * gamma, SmoothOwnCopy(graph, ln, 1, ".smoothed"));
    for (size_t ch = 0; ch < c; ++ch) gamma->data<float>()[ch] /= s[ch];
    if (graph.node(ln).inputs.size() > 2 && graph.node(ln).inputs[2] != kNoValue) {
      OCTET_ASSIGN_OR_RETURN(Tensor * beta, SmoothOwnCopy(graph, ln, 2, ".smoothed"));
      for (size_t ch = 0; ch < c; ++ch) beta->data<float>()[ch] /= s[ch];
    }
    SmoothQuantReport::Layer layer;
    layer.layer_norm = graph.node(ln).name;
    for (const SmoothWeightUse& u : cand.uses) {
      OCTET_ASSIGN_OR_RETURN(Tensor * w, SmoothOwnCopy(graph, u.node, u.slot, ".smoothed"));
      float* p = w->data<float>();
      for (size_t ch = 0; ch < c; ++ch) {
        for (int64_t j = 0; j < u.n; ++j) p[static_cast<int64_t>(ch) * u.c_stride + j * u.j_stride] *= s[ch];
      }
      layer.consumers.push_back(graph.node(u.node).name);
    }
    std::vector<float> after(c);
    for (size_t ch = 0; ch < c; ++ch) after[ch] = maxima[k][ch] / s[ch];
    layer.activation_max_before = *std::max_element(maxima[k].begin(), maxima[k].end());
    layer.activation_max_after = *std::max_element(after.begin(), after.end());
    const float med_before = SmoothMedian(maxima[k]), med_after = SmoothMedian(after);
    layer.channel_spread_before = med_before > 0 ? layer.activation_max_before / med_before : 0.0f;
    layer.channel_spread_after = med_after > 0 ? layer.activation_max_after / med_after : 0.0f;
    layer.min_factor = *std::min_element(s.begin(), s.end());
    layer.max_factor = *std::max_element(s.begin(), s.end());
    report.layers.push_back(std::move(layer));
  }
  graph = graph.WithoutUnusedConstants();
  return report;
}

std::string SmoothQuantReportText(const SmoothQuantReport& report, float alpha) {
  std::string out = fmt::format("smoothquant (alpha {}): {} LayerNorm(s) smoothed\n", alpha, report.layers.size());
  for (const auto& l : report.layers) {
    out += fmt::format(
        "  {} -> {}: activation max {:.4g} -> {:.4g}, channel max/median {:.3g} -> {:.3g}, factors {:.3g}..{:.3g}\n",
        l.layer_norm, fmt::join(l.consumers, ", "), l.activation_max_before, l.activation_max_after,
        l.channel_spread_before, l.channel_spread_after, l.min_factor, l.max_factor);
  }
  for (const auto& s : report.skipped) out += fmt::format("  skipped {}: {}\n", s.layer_norm, s.reason);
  return out;
}

}  // namespace octet

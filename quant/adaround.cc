// AdaRound: Gram matrices of the layers' float inputs, the per-layer optimizer loop, and applying the result (see
// adaround.h).
#include "quant/adaround.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/executor.h"
#include "core/float_op_table.h"
#include "quant/float_batch_runs.h"
#include "quant/fused_ops.h"
#include "quant/graph_rewrite.h"

namespace octet {
namespace {

constexpr float kAdaRoundZeta = 1.1f;
constexpr float kAdaRoundGamma = -0.1f;

// How a node's weight reads as rows (output channels) of k weights, and its input as patches of k values.
struct AdaRoundView {
  bool conv = false;
  int64_t rows = 0, k = 0, groups = 1;
  bool transposed = false;  // weight stored [k, rows] (Gemm transB = 0, MatMul)
  // Conv: input channels per group, kernel, strides, leading pads, trailing pads, dilations (h, w).
  int64_t ig = 0, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, eh = 0, ew = 0, dh = 1, dw = 1;
};

bool AdaRoundFloatConstant(const Graph& g, ValueId id) {
  return id != kNoValue && g.value(id).kind == ValueKind::kConstant && g.value(id).data.dtype() == DType::kF32;
}

// Fills `view` for node n with weight qparams q, or returns why AdaRound leaves it alone.
Result<std::string> DescribeAdaRoundLayer(const Graph& g, const std::vector<int>& uses, const Node& n, const QParams& q,
                                          AdaRoundView* view) {
  if (!n.domain.empty() || !OpIn(n.op_type, {FloatOp::kConv, FloatOp::kGemm, FloatOp::kMatMul})) {
    return fmt::format("AdaRound handles Conv, Gemm and MatMul, not {}", n.op_type);
  }
  if (n.inputs.size() < 2 || !AdaRoundFloatConstant(g, n.inputs[1])) return std::string("the weight is not a constant");
  if (n.inputs[0] == kNoValue) return std::string("it has no data input");
  if (uses[static_cast<size_t>(n.inputs[1])] != 1) return std::string("its weight is shared with another node");
  const Shape& s = g.value(n.inputs[1]).data.shape();
  int out_axis = 0;
  if (n.op_type == FloatOpName(FloatOp::kConv)) {
    if (s.rank() != 4) return fmt::format("a Conv with a rank-{} weight (AdaRound handles 2-D Conv)", s.rank());
    OCTET_ASSIGN_OR_RETURN(const std::string auto_pad, n.attributes.GetString("auto_pad", "NOTSET"));
    if (auto_pad != "NOTSET" && auto_pad != "VALID" && !auto_pad.empty()) {
      return fmt::format("a Conv with auto_pad {} (AdaRound reads explicit pads)", auto_pad);
    }
    OCTET_ASSIGN_OR_RETURN(view->groups, n.attributes.GetInt("group", 1));
    OCTET_ASSIGN_OR_RETURN(const auto strides, n.attributes.GetInts("strides", {1, 1}));
    OCTET_ASSIGN_OR_RETURN(const auto dilations, n.attributes.GetInts("dilations", {1, 1}));
    OCTET_ASSIGN_OR_RETURN(auto pads, n.attributes.GetInts("pads", {0, 0, 0, 0}));
    if (auto_pad == "VALID") pads = {0, 0, 0, 0};
    if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 || view->groups < 1 ||
        s.dim(0) % view->groups != 0) {
      return std::string("a Conv whose strides, dilations, pads or group do not fit a 2-D kernel");
    }
    view->conv = true;
    view->rows = s.dim(0);
    view->ig = s.dim(1);
    view->kh = s.dim(2);
    view->kw = s.dim(3);
    view->k = view->ig * view->kh * view->kw;
    view->sh = strides[0], view->sw = strides[1], view->dh = dilations[0], view->dw = dilations[1];
    view->ph = pads[0], view->pw = pads[1], view->eh = pads[2], view->ew = pads[3];
  } else {
    if (s.rank() != 2) return fmt::format("a {} with a rank-{} weight", n.op_type, s.rank());
    bool trans_b = false;
    if (n.op_type == FloatOpName(FloatOp::kGemm)) {
      OCTET_ASSIGN_OR_RETURN(const float alpha, n.attributes.GetFloat("alpha", 1.0f));
      OCTET_ASSIGN_OR_RETURN(const float beta, n.attributes.GetFloat("beta", 1.0f));
      OCTET_ASSIGN_OR_RETURN(const int64_t trans_a, n.attributes.GetInt("transA", 0));
      OCTET_ASSIGN_OR_RETURN(const int64_t tb, n.attributes.GetInt("transB", 0));
      if (alpha != 1.0f || beta != 1.0f || trans_a != 0) return std::string("a Gemm with alpha, beta or transA set");
      trans_b = tb != 0;
    }
    view->transposed = !trans_b;
    view->rows = trans_b ? s.dim(0) : s.dim(1);
    view->k = trans_b ? s.dim(1) : s.dim(0);
    out_axis = trans_b ? 0 : 1;
  }
  if (q.per_channel() && (q.axis() != out_axis || q.num_channels() != view->rows)) {
    return fmt::format("its per-channel qparams (axis {}) are not along the output channels", q.axis());
  }
  if (view->rows == 0 || view->k == 0) return std::string("an empty weight");
  return std::string();
}

// Adds sum over patches of x x^T into gram (per group, upper triangle) and the patch count into *count.
Status AccumulateAdaRoundGram(const AdaRoundView& v, const Node& n, const Tensor& x,
                              std::vector<std::vector<double>>& gram, int64_t* count) {
  const int64_t k = v.k;
  std::vector<float> pt;  // patches transposed: pt[a * m + p]
  auto add = [&](int64_t group, int64_t m) {
    std::vector<double>& h = gram[static_cast<size_t>(group)];
    for (int64_t a = 0; a < k; ++a) {
      const float* pa = pt.data() + a * m;
      for (int64_t b = a; b < k; ++b) {
        const float* pb = pt.data() + b * m;
        double sum = 0.0;
        for (int64_t p = 0; p < m; ++p) sum += static_cast<double>(pa[p]) * pb[p];
        h[static_cast<size_t>(a * k + b)] += sum;
      }
    }
  };
  const float* data = x.data<float>();
  if (v.conv) {
    if (x.shape().rank() != 4 || x.shape().dim(1) != v.groups * v.ig) {
      return InvalidArgument("AdaRound: '{}' reads an input of shape {}, not [N, {}, H, W]", n.name,
                             x.shape().ToString(), v.groups * v.ig);
    }
    const int64_t batch = x.shape().dim(0), c = x.shape().dim(1), hi = x.shape().dim(2), wi = x.shape().dim(3);
    const int64_t ho = (hi + v.ph + v.eh - (v.dh * (v.kh - 1) + 1)) / v.sh + 1;
    const int64_t wo = (wi + v.pw + v.ew - (v.dw * (v.kw - 1) + 1)) / v.sw + 1;
    if (ho <= 0 || wo <= 0) return OkStatus();
    const int64_t m = ho * wo;
    pt.assign(static_cast<size_t>(k * m), 0.0f);
    for (int64_t i = 0; i < batch; ++i) {
      for (int64_t g = 0; g < v.groups; ++g) {
        for (int64_t j = 0; j < v.ig; ++j) {
          const float* plane = data + (i * c + g * v.ig + j) * hi * wi;
          for (int64_t a = 0; a < v.kh; ++a) {
            for (int64_t b = 0; b < v.kw; ++b) {
              float* row = pt.data() + ((j * v.kh + a) * v.kw + b) * m;
              for (int64_t oy = 0; oy < ho; ++oy) {
                const int64_t y = oy * v.sh - v.ph + a * v.dh;
                for (int64_t ox = 0; ox < wo; ++ox) {
                  const int64_t xx = ox * v.sw - v.pw + b * v.dw;
                  row[oy * wo + ox] = y >= 0 && y < hi && xx >= 0 && xx < wi ? plane[y * wi + xx] : 0.0f;
                }
              }
            }
          }
        }
        add(g, m);
      }
      *count += m;
    }
    return OkStatus();
  }
  if (x.shape().rank() < 1 || x.shape().dim(x.shape().rank() - 1) != k) {
    return InvalidArgument("AdaRound: '{}' reads an input of shape {}, not [..., {}]", n.name, x.shape().ToString(), k);
  }
  const int64_t m = x.NumElements() / k;
  pt.assign(static_cast<size_t>(k * m), 0.0f);
  for (int64_t p = 0; p < m; ++p) {
    for (int64_t a = 0; a < k; ++a) pt[static_cast<size_t>(a * m + p)] = data[p * k + a];
  }
  add(0, m);
  *count += m;
  return OkStatus();
}

float AdaRoundSigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

}  // namespace

std::vector<int32_t> RoundToNearest(const AdaRoundLayer& l) {
  std::vector<int32_t> q(static_cast<size_t>(l.rows * l.k));
  for (int64_t r = 0; r < l.rows; ++r) {
    const float inv = 1.0f / l.scale[static_cast<size_t>(r)];
    const float zp = static_cast<float>(l.zero_point[static_cast<size_t>(r)]);
    for (int64_t j = 0; j < l.k; ++j) {
      const size_t i = static_cast<size_t>(r * l.k + j);
      q[i] = static_cast<int32_t>(std::clamp(zp + std::nearbyint(l.weight[i] * inv), static_cast<float>(l.quant_min),
                                             static_cast<float>(l.quant_max)));
    }
  }
  return q;
}

double ReconstructionLoss(const AdaRoundLayer& l, std::span<const int32_t> q) {
  const int64_t groups = static_cast<int64_t>(l.gram.size());
  const int64_t per_group = l.rows / std::max<int64_t>(1, groups);
  std::vector<double> d(static_cast<size_t>(l.k));
  double loss = 0.0;
  for (int64_t r = 0; r < l.rows; ++r) {
    const std::vector<double>& h = l.gram[static_cast<size_t>(r / per_group)];
    const double s = l.scale[static_cast<size_t>(r)];
    const int32_t zp = l.zero_point[static_cast<size_t>(r)];
    for (int64_t j = 0; j < l.k; ++j) {
      const size_t i = static_cast<size_t>(r * l.k + j);
      d[static_cast<size_t>(j)] = (q[i] - zp) * s - l.weight[i];
    }
    for (int64_t a = 0; a < l.k; ++a) {
      double row = 0.0;
      for (int64_t b = 0; b < l.k; ++b) row += h[static_cast<size_t>(a * l.k + b)] * d[static_cast<size_t>(b)];
      loss += d[static_cast<size_t>(a)] * row;
    }
  }
  return loss;
}

std::vector<int32_t> LearnRounding(const AdaRoundLayer& l, const AdaRoundOptions& o) {
  const int64_t k = l.k;
  const int64_t groups = static_cast<int64_t>(l.gram.size());
  const int64_t per_group = l.rows / std::max<int64_t>(1, groups);
  const int iterations = std::max(0, o.iterations);
  const int warm = static_cast<int>(std::lround(o.warmup * iterations));
  std::vector<int32_t> out(static_cast<size_t>(l.rows * k));
  const size_t n = static_cast<size_t>(per_group * k);
  std::vector<float> hmat(static_cast<size_t>(k * k)), base(n), v(n), m1(n, 0.0f), m2(n, 0.0f), h(n), dw(n), grad(n);
  for (int64_t g = 0; g < groups; ++g) {
    for (size_t i = 0; i < hmat.size(); ++i) hmat[i] = static_cast<float>(l.gram[static_cast<size_t>(g)][i]);
    const int64_t r0 = g * per_group;
    for (int64_t r = 0; r < per_group; ++r) {
      const float inv = 1.0f / l.scale[static_cast<size_t>(r0 + r)];
      for (int64_t j = 0; j < k; ++j) {
        const size_t i = static_cast<size_t>(r * k + j);
        const float x = l.weight[static_cast<size_t>((r0 + r) * k + j)] * inv;
        base[i] = std::floor(x);
        const float sig =
            std::clamp((x - base[i] - kAdaRoundGamma) / (kAdaRoundZeta - kAdaRoundGamma), 1e-6f, 1.0f - 1e-6f);
        v[i] = std::log(sig / (1.0f - sig));
      }
    }
    std::fill(m1.begin(), m1.end(), 0.0f);
    std::fill(m2.begin(), m2.end(), 0.0f);
    for (int t = 0; t < iterations; ++t) {
      // W~ - W under the soft rounding.
      for (int64_t r = 0; r < per_group; ++r) {
        const float s = l.scale[static_cast<size_t>(r0 + r)];
        const float zp = static_cast<float>(l.zero_point[static_cast<size_t>(r0 + r)]);
        for (int64_t j = 0; j < k; ++j) {
          const size_t i = static_cast<size_t>(r * k + j);
          h[i] = std::clamp(AdaRoundSigmoid(v[i]) * (kAdaRoundZeta - kAdaRoundGamma) + kAdaRoundGamma, 0.0f, 1.0f);
          const float q =
              std::clamp(base[i] + h[i] + zp, static_cast<float>(l.quant_min), static_cast<float>(l.quant_max));
          dw[i] = (q - zp) * s - l.weight[static_cast<size_t>((r0 + r) * k + j)];
        }
      }
      // d loss / d W~ = 2 (W~ - W) H, row by row.
      std::fill(grad.begin(), grad.end(), 0.0f);
      for (int64_t r = 0; r < per_group; ++r) {
        float* gr = grad.data() + r * k;
        for (int64_t a = 0; a < k; ++a) {
          const float d = dw[static_cast<size_t>(r * k + a)];
          if (d == 0.0f) continue;
          const float* ha = hmat.data() + a * k;
          for (int64_t b = 0; b < k; ++b) gr[b] += d * ha[b];
        }
      }
      float beta = 0.0f;
      const bool regularize = t >= warm;
      if (regularize) {
        const float rel =
            iterations > warm ? static_cast<float>(t - warm) / static_cast<float>(iterations - warm) : 1.0f;
        beta = o.beta_end + (o.beta_start - o.beta_end) * std::max(0.0f, 1.0f - rel);
      }
      // Adam step on V through h (zero where h is clipped or q is clamped).
      const float bc1 = 1.0f - std::pow(0.9f, static_cast<float>(t + 1));
      const float bc2 = 1.0f - std::pow(0.999f, static_cast<float>(t + 1));
      for (int64_t r = 0; r < per_group; ++r) {
        const float s = l.scale[static_cast<size_t>(r0 + r)];
        const float zp = static_cast<float>(l.zero_point[static_cast<size_t>(r0 + r)]);
        for (int64_t j = 0; j < k; ++j) {
          const size_t i = static_cast<size_t>(r * k + j);
          const float q = base[i] + h[i] + zp;
          float dh =
              q >= static_cast<float>(l.quant_min) && q <= static_cast<float>(l.quant_max) ? 2.0f * grad[i] * s : 0.0f;
          if (regularize) {
            const float c = 2.0f * h[i] - 1.0f;
            const float a = std::fabs(c);
            if (a > 0.0f) dh -= o.regularization * 2.0f * beta * std::pow(a, beta - 1.0f) * (c > 0.0f ? 1.0f : -1.0f);
          }
          const float sig = AdaRoundSigmoid(v[i]);
          const float raw = sig * (kAdaRoundZeta - kAdaRoundGamma) + kAdaRoundGamma;
          const float gv = raw > 0.0f && raw < 1.0f ? dh * sig * (1.0f - sig) * (kAdaRoundZeta - kAdaRoundGamma) : 0.0f;
          m1[i] = 0.9f * m1[i] + 0.1f * gv;
          m2[i] = 0.999f * m2[i] + 0.001f * gv * gv;
          v[i] -= o.learning_rate * (m1[i] / bc1) / (std::sqrt(m2[i] / bc2) + 1e-8f);
        }
      }
    }
    for (int64_t r = 0; r < per_group; ++r) {
      const float zp = static_cast<float>(l.zero_point[static_cast<size_t>(r0 + r)]);
      for (int64_t j = 0; j < k; ++j) {
        const size_t i = static_cast<size_t>(r * k + j);
        const float up =
            AdaRoundSigmoid(v[i]) * (kAdaRoundZeta - kAdaRoundGamma) + kAdaRoundGamma >= 0.5f ? 1.0f : 0.0f;
        out[static_cast<size_t>((r0 + r) * k + j)] = static_cast<int32_t>(
            std::clamp(base[i] + up + zp, static_cast<float>(l.quant_min), static_cast<float>(l.quant_max)));
      }
    }
  }
  return out;
}

Result<AdaRoundResult> AdaRound(const Graph& graph, const std::map<std::string, QParams>& weight_qparams,
                                std::span<const std::vector<Tensor>> batches, const Context& context,
                                const AdaRoundOptions& options) {
  if (batches.empty()) return InvalidArgument("AdaRound needs calibration data (--calib)");
  AdaRoundResult result;
  const std::vector<int> uses = CountUses(graph);
  // Prepare folds a BatchNorm into the layer before it, so the qparams are for the folded weight.
  std::vector<bool> read_by_batch_norm(static_cast<size_t>(graph.num_values()), false);
  for (const Node& n : graph.nodes()) {
    if (n.op_type == FloatOpName(FloatOp::kBatchNormalization) && !n.inputs.empty() && n.inputs[0] != kNoValue) {
      read_by_batch_norm[static_cast<size_t>(n.inputs[0])] = true;
    }
  }
  std::vector<int> layers;
  std::vector<AdaRoundView> views;
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& n = graph.node(i);
    auto q = weight_qparams.find(n.name);
    if (q == weight_qparams.end()) continue;
    if (!n.outputs.empty() && n.outputs[0] != kNoValue && read_by_batch_norm[static_cast<size_t>(n.outputs[0])]) {
      return FailedPrecondition("AdaRound: '{}' feeds a BatchNormalization: fold BatchNorms first", n.name);
    }
    AdaRoundView view;
    OCTET_ASSIGN_OR_RETURN(const std::string why, DescribeAdaRoundLayer(graph, uses, n, q->second, &view));
    if (!why.empty()) {
      result.report.skipped.push_back({n.name, why});
      continue;
    }
    layers.push_back(i);
    views.push_back(view);
  }
  if (layers.empty()) return result;

  // The float graph with each layer's input as an output (graph inputs are read from the batch directly).
  Graph twin = graph;
  twin.mutable_outputs().clear();
  std::vector<int> source(layers.size(), -1);  // >= 0: graph input index; else twin output index - 1 - source
  for (size_t k = 0; k < layers.size(); ++k) {
    const ValueId x = graph.node(layers[k]).inputs[0];
    const auto in = std::find(graph.inputs().begin(), graph.inputs().end(), x);
    if (in != graph.inputs().end()) {
      source[k] = static_cast<int>(in - graph.inputs().begin());
      continue;
    }
    const auto out = std::find(twin.outputs().begin(), twin.outputs().end(), x);
    if (out == twin.outputs().end()) OCTET_RETURN_IF_ERROR(twin.AddOutput(x));
    const auto at = std::find(twin.outputs().begin(), twin.outputs().end(), x);
    source[k] = -1 - static_cast<int>(at - twin.outputs().begin());
  }
  std::vector<std::vector<std::vector<double>>> grams(layers.size());
  std::vector<int64_t> counts(layers.size(), 0);
  for (size_t k = 0; k < layers.size(); ++k) {
    grams[k].assign(static_cast<size_t>(views[k].groups),
                    std::vector<double>(static_cast<size_t>(views[k].k * views[k].k), 0.0));
  }
  // Layers reading only graph inputs need no run (the twin then has no outputs).
  const auto accumulate = [&](size_t b, const std::vector<Tensor>& outs) -> Status {
    for (size_t k = 0; k < layers.size(); ++k) {
      const size_t at = static_cast<size_t>(source[k] >= 0 ? source[k] : -1 - source[k]);
      const Tensor& x = source[k] >= 0 ? batches[b].at(at) : outs.at(at);
      if (x.dtype() != DType::kF32) {
        return InvalidArgument("AdaRound: '{}' reads a {} input", graph.node(layers[k]).name, DTypeName(x.dtype()));
      }
      OCTET_RETURN_IF_ERROR(AccumulateAdaRoundGram(views[k], graph.node(layers[k]), x, grams[k], &counts[k]));
    }
    return OkStatus();
  };
  if (twin.outputs().empty()) {
    for (size_t b = 0; b < batches.size(); ++b) OCTET_RETURN_IF_ERROR(accumulate(b, {}));
  } else {
    OCTET_RETURN_IF_ERROR(ForEachFloatBatchRun(twin, batches, context, "AdaRound", accumulate));
  }

  for (size_t k = 0; k < layers.size(); ++k) {
    const Node& n = graph.node(layers[k]);
    const AdaRoundView& view = views[k];
    const QParams& q = weight_qparams.at(n.name);
    const Tensor& w = graph.value(n.inputs[1]).data;
    if (counts[k] == 0) {
      result.report.skipped.push_back({n.name, "the calibration data gave it no input"});
      continue;
    }
    AdaRoundLayer layer;
    layer.rows = view.rows;
    layer.k = view.k;
    layer.quant_min = q.quant_min();
    layer.quant_max = q.quant_max();
    layer.weight.resize(static_cast<size_t>(view.rows * view.k));
    for (int64_t r = 0; r < view.rows; ++r) {
      layer.scale.push_back(q.scales()[static_cast<size_t>(q.per_channel() ? r : 0)]);
      layer.zero_point.push_back(q.zero_points()[static_cast<size_t>(q.per_channel() ? r : 0)]);
      for (int64_t j = 0; j < view.k; ++j) {
        layer.weight[static_cast<size_t>(r * view.k + j)] =
            w.data<float>()[view.transposed ? j * view.rows + r : r * view.k + j];
      }
    }
    for (std::vector<double>& h : grams[k]) {
      for (int64_t a = 0; a < view.k; ++a) {
        for (int64_t b = 0; b < view.k; ++b) {
          const size_t i = static_cast<size_t>(a * view.k + b);
          if (b < a) {
            h[i] = h[static_cast<size_t>(b * view.k + a)];
          } else {
            h[i] /= static_cast<double>(counts[k]);
          }
        }
      }
    }
    layer.gram = std::move(grams[k]);
    const std::vector<int32_t> nearest = RoundToNearest(layer);
    const std::vector<int32_t> learned = LearnRounding(layer, options);
    AdaRoundReport::Layer out;
    out.node = n.name;
    out.weights = view.rows * view.k;
    for (size_t i = 0; i < nearest.size(); ++i) out.changed += nearest[i] != learned[i] ? 1 : 0;
    out.loss_nearest = ReconstructionLoss(layer, nearest);
    out.loss_adaround = ReconstructionLoss(layer, learned);
    OCTET_ASSIGN_OR_RETURN(Tensor rounded, Tensor::Create(DType::kF32, w.shape()));
    for (int64_t r = 0; r < view.rows; ++r) {
      for (int64_t j = 0; j < view.k; ++j) {
        const size_t i = static_cast<size_t>(r * view.k + j);
        const float value = static_cast<float>(learned[i] - layer.zero_point[static_cast<size_t>(r)]) *
                            layer.scale[static_cast<size_t>(r)];
        rounded.data<float>()[view.transposed ? j * view.rows + r : r * view.k + j] = value;
      }
    }
    result.report.layers.push_back(out);
    result.rounded.emplace(n.name, std::move(rounded));
    result.weight_qparams.emplace(graph.value(n.inputs[1]).name, q);
  }
  return result;
}

Status ApplyRoundedWeights(Graph& graph, const std::map<std::string, Tensor>& rounded) {
  for (const auto& [name, w] : rounded) {
    const int index = graph.FindNode(name);
    if (index < 0) return NotFound("AdaRound: no node '{}' to give its rounded weight", name);
    const Node& n = graph.node(index);
    if (n.inputs.size() < 2 || !AdaRoundFloatConstant(graph, n.inputs[1]) ||
        graph.value(n.inputs[1]).data.shape() != w.shape()) {
      return FailedPrecondition("AdaRound: node '{}' no longer has the weight it was rounded for", name);
    }
    graph.mutable_value(n.inputs[1]).data = w;
  }
  return OkStatus();
}

Status FixWeightQParams(PreparedGraph& prepared, const std::map<std::string, QParams>& qparams) {
  for (ObserverSlot& slot : prepared.mutable_slots()) {
    if (slot.role != ObservedRole::kWeight || slot.values.empty()) continue;
    auto it = qparams.find(prepared.graph().value(slot.values[0]).name);
    if (it != qparams.end()) slot.fixed_qparams = it->second;
  }
  return OkStatus();
}

}  // namespace octet

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

// Checks that x is the input `v` reads; *images and *m: the blocks of patches FillAdaRoundPatches gives (per image and
// group of a Conv, one block of every row for Gemm/MatMul) and the patches in each (0: the Conv has no output).
Status AdaRoundPatchShape(const AdaRoundView& v, const Node& n, const Tensor& x, int64_t* images, int64_t* m) {
  if (v.conv) {
    if (x.shape().rank() != 4 || x.shape().dim(1) != v.groups * v.ig) {
      return InvalidArgument("AdaRound: '{}' reads an input of shape {}, not [N, {}, H, W]", n.name,
                             x.shape().ToString(), v.groups * v.ig);
    }
    const int64_t hi = x.shape().dim(2), wi = x.shape().dim(3);
    const int64_t ho = (hi + v.ph + v.eh - (v.dh * (v.kh - 1) + 1)) / v.sh + 1;
    const int64_t wo = (wi + v.pw + v.ew - (v.dw * (v.kw - 1) + 1)) / v.sw + 1;
    *images = x.shape().dim(0);
    *m = ho <= 0 || wo <= 0 ? 0 : ho * wo;
    return OkStatus();
  }
  if (x.shape().rank() < 1 || x.shape().dim(x.shape().rank() - 1) != v.k) {
    return InvalidArgument("AdaRound: '{}' reads an input of shape {}, not [..., {}]", n.name, x.shape().ToString(),
                           v.k);
  }
  *images = 1;
  *m = x.NumElements() / v.k;
  return OkStatus();
}

// pt[a * m + p] = value a of patch p, for image i and group g (AdaRoundPatchShape's block).
void FillAdaRoundPatches(const AdaRoundView& v, const Tensor& x, int64_t i, int64_t g, int64_t m,
                         std::vector<float>& pt) {
  const int64_t k = v.k;
  const float* data = x.data<float>();
  pt.assign(static_cast<size_t>(k * m), 0.0f);
  if (!v.conv) {
    for (int64_t p = 0; p < m; ++p) {
      for (int64_t a = 0; a < k; ++a) pt[static_cast<size_t>(a * m + p)] = data[p * k + a];
    }
    return;
  }
  const int64_t c = x.shape().dim(1), hi = x.shape().dim(2), wi = x.shape().dim(3);
  const int64_t wo = (wi + v.pw + v.ew - (v.dw * (v.kw - 1) + 1)) / v.sw + 1, ho = m / wo;
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
}

// h[a * k + b] += sum over the m patches of p[a] q[b]; the upper triangle only when `upper` (p == q).
void AddAdaRoundProducts(const std::vector<float>& p, const std::vector<float>& q, int64_t k, int64_t m, bool upper,
                         std::vector<double>& h) {
  for (int64_t a = 0; a < k; ++a) {
    const float* pa = p.data() + a * m;
    for (int64_t b = upper ? a : 0; b < k; ++b) {
      const float* qb = q.data() + b * m;
      double sum = 0.0;
      for (int64_t i = 0; i < m; ++i) sum += static_cast<double>(pa[i]) * qb[i];
      h[static_cast<size_t>(a * k + b)] += sum;
    }
  }
}

// Adds sum over patches of x x^T into gram (per group, upper triangle) and the patch count into *count.
Status AccumulateAdaRoundGram(const AdaRoundView& v, const Node& n, const Tensor& x,
                              std::vector<std::vector<double>>& gram, int64_t* count) {
  int64_t images = 0, m = 0;
  OCTET_RETURN_IF_ERROR(AdaRoundPatchShape(v, n, x, &images, &m));
  if (m == 0) return OkStatus();
  std::vector<float> pt;
  for (int64_t i = 0; i < images; ++i) {
    for (int64_t g = 0; g < v.groups; ++g) {
      FillAdaRoundPatches(v, x, i, g, m, pt);
      AddAdaRoundProducts(pt, pt, v.k, m, true, gram[static_cast<size_t>(g)]);
    }
    *count += m;
  }
  return OkStatus();
}

// For the asymmetric reconstruction: over the patches of the float input x and the quantized model's input xq,
// adds xq xq^T into gram, x xq^T into cross (full) and x x^T into float_gram (upper triangles), per group.
Status AccumulateAdaRoundPair(const AdaRoundView& v, const Node& n, const Tensor& x, const Tensor& xq,
                              std::vector<std::vector<double>>& gram, std::vector<std::vector<double>>& cross,
                              std::vector<std::vector<double>>& float_gram, int64_t* count) {
  if (x.shape() != xq.shape()) {
    return Internal("AdaRound: '{}' reads {} in the float model but {} in the quantized one", n.name,
                    x.shape().ToString(), xq.shape().ToString());
  }
  int64_t images = 0, m = 0;
  OCTET_RETURN_IF_ERROR(AdaRoundPatchShape(v, n, x, &images, &m));
  if (m == 0) return OkStatus();
  std::vector<float> pt, ptq;
  for (int64_t i = 0; i < images; ++i) {
    for (int64_t g = 0; g < v.groups; ++g) {
      FillAdaRoundPatches(v, x, i, g, m, pt);
      FillAdaRoundPatches(v, xq, i, g, m, ptq);
      const size_t at = static_cast<size_t>(g);
      AddAdaRoundProducts(ptq, ptq, v.k, m, true, gram[at]);
      AddAdaRoundProducts(pt, ptq, v.k, m, false, cross[at]);
      AddAdaRoundProducts(pt, pt, v.k, m, true, float_gram[at]);
    }
    *count += m;
  }
  return OkStatus();
}

// Divides the sums by count; mirrors the upper triangle when `symmetric`.
void AdaRoundMean(std::vector<std::vector<double>>& sums, int64_t k, int64_t count, bool symmetric) {
  for (std::vector<double>& h : sums) {
    for (int64_t a = 0; a < k; ++a) {
      for (int64_t b = 0; b < k; ++b) {
        const size_t i = static_cast<size_t>(a * k + b);
        if (symmetric && b < a) {
          h[i] = h[static_cast<size_t>(b * k + a)];
        } else {
          h[i] /= static_cast<double>(count);
        }
      }
    }
  }
}

float AdaRoundSigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// The asymmetric loss's linear term, per row r: u_r[a] = sum_b W_rb (gram[b][a] - cross[b][a]) (rows * k); empty
// when the layer has no cross term. The loss's gradient in W~ is then 2 ((W~ - W) gram + u).
std::vector<double> AdaRoundOffsets(const AdaRoundLayer& l) {
  if (l.cross.empty()) return {};
  const int64_t per_group = l.rows / std::max<int64_t>(1, static_cast<int64_t>(l.gram.size()));
  std::vector<double> u(static_cast<size_t>(l.rows * l.k), 0.0);
  for (int64_t r = 0; r < l.rows; ++r) {
    const size_t g = static_cast<size_t>(r / per_group);
    const std::vector<double>& h = l.gram[g];
    const std::vector<double>& c = l.cross[g];
    double* ur = u.data() + r * l.k;
    for (int64_t b = 0; b < l.k; ++b) {
      const double w = l.weight[static_cast<size_t>(r * l.k + b)];
      if (w == 0.0) continue;
      for (int64_t a = 0; a < l.k; ++a) {
        const size_t i = static_cast<size_t>(b * l.k + a);
        ur[a] += w * (h[i] - c[i]);
      }
    }
  }
  return u;
}

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
    if (l.cross.empty()) continue;
    // Asymmetric: + 2 d.u + W (float_gram - cross - cross^T + gram) W^T.
    const size_t g = static_cast<size_t>(r / per_group);
    const std::vector<double>& c = l.cross[g];
    const std::vector<double>& f = l.float_gram[g];
    const float* w = l.weight.data() + r * l.k;
    for (int64_t a = 0; a < l.k; ++a) {
      double row = 0.0;
      for (int64_t b = 0; b < l.k; ++b) {
        const size_t ab = static_cast<size_t>(a * l.k + b), ba = static_cast<size_t>(b * l.k + a);
        row += (f[ab] - c[ab] - c[ba] + h[ab]) * w[b];
        loss += 2.0 * d[static_cast<size_t>(a)] * w[b] * (h[ba] - c[ba]);
      }
      loss += w[a] * row;
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
  const std::vector<double> offsets = AdaRoundOffsets(l);
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
      // d loss / d W~ = 2 ((W~ - W) H + u), row by row (u = 0 for the symmetric loss).
      if (offsets.empty()) {
        std::fill(grad.begin(), grad.end(), 0.0f);
      } else {
        for (size_t i = 0; i < n; ++i) grad[i] = static_cast<float>(offsets[static_cast<size_t>(r0 * k) + i]);
      }
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

  // Learns layer k from its input statistics (means) and adds it to the result; returns its rounded weight (none when
  // it was skipped).
  const auto learn = [&](size_t k, std::vector<std::vector<double>> gram, std::vector<std::vector<double>> cross,
                         std::vector<std::vector<double>> float_gram, int64_t count) -> Result<const Tensor*> {
    const Node& n = graph.node(layers[k]);
    const AdaRoundView& view = views[k];
    const QParams& q = weight_qparams.at(n.name);
    const Tensor& w = graph.value(n.inputs[1]).data;
    if (count == 0) {
      result.report.skipped.push_back({n.name, "the calibration data gave it no input"});
      return nullptr;
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
    AdaRoundMean(gram, view.k, count, true);
    layer.gram = std::move(gram);
    if (!cross.empty()) {
      AdaRoundMean(cross, view.k, count, false);
      AdaRoundMean(float_gram, view.k, count, true);
      layer.cross = std::move(cross);
      layer.float_gram = std::move(float_gram);
    }
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
    result.weight_qparams.emplace(graph.value(n.inputs[1]).name, q);
    return &result.rounded.emplace(n.name, std::move(rounded)).first->second;
  };
  const auto zeros = [&](size_t k) {
    return std::vector<std::vector<double>>(static_cast<size_t>(views[k].groups),
                                            std::vector<double>(static_cast<size_t>(views[k].k * views[k].k), 0.0));
  };
  const auto graph_input = [&](ValueId x) -> int {
    const auto in = std::find(graph.inputs().begin(), graph.inputs().end(), x);
    return in == graph.inputs().end() ? -1 : static_cast<int>(in - graph.inputs().begin());
  };

  if (options.quantized_inputs) {
    // Layer by layer in graph order: the float model's input x and the input xq of the model whose earlier layers
    // already have their rounded weights, each from a copy of that model with the input as its only output.
    Graph quantized = graph;
    for (size_t k = 0; k < layers.size(); ++k) {
      const Node& n = graph.node(layers[k]);
      const ValueId x = n.inputs[0];
      std::vector<std::vector<double>> gram = zeros(k), cross, float_gram;
      int64_t count = 0;
      const int input = graph_input(x);
      if (input >= 0) {
        // Earlier layers cannot change a graph input: the loss is the symmetric one.
        for (const std::vector<Tensor>& batch : batches) {
          OCTET_RETURN_IF_ERROR(
              AccumulateAdaRoundGram(views[k], n, batch.at(static_cast<size_t>(input)), gram, &count));
        }
      } else {
        cross = zeros(k);
        float_gram = zeros(k);
        std::vector<Tensor> float_inputs(batches.size());
        Graph twin = graph;
        twin.mutable_outputs().clear();
        OCTET_RETURN_IF_ERROR(twin.AddOutput(x));
        OCTET_RETURN_IF_ERROR(ForEachFloatBatchRun(twin, batches, context, "AdaRound",
                                                   [&](size_t b, const std::vector<Tensor>& outs) -> Status {
                                                     float_inputs[b] = outs.at(0);
                                                     return OkStatus();
                                                   }));
        Graph quantized_twin = quantized;
        quantized_twin.mutable_outputs().clear();
        OCTET_RETURN_IF_ERROR(quantized_twin.AddOutput(x));
        OCTET_RETURN_IF_ERROR(ForEachFloatBatchRun(
            quantized_twin, batches, context, "AdaRound", [&](size_t b, const std::vector<Tensor>& outs) -> Status {
              const Tensor& xq = outs.at(0);
              if (xq.dtype() != DType::kF32 || float_inputs[b].dtype() != DType::kF32) {
                return InvalidArgument("AdaRound: '{}' reads a {} input", n.name, DTypeName(xq.dtype()));
              }
              return AccumulateAdaRoundPair(views[k], n, float_inputs[b], xq, gram, cross, float_gram, &count);
            }));
      }
      OCTET_ASSIGN_OR_RETURN(const Tensor* rounded,
                             learn(k, std::move(gram), std::move(cross), std::move(float_gram), count));
      if (rounded != nullptr) quantized.mutable_value(n.inputs[1]).data = *rounded;
    }
    return result;
  }

  // The float graph with each layer's input as an output (graph inputs are read from the batch directly).
  Graph twin = graph;
  twin.mutable_outputs().clear();
  std::vector<int> source(layers.size(), -1);  // >= 0: graph input index; else twin output index - 1 - source
  for (size_t k = 0; k < layers.size(); ++k) {
    const ValueId x = graph.node(layers[k]).inputs[0];
    source[k] = graph_input(x);
    if (source[k] >= 0) continue;
    const auto out = std::find(twin.outputs().begin(), twin.outputs().end(), x);
    if (out == twin.outputs().end()) OCTET_RETURN_IF_ERROR(twin.AddOutput(x));
    const auto at = std::find(twin.outputs().begin(), twin.outputs().end(), x);
    source[k] = -1 - static_cast<int>(at - twin.outputs().begin());
  }
  std::vector<std::vector<std::vector<double>>> grams(layers.size());
  std::vector<int64_t> counts(layers.size(), 0);
  for (size_t k = 0; k < layers.size(); ++k) grams[k] = zeros(k);
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
    OCTET_RETURN_IF_ERROR(learn(k, std::move(grams[k]), {}, {}, counts[k]).status());
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

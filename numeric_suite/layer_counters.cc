// Per-layer counters of int8 node calls (see layer_counters.h).
#include "numeric_suite/layer_counters.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <vector>

#include "ops/float/op_util.h"
#include "ops/reference/fused_activation_reference.h"
#include "ops/reference/qconv2d_reference.h"
#include "ops/reference/qgemm_reference.h"

namespace octet {
namespace {

const QParams* QParamsOf(const Graph& graph, ValueId id) {
  if (id == kNoValue) return nullptr;
  const Value& v = graph.value(id);
  return v.qparams ? &*v.qparams : nullptr;
}

// Per-output-channel weight zero points (a per-tensor zero point repeated).
std::vector<int32_t> WeightZeroPoints(const QParams& qp, int64_t channels) {
  if (qp.per_channel()) return qp.zero_points();
  return std::vector<int32_t>(static_cast<size_t>(channels), qp.zero_point());
}

// Operators whose output is a requantization (a new scale), so a saturated output is information lost; max pools,
// QClamp and shape operators pass their input's integers through.
bool Requantizes(const Node& node) {
  static const char* const kOps[] = {"QConv",  "QGemm",        "QMatMul",           "QAdd",    "QMul",
                                     "QAveragePool", "QGlobalAveragePool", "QLookup", "QConcat", "Requantize"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* op) { return node.op_type == op; });
}

int64_t MaxAbs(const std::vector<int32_t>& acc) {
  int64_t m = 0;
  for (int32_t a : acc) m = std::max<int64_t>(m, std::llabs(int64_t{a}));
  return m;
}

// Calls fn(T{}) with T the activation's element type (the reference kernels are templates on it).
template <typename Fn>
auto WithActivationType(DType dtype, Fn fn) {
  if (dtype == DType::kU8) return fn(uint8_t{});
  return fn(int8_t{});
}

Result<std::optional<int64_t>> ConvMaxAbsAccumulator(const Graph& graph, const NodeCall& call) {
  const Node& node = call.node;
  const ConstTensorView& x = call.inputs[0];
  const ConstTensorView& w = call.inputs[1];
  const QParams* xq = QParamsOf(graph, node.inputs[0]);
  const QParams* wq = QParamsOf(graph, node.inputs[1]);
  if (xq == nullptr || wq == nullptr || w.dtype() != DType::kS8 || (x.rank() != 3 && x.rank() != 4)) {
    return std::optional<int64_t>();
  }
  const int nd = x.rank() - 2;
  std::vector<int64_t> in(x.shape().dims().begin() + 2, x.shape().dims().end());
  std::vector<int64_t> kernel(w.shape().dims().begin() + 2, w.shape().dims().end());
  const AttributeMap& at = node.attributes;
  OCTET_ASSIGN_OR_RETURN(auto strides, at.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(auto dilations, at.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(auto pads_attr, at.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(const std::string auto_pad, at.GetString("auto_pad", "NOTSET"));
  OCTET_ASSIGN_OR_RETURN(const int64_t group, at.GetInt("group", 1));
  OCTET_ASSIGN_OR_RETURN(auto pads, float_ops::ResolvePads(auto_pad, pads_attr, in, kernel, strides, dilations));
  // 1-D convolutions are 2-D ones of height 1.
  const int64_t h = nd == 2 ? in[0] : 1, wd = in[nd - 1];
  const int64_t pt = nd == 2 ? pads[0] : 0, pb = nd == 2 ? pads[2] : 0;
  const int64_t pl = pads[nd - 1], pr = pads[2 * nd - 1];
  const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0), cg = w.dim(1);
  reference::Conv2dGeometry g;
  g.n = n;
  g.h = h + pt + pb;  // explicit padding with x_zp below handles asymmetric pads
  g.w = wd + pl + pr;
  g.c_in = c;
  g.c_out = m;
  g.kh = nd == 2 ? kernel[0] : 1;
  g.kw = kernel[nd - 1];
  g.stride_h = nd == 2 ? strides[0] : 1;
  g.stride_w = strides[nd - 1];
  g.dilation_h = nd == 2 ? dilations[0] : 1;
  g.dilation_w = dilations[nd - 1];
  g.groups = group;
  if (g.OutH() <= 0 || g.OutW() <= 0 || cg * group != c) return std::optional<int64_t>();
  // OIHW -> OHWI weights.
  std::vector<int8_t> w_ohwi(static_cast<size_t>(w.NumElements()));
  const int8_t* wd8 = w.data<int8_t>();
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < cg; ++i)
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx)
          w_ohwi[static_cast<size_t>(((o * g.kh + ky) * g.kw + kx) * cg + i)] =
              wd8[((o * cg + i) * g.kh + ky) * g.kw + kx];
  const std::vector<int32_t> w_zps = WeightZeroPoints(*wq, m);
  std::vector<int32_t> acc(static_cast<size_t>(n * g.OutH() * g.OutW() * m));
  WithActivationType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    // NCHW -> padded NHWC, the pad taps reading x_zp (so they add exactly 0, as the operator's padding does).
    std::vector<T> xp(static_cast<size_t>(n * g.h * g.w * c), static_cast<T>(xq->zero_point()));
    const T* xs = x.data<T>();
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t xx = 0; xx < wd; ++xx)
            xp[static_cast<size_t>(((b * g.h + y + pt) * g.w + xx + pl) * c + ch)] =
                xs[((b * c + ch) * h + y) * wd + xx];
    reference::QConv2dAccumulate<T>(g, xp.data(), xq->zero_point(), w_ohwi.data(), w_zps.data(), acc.data());
    return 0;
  });
  return std::optional<int64_t>(MaxAbs(acc));
}

// QGemm (x [M, K], w [N, K] with transB = 1 or [K, N]) and QMatMul (x [..., K], w [K, N]).
Result<std::optional<int64_t>> GemmMaxAbsAccumulator(const Graph& graph, const NodeCall& call) {
  const Node& node = call.node;
  const ConstTensorView& x = call.inputs[0];
  const ConstTensorView& w = call.inputs[1];
  const QParams* xq = QParamsOf(graph, node.inputs[0]);
  const QParams* wq = QParamsOf(graph, node.inputs[1]);
  if (xq == nullptr || wq == nullptr || w.dtype() != DType::kS8 || w.rank() != 2 || x.rank() < 1) {
    return std::optional<int64_t>();
  }
  int64_t trans_b = 0;
  if (node.op_type == "QGemm") {
    OCTET_ASSIGN_OR_RETURN(trans_b, node.attributes.GetInt("transB", 0));
  }
  const int64_t k = x.dim(x.rank() - 1);
  const int64_t m = x.NumElements() / std::max<int64_t>(k, 1);
  const int64_t n = trans_b ? w.dim(0) : w.dim(1);
  if ((trans_b ? w.dim(1) : w.dim(0)) != k) return std::optional<int64_t>();
  // W as N x K rows (output channel j = row j).
  std::vector<int8_t> w_nk(static_cast<size_t>(n * k));
  const int8_t* ws = w.data<int8_t>();
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < k; ++i) w_nk[static_cast<size_t>(j * k + i)] = trans_b ? ws[j * k + i] : ws[i * n + j];
  const std::vector<int32_t> w_zps = WeightZeroPoints(*wq, n);
  std::vector<int32_t> acc(static_cast<size_t>(m * n));
  WithActivationType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    reference::QGemmAccumulate<T>(static_cast<size_t>(m), static_cast<size_t>(n), static_cast<size_t>(k),
                                  x.data<T>(), static_cast<size_t>(k), xq->zero_point(), w_nk.data(),
                                  static_cast<size_t>(k), w_zps.data(), acc.data(), static_cast<size_t>(n));
    return 0;
  });
  return std::optional<int64_t>(MaxAbs(acc));
}

}  // namespace

std::optional<ClipCount> CountClipped(const Graph& graph, const NodeCall& call) {
  if (call.outputs.empty() || call.node.outputs.empty() || !Requantizes(call.node)) return std::nullopt;
  const TensorView& y = call.outputs[0];
  const QParams* qp = QParamsOf(graph, call.node.outputs[0]);
  if (qp == nullptr || (y.dtype() != DType::kU8 && y.dtype() != DType::kS8)) return std::nullopt;
  ClipCount count;
  count.total = y.NumElements();
  // A fused ReLU (or Clip) clamps on purpose: only an end it leaves alone counts as saturation.
  const Result<std::string> activation = call.node.attributes.GetString("activation", "");
  const bool relu = activation.ok() && *activation == "Relu";
  const bool clip = activation.ok() && *activation == "Clip";
  const bool raised = relu || (clip && call.node.attributes.Has(reference::kActivationMinAttribute));
  const bool lowered = clip && call.node.attributes.Has(reference::kActivationMaxAttribute);
  const int32_t lo = raised ? std::numeric_limits<int32_t>::min() : qp->quant_min();
  const int32_t hi = lowered ? std::numeric_limits<int32_t>::max() : qp->quant_max();
  auto tally = [&](const auto* v) {
    for (int64_t i = 0; i < count.total; ++i) count.clipped += (v[i] == lo || v[i] == hi);
  };
  if (y.dtype() == DType::kU8) tally(y.data<uint8_t>());
  else tally(y.data<int8_t>());
  return count;
}

Result<std::optional<int64_t>> MaxAbsAccumulator(const Graph& graph, const NodeCall& call) {
  const std::string& op = call.node.op_type;
  if (call.inputs.size() < 2 || call.inputs[0].raw_data() == nullptr || call.inputs[1].raw_data() == nullptr) {
    return std::optional<int64_t>();
  }
  if (call.inputs[0].dtype() != DType::kU8 && call.inputs[0].dtype() != DType::kS8) return std::optional<int64_t>();
  Result<std::optional<int64_t>> r = std::optional<int64_t>();
  if (op == "QConv") r = ConvMaxAbsAccumulator(graph, call);
  else if (op == "QGemm" || op == "QMatMul") r = GemmMaxAbsAccumulator(graph, call);
  if (!r.ok()) {
    return r.status().WithContext(fmt::format("failed to recompute the accumulators of node '{}' ({})",
                                              call.node.name, op));
  }
  return r;
}

double AccumulatorHeadroomBits(int64_t max_abs_acc) {
  if (max_abs_acc <= 0) return 31.0;
  return 31.0 - std::log2(static_cast<double>(max_abs_acc));
}

}  // namespace octet

// Per-layer counters of int8 node calls (see layer_counters.h).
#include "numeric_suite/layer_counters.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "core/op_table.h"
#include "ops/float/op_util.h"
#include "ops/reference/fused_activation_reference.h"
#include "ops/reference/qconv_op_reference.h"
#include "ops/reference/qgemm_op_reference.h"

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
// QClamp and shape operators pass their input's integers through (the op table's `requantizes`).
bool Requantizes(const Node& node) {
  const std::optional<Int8Op> op = FindInt8Op(node.domain, node.op_type);
  return op && Int8OpInfoOf(*op).requantizes;
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

// The operands of a QConv / QGemm / QMatMul call: int8 x and s8 w with their qparams.
struct LinearOperands {
  const ConstTensorView& x;
  const ConstTensorView& w;
  const QParams& xq;
  const QParams& wq;
};

Result<std::optional<int64_t>> ConvMaxAbsAccumulator(const Node& node, const LinearOperands& o) {
  const ConstTensorView &x = o.x, &w = o.w;
  const QParams &xq = o.xq, &wq = o.wq;
  if (x.rank() != 3 && x.rank() != 4) return std::optional<int64_t>();
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
  const reference::QConvOpGeometry g =
      reference::MakeQConvOpGeometry(x.shape(), w.shape(), strides, dilations, pads, group);
  if (g.OutH() <= 0 || g.OutW() <= 0 || w.dim(1) * group != g.c_in) return std::optional<int64_t>();
  const std::vector<int32_t> w_zps = WeightZeroPoints(wq, g.c_out);
  std::vector<int32_t> acc(static_cast<size_t>(g.n * g.c_out * g.OutH() * g.OutW()));
  WithActivationType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    reference::QConvOpAccumulate<T>(g, x.data<T>(), xq.zero_point(), w.data<int8_t>(), w_zps.data(), acc.data());
    return 0;
  });
  return std::optional<int64_t>(MaxAbs(acc));
}

// QGemm (x [M, K], w [N, K] with transB = 1 or [K, N]) and QMatMul (x [..., K], w [K, N]).
Result<std::optional<int64_t>> GemmMaxAbsAccumulator(const Node& node, const LinearOperands& o) {
  const ConstTensorView &x = o.x, &w = o.w;
  if (w.rank() != 2 || x.rank() < 1) return std::optional<int64_t>();
  int64_t trans_b = 0;
  if (IsInt8Op(node, Int8Op::kQGemm)) {
    OCTET_ASSIGN_OR_RETURN(trans_b, node.attributes.GetInt("transB", 0));
  }
  const int64_t k = x.dim(x.rank() - 1);
  const int64_t m = x.NumElements() / std::max<int64_t>(k, 1);
  const int64_t n = trans_b ? w.dim(0) : w.dim(1);
  if ((trans_b ? w.dim(1) : w.dim(0)) != k) return std::optional<int64_t>();
  const std::vector<int32_t> w_zps = WeightZeroPoints(o.wq, n);
  std::vector<int32_t> acc(static_cast<size_t>(m * n));
  WithActivationType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    reference::QGemmOpAccumulate<T>(m, n, k, x.data<T>(), o.xq.zero_point(), w.data<int8_t>(), /*w_rows=*/trans_b != 0,
                                    w_zps.data(), acc.data());
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
  const bool relu = activation.ok() && *activation == FloatOpName(FloatOp::kRelu);
  const bool clip = activation.ok() && *activation == FloatOpName(FloatOp::kClip);
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
  const QParams* xq = QParamsOf(graph, call.node.inputs[0]);
  const QParams* wq = QParamsOf(graph, call.node.inputs[1]);
  if (xq == nullptr || wq == nullptr || call.inputs[1].dtype() != DType::kS8) return std::optional<int64_t>();
  const LinearOperands operands{call.inputs[0], call.inputs[1], *xq, *wq};
  const std::optional<Int8Op> id = FindInt8Op(call.node.domain, op);
  Result<std::optional<int64_t>> r = std::optional<int64_t>();
  switch (id ? Int8OpInfoOf(*id).accumulator : AccumulatorKind::kNone) {
    case AccumulatorKind::kConv: r = ConvMaxAbsAccumulator(call.node, operands); break;
    case AccumulatorKind::kGemm: r = GemmMaxAbsAccumulator(call.node, operands); break;
    case AccumulatorKind::kNone: break;
  }
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

// Bias correction, empirical and analytic (see bias_correction.h).
#include "quant/bias_correction.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/executor.h"
#include "core/float_op_table.h"
#include "quant/float_batch_runs.h"
#include "quant/fused_ops.h"
#include "quant/graph_rewrite.h"
#include "quant/prepare.h"

namespace octet {
namespace {

bool HoldsFloatConstant(const Graph& g, ValueId id) {
  return id != kNoValue && g.value(id).kind == ValueKind::kConstant && g.value(id).data.dtype() == DType::kF32;
}

// Output channels of a Conv/Gemm weight and the axis of its output values that holds them (1 for both).
Result<int64_t> OutputChannels(const Node& n, const Tensor& w) {
  if (n.op_type == FloatOpName(FloatOp::kConv)) return w.shape().dim(0);
  OCTET_ASSIGN_OR_RETURN(const int64_t trans_b, n.attributes.GetInt("transB", 0));
  return w.shape().dim(trans_b != 0 ? 0 : 1);
}

// Why node n's bias cannot be corrected, or "" when it can.
Result<std::string> Unsupported(const Graph& g, const Node& n) {
  if (n.op_type != FloatOpName(FloatOp::kConv) && n.op_type != FloatOpName(FloatOp::kGemm))
    return fmt::format("{} has no bias input", n.op_type);
  if (n.inputs.size() < 2 || !HoldsFloatConstant(g, n.inputs[1])) return std::string("the weight is not a constant");
  const Tensor& w = g.value(n.inputs[1]).data;
  if (n.op_type == FloatOpName(FloatOp::kGemm)) {
    OCTET_ASSIGN_OR_RETURN(const float beta, n.attributes.GetFloat("beta", 1.0f));
    OCTET_ASSIGN_OR_RETURN(const float alpha, n.attributes.GetFloat("alpha", 1.0f));
    OCTET_ASSIGN_OR_RETURN(const int64_t trans_a, n.attributes.GetInt("transA", 0));
    if (w.shape().rank() != 2 || beta != 1.0f || alpha != 1.0f || trans_a != 0) {
      return std::string("a Gemm with alpha, beta or transA set");
    }
  }
  OCTET_ASSIGN_OR_RETURN(const int64_t channels, OutputChannels(n, w));
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue &&
      (!HoldsFloatConstant(g, n.inputs[2]) || g.value(n.inputs[2]).data.shape().rank() != 1 ||
       g.value(n.inputs[2]).data.NumElements() != channels)) {
    return std::string("the bias is not a constant of one value per output channel");
  }
  return std::string();
}

// Subtracts shift[c] from node `index`'s bias (a private copy when shared; created when absent).
Status ApplyShift(Graph& g, int index, const std::vector<double>& shift, BiasCorrectionReport::Layer& out) {
  const Node& n = g.node(index);
  const int64_t c = static_cast<int64_t>(shift.size());
  OCTET_ASSIGN_OR_RETURN(Tensor bias, Tensor::Create(DType::kF32, Shape{c}));
  const ValueId old = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
  double square = 0.0;
  for (int64_t k = 0; k < c; ++k) {
    const float b = old != kNoValue ? g.value(old).data.data<float>()[k] : 0.0f;
    square += static_cast<double>(b) * b;
    bias.data<float>()[k] = static_cast<float>(b - shift[k]);
    out.max_abs_shift = std::max(out.max_abs_shift, static_cast<float>(std::fabs(shift[k])));
  }
  out.bias_rms_before = static_cast<float>(std::sqrt(square / std::max<int64_t>(1, c)));
  if (old != kNoValue && CountUses(g)[static_cast<size_t>(old)] == 1) {
    g.mutable_value(old).data = std::move(bias);
    return OkStatus();
  }
  OCTET_ASSIGN_OR_RETURN(const ValueId id, g.AddConstant(UniqueValueName(g, n.name + ".bias"), std::move(bias)));
  Node& m = g.mutable_node(index);
  if (m.inputs.size() < 3) m.inputs.resize(3, kNoValue);
  m.inputs[2] = id;
  return OkStatus();
}

// Per-channel mean of (W~ - W) x over the batches: a copy of the graph with, for each layer, a twin reading the same
// input with weight W~ - W and no bias, whose output is a graph output; one run per batch.
Result<std::vector<std::vector<double>>> MeasureShifts(const Graph& graph, const std::vector<int>& layers,
                                                       const std::vector<Tensor>& errors,
                                                       std::span<const std::vector<Tensor>> batches,
                                                       const Context& context) {
  Graph twin = graph;
  twin.mutable_outputs().clear();
  for (size_t k = 0; k < layers.size(); ++k) {
    const Node& n = graph.node(layers[k]);
    OCTET_ASSIGN_OR_RETURN(const ValueId e,
                           twin.AddConstant(UniqueValueName(twin, n.name + ".weight_error"), errors[k]));
    OCTET_ASSIGN_OR_RETURN(const ValueId y, twin.AddNodeValue(UniqueValueName(twin, n.name + ".weight_error_out")));
    Node t;
    t.name = n.name + ".bias_correction_twin";
    t.op_type = n.op_type;
    t.attributes = n.attributes;
    t.inputs = {n.inputs[0], e};
    t.outputs = {y};
    OCTET_RETURN_IF_ERROR(twin.AddNode(std::move(t)).status());
    OCTET_RETURN_IF_ERROR(twin.AddOutput(y));
  }
  std::vector<std::vector<double>> sums(layers.size());
  std::vector<int64_t> counts(layers.size(), 0);
  const auto measure = [&](size_t, const std::vector<Tensor>& outs) -> Status {
    for (size_t k = 0; k < layers.size(); ++k) {
      const Tensor& y = outs[k];
      if (y.shape().rank() < 2)
        return InvalidArgument("bias correction: '{}' gives a rank-{} output", graph.node(layers[k]).name,
                               y.shape().rank());
      const int64_t n = y.shape().dim(0), c = y.shape().dim(1);
      const int64_t inner = n * c == 0 ? 0 : y.NumElements() / (n * c);
      if (sums[k].empty()) sums[k].assign(static_cast<size_t>(c), 0.0);
      const float* p = y.data<float>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t ch = 0; ch < c; ++ch) {
          double s = 0.0;
          for (int64_t j = 0; j < inner; ++j) s += p[(i * c + ch) * inner + j];
          sums[k][static_cast<size_t>(ch)] += s;
        }
      }
      counts[k] += n * inner;
    }
    return OkStatus();
  };
  OCTET_RETURN_IF_ERROR(ForEachFloatBatchRun(twin, batches, context, "bias correction", measure));
  for (size_t k = 0; k < layers.size(); ++k) {
    for (double& s : sums[k]) s /= static_cast<double>(std::max<int64_t>(1, counts[k]));
  }
  return sums;
}

// E[x] per input channel of node n from the statistics of the layer feeding it (through GlobalAveragePool and Flatten,
// then at most one Relu), or an empty vector with `why` set.
std::vector<float> ExpectedInput(const Graph& g, const std::vector<int>& producers, const Node& n,
                                 const PreActivationStats& stats, std::string* why) {
  const ValueId x = n.inputs[0];
  int p = x == kNoValue ? -1 : producers[static_cast<size_t>(x)];
  // GlobalAveragePool and Flatten keep each channel's mean.
  while (p >= 0 && g.node(p).domain.empty() &&
         OpIn(g.node(p).op_type, {FloatOp::kGlobalAveragePool, FloatOp::kFlatten})) {
    const ValueId y = g.node(p).inputs[0];
    p = y == kNoValue ? -1 : producers[static_cast<size_t>(y)];
  }
  bool relu = false;
  if (p >= 0 && g.node(p).op_type == FloatOpName(FloatOp::kRelu) && g.node(p).domain.empty()) {
    relu = true;
    const ValueId y = g.node(p).inputs[0];
    p = y == kNoValue ? -1 : producers[static_cast<size_t>(y)];
  }
  auto it = p < 0 ? stats.end() : stats.find(g.node(p).name);
  if (it == stats.end()) {
    *why =
        "its input has no BatchNorm statistics (analytic bias correction "
        "needs a folded BatchNorm, then at most "
        "a Relu, GlobalAveragePool and Flatten, in front; the empirical "
        "mode measures on --calib data instead)";
    return {};
  }
  std::vector<float> e(it->second.mean.size());
  for (size_t c = 0; c < e.size(); ++c) {
    e[c] = relu ? ReluOfNormalMean(it->second.mean[c], it->second.std[c]) : it->second.mean[c];
  }
  return e;
}

// sum over the weight of err * E[x], per output channel (zero padding ignored).
Result<std::vector<double>> AnalyticShift(const Node& n, const Tensor& err, const std::vector<float>& ex) {
  const int64_t in_total = static_cast<int64_t>(ex.size());
  if (n.op_type == FloatOpName(FloatOp::kConv)) {
    OCTET_ASSIGN_OR_RETURN(const int64_t groups, n.attributes.GetInt("group", 1));
    const int64_t o_total = err.shape().dim(0), ig = err.shape().dim(1);
    const int64_t kernel = err.NumElements() / std::max<int64_t>(1, o_total * ig);
    if (groups * ig != in_total) return std::vector<double>();
    std::vector<double> shift(static_cast<size_t>(o_total), 0.0);
    const int64_t og = o_total / std::max<int64_t>(1, groups);
    for (int64_t o = 0; o < o_total; ++o) {
      const int64_t g = o / og;
      for (int64_t j = 0; j < ig; ++j) {
        for (int64_t k = 0; k < kernel; ++k) {
          shift[o] += static_cast<double>(err.data<float>()[(o * ig + j) * kernel + k]) * ex[g * ig + j];
        }
      }
    }
    return shift;
  }
  OCTET_ASSIGN_OR_RETURN(const int64_t trans_b, n.attributes.GetInt("transB", 0));
  const int64_t rows = err.shape().dim(0), cols = err.shape().dim(1);
  const int64_t k_total = trans_b ? cols : rows, o_total = trans_b ? rows : cols;
  if (k_total != in_total) return std::vector<double>();
  std::vector<double> shift(static_cast<size_t>(o_total), 0.0);
  for (int64_t o = 0; o < o_total; ++o) {
    for (int64_t k = 0; k < k_total; ++k) {
      shift[o] += static_cast<double>(err.data<float>()[trans_b ? o * cols + k : k * cols + o]) * ex[k];
    }
  }
  return shift;
}

}  // namespace

Result<Tensor> WeightQuantizationError(const Tensor& w, const QParams& q) {
  OCTET_ASSIGN_OR_RETURN(Tensor e, Tensor::Create(DType::kF32, w.shape()));
  const int64_t n = w.NumElements();
  int64_t inner = 1, channels = 1;
  if (q.per_channel()) {
    if (q.axis() < 0 || q.axis() >= w.shape().rank() || w.shape().dim(q.axis()) != q.num_channels()) {
      return InvalidArgument("bias correction: weight qparams {} do not fit a weight of shape {}", q.ToString(),
                             w.shape().ToString());
    }
    channels = q.num_channels();
    for (int d = q.axis() + 1; d < w.shape().rank(); ++d) inner *= w.shape().dim(d);
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = q.per_channel() ? (i / inner) % channels : 0;
    const float scale = q.scales()[static_cast<size_t>(c)];
    const float zp = static_cast<float>(q.zero_points()[static_cast<size_t>(c)]);
    const float x = w.data<float>()[i];
    const float qv = std::clamp(zp + std::nearbyint(x * (1.0f / scale)), static_cast<float>(q.quant_min()),
                                static_cast<float>(q.quant_max()));
    e.data<float>()[i] = (qv - zp) * scale - x;
  }
  return e;
}

Result<std::map<std::string, QParams>> WeightQParamsByNode(const Graph& graph, const QConfigMapping& mapping,
                                                           const Context* context) {
  PrepareOptions options;
  options.context = context;
  OCTET_ASSIGN_OR_RETURN(PreparedGraph prepared, Prepare(graph, mapping, options));
  std::map<std::string, QParams> out;
  const Graph& g = prepared.graph();
  for (const Node& n : g.nodes()) {
    if (n.inputs.size() < 2 || n.inputs[1] == kNoValue) continue;
    const int slot = prepared.slot_of(n.inputs[1]);
    if (slot < 0 || prepared.slots()[static_cast<size_t>(slot)].role != ObservedRole::kWeight) continue;
    OCTET_ASSIGN_OR_RETURN(QParams q, prepared.slots()[static_cast<size_t>(slot)].observer->CalculateQParams());
    out.emplace(n.name, std::move(q));
  }
  return out;
}

Result<BiasCorrectionReport> CorrectBias(Graph& graph, const std::map<std::string, QParams>& weight_qparams,
                                         BiasCorrectionMode mode, std::span<const std::vector<Tensor>> batches,
                                         const PreActivationStats* stats, const Context& context,
                                         const std::map<std::string, Tensor>* rounded) {
  BiasCorrectionReport report;
  if (mode == BiasCorrectionMode::kEmpirical && batches.empty()) {
    return InvalidArgument(
        "empirical bias correction needs calibration data "
        "(--calib), or use the analytic mode");
  }
  if (mode == BiasCorrectionMode::kAnalytic && stats == nullptr) {
    return InvalidArgument("analytic bias correction needs the statistics of folded BatchNorms");
  }
  std::vector<int> layers;
  std::vector<Tensor> errors;
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& n = graph.node(i);
    auto q = weight_qparams.find(n.name);
    if (q == weight_qparams.end() || !n.domain.empty()) continue;
    OCTET_ASSIGN_OR_RETURN(const std::string why, Unsupported(graph, n));
    if (!why.empty()) {
      report.skipped.push_back({n.name, why});
      continue;
    }
    const Tensor& w = graph.value(n.inputs[1]).data;
    auto r = rounded != nullptr ? rounded->find(n.name) : std::map<std::string, Tensor>::const_iterator();
    Tensor e;
    if (rounded != nullptr && r != rounded->end()) {
      if (r->second.shape() != w.shape()) {
        return InvalidArgument("bias correction: the rounded weight of '{}' has shape {}, not {}", n.name,
                               r->second.shape().ToString(), w.shape().ToString());
      }
      OCTET_ASSIGN_OR_RETURN(e, Tensor::Create(DType::kF32, w.shape()));
      for (int64_t i = 0; i < w.NumElements(); ++i)
        e.data<float>()[i] = r->second.data<float>()[i] - w.data<float>()[i];
    } else {
      OCTET_ASSIGN_OR_RETURN(e, WeightQuantizationError(w, q->second));
    }
    layers.push_back(i);
    errors.push_back(std::move(e));
  }
  std::vector<std::vector<double>> shifts;
  if (layers.empty()) return report;
  if (mode == BiasCorrectionMode::kEmpirical) {
    OCTET_ASSIGN_OR_RETURN(shifts, MeasureShifts(graph, layers, errors, batches, context));
  } else {
    const std::vector<int> producers = graph.Producers();
    for (size_t k = 0; k < layers.size(); ++k) {
      std::string why;
      const std::vector<float> ex = ExpectedInput(graph, producers, graph.node(layers[k]), *stats, &why);
      std::vector<double> shift;
      if (!ex.empty()) {
        OCTET_ASSIGN_OR_RETURN(shift, AnalyticShift(graph.node(layers[k]), errors[k], ex));
        if (shift.empty()) why = "its input's statistics do not match its input channels";
      }
      if (shift.empty()) report.skipped.push_back({graph.node(layers[k]).name, why});
      shifts.push_back(std::move(shift));
    }
  }
  for (size_t k = 0; k < layers.size(); ++k) {
    if (shifts[k].empty()) continue;
    BiasCorrectionReport::Layer out;
    out.node = graph.node(layers[k]).name;
    OCTET_RETURN_IF_ERROR(ApplyShift(graph, layers[k], shifts[k], out));
    report.layers.push_back(std::move(out));
  }
  return report;
}

Status TransferActivationObservers(const PreparedGraph& from, PreparedGraph& to) {
  for (ObserverSlot& slot : to.mutable_slots()) {
    if (slot.role != ObservedRole::kActivation || slot.values.empty()) continue;
    const std::string& name = to.graph().value(slot.values[0]).name;
    const ValueId v = from.graph().FindValue(name);
    const int k = v == kNoValue ? -1 : from.slot_of(v);
    if (k < 0) {
      return FailedPrecondition(
          "bias correction: the calibrated graph does not observe '{}' (it must have the nodes "
          "and values of the corrected one)",
          name);
    }
    slot.observer = from.slots()[static_cast<size_t>(k)].observer->Clone();
  }
  return OkStatus();
}

}  // namespace octet

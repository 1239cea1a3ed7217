// LayerNorm and GELU pattern fusion (see fuse_transformer.h).
#include "quant/fuse_transformer.h"

#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

#include "core/float_op_table.h"
#include "quant/graph_rewrite.h"

namespace octet {
namespace {

// Read-only view of the graph that answers "which node makes this value, and is it used elsewhere".
class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g), producers_(g.Producers()), uses_(CountUses(g)) {}

  // The producer of `v` when it is an ONNX-domain `op` with `num_inputs` inputs and one output, else nullptr.
  const Node* Producer(ValueId v, FloatOp op, size_t num_inputs, int* index = nullptr) const {
    if (v == kNoValue) return nullptr;
    const int p = producers_[static_cast<size_t>(v)];
    if (p < 0) return nullptr;
    const Node& n = g_.node(p);
    if (!IsFloatOp(n, op) || n.inputs.size() != num_inputs || n.outputs.size() != 1) {
      return nullptr;
    }
    if (index != nullptr) *index = p;
    return &n;
  }
  // Used exactly `count` times, and no graph output (CountUses counts a graph output as a use).
  bool UsedOnly(ValueId v, int count) const {
    if (v == kNoValue || uses_[static_cast<size_t>(v)] != count) return false;
    for (ValueId o : g_.outputs()) {
      if (o == v) return false;
    }
    return true;
  }
  // The value of a one-element f32 constant.
  std::optional<float> Scalar(ValueId v) const {
    if (v == kNoValue) return std::nullopt;
    const Value& val = g_.value(v);
    if (val.kind != ValueKind::kConstant || val.data.dtype() != DType::kF32 || val.data.NumElements() != 1) {
      return std::nullopt;
    }
    return val.data.data<float>()[0];
  }
  bool IsScalar(ValueId v, float want, float tolerance = 0.0f) const {
    const std::optional<float> s = Scalar(v);
    return s && std::fabs(*s - want) <= tolerance;
  }
  // A rank-1 f32 constant.
  bool IsVector(ValueId v) const {
    if (v == kNoValue) return false;
    const Value& val = g_.value(v);
    return val.kind == ValueKind::kConstant && val.data.dtype() == DType::kF32 && val.data.shape().rank() == 1;
  }
  // For a binary node with `v` at one input: the other input (commutative ops), or kNoValue.
  static ValueId Other(const Node& n, ValueId v) {
    if (n.inputs.size() != 2) return kNoValue;
    if (n.inputs[0] == v) return n.inputs[1];
    if (n.inputs[1] == v) return n.inputs[0];
    return kNoValue;
  }
  // The single consumer of `v` (which must be used once), when it is an ONNX-domain `op` with one output.
  const Node* OnlyConsumer(ValueId v, FloatOp op, int* index) const {
    if (!UsedOnly(v, 1)) return nullptr;
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const Node& n = g_.node(i);
      for (ValueId in : n.inputs) {
        if (in != v) continue;
        if (!IsFloatOp(n, op) || n.outputs.size() != 1) return nullptr;
        *index = i;
        return &n;
      }
    }
    return nullptr;
  }
  const Graph& graph() const { return g_; }

 private:
  const Graph& g_;
  std::vector<int> producers_;
  std::vector<int> uses_;
};

// ReduceMean over the last axis only, keeping it.
bool IsLastAxisMean(const Node& n) {
  auto axes = n.attributes.GetInts("axes", {});
  auto keepdims = n.attributes.GetInt("keepdims", 1);
  return axes.ok() && keepdims.ok() && *keepdims == 1 && axes->size() == 1 && (*axes)[0] == -1;
}

struct LayerNormMatch {
  ValueId x = kNoValue, gamma = kNoValue, beta = kNoValue;
  float epsilon = 0.0f;
  int last = -1;           // the node whose name and output the fused node takes
  std::vector<int> nodes;  // every node of the chain, `last` included
};

// The chain whose normalising Div (or Mul by a Reciprocal) is node `index`.
std::optional<LayerNormMatch> MatchLayerNorm(const Matcher& m, int index) {
  const Graph& g = m.graph();
  const Node& div = g.node(index);
  if (!div.domain.empty() || div.inputs.size() != 2 || div.outputs.size() != 1) return std::nullopt;
  LayerNormMatch r;
  ValueId d = kNoValue, s = kNoValue;
  int reciprocal = -1;
  if (div.op_type == FloatOpName(FloatOp::kDiv)) {
    d = div.inputs[0];
    s = div.inputs[1];
  } else if (div.op_type == FloatOpName(FloatOp::kMul)) {
    for (int k = 0; k < 2 && s == kNoValue; ++k) {
      const Node* rec = m.Producer(div.inputs[static_cast<size_t>(k)], FloatOp::kReciprocal, 1, &reciprocal);
      if (rec != nullptr && m.UsedOnly(div.inputs[static_cast<size_t>(k)], 1)) {
        s = rec->inputs[0];
        d = div.inputs[static_cast<size_t>(1 - k)];
      }
    }
    if (s == kNoValue) return std::nullopt;
  } else {
    return std::nullopt;
  }
  int i_sqrt = -1, i_add = -1, i_var = -1, i_pow = -1, i_sub = -1, i_mean = -1;
  const Node* sqrt = m.Producer(s, FloatOp::kSqrt, 1, &i_sqrt);
  if (sqrt == nullptr || !m.UsedOnly(s, 1)) return std::nullopt;
  const Node* add = m.Producer(sqrt->inputs[0], FloatOp::kAdd, 2, &i_add);
  if (add == nullptr || !m.UsedOnly(sqrt->inputs[0], 1)) return std::nullopt;
  ValueId v = kNoValue;
  for (int k = 0; k < 2; ++k) {
    const std::optional<float> eps = m.Scalar(add->inputs[static_cast<size_t>(k)]);
    if (eps && *eps >= 0.0f) {
      r.epsilon = *eps;
      v = add->inputs[static_cast<size_t>(1 - k)];
    }
  }
  const Node* var = m.Producer(v, FloatOp::kReduceMean, 1, &i_var);
  if (var == nullptr || !m.UsedOnly(v, 1) || !IsLastAxisMean(*var)) return std::nullopt;
  const ValueId p = var->inputs[0];
  int d_uses = 0;
  if (const Node* pow = m.Producer(p, FloatOp::kPow, 2, &i_pow);
      pow != nullptr && pow->inputs[0] == d && m.IsScalar(pow->inputs[1], 2.0f)) {
    d_uses = 2;  // Pow, Div
  } else if (const Node* sq = m.Producer(p, FloatOp::kMul, 2, &i_pow);
             sq != nullptr && sq->inputs[0] == d && sq->inputs[1] == d) {
    d_uses = 3;  // Mul (twice), Div
  } else {
    return std::nullopt;
  }
  if (!m.UsedOnly(p, 1) || !m.UsedOnly(d, d_uses)) return std::nullopt;
  const Node* sub = m.Producer(d, FloatOp::kSub, 2, &i_sub);
  if (sub == nullptr) return std::nullopt;
  r.x = sub->inputs[0];
  const Node* mean = m.Producer(sub->inputs[1], FloatOp::kReduceMean, 1, &i_mean);
  if (mean == nullptr || mean->inputs[0] != r.x || !m.UsedOnly(sub->inputs[1], 1) || !IsLastAxisMean(*mean)) {
    return std::nullopt;
  }
  r.nodes = {i_mean, i_sub, i_pow, i_var, i_add, i_sqrt, index};
  if (reciprocal >= 0) r.nodes.push_back(reciprocal);
  r.last = index;
  // The affine tail: Mul by a [D] gamma, then Add of a [D] beta; either may be absent.
  ValueId y = div.outputs[0];
  int i_next = -1;
  if (const Node* mul = m.OnlyConsumer(y, FloatOp::kMul, &i_next);
      mul != nullptr && m.IsVector(Matcher::Other(*mul, y))) {
    r.gamma = Matcher::Other(*mul, y);
    r.nodes.push_back(i_next);
    r.last = i_next;
    y = mul->outputs[0];
  }
  if (const Node* add_b = m.OnlyConsumer(y, FloatOp::kAdd, &i_next);
      add_b != nullptr && m.IsVector(Matcher::Other(*add_b, y))) {
    r.beta = Matcher::Other(*add_b, y);
    r.nodes.push_back(i_next);
    r.last = i_next;
  }
  if (r.gamma != kNoValue && r.beta != kNoValue && g.value(r.gamma).data.shape() != g.value(r.beta).data.shape()) {
    return std::nullopt;
  }
  return r;
}

// A constant of `shape` filled with `fill`, for a LayerNorm without gamma (LayerNormalization requires Scale).
Result<ValueId> AddFilled(Graph& g, const std::string& base, const Shape& shape, float fill) {
  OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(DType::kF32, shape));
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.NumElements(); ++i) p[i] = fill;
  return g.AddConstant(UniqueValueName(g, base), std::move(t));
}

struct GeluMatch {
  ValueId x = kNoValue;
  bool tanh = false;
  int last = -1;
  std::vector<int> nodes;
};

// 1 + f(...) -> times x -> times 0.5, in the three orders exporters write it; `f_out` is Erf's or Tanh's output.
bool MatchGeluTail(const Matcher& m, ValueId f_out, ValueId x, GeluMatch& r) {
  int i_one = -1, i_a = -1, i_b = -1;
  const Node* one = m.OnlyConsumer(f_out, FloatOp::kAdd, &i_one);
  if (one == nullptr || !m.IsScalar(Matcher::Other(*one, f_out), 1.0f)) return false;
  const ValueId a = one->outputs[0];
  const Node* mul = m.OnlyConsumer(a, FloatOp::kMul, &i_a);
  if (mul == nullptr) return false;
  const ValueId u = Matcher::Other(*mul, a);
  if (u == x) {  // x (1 + f) * 0.5
    const Node* half = m.OnlyConsumer(mul->outputs[0], FloatOp::kMul, &i_b);
    if (half == nullptr || !m.IsScalar(Matcher::Other(*half, mul->outputs[0]), 0.5f)) return false;
    r.nodes.insert(r.nodes.end(), {i_one, i_a, i_b});
    r.last = i_b;
    return true;
  }
  if (m.IsScalar(u, 0.5f)) {  // x * ((1 + f) * 0.5)
    const Node* outer = m.OnlyConsumer(mul->outputs[0], FloatOp::kMul, &i_b);
    if (outer == nullptr || Matcher::Other(*outer, mul->outputs[0]) != x) return false;
    r.nodes.insert(r.nodes.end(), {i_one, i_a, i_b});
    r.last = i_b;
    return true;
  }
  // (x * 0.5) * (1 + f)
  const Node* half = m.Producer(u, FloatOp::kMul, 2, &i_b);
  if (half == nullptr || !m.UsedOnly(u, 1) || Matcher::Other(*half, x) == kNoValue ||
      !m.IsScalar(Matcher::Other(*half, x), 0.5f)) {
    return false;
  }
  r.nodes.insert(r.nodes.end(), {i_one, i_b, i_a});
  r.last = i_a;
  return true;
}

constexpr float kSqrt2 = 1.41421356237309505f;
constexpr float kConstantTolerance = 1e-6f;

std::optional<GeluMatch> MatchErfGelu(const Matcher& m, int index) {
  const Node& erf = m.graph().node(index);
  if (!IsFloatOp(erf, FloatOp::kErf) || erf.inputs.size() != 1 || erf.outputs.size() != 1) {
    return std::nullopt;
  }
  GeluMatch r;
  int i_scale = -1;
  const ValueId t = erf.inputs[0];
  if (!m.UsedOnly(t, 1)) return std::nullopt;
  if (const Node* div = m.Producer(t, FloatOp::kDiv, 2, &i_scale);
      div != nullptr && m.IsScalar(div->inputs[1], kSqrt2, kConstantTolerance)) {
    r.x = div->inputs[0];
  } else if (const Node* mul = m.Producer(t, FloatOp::kMul, 2, &i_scale); mul != nullptr) {
    for (int k = 0; k < 2; ++k) {
      if (m.IsScalar(mul->inputs[static_cast<size_t>(k)], 1.0f / kSqrt2, kConstantTolerance)) {
        r.x = mul->inputs[static_cast<size_t>(1 - k)];
      }
    }
  }
  if (r.x == kNoValue) return std::nullopt;
  r.nodes = {i_scale, index};
  if (!MatchGeluTail(m, erf.outputs[0], r.x, r)) return std::nullopt;
  return r;
}

// Whether `p` is x^3: Pow(x, 3), or x * (x * x) in either order. Appends the nodes.
bool MatchCube(const Matcher& m, ValueId p, ValueId x, std::vector<int>& nodes) {
  int i_p = -1, i_sq = -1;
  if (const Node* pow = m.Producer(p, FloatOp::kPow, 2, &i_p); pow != nullptr) {
    if (pow->inputs[0] != x || !m.IsScalar(pow->inputs[1], 3.0f)) return false;
    nodes.push_back(i_p);
    return true;
  }
  const Node* mul = m.Producer(p, FloatOp::kMul, 2, &i_p);
  if (mul == nullptr) return false;
  const ValueId sq = Matcher::Other(*mul, x);
  const Node* square = m.Producer(sq, FloatOp::kMul, 2, &i_sq);
  if (sq == kNoValue || square == nullptr || !m.UsedOnly(sq, 1) || square->inputs[0] != x || square->inputs[1] != x) {
    return false;
  }
  nodes.insert(nodes.end(), {i_sq, i_p});
  return true;
}

std::optional<GeluMatch> MatchTanhGelu(const Matcher& m, int index) {
  const Node& tanh = m.graph().node(index);
  if (!IsFloatOp(tanh, FloatOp::kTanh) || tanh.inputs.size() != 1 || tanh.outputs.size() != 1) {
    return std::nullopt;
  }
  constexpr float kSqrt2OverPi = 0.79788456080286536f;
  constexpr float kCubic = 0.044715f;
  GeluMatch r;
  r.tanh = true;
  int i_scale = -1, i_sum = -1, i_cubic = -1;
  const ValueId u = tanh.inputs[0];
  const Node* scale = m.Producer(u, FloatOp::kMul, 2, &i_scale);
  if (scale == nullptr || !m.UsedOnly(u, 1)) return std::nullopt;
  ValueId w = kNoValue;
  for (int k = 0; k < 2; ++k) {
    if (m.IsScalar(scale->inputs[static_cast<size_t>(k)], kSqrt2OverPi, kConstantTolerance)) {
      w = scale->inputs[static_cast<size_t>(1 - k)];
    }
  }
  const Node* sum = m.Producer(w, FloatOp::kAdd, 2, &i_sum);
  if (sum == nullptr || !m.UsedOnly(w, 1)) return std::nullopt;
  for (int k = 0; k < 2 && r.x == kNoValue; ++k) {
    const ValueId c = sum->inputs[static_cast<size_t>(k)];
    const Node* cubic = m.Producer(c, FloatOp::kMul, 2, &i_cubic);
    if (cubic == nullptr || !m.UsedOnly(c, 1)) continue;
    for (int j = 0; j < 2; ++j) {
      if (!m.IsScalar(cubic->inputs[static_cast<size_t>(j)], kCubic, kConstantTolerance)) continue;
      const ValueId x = sum->inputs[static_cast<size_t>(1 - k)];
      const ValueId p = cubic->inputs[static_cast<size_t>(1 - j)];
      std::vector<int> cube_nodes;
      if (m.UsedOnly(p, 1) && MatchCube(m, p, x, cube_nodes)) {
        r.x = x;
        r.nodes = cube_nodes;
      }
    }
  }
  if (r.x == kNoValue) return std::nullopt;
  r.nodes.insert(r.nodes.end(), {i_cubic, i_sum, i_scale, index});
  if (!MatchGeluTail(m, tanh.outputs[0], r.x, r)) return std::nullopt;
  return r;
}

// Whether none of `nodes` is already taken by another match.
bool Claim(std::vector<bool>& taken, const std::vector<int>& nodes) {
  for (int i : nodes) {
    if (taken[static_cast<size_t>(i)]) return false;
  }
  for (int i : nodes) taken[static_cast<size_t>(i)] = true;
  return true;
}

}  // namespace

Result<std::vector<std::string>> FuseLayerNorms(Graph& graph) {
  std::vector<LayerNormMatch> matches;
  std::vector<bool> taken(static_cast<size_t>(graph.num_nodes()), false);
  {
    const Matcher m(graph);
    for (int i = 0; i < graph.num_nodes(); ++i) {
      std::optional<LayerNormMatch> r = MatchLayerNorm(m, i);
      if (r && Claim(taken, r->nodes)) matches.push_back(std::move(*r));
    }
  }
  std::vector<std::string> fused;
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  for (LayerNormMatch& r : matches) {
    const std::string name = graph.node(r.last).name;
    if (r.gamma == kNoValue) {
      if (r.beta == kNoValue)
        continue;  // neither gamma nor beta: the normalised width is not known
                   // here
      OCTET_ASSIGN_OR_RETURN(r.gamma, AddFilled(graph, name + ".scale", graph.value(r.beta).data.shape(), 1.0f));
    }
    Node& last = graph.mutable_node(r.last);
    const ValueId y = last.outputs[0];
    last.op_type = FloatOpName(FloatOp::kLayerNormalization);
    last.attributes = {};
    last.attributes.Set("axis", int64_t{-1});
    last.attributes.Set("epsilon", r.epsilon);
    last.inputs = {r.x, r.gamma};
    if (r.beta != kNoValue) last.inputs.push_back(r.beta);
    last.outputs = {y};
    for (int i : r.nodes) {
      if (i != r.last) remove[static_cast<size_t>(i)] = true;
    }
    fused.push_back(name);
  }
  RemoveNodes(graph, remove);
  return fused;
}

Result<std::vector<std::string>> FuseGelus(Graph& graph) {
  std::vector<GeluMatch> matches;
  std::vector<bool> taken(static_cast<size_t>(graph.num_nodes()), false);
  {
    const Matcher m(graph);
    for (int i = 0; i < graph.num_nodes(); ++i) {
      std::optional<GeluMatch> r = MatchErfGelu(m, i);
      if (!r) r = MatchTanhGelu(m, i);
      if (r && Claim(taken, r->nodes)) matches.push_back(std::move(*r));
    }
  }
  std::vector<std::string> fused;
  std::vector<bool> remove(static_cast<size_t>(graph.num_nodes()), false);
  for (const GeluMatch& r : matches) {
    Node& last = graph.mutable_node(r.last);
    const ValueId y = last.outputs[0];
    last.op_type = FloatOpName(FloatOp::kGelu);
    last.attributes = {};
    if (r.tanh) last.attributes.Set("approximate", std::string("tanh"));
    last.inputs = {r.x};
    last.outputs = {y};
    for (int i : r.nodes) {
      if (i != r.last) remove[static_cast<size_t>(i)] = true;
    }
    fused.push_back(last.name);
  }
  RemoveNodes(graph, remove);
  return fused;
}

std::vector<std::string> ScaleDivisionsToMul(Graph& graph) {
  std::vector<std::string> changed;
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const Node& n = graph.node(i);
    if (!IsFloatOp(n, FloatOp::kDiv) || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    const Value& divisor = graph.value(n.inputs[1]);
    if (divisor.kind != ValueKind::kConstant || divisor.data.dtype() != DType::kF32 ||
        divisor.data.NumElements() != 1) {
      continue;
    }
    const float c = divisor.data.data<float>()[0];
    if (c == 0.0f || !std::isfinite(1.0f / c)) continue;
    auto reciprocal = divisor.data.Clone();
    if (!reciprocal.ok()) continue;
    reciprocal->data<float>()[0] = 1.0f / c;
    auto id = graph.AddConstant(UniqueValueName(graph, divisor.name + ".reciprocal"), std::move(*reciprocal));
    if (!id.ok()) continue;
    Node& div = graph.mutable_node(i);
    div.op_type = FloatOpName(FloatOp::kMul);
    div.inputs[1] = *id;
    changed.push_back(div.name);
  }
  return changed;
}

Result<TransformerFuseReport> FuseTransformerPatterns(Graph& graph) {
  TransformerFuseReport report;
  OCTET_ASSIGN_OR_RETURN(report.layer_norms, FuseLayerNorms(graph));
  OCTET_ASSIGN_OR_RETURN(report.gelus, FuseGelus(graph));
  report.scale_divisions = ScaleDivisionsToMul(graph);
  return report;
}

}  // namespace octet

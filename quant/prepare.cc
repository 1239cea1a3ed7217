// Prepare: observer placement (see prepare.h).
#include "quant/prepare.h"

#include <algorithm>
#include <numeric>

#include <fmt/ranges.h>

#include "quant/float_values.h"
#include "quant/graph_rewrite.h"
#include "quant/quantizable_ops.h"

namespace octet {

namespace {

// Union-find over value ids, for values that must share qparams.
class ValueGroups {
 public:
  explicit ValueGroups(int n) : parent_(static_cast<size_t>(n)) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

}  // namespace

int PreparedGraph::slot_of(ValueId value) const {
  if (value < 0 || static_cast<size_t>(value) >= slot_of_.size()) return -1;
  return slot_of_[static_cast<size_t>(value)];
}

const Observer* PreparedGraph::FindObserver(const std::string& name) const {
  const int s = slot_of(graph_.FindValue(name));
  return s < 0 ? nullptr : slots_[static_cast<size_t>(s)].observer.get();
}

Result<std::map<std::string, QParams>> PreparedGraph::CalculateQParams() const {
  std::map<std::string, QParams> out;
  // Every value calibration never reached, so that one run names them all.
  std::vector<std::string> unreached;
  for (const ObserverSlot& slot : slots_) {
    if (!slot.fixed_qparams.has_value() && !slot.observer->has_observations()) {
      unreached.push_back(fmt::format("'{}' (node '{}', {})", graph_.value(slot.values.front()).name, slot.owner,
                                      ObserverClassName(slot.observer->kind())));
    }
  }
  if (!unreached.empty()) {
    return FailedPrecondition(
        "cannot calculate qparams: {} observed value{} saw no data: {}; run Calibrate with data that reaches {} "
        "(--calib), or keep the node{} float (--skip NODE)",
        unreached.size(), unreached.size() == 1 ? "" : "s", fmt::join(unreached, ", "),
        unreached.size() == 1 ? "it" : "them", unreached.size() == 1 ? "" : "s");
  }
  for (const ObserverSlot& slot : slots_) {
    const std::string& first = graph_.value(slot.values.front()).name;
    if (slot.fixed_qparams.has_value()) {
      for (ValueId v : slot.values) out.emplace(graph_.value(v).name, *slot.fixed_qparams);
      continue;
    }
    auto q = slot.observer->CalculateQParams();
    if (!q.ok()) return Status(q.status().code(), fmt::format("qparams of value '{}': {}", first, q.status().message()));
    for (ValueId v : slot.values) out.emplace(graph_.value(v).name, *q);
  }
  return out;
}

Result<PreparedGraph> Prepare(Graph graph, const QConfigMapping& mapping, const PrepareOptions& options) {
  OCTET_RETURN_IF_ERROR(mapping.Validate(&graph));
  PreparedGraph p;
  if (options.fuse) {
    OCTET_ASSIGN_OR_RETURN(p.fuse_report_, Fuse(graph));
  }
  p.graph_ = std::move(graph);
  const Graph& g = p.graph_;
  const int num_values = g.num_values();
  ValueGroups groups(num_values);
  // For each value: the first node (graph order) that wants it observed as an activation, or -1.
  std::vector<int> activation_owner(static_cast<size_t>(num_values), -1);
  struct WeightUse {
    int node;
    ValueId value;
    int axis;
  };
  std::vector<WeightUse> weights;
  // Shape-building integers and values folded at Compile carry no data a hook sees: never observed.
  const std::vector<bool> runtime_float = RuntimeFloatValues(g);
  auto ObservableActivation = [&runtime_float](const Graph&, ValueId id) {
    return id != kNoValue && runtime_float[static_cast<size_t>(id)];
  };
  p.node_qconfigs_.resize(static_cast<size_t>(g.num_nodes()));

  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    std::optional<QConfig> q = mapping.QConfigFor(n);
    const QuantOpInfo info = LookupQuantOp(n, WeightRank(g, n));
    if (info.kind == QuantOpKind::kFloat || !q.has_value()) continue;
    // A dynamic qconfig applies to weighted ops only (PyTorch's dynamic flow covers Linear/RNNs).
    if (q->is_dynamic() && info.kind != QuantOpKind::kWeighted) continue;
    p.node_qconfigs_[static_cast<size_t>(i)] = q;
    if (info.weight_input >= 0) weights.push_back({i, n.inputs[static_cast<size_t>(info.weight_input)],
                                                   info.weight_channel_axis});
    if (q->is_dynamic()) continue;
    auto want = [&](ValueId v) {
      if (!ObservableActivation(g, v)) return;
      int& owner = activation_owner[static_cast<size_t>(v)];
      if (owner < 0) owner = i;
    };
    for (int slot : info.activation_inputs) want(n.inputs[static_cast<size_t>(slot)]);
    // Shared-qparams ops observe every output (Split has several), the others their first.
    const size_t observed_outputs =
        info.kind == QuantOpKind::kShared ? n.outputs.size() : std::min<size_t>(1, n.outputs.size());
    for (size_t o = 0; o < observed_outputs; ++o) {
      const ValueId out = n.outputs[o];
      want(out);
      if (info.kind != QuantOpKind::kShared || out == kNoValue) continue;
      for (int slot : info.activation_inputs) {
        const ValueId v = n.inputs[static_cast<size_t>(slot)];
        if (ObservableActivation(g, v)) groups.Union(v, out);
      }
    }
  }

  // Groups read as input B of a MatMul of two activations: with ReduceRangeScope::kWeights the only activations that
  // keep reduce_range (quant/qconfig.h).
  std::vector<bool> b_operand(static_cast<size_t>(num_values), false);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const std::optional<QConfig>& q = p.node_qconfigs_[static_cast<size_t>(i)];
    if (!q.has_value() || q->is_dynamic()) continue;
    const Node& n = g.node(i);
    const QuantOpInfo info = LookupQuantOp(n, WeightRank(g, n));
    // LookupQuantOp calls a MatMul of two activations kGeneral.
    if (n.op_type != FloatOpName(FloatOp::kMatMul) || info.kind != QuantOpKind::kGeneral || n.inputs.size() < 2) {
      continue;
    }
    const ValueId b = n.inputs[1];
    if (ObservableActivation(g, b)) b_operand[static_cast<size_t>(groups.Find(b))] = true;
  }

  p.slot_of_.assign(static_cast<size_t>(num_values), -1);
  // Activation slots: one per group; the owner is the first node owning any value of the group.
  std::vector<int> group_owner(static_cast<size_t>(num_values), -1);
  for (ValueId v = 0; v < num_values; ++v) {
    const int owner = activation_owner[static_cast<size_t>(v)];
    if (owner < 0) continue;
    int& go = group_owner[static_cast<size_t>(groups.Find(v))];
    if (go < 0 || owner < go) go = owner;
  }
  std::vector<int> group_slot(static_cast<size_t>(num_values), -1);
  for (ValueId v = 0; v < num_values; ++v) {
    if (activation_owner[static_cast<size_t>(v)] < 0) continue;
    const int root = groups.Find(v);
    int& s = group_slot[static_cast<size_t>(root)];
    if (s < 0) {
      const int owner = group_owner[static_cast<size_t>(root)];
      const QConfig& q = *p.node_qconfigs_[static_cast<size_t>(owner)];
      ObserverSpec spec = q.activation;
      if (q.reduce_range_scope == ReduceRangeScope::kWeights && !b_operand[static_cast<size_t>(root)]) {
        spec.options.reduce_range = false;
      }
      auto obs = spec.Make();
      if (!obs.ok()) {
        return InvalidArgument("failed to prepare node '{}': activation observer for value '{}': {}",
                               g.node(owner).name, g.value(v).name, obs.status().message());
      }
      if (options.context != nullptr) (*obs)->set_context(options.context);
      s = static_cast<int>(p.slots_.size());
      p.slots_.push_back(ObserverSlot{ObservedRole::kActivation, std::move(*obs), {}, g.node(owner).name, std::nullopt});
    }
    p.slots_[static_cast<size_t>(s)].values.push_back(v);
    p.slot_of_[static_cast<size_t>(v)] = s;
  }
  // Constant activations (an Add's constant operand) are observed now; they never pass through a hook.
  for (ObserverSlot& slot : p.slots_) {
    for (ValueId v : slot.values) {
      const Value& val = g.value(v);
      if (val.kind == ValueKind::kConstant) OCTET_RETURN_IF_ERROR(slot.observer->Observe(val.data, val.name));
    }
  }

  // Weight slots: observed once, here.
  for (const WeightUse& w : weights) {
    if (p.slot_of_[static_cast<size_t>(w.value)] >= 0) continue;  // a weight shared by two nodes: observed once
    const Node& n = g.node(w.node);
    const Value& val = g.value(w.value);
    const QConfig& q = *p.node_qconfigs_[static_cast<size_t>(w.node)];
    if (val.data.dtype() != DType::kF32) {
      return InvalidArgument("failed to prepare node '{}': weight '{}' must be f32, got {}", n.name, val.name,
                             DTypeName(val.data.dtype()));
    }
    ObserverSpec spec = q.weight;
    if (q.activation.options.reduce_range && q.reduce_range_scope == ReduceRangeScope::kWeights) {
      // The bit reduce_range gives up comes off the weights: [-64, 63] (quant/qconfig.h).
      spec.options.quant_min = std::max<int64_t>(spec.options.quant_min.value_or(-128), -64);
      spec.options.quant_max = std::min<int64_t>(spec.options.quant_max.value_or(127), 63);
    }
    auto obs = spec.Make(w.axis);
    if (!obs.ok()) {
      return InvalidArgument("failed to prepare node '{}': weight observer for '{}': {}", n.name, val.name,
                             obs.status().message());
    }
    if (options.context != nullptr) (*obs)->set_context(options.context);
    if (Status s = (*obs)->Observe(val.data, val.name); !s.ok()) {
      return Status(s.code(), fmt::format("failed to prepare node '{}': {}", n.name, s.message()));
    }
    p.slot_of_[static_cast<size_t>(w.value)] = static_cast<int>(p.slots_.size());
    p.slots_.push_back(ObserverSlot{ObservedRole::kWeight, std::move(*obs), {w.value}, n.name, std::nullopt});
  }
  return p;
}

}  // namespace octet

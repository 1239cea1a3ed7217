// PrepareQat: fake-quant placement and the QAT training graph (see prepare_qat.h).
#include "quant/qat/prepare_qat.h"

#include <map>
#include <set>

#include "quant/fuse.h"
#include "quant/graph_rewrite.h"
#include "quant/quantizable_ops.h"

namespace octet::qat {
namespace {

constexpr const char* kFakeQuantizeDomain = "octet.qat";

// Runs a FakeQuantizeModule as a training-graph node: training forwards observe and keep the mask, eval forwards
// only fake-quantize.
class FakeQuantizeNode final : public training::TrainingModule {
 public:
  explicit FakeQuantizeNode(FakeQuantizeModule* module) : module_(module) {}
  Result<Tensor> Forward(const Tensor& x, training::Mode mode) override {
    return mode == training::Mode::kTraining ? module_->Forward(x) : module_->ForwardEval(x);
  }
  Result<Tensor> Backward(const Tensor& dy) override { return module_->Backward(dy); }
  std::vector<Parameter> Parameters() override {
    std::vector<Parameter> out;
    for (FakeQuantizeModule::LearnedTensor& t : module_->learnable_parameters()) {
      out.push_back({t.name, t.value, t.grad});
    }
    return out;
  }
  void ZeroGrad() override { module_->ZeroGrad(); }

 private:
  FakeQuantizeModule* module_;
};

// Inserts "name": FakeQuantize(v) -> a new value, and makes `consumers` (node indices; input slots reading v)
// read it instead. Returns the new value.
Result<ValueId> InsertFakeQuantize(Graph& g, ValueId v, const std::string& name, const std::vector<int>& consumers,
                                   bool replace_output) {
  OCTET_ASSIGN_OR_RETURN(ValueId out, g.AddNodeValue(UniqueValueName(g, g.value(v).name + ".fake_quant")));
  for (int c : consumers) {
    for (ValueId& in : g.mutable_node(c).inputs) in = in == v ? out : in;
  }
  if (replace_output) {
    for (ValueId& o : g.mutable_outputs()) o = o == v ? out : o;
  }
  Node n;
  n.name = name;
  n.op_type = "FakeQuantize";
  n.domain = kFakeQuantizeDomain;
  n.inputs = {v};
  n.outputs = {out};
  OCTET_RETURN_IF_ERROR(g.AddNode(std::move(n)).status());
  return out;
}

std::vector<int> ConsumersOf(const Graph& g, ValueId v) {
  std::vector<int> out;
  for (int i = 0; i < g.num_nodes(); ++i) {
    for (ValueId in : g.node(i).inputs) {
      if (in == v) {
        out.push_back(i);
        break;
      }
    }
  }
  return out;
}

Status NodeError(const std::string& node, const Status& s) {
  return s.WithContext(fmt::format("failed to prepare node '{}' for QAT", node));
}

}  // namespace

QConfig ObserverQConfig(const QatQConfig& qconfig) {
  QConfig q;
  q.activation = ObserverSpec{qconfig.activation.observer, qconfig.activation.observer_options};
  q.weight = ObserverSpec{qconfig.weight.observer, qconfig.weight.observer_options};
  return q;
}

Status QatModel::DisableObservers() {
  for (FakeQuantSite& site : sites_) {
    if (site.module->config().kind == FakeQuantizeKind::kLearnable) {
      OCTET_RETURN_IF_ERROR(site.module->EnableParamLearning());
    } else {
      site.module->set_observer_enabled(false);
    }
  }
  return OkStatus();
}

void QatModel::EnableObservers() {
  for (FakeQuantSite& site : sites_) site.module->set_observer_enabled(true);
}

void QatModel::SetFakeQuantEnabled(bool on) {
  for (FakeQuantSite& site : sites_) site.module->set_fake_quant_enabled(on);
}

Result<Graph> QatModel::TrainedFloatGraph() const {
  Graph out = float_graph_;
  const Graph& trained = training_->graph();
  for (ValueId id = 0; id < out.num_values(); ++id) {
    Value& v = out.mutable_value(id);
    if (v.kind != ValueKind::kConstant || v.data.dtype() != DType::kF32) continue;
    const ValueId t = trained.FindValue(v.name);
    if (t == kNoValue || trained.value(t).kind != ValueKind::kConstant) continue;
    const Tensor& data = trained.value(t).data;
    if (data.shape() != v.data.shape()) {
      return Internal("trained constant '{}' has shape {}, the float graph's {}", v.name, data.shape(),
                      v.data.shape());
    }
    OCTET_ASSIGN_OR_RETURN(v.data, data.Clone());
  }
  return out;
}

Result<QatModel> PrepareQat(Graph graph, const QatQConfig& qconfig, const Context& context,
                            const PrepareQatOptions& options) {
  QatModel m;
  m.qconfig_ = qconfig;
  m.mapping_.SetGlobal(ObserverQConfig(qconfig));
  for (const std::string& name : options.skip) m.mapping_.SetModuleName(name, std::nullopt);
  OCTET_RETURN_IF_ERROR(m.mapping_.Validate(&graph));
  OCTET_RETURN_IF_ERROR(graph.SortTopologically());
  m.float_graph_ = graph;

  // Placement: Prepare's slots on the fused copy. Fused nodes keep their names and take over the outputs of what
  // they absorbed, so slot values are found by name in the unfused training graph.
  PrepareOptions po;
  po.context = &context;
  OCTET_ASSIGN_OR_RETURN(PreparedGraph placed, Prepare(graph, m.mapping_, po));
  const Graph& fused = placed.graph();

  Graph g = std::move(graph);
  FoldConstantNodes(g);
  OCTET_ASSIGN_OR_RETURN(m.conv_bn_units_, RewriteConvBnForQat(g));
  std::map<std::string, const ConvBnUnit*> unit_of_conv;
  std::set<std::string> unit_batch_norms;
  for (const ConvBnUnit& u : m.conv_bn_units_) {
    unit_of_conv[u.conv] = &u;
    unit_batch_norms.insert(u.batch_norm);
  }
  // Convert folds every BatchNormalization Fuse folds; one that training keeps apart from its Gemm would leave the
  // weight fake-quant watching the unfolded weight.
  for (const std::string& bn : placed.fuse_report().folded_batch_norms) {
    if (unit_batch_norms.count(bn) == 0) {
      return NodeError(bn, Unimplemented("QAT of a BatchNormalization folded into a Gemm (LinearBn) is not "
                                         "supported yet; only Conv + BatchNormalization train as one unit"));
    }
  }

  training::TrainingGraphOptions to;
  std::set<std::string> extra;
  const std::vector<int> fused_producers = fused.Producers();
  for (const ObserverSlot& slot : placed.slots()) {
    FakeQuantSite site;
    site.role = slot.role;
    site.owner = slot.owner;
    FakeQuantizeConfig config = slot.role == ObservedRole::kWeight ? qconfig.weight : qconfig.activation;
    if (slot.role == ObservedRole::kWeight) {
      // The weighted node's weight input (for a ConvBn unit, W * s).
      const int node = g.FindNode(slot.owner);
      const int fused_node = fused.FindNode(slot.owner);
      if (node < 0 || fused_node < 0) return Internal("weight owner '{}' not found after rewriting", slot.owner);
      const Node& fn = fused.node(fused_node);
      const QuantOpInfo info = LookupQuantOp(fn, WeightRank(fused, fn));
      if (info.weight_input < 0) return Internal("node '{}' has no weight input", slot.owner);
      const size_t w_slot = static_cast<size_t>(info.weight_input);
      const ValueId w = g.node(node).inputs.at(w_slot);
      const std::string weight_name = fused.value(slot.values.front()).name;
      site.values = {weight_name};
      if (IsPerChannelKind(config.observer)) {
        config.observer_options.ch_axis = slot.observer->options().ch_axis;
        const Shape& ws = fused.value(slot.values.front()).data.shape();
        const int axis = config.observer_options.ch_axis.value_or(0);
        config.channels = ws.dim(axis < 0 ? axis + ws.rank() : axis);
      }
      site.node = slot.owner + ".weight_fake_quant";
      auto it = unit_of_conv.find(slot.owner);
      if (it != unit_of_conv.end()) {
        extra.insert(it->second->weight);
        if (!it->second->bias.empty()) to.extra_biases.push_back(it->second->bias);
      } else {
        extra.insert(g.value(w).name);
      }
      OCTET_RETURN_IF_ERROR(InsertFakeQuantize(g, w, site.node, {node}, false).status());
    } else {
      for (ValueId v : slot.values) site.values.push_back(fused.value(v).name);
      // The group's entry values: those not produced from another value of the group.
      std::vector<std::string> entries;
      for (ValueId v : slot.values) {
        const int p = fused_producers[static_cast<size_t>(v)];
        bool from_group = false;
        if (p >= 0) {
          for (ValueId in : fused.node(p).inputs) {
            from_group = from_group || (in != kNoValue && placed.slot_of(in) == placed.slot_of(v));
          }
        }
        if (!from_group) entries.push_back(fused.value(v).name);
      }
      if (entries.size() != 1) {
        return NodeError(slot.owner,
                         Unimplemented("the values sharing qparams with '{}' are entered by {} values ({}); QAT "
                                       "supports one fake-quant per share-qparams group",
                                       site.values.front(), entries.size(), fmt::join(entries, ", ")));
      }
      const ValueId v = g.FindValue(entries.front());
      if (v == kNoValue) return Internal("activation '{}' not found after rewriting", entries.front());
      site.node = entries.front() + ".fake_quant";
      OCTET_RETURN_IF_ERROR(InsertFakeQuantize(g, v, site.node, ConsumersOf(g, v), true).status());
    }
    Result<std::unique_ptr<FakeQuantizeModule>> module = FakeQuantizeModule::Create(config, context);
    if (!module.ok()) {
      return NodeError(slot.owner, module.status().WithContext(fmt::format("fake-quant '{}'", site.node)));
    }
    site.module = std::move(*module);
    m.adapters_.push_back(std::make_unique<FakeQuantizeNode>(site.module.get()));
    to.modules[site.node] = m.adapters_.back().get();
    m.sites_.push_back(std::move(site));
  }
  // Weights behind a fake-quant node are no longer a Conv's direct input: train them by name.
  to.extra_parameters.assign(extra.begin(), extra.end());
  OCTET_ASSIGN_OR_RETURN(training::TrainingGraph tg, training::TrainingGraph::Create(std::move(g), context, to));
  m.training_ = std::make_unique<training::TrainingGraph>(std::move(tg));
  return m;
}

Result<QatModel> PrepareQat(Graph graph, std::string_view backend, const Context& context,
                            const PrepareQatOptions& options) {
  OCTET_ASSIGN_OR_RETURN(QatQConfig q, GetDefaultQatQConfig(backend, 1));
  return PrepareQat(std::move(graph), q, context, options);
}

}  // namespace octet::qat

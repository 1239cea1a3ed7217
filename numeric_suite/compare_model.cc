// CompareModelOutputs / CompareModelStub: both graphs run batch by batch with per-node hooks (see compare_model.h).
#include "numeric_suite/compare_model.h"

#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/executor.h"
#include "numeric_suite/shadow.h"
#include "quant/fused_ops.h"
#include "quant/quantized_registry.h"

namespace octet {
namespace {

// An executor recompiled whenever the batch shapes change (graphs with unknown batch dims).
class ShapeKeyedExecutor {
 public:
  ShapeKeyedExecutor(const Graph& graph, const OpRegistry& registry, const Context& context)
      : graph_(&graph), registry_(&registry), context_(&context) {}

  Result<const Executor*> For(std::span<const Tensor> inputs) {
    std::vector<Shape> shapes;
    for (const Tensor& t : inputs) shapes.push_back(t.shape());
    if (executor_ == nullptr || shapes != shapes_) {
      CompileOptions options;
      for (size_t i = 0; i < inputs.size() && i < graph_->inputs().size(); ++i) {
        options.input_shapes.emplace_back(graph_->value(graph_->inputs()[i]).name, shapes[i]);
      }
      auto e = Executor::Compile(*graph_, *context_, *registry_, options);
      if (!e.ok()) return e.status().WithContext(fmt::format("failed to compile graph '{}'", graph_->name()));
      executor_ = std::make_unique<Executor>(std::move(*e));
      shapes_ = std::move(shapes);
    }
    return executor_.get();
  }

 private:
  const Graph* graph_;
  const OpRegistry* registry_;
  const Context* context_;
  std::vector<Shape> shapes_;
  std::unique_ptr<Executor> executor_;
};

std::string SlotName(const std::string& node, size_t slot) {
  return slot == 0 ? node : fmt::format("{}:{}", node, slot);
}

// Adds one batch's pair to `c` and the logger, checking shapes.
Status Record(ValueComparison& c, const Tensor& float_value, const Tensor& quantized_value, Logger& logger) {
  if (float_value.shape() != quantized_value.shape()) {
    return InvalidArgument("failed to compare '{}' ({}): float value '{}' has shape {}, the int8 graph's {}", c.name,
                           c.op, c.value, float_value.shape(), quantized_value.shape());
  }
  c.shape = float_value.shape();
  OCTET_RETURN_IF_ERROR(c.sums.Accumulate(float_value, quantized_value));
  return logger.OnValue(c.name, float_value, quantized_value);
}

}  // namespace

double ValueComparison::max_abs_error_lsb() const {
  if (!qparams || qparams->per_channel()) return std::numeric_limits<double>::quiet_NaN();
  return sums.max_abs_err / qparams->scale();
}

struct PreparedModelOutputs::Impl {
  std::unique_ptr<Context> owned_context;
  const Context* context = nullptr;
  OpRegistry float_registry = QuantFloatRegistry();
  OpRegistry quantized_registry = QuantizedGraphRegistry();
  std::unique_ptr<ShapeKeyedExecutor> float_exec, quantized_exec;
  std::vector<std::unique_ptr<Shadow>> shadows;  // one per match (when options.shadow)
  std::unordered_map<int, size_t> match_of_float, match_of_quantized;  // node index -> match index
  std::vector<size_t> first_activation;  // match index -> index of its slot-0 entry in activations_ (or npos)
  std::vector<size_t> first_shadow;
};

PreparedModelOutputs::~PreparedModelOutputs() = default;

Result<std::unique_ptr<PreparedModelOutputs>> PrepareModelOutputs(const Graph& float_graph, const Graph& quantized,
                                                                   const CompareOptions& options,
                                                                   Logger* activation_logger, Logger* shadow_logger) {
  std::unique_ptr<PreparedModelOutputs> p(new PreparedModelOutputs());
  p->options_ = options;
  OCTET_ASSIGN_OR_RETURN(p->float_graph_, FloatReferenceGraph(float_graph, options.fuse_float));
  p->quantized_graph_ = quantized;
  if (p->float_graph_.inputs().size() != quantized.inputs().size()) {
    return InvalidArgument("failed to compare graphs '{}' and '{}': {} float inputs, {} int8 inputs",
                           float_graph.name(), quantized.name(), p->float_graph_.inputs().size(),
                           quantized.inputs().size());
  }
  p->matches_ = MatchNodes(p->float_graph_, p->quantized_graph_, options.allow_list);
  if (p->matches_.empty()) {
    return InvalidArgument("failed to compare graphs '{}' and '{}': no quantized node has a float node of the same "
                           "name{}",
                           float_graph.name(), quantized.name(),
                           options.allow_list.empty() ? "" : " in the allow list");
  }
  auto impl = std::make_unique<PreparedModelOutputs::Impl>();
  if (options.context != nullptr) {
    impl->context = options.context;
  } else {
    OCTET_ASSIGN_OR_RETURN(Context c, Context::Create());
    impl->owned_context = std::make_unique<Context>(std::move(c));
    impl->context = impl->owned_context.get();
  }
  impl->float_exec = std::make_unique<ShapeKeyedExecutor>(p->float_graph_, impl->float_registry, *impl->context);
  impl->quantized_exec =
      std::make_unique<ShapeKeyedExecutor>(p->quantized_graph_, impl->quantized_registry, *impl->context);
  for (size_t m = 0; m < p->matches_.size(); ++m) {
    const MatchedNode& match = p->matches_[m];
    impl->match_of_float[match.float_node] = m;
    impl->match_of_quantized[match.quantized_node] = m;
    if (options.shadow) {
      impl->shadows.push_back(
          std::make_unique<Shadow>(p->float_graph_, match.float_node, impl->float_registry, *impl->context));
    }
  }
  // One entry per matched output slot, in match order.
  const size_t npos = static_cast<size_t>(-1);
  impl->first_activation.assign(p->matches_.size(), npos);
  impl->first_shadow.assign(p->matches_.size(), npos);
  for (size_t m = 0; m < p->matches_.size(); ++m) {
    const MatchedNode& match = p->matches_[m];
    const Node& fn = p->float_graph_.node(match.float_node);
    const Node& qn = p->quantized_graph_.node(match.quantized_node);
    for (size_t s = 0; s < fn.outputs.size() && s < qn.outputs.size(); ++s) {
      if (fn.outputs[s] == kNoValue || qn.outputs[s] == kNoValue) continue;
      ValueComparison c;
      c.name = SlotName(match.name, s);
      c.node = match.name;
      c.slot = s;
      c.value = p->float_graph_.value(fn.outputs[s]).name;
      c.op = match.quantized_op;
      c.float_op = match.float_op;
      const Value& qv = p->quantized_graph_.value(qn.outputs[s]);
      if (qv.qparams) c.qparams = *qv.qparams;
      if (options.activations) {
        if (s == 0) impl->first_activation[m] = p->activations_.size();
        p->activations_.push_back(c);
      }
      if (options.shadow) {
        if (s == 0) impl->first_shadow[m] = p->shadow_.size();
        p->shadow_.push_back(c);
      }
    }
  }
  for (size_t i = 0; i < p->float_graph_.outputs().size() && i < quantized.outputs().size(); ++i) {
    ValueComparison c;
    c.name = c.value = p->float_graph_.value(p->float_graph_.outputs()[i]).name;
    p->outputs_.push_back(std::move(c));
  }
  if (activation_logger == nullptr) {
    p->owned_activation_logger_ = std::make_unique<OutputLogger>();
    activation_logger = p->owned_activation_logger_.get();
  }
  if (shadow_logger == nullptr) {
    p->owned_shadow_logger_ = std::make_unique<ShadowLogger>();
    shadow_logger = p->owned_shadow_logger_.get();
  }
  p->activation_logger_ = activation_logger;
  p->shadow_logger_ = shadow_logger;
  p->impl_ = std::move(impl);
  return p;
}

Status PreparedModelOutputs::Run(std::span<const Tensor> inputs) {
  Impl& impl = *impl_;
  if (inputs.size() != float_graph_.inputs().size()) {
    return InvalidArgument("failed to compare graphs: {} inputs given, graph '{}' has {}", inputs.size(),
                           float_graph_.name(), float_graph_.inputs().size());
  }
  // The int8 graph's inputs by name.
  std::vector<Tensor> quantized_inputs;
  for (ValueId id : quantized_graph_.inputs()) {
    const std::string& name = quantized_graph_.value(id).name;
    const ValueId f = float_graph_.FindValue(name);
    auto it = std::find(float_graph_.inputs().begin(), float_graph_.inputs().end(), f);
    if (f == kNoValue || it == float_graph_.inputs().end()) {
      return InvalidArgument("failed to compare graphs: int8 graph input '{}' is no input of the float graph", name);
    }
    quantized_inputs.push_back(inputs[static_cast<size_t>(it - float_graph_.inputs().begin())]);
  }

  // Float run: keep the outputs of matched nodes.
  std::unordered_map<int, std::vector<Tensor>> float_outputs;
  RunOptions float_run;
  float_run.after_node.push_back([&](const NodeCall& call) -> Status {
    if (!impl.match_of_float.count(call.node_index)) return OkStatus();
    std::vector<Tensor>& outs = float_outputs[call.node_index];
    for (const TensorView& v : call.outputs) {
      OCTET_ASSIGN_OR_RETURN(Tensor t, v.ToTensor());
      outs.push_back(std::move(t));
    }
    return OkStatus();
  });
  OCTET_ASSIGN_OR_RETURN(const Executor* fe, impl.float_exec->For(inputs));
  OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> float_results, fe->Run(inputs, float_run));

  // Int8 run: dequantized outputs (and inputs for the shadows) of matched nodes, counters.
  std::unordered_map<int, std::vector<Tensor>> q_outputs, q_inputs;
  RunOptions q_run;
  if (options_.shadow) {
    q_run.before_node.push_back([&](const NodeCall& call) -> Status {
      auto m = impl.match_of_quantized.find(call.node_index);
      if (m == impl.match_of_quantized.end()) return OkStatus();
      const Shadow& shadow = *impl.shadows[m->second];
      std::vector<Tensor>& ins = q_inputs[call.node_index];
      for (size_t s = 0; s < call.inputs.size(); ++s) {
        if (shadow.IsConstantSlot(s) || call.inputs[s].raw_data() == nullptr || call.node.inputs[s] == kNoValue) {
          ins.emplace_back();
          continue;
        }
        const Value& v = quantized_graph_.value(call.node.inputs[s]);
        OCTET_ASSIGN_OR_RETURN(Tensor t, DequantizedCopy(call.inputs[s], v.qparams ? &*v.qparams : nullptr, v.name));
        ins.push_back(std::move(t));
      }
      return OkStatus();
    });
  }
  q_run.after_node.push_back([&](const NodeCall& call) -> Status {
    auto m = impl.match_of_quantized.find(call.node_index);
    if (m == impl.match_of_quantized.end()) return OkStatus();
    std::vector<Tensor>& outs = q_outputs[call.node_index];
    for (size_t s = 0; s < call.outputs.size(); ++s) {
      const ValueId id = s < call.node.outputs.size() ? call.node.outputs[s] : kNoValue;
      if (id == kNoValue) {
        outs.emplace_back();
        continue;
      }
      const Value& v = quantized_graph_.value(id);
      OCTET_ASSIGN_OR_RETURN(Tensor t, DequantizedCopy(call.outputs[s], v.qparams ? &*v.qparams : nullptr, v.name));
      outs.push_back(std::move(t));
    }
    const size_t a = impl.first_activation[m->second];
    if (options_.counters && a != static_cast<size_t>(-1)) {
      ValueComparison& c = activations_[a];
      if (auto clip = CountClipped(quantized_graph_, call)) {
        if (!c.clipping) c.clipping = ClipCount{};
        c.clipping->clipped += clip->clipped;
        c.clipping->total += clip->total;
      }
      if (options_.accumulators) {
        OCTET_ASSIGN_OR_RETURN(std::optional<int64_t> acc, MaxAbsAccumulator(quantized_graph_, call));
        if (acc) c.max_abs_accumulator = std::max(c.max_abs_accumulator.value_or(0), *acc);
      }
    }
    return OkStatus();
  });
  OCTET_ASSIGN_OR_RETURN(const Executor* qe, impl.quantized_exec->For(quantized_inputs));
  OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> q_results, qe->Run(quantized_inputs, q_run));

  // Pair up, in match order.
  for (size_t m = 0; m < matches_.size(); ++m) {
    const MatchedNode& match = matches_[m];
    auto fo = float_outputs.find(match.float_node);
    auto qo = q_outputs.find(match.quantized_node);
    if (fo == float_outputs.end() || qo == q_outputs.end()) continue;  // folded at Compile, or not reached
    std::vector<Tensor> shadow_outs;
    if (options_.shadow) {
      OCTET_ASSIGN_OR_RETURN(shadow_outs, impl.shadows[m]->Run(q_inputs[match.quantized_node]));
    }
    size_t a = impl.first_activation[m], sh = impl.first_shadow[m];
    for (; a < activations_.size() && activations_[a].node == match.name; ++a) {
      ValueComparison& c = activations_[a];
      OCTET_RETURN_IF_ERROR(Record(c, fo->second.at(c.slot), qo->second.at(c.slot), *activation_logger_));
    }
    for (; options_.shadow && sh < shadow_.size() && shadow_[sh].node == match.name; ++sh) {
      ValueComparison& c = shadow_[sh];
      OCTET_RETURN_IF_ERROR(Record(c, shadow_outs.at(c.slot), qo->second.at(c.slot), *shadow_logger_));
    }
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    ErrorSums& sums = outputs_[i].sums;
    if (float_results[i].shape() != q_results[i].shape()) {
      return InvalidArgument("failed to compare output '{}': float shape {}, int8 shape {}", outputs_[i].name,
                             float_results[i].shape(), q_results[i].shape());
    }
    outputs_[i].shape = float_results[i].shape();
    OCTET_RETURN_IF_ERROR(sums.Accumulate(float_results[i], q_results[i]));
  }
  return OkStatus();
}

Result<std::map<std::string, StoringLogger::Stats>> GetMatchingActivations(const PreparedModelOutputs& prepared) {
  const auto* logger = dynamic_cast<const StoringLogger*>(&prepared.activation_logger());
  if (logger == nullptr) {
    return FailedPrecondition("failed to get matching activations: the activation logger keeps no tensors");
  }
  std::map<std::string, StoringLogger::Stats> out;
  for (const std::string& name : logger->names()) {
    OCTET_ASSIGN_OR_RETURN(const StoringLogger::Stats* s, logger->stats(name));
    out.emplace(name, *s);
  }
  return out;
}

namespace {

// Runs every batch through both graphs comparing either the activations (matched values handed to `logger`) or,
// with `shadow`, each int8 node against its float twin (to `logger`), and returns that comparison.
Result<std::vector<ValueComparison>> CompareOverBatches(const Graph& float_graph, const Graph& quantized,
                                                        std::span<const std::vector<Tensor>> batches,
                                                        const CompareOptions& options, bool shadow, Logger* logger) {
  CompareOptions o = options;
  o.activations = !shadow;
  o.shadow = shadow;
  OCTET_ASSIGN_OR_RETURN(auto prepared, PrepareModelOutputs(float_graph, quantized, o, shadow ? nullptr : logger,
                                                            shadow ? logger : nullptr));
  for (size_t b = 0; b < batches.size(); ++b) {
    if (Status s = prepared->Run(batches[b]); !s.ok()) return s.WithContext(fmt::format("batch {}", b));
  }
  return shadow ? prepared->shadow() : prepared->activations();
}

}  // namespace

Result<std::vector<ValueComparison>> CompareModelOutputs(const Graph& float_graph, const Graph& quantized,
                                                         std::span<const std::vector<Tensor>> batches,
                                                         const CompareOptions& options, Logger* logger) {
  return CompareOverBatches(float_graph, quantized, batches, options, /*shadow=*/false, logger);
}

Result<std::vector<ValueComparison>> CompareModelStub(const Graph& float_graph, const Graph& quantized,
                                                      std::span<const std::vector<Tensor>> batches,
                                                      const CompareOptions& options, Logger* logger) {
  return CompareOverBatches(float_graph, quantized, batches, options, /*shadow=*/true, logger);
}

}  // namespace octet

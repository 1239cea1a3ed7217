// TrainingGraph: forward with a tape, backward to the parameters.
#include "quant/training/training_graph.h"

#include <algorithm>

#include "core/float_op_table.h"
#include "core/verifier.h"
#include "ops/float/grad/batch_norm_backward.h"
#include "ops/float/grad/dropout_training.h"
#include "ops/float/grad/run_node.h"
#include "ops/float/registry.h"

namespace octet::training {
namespace {

Status NodeError(const Node& node, const Status& status) {
  return status.WithContext(fmt::format("failed to train node '{}' ({})", node.name, node.op_type));
}

bool IsTrainingBatchNorm(const Node& node, Mode mode, bool frozen) {
  return mode == Mode::kTraining && !frozen && node.op_type == FloatOpName(FloatOp::kBatchNormalization);
}

bool IsTrainingDropout(const Node& node, Mode mode) {
  return mode == Mode::kTraining && node.op_type == FloatOpName(FloatOp::kDropout);
}

// The seed of one node's Dropout mask in one training Forward.
uint64_t DropoutSeed(uint64_t seed, uint64_t forward, int node) {
  return seed ^ (forward * 0x9e3779b97f4a7c15ull) ^ (static_cast<uint64_t>(node) * 0xc2b2ae3d27d4eb4full);
}

}  // namespace

TrainingGraph::TrainingGraph(Graph graph, const Context& context, TrainingGraphOptions options)
    : graph_(std::move(graph)), context_(&context), forward_(FloatOpRegistry()),
      backward_(float_ops::FloatBackwardRegistry()), options_(std::move(options)) {}

Result<TrainingGraph> TrainingGraph::Create(Graph graph, const Context& context, TrainingGraphOptions options) {
  OCTET_RETURN_IF_ERROR(graph.SortTopologically());
  OCTET_RETURN_IF_ERROR(VerifyGraph(graph));
  TrainingGraph tg(std::move(graph), context, std::move(options));
  OCTET_RETURN_IF_ERROR(tg.Prepare());
  return tg;
}

Status TrainingGraph::Prepare() {
  state_ = FindTrainableParameters(graph_);
  modules_.assign(static_cast<size_t>(graph_.num_nodes()), nullptr);
  for (const auto& [name, module] : options_.modules) {
    const int node = graph_.FindNode(name);
    if (node < 0) {
      return InvalidArgument("training module for node '{}': no such node in graph '{}'", name, graph_.name());
    }
    const Node& n = graph_.node(node);
    if (module == nullptr || n.inputs.size() != 1 || n.outputs.size() != 1) {
      return NodeError(n, InvalidArgument("a module node needs a module, one input and one output"));
    }
    modules_[static_cast<size_t>(node)] = module;
  }
  auto add_extra = [&](const std::string& name, ParameterRole role) -> Status {
    const ValueId id = graph_.FindValue(name);
    if (id == kNoValue || graph_.value(id).kind != ValueKind::kConstant || graph_.value(id).dtype != DType::kF32) {
      return InvalidArgument("parameter '{}' is no f32 constant of graph '{}'", name, graph_.name());
    }
    for (const TrainableParameter& p : state_.parameters) {
      if (p.value == id) return OkStatus();
    }
    int reader = -1;
    for (int i = 0; i < graph_.num_nodes() && reader < 0; ++i) {
      for (ValueId in : graph_.node(i).inputs) reader = in == id ? i : reader;
    }
    state_.parameters.push_back({id, reader, role});
    return OkStatus();
  };
  for (const std::string& name : options_.extra_parameters) {
    OCTET_RETURN_IF_ERROR(add_extra(name, ParameterRole::kWeight));
  }
  for (const std::string& name : options_.extra_biases) OCTET_RETURN_IF_ERROR(add_extra(name, ParameterRole::kBias));
  const size_t n = static_cast<size_t>(graph_.num_values());
  is_static_.assign(n, false);
  requires_grad_.assign(n, false);
  values_.assign(n, Tensor());
  present_.assign(n, false);
  std::vector<bool> mutable_value(n, false);
  // Own copies of what training writes, so other holders of the graph's tensors keep theirs.
  for (const TrainableParameter& p : state_.parameters) {
    mutable_value[static_cast<size_t>(p.value)] = true;
    requires_grad_[static_cast<size_t>(p.value)] = true;
  }
  for (ValueId b : state_.buffers) mutable_value[static_cast<size_t>(b)] = true;
  for (ValueId id = 0; id < graph_.num_values(); ++id) {
    Value& v = graph_.mutable_value(id);
    if (v.kind != ValueKind::kConstant) continue;
    if (mutable_value[static_cast<size_t>(id)]) {
      OCTET_ASSIGN_OR_RETURN(v.data, v.data.Clone());
    }
    values_[static_cast<size_t>(id)] = v.data;
    present_[static_cast<size_t>(id)] = true;
    is_static_[static_cast<size_t>(id)] = !mutable_value[static_cast<size_t>(id)];
  }
  for (int i = 0; i < graph_.num_nodes(); ++i) {
    const Node& node = graph_.node(i);
    TrainingModule* module = ModuleOf(i);
    if (module == nullptr && forward_.Find(node.domain, node.op_type) == nullptr) {
      return NodeError(node, Unimplemented("no float operator '{}'", node.op_type));
    }
    // Training-mode BatchNormalization and Dropout are not functions of their inputs alone, nor are modules: never
    // folded.
    bool all_static = node.op_type != FloatOpName(FloatOp::kBatchNormalization) &&
                      node.op_type != FloatOpName(FloatOp::kDropout) && module == nullptr,
         any_grad = false;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      all_static = all_static && is_static_[static_cast<size_t>(in)];
      any_grad = any_grad || requires_grad_[static_cast<size_t>(in)];
    }
    // A module with parameters of its own needs dL/d(output) even when its input needs no gradient.
    if (module != nullptr) any_grad = any_grad || !module->Parameters().empty();
    if (any_grad && module == nullptr && backward_.Find(node.op_type) == nullptr) {
      return NodeError(node, Unimplemented("no backward for '{}', which a parameter's gradient must pass", node.op_type));
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      requires_grad_[static_cast<size_t>(out)] = any_grad;
    }
    if (!all_static) continue;
    // Constant folding: evaluated once, here.
    std::vector<Tensor> inputs;
    std::unique_ptr<bool[]> present(new bool[node.inputs.size()]), known(new bool[node.inputs.size()]);
    for (size_t s = 0; s < node.inputs.size(); ++s) {
      const ValueId in = node.inputs[s];
      present[s] = in != kNoValue;
      known[s] = true;
      inputs.push_back(in == kNoValue ? Tensor() : values_[static_cast<size_t>(in)]);
    }
    OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> outs,
                           float_ops::RunNode(forward_, node, inputs, {present.get(), node.inputs.size()},
                                              {known.get(), node.inputs.size()}, *context_));
    for (size_t s = 0; s < node.outputs.size() && s < outs.size(); ++s) {
      const ValueId out = node.outputs[s];
      if (out == kNoValue) continue;
      values_[static_cast<size_t>(out)] = outs[s];
      present_[static_cast<size_t>(out)] = true;
      is_static_[static_cast<size_t>(out)] = true;
    }
  }
  gradients_.clear();
  for (const TrainableParameter& p : state_.parameters) {
    OCTET_ASSIGN_OR_RETURN(Tensor g, Tensor::Create(DType::kF32, graph_.value(p.value).data.shape()));
    gradients_.push_back(std::move(g));
  }
  return OkStatus();
}

int64_t TrainingGraph::NumParameterElements() const {
  int64_t total = 0;
  for (const TrainableParameter& p : state_.parameters) total += graph_.value(p.value).data.NumElements();
  return total;
}

Result<std::vector<Tensor>> TrainingGraph::Forward(std::span<const Tensor> inputs, Mode mode) {
  const std::vector<ValueId>& graph_inputs = graph_.inputs();
  if (inputs.size() != graph_inputs.size()) {
    return InvalidArgument("graph '{}' has {} inputs, {} given", graph_.name(), graph_inputs.size(), inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph_.value(graph_inputs[i]);
    if (inputs[i].dtype() != v.dtype) {
      return InvalidArgument("input '{}' must be {}, got {}", v.name, DTypeName(v.dtype), DTypeName(inputs[i].dtype()));
    }
    if (v.shape.has_value()) {
      bool fits = v.shape->rank() == inputs[i].shape().rank();
      for (int d = 0; fits && d < v.shape->rank(); ++d) {
        fits = v.shape->dim(d) == kUnknownDim || v.shape->dim(d) == inputs[i].shape().dim(d);
      }
      if (!fits) return InvalidArgument("input '{}' must have shape {}, got {}", v.name, *v.shape, inputs[i].shape());
    }
    values_[static_cast<size_t>(graph_inputs[i])] = inputs[i];
    present_[static_cast<size_t>(graph_inputs[i])] = true;
  }
  dropout_masks_.assign(static_cast<size_t>(graph_.num_nodes()), Tensor());
  dropout_ratios_.assign(static_cast<size_t>(graph_.num_nodes()), 0.0f);
  for (int i = 0; i < graph_.num_nodes(); ++i) {
    const Node& node = graph_.node(i);
    bool folded = true;
    for (ValueId out : node.outputs) folded = folded && (out == kNoValue || is_static_[static_cast<size_t>(out)]);
    if (folded) continue;
    std::vector<Tensor> in;
    std::unique_ptr<bool[]> present(new bool[node.inputs.size()]), known(new bool[node.inputs.size()]);
    for (size_t s = 0; s < node.inputs.size(); ++s) {
      const ValueId id = node.inputs[s];
      present[s] = id != kNoValue;
      known[s] = id != kNoValue && is_static_[static_cast<size_t>(id)];
      in.push_back(id == kNoValue ? Tensor() : values_[static_cast<size_t>(id)]);
    }
    std::vector<Tensor> outs;
    if (TrainingModule* module = ModuleOf(i); module != nullptr) {
      Result<Tensor> y = module->Forward(in[0], mode);
      if (!y.ok()) return NodeError(node, y.status());
      outs.push_back(*std::move(y));
    } else if (IsTrainingBatchNorm(node, mode, batch_norm_frozen_)) {
      if (node.inputs.size() != 5 || node.inputs[3] == kNoValue || node.inputs[4] == kNoValue) {
        return NodeError(node, InvalidArgument("BatchNormalization needs X, scale, B, mean and var"));
      }
      Result<float_ops::BatchNormTrainingArgs> args = float_ops::ReadBatchNormTrainingArgs(node);
      if (!args.ok()) return NodeError(node, args.status());
      // The running statistics are updated in the graph's own tensors.
      Tensor mean = graph_.value(node.inputs[3]).data, var = graph_.value(node.inputs[4]).data;
      Result<Tensor> y = float_ops::BatchNormTrainingForward(in[0], in[1], in[2], mean, var, *args);
      if (!y.ok()) return NodeError(node, y.status());
      outs.push_back(*std::move(y));
    } else if (IsTrainingDropout(node, mode)) {
      // Training mode follows the graph's Mode (PyTorch's train()), whatever the node's training_mode input says.
      Result<float> ratio = float_ops::DropoutRatio(node, in, {present.get(), node.inputs.size()});
      if (!ratio.ok()) return NodeError(node, ratio.status());
      Result<float_ops::DropoutTrainingResult> r =
          float_ops::DropoutTrainingForward(in[0], *ratio, DropoutSeed(dropout_seed_, training_forwards_, i));
      if (!r.ok()) return NodeError(node, r.status());
      dropout_masks_[static_cast<size_t>(i)] = r->mask;
      dropout_ratios_[static_cast<size_t>(i)] = *ratio;
      outs.push_back(std::move(r->output));
      outs.push_back(std::move(r->mask));  // the optional mask output
    } else {
      OCTET_ASSIGN_OR_RETURN(outs, float_ops::RunNode(forward_, node, in, {present.get(), node.inputs.size()},
                                                      {known.get(), node.inputs.size()}, *context_));
    }
    for (size_t s = 0; s < node.outputs.size() && s < outs.size(); ++s) {
      const ValueId out = node.outputs[s];
      if (out == kNoValue) continue;
      values_[static_cast<size_t>(out)] = std::move(outs[s]);
      present_[static_cast<size_t>(out)] = true;
    }
  }
  std::vector<Tensor> results;
  for (ValueId out : graph_.outputs()) {
    if (!present_[static_cast<size_t>(out)]) return InvalidArgument("output '{}' was not computed", graph_.value(out).name);
    results.push_back(values_[static_cast<size_t>(out)]);
  }
  last_mode_ = mode;
  last_batch_norm_training_ = mode == Mode::kTraining && !batch_norm_frozen_;
  has_tape_ = true;
  if (mode == Mode::kTraining) ++training_forwards_;
  return results;
}

// dX = dY * mask / (1 - ratio) with the mask node `index` drew in the last (training) Forward.
Result<std::vector<Tensor>> TrainingGraph::DropoutBackward(const float_ops::BackwardArgs& args, int index) const {
  std::vector<Tensor> grads = float_ops::EmptyGrads(args);
  if (!float_ops::NeedsGrad(args, 0)) return grads;
  OCTET_ASSIGN_OR_RETURN(Tensor dy, float_ops::OutputGrad(args, 0));
  OCTET_ASSIGN_OR_RETURN(grads[0], float_ops::DropoutTrainingBackward(dy, dropout_masks_[static_cast<size_t>(index)],
                                                                      dropout_ratios_[static_cast<size_t>(index)]));
  return grads;
}

Status TrainingGraph::Backward(std::span<const Tensor> output_grads) {
  if (!has_tape_) return FailedPrecondition("Backward needs a Forward first");
  const std::vector<ValueId>& outs = graph_.outputs();
  if (output_grads.size() != outs.size()) {
    return InvalidArgument("{} output gradients given for {} graph outputs", output_grads.size(), outs.size());
  }
  for (TrainingModule* module : modules_) {
    if (module != nullptr) module->ZeroGrad();
  }
  std::vector<Tensor> grads(static_cast<size_t>(graph_.num_values()));
  std::vector<bool> has_grad(grads.size(), false);
  // Adds g into grads[id] (values read by several nodes receive the sum).
  auto accumulate = [&](ValueId id, Tensor g) -> Status {
    const size_t u = static_cast<size_t>(id);
    if (!has_grad[u]) {
      grads[u] = std::move(g);
      has_grad[u] = true;
      return OkStatus();
    }
    Tensor& slot = grads[u];
    if (slot.shape() != g.shape()) {
      return Internal("gradient of '{}' has shape {}, expected {}", graph_.value(id).name, g.shape(), slot.shape());
    }
    float* dst = slot.data<float>();
    const float* src = g.data<float>();
    for (int64_t i = 0; i < slot.NumElements(); ++i) dst[i] += src[i];
    return OkStatus();
  };
  for (size_t k = 0; k < outs.size(); ++k) {
    if (output_grads[k].NumElements() == 0) continue;
    const Tensor& y = values_[static_cast<size_t>(outs[k])];
    if (output_grads[k].shape() != y.shape() || output_grads[k].dtype() != DType::kF32) {
      return InvalidArgument("gradient of output '{}' must be f32 {}, got {}", graph_.value(outs[k]).name, y.shape(),
                             output_grads[k].shape());
    }
    OCTET_ASSIGN_OR_RETURN(Tensor copy, output_grads[k].Clone());
    OCTET_RETURN_IF_ERROR(accumulate(outs[k], std::move(copy)));
  }
  for (int i = graph_.num_nodes() - 1; i >= 0; --i) {
    const Node& node = graph_.node(i);
    bool any_out_grad = false;
    for (ValueId out : node.outputs) {
      any_out_grad = any_out_grad || (out != kNoValue && has_grad[static_cast<size_t>(out)]);
    }
    std::unique_ptr<bool[]> needs(new bool[node.inputs.size()]);
    bool any_needed = false;
    for (size_t s = 0; s < node.inputs.size(); ++s) {
      const ValueId in = node.inputs[s];
      needs[s] = in != kNoValue && requires_grad_[static_cast<size_t>(in)];
      any_needed = any_needed || needs[s];
    }
    if (TrainingModule* module = ModuleOf(i); module != nullptr) {
      if (!any_out_grad) continue;
      Result<Tensor> dx = module->Backward(grads[static_cast<size_t>(node.outputs[0])]);
      if (!dx.ok()) return NodeError(node, dx.status());
      if (needs[0]) OCTET_RETURN_IF_ERROR(accumulate(node.inputs[0], *std::move(dx)));
      grads[static_cast<size_t>(node.outputs[0])] = Tensor();
      has_grad[static_cast<size_t>(node.outputs[0])] = false;
      continue;
    }
    if (!any_out_grad || !any_needed) continue;
    std::vector<Tensor> in, out, out_grads;
    for (ValueId id : node.inputs) {
      in.push_back(id == kNoValue ? Tensor() : values_[static_cast<size_t>(id)]);
    }
    for (ValueId id : node.outputs) {
      out.push_back(id == kNoValue ? Tensor() : values_[static_cast<size_t>(id)]);
      out_grads.push_back(id == kNoValue ? Tensor() : grads[static_cast<size_t>(id)]);
    }
    const float_ops::BackwardFn* fn = backward_.Find(node.op_type);
    float_ops::BackwardArgs args{node, in, out, out_grads, {needs.get(), node.inputs.size()},
                                 last_batch_norm_training_, *context_};
    Result<std::vector<Tensor>> input_grads =
        IsTrainingDropout(node, last_mode_) ? DropoutBackward(args, i) : (*fn)(args);
    if (!input_grads.ok()) return NodeError(node, input_grads.status());
    for (size_t s = 0; s < node.inputs.size() && s < input_grads->size(); ++s) {
      if (!needs[s]) continue;
      if ((*input_grads)[s].shape() != in[s].shape()) {
        if ((*input_grads)[s].NumElements() == 0) continue;  // not computed
        return NodeError(node, Internal("gradient of input {} has shape {}, expected {}", s,
                                        (*input_grads)[s].shape(), in[s].shape()));
      }
      OCTET_RETURN_IF_ERROR(accumulate(node.inputs[s], std::move((*input_grads)[s])));
    }
    // Activation gradients are no longer needed once their producer has run.
    for (ValueId id : node.outputs) {
      if (id != kNoValue) grads[static_cast<size_t>(id)] = Tensor(), has_grad[static_cast<size_t>(id)] = false;
    }
  }
  for (size_t p = 0; p < state_.parameters.size(); ++p) {
    const size_t u = static_cast<size_t>(state_.parameters[p].value);
    const Tensor& g = grads[u];
    if (!has_grad[u]) {
      std::fill(gradients_[p].data<float>(), gradients_[p].data<float>() + gradients_[p].NumElements(), 0.0f);
    } else {
      gradients_[p] = g;
    }
  }
  return OkStatus();
}

}  // namespace octet::training

namespace octet::training {

std::vector<Tensor> TrainingGraph::AllParameters() const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < state_.parameters.size(); ++i) out.push_back(parameter(i));
  for (TrainingModule* module : modules_) {
    if (module == nullptr) continue;
    for (TrainingModule::Parameter& p : module->Parameters()) out.push_back(p.value);
  }
  return out;
}

std::vector<Tensor> TrainingGraph::AllGradients() const {
  std::vector<Tensor> out = gradients_;
  for (TrainingModule* module : modules_) {
    if (module == nullptr) continue;
    for (TrainingModule::Parameter& p : module->Parameters()) out.push_back(p.grad);
  }
  return out;
}

}  // namespace octet::training

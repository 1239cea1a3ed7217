// TrainingGraph: a float Graph run forward with a tape and differentiated backward, for training.
//
// Forward runs every node with the float operators' own kernels (ops/float, through RunNode), except
// BatchNormalization in training mode, which uses batch statistics and updates its running mean and variance in
// place (ops/float/grad/batch_norm_backward.h), and Dropout in training mode, which drops elements with a seeded
// mask (ops/float/grad/dropout_training.h) that its backward reuses; in eval mode Dropout is the identity. The tape is simply every value's tensor of the last Forward.
// Backward walks the nodes in reverse from dL/d(outputs), calls each node's backward (ops/float/grad) for the
// inputs that lead back to a parameter, sums gradients of values read by several nodes, and leaves dL/dp in
// gradient(i) for every trainable parameter (quant/training/trainable_parameters.h).
//
// Parameters live in the graph's constants: the optimizer updates them in place and graph() always holds the
// current weights. Values computed from constants alone (shape arithmetic, Constant nodes) are evaluated once.
//
// Modules (QAT's fake-quant, quant/qat/prepare_qat.h): a node named in TrainingGraphOptions::modules runs a
// stateful TrainingModule instead of a float operator (one input, one output, whatever its op type). Its Backward
// is called whenever dL/d(its output) exists, also when its input needs no gradient, because a module may have
// parameters of its own (learned scale and zero point); those join AllParameters() after the graph's.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/op_registry.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ops/float/grad/backward.h"
#include "quant/training/trainable_parameters.h"

namespace octet::training {

enum class Mode { kTraining, kEval };

// A stateful one-input, one-output operator run by a TrainingGraph node (not owned by the graph).
class TrainingModule {
 public:
  virtual ~TrainingModule() = default;
  virtual Result<Tensor> Forward(const Tensor& x, Mode mode) = 0;
  // dL/dx for dL/dy of the last Forward; adds the gradients of the module's own parameters.
  virtual Result<Tensor> Backward(const Tensor& dy) = 0;
  // The module's parameters and their gradients (tensors shared with the module: updates are seen by it).
  struct Parameter {
    std::string name;
    Tensor value, grad;
  };
  virtual std::vector<Parameter> Parameters() { return {}; }
  virtual void ZeroGrad() {}
};

struct TrainingGraphOptions {
  // Node name -> the module it runs (must outlive the TrainingGraph).
  std::map<std::string, TrainingModule*> modules;
  // Constants to train besides those FindTrainableParameters finds (by value name; e.g. a weight that reaches its
  // Conv through a fake-quant node). Role kWeight unless `extra_biases` lists them.
  std::vector<std::string> extra_parameters;
  std::vector<std::string> extra_biases;
};

class TrainingGraph {
 public:
  // Takes the graph (sorted and verified here); its trainable constants and buffers get buffers of their own, so
  // other copies of the original graph are not modified by training. Fails naming the node when an operator has
  // no forward, or has no backward although a parameter's gradient flows through it.
  static Result<TrainingGraph> Create(Graph graph, const Context& context, TrainingGraphOptions options = {});

  // Runs the graph on one tensor per graph input and returns the graph outputs; records the tape.
  Result<std::vector<Tensor>> Forward(std::span<const Tensor> inputs, Mode mode);
  // Gradients of the parameters from dL/d(output) for each graph output of the last Forward (an empty Tensor for an
  // output that does not enter the loss). Replaces the previous gradients.
  Status Backward(std::span<const Tensor> output_grads);

  // The seed of Dropout's masks in training mode; restarts the count of training Forward calls. Training Forward k
  // after it draws node i's mask from (seed, k, i), so a run is reproducible from the seed, and setting the same
  // seed before a Forward repeats its masks (finite-difference checks).
  void set_dropout_seed(uint64_t seed) {
    dropout_seed_ = seed;
    training_forwards_ = 0;
  }
  const Graph& graph() const { return graph_; }
  const std::vector<TrainableParameter>& parameters() const { return state_.parameters; }
  const std::vector<ValueId>& buffers() const { return state_.buffers; }
  // The current data of parameter i (shared with the graph: writes update the model).
  Tensor parameter(size_t i) const { return graph_.value(state_.parameters[i].value).data; }
  const std::string& parameter_name(size_t i) const { return graph_.value(state_.parameters[i].value).name; }
  // dL/dp of parameter i after Backward (zeros before the first Backward).
  const Tensor& gradient(size_t i) const { return gradients_[i]; }
  int64_t NumParameterElements() const;

  // What the optimizer updates: the graph's parameters, then every module's (stable order and shapes). The
  // gradients are those of the last Backward.
  std::vector<Tensor> AllParameters() const;
  std::vector<Tensor> AllGradients() const;

  // Frozen BatchNormalization statistics (PyTorch's freeze_bn_stats: bn.eval() inside a training model): training
  // forwards normalize with the running statistics and leave them unchanged.
  void set_batch_norm_frozen(bool frozen) { batch_norm_frozen_ = frozen; }
  bool batch_norm_frozen() const { return batch_norm_frozen_; }

 private:
  TrainingGraph(Graph graph, const Context& context, TrainingGraphOptions options);
  Status Prepare();
  TrainingModule* ModuleOf(int node) const { return modules_[static_cast<size_t>(node)]; }
  Result<std::vector<Tensor>> DropoutBackward(const float_ops::BackwardArgs& args, int index) const;

  Graph graph_;
  const Context* context_;
  OpRegistry forward_;
  float_ops::BackwardRegistry backward_;
  TrainableState state_;
  std::vector<bool> is_static_;       // per value: known without the inputs (non-trainable constants and folds)
  std::vector<bool> requires_grad_;   // per value: a parameter or computed from one
  std::vector<Tensor> values_;        // per value: the tensor of the last Forward (static ones kept)
  std::vector<bool> present_;         // per value: values_[id] holds data
  Mode last_mode_ = Mode::kEval;
  bool has_tape_ = false;
  std::vector<Tensor> gradients_;     // per parameter
  TrainingGraphOptions options_;
  std::vector<TrainingModule*> modules_;  // per node, or nullptr
  bool batch_norm_frozen_ = false;
  bool last_batch_norm_training_ = false;  // BatchNormalization of the last Forward used batch statistics
  uint64_t dropout_seed_ = 0;
  uint64_t training_forwards_ = 0;    // training-mode Forward calls so far (Dropout's mask stream)
  std::vector<Tensor> dropout_masks_;  // per node: the mask of a training-mode Dropout in the last Forward
  std::vector<float> dropout_ratios_;  // per node: its ratio
};

}  // namespace octet::training

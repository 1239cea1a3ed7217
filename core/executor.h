// Executor: compiles a Graph once (shape inference, constant folding, one activation arena, kernels chosen and
// weights packed by each operator's Prepare) and runs it any number of times, from any number of threads at once.
// Graphs whose shapes depend on input data are compiled again per run's data (see Compile).
//
// Per-node hooks, called before and after every node that runs, are the one mechanism that calibration, loggers and
// the numeric suite use to see (and, after a node, to modify) activations. Hooks belong to a Run call, so
// concurrent callers can observe independently.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/op_registry.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/tensor_view.h"

namespace octet {

struct CompileOptions {
  // Shapes for graph inputs, by name: required for inputs with unknown dims, optional otherwise (then they must
  // agree with the declared dims).
  std::vector<std::pair<std::string, Shape>> input_shapes;
  // Evaluate nodes whose inputs are all constants once, at Compile (their hooks then never run).
  bool fold_constants = true;
  // Refuse to compile when the activation arena (plus scratch) would exceed this many bytes; 0 = no limit.
  int64_t max_arena_bytes = 0;
  // Refuse to compile when any input or inferred tensor would have more elements; 0 = no limit (beyond Shape's).
  // Bounds the work Prepare functions do on untrusted models (the fuzzer sets it).
  int64_t max_tensor_elements = 0;
};

// What a hook sees of one node call. Views are valid only during the hook; copy with ToTensor() to keep them.
struct NodeCall {
  int node_index;  // the node's index in the graph
  const Node& node;
  std::span<const ConstTensorView> inputs;  // one per input slot; omitted optional inputs have null data
  std::span<const TensorView> outputs;      // before the node: unspecified contents; after: the results
};

// A hook returning an error stops Run with that error.
using NodeHook = std::function<Status(const NodeCall& call)>;

struct RunOptions {
  std::vector<NodeHook> before_node;  // called in order before each node runs
  std::vector<NodeHook> after_node;   // called in order after each node; may modify call.outputs in place
};

class Executor {
 public:
  // Verifies the graph (core/verifier.h), then for each node in order: finds its operator in `registry` (an error
  // lists every node whose op is missing), prepares it (errors read "failed to compile node '<name>' (<op>): ..."),
  // folds it when all its inputs are constant, and finally plans one arena for every activation that is neither a
  // graph input nor a graph output. The graph is copied (constant data is shared, not duplicated). `context` must
  // outlive the executor; the chosen kernels are recorded in it under each node's op type.
  //
  // When an output shape depends on a graph input's data (a Reshape whose shape is an input, a Slice whose starts
  // are computed from one), Compile stops at that node ("compiled per run") and each Run compiles the graph again
  // with the run's data: Prepare computes the values it needs from the inputs (those nodes still run, with hooks),
  // and the result is cached, keyed by the input data that was read (the 8 most recent). Shapes, kernel names and
  // the arena of such an executor describe only the nodes before that point. The registry is copied for this.
  static Result<Executor> Compile(const Graph& graph, const Context& context, const OpRegistry& registry,
                                  const CompileOptions& options = {});

  Executor(Executor&&) noexcept;
  Executor& operator=(Executor&&) noexcept;
  ~Executor();

  // Runs the graph on `inputs` (one per graph input, in order, each of the compiled dtype and shape) and returns
  // one new tensor per graph output. Thread-safe: each call has its own activations and scratch.
  Result<std::vector<Tensor>> Run(std::span<const Tensor> inputs, const RunOptions& options = {}) const;
  // The same, with inputs given by name (every graph input exactly once).
  Result<std::vector<Tensor>> RunNamed(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                       const RunOptions& options = {}) const;

  const Graph& graph() const;
  // Inferred dtype and shape of every value (valid for values some node or the graph uses).
  DType value_dtype(ValueId id) const;
  const Shape& value_shape(ValueId id) const;
  // The kernel name Prepare chose for a node, or "folded" when the node was evaluated at Compile.
  const std::string& kernel_name(int node_index) const;
  bool is_folded(int node_index) const;
  // Bytes of one Run's activation arena including scratch.
  int64_t arena_bytes() const;

 private:
  struct Impl;
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace octet

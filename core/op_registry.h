// The operator interface between the executor (core/) and operator implementations (ops/): an operator is a
// Prepare function that validates a node, infers its output dtypes and shapes, and returns a kernel chosen once;
// an OpRegistry maps (domain, op type) to Prepare functions. Registries are plain objects built by functions such
// as ops/float/registry.h's FloatOpRegistry(), never by static self-registration.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/tensor_view.h"

namespace octet {

// What shape inference knows about one input slot of a node.
struct ValueInfo {
  bool present = false;              // false for an omitted optional input
  DType dtype = DType::kF32;
  Shape shape;
  const Tensor* constant = nullptr;  // the data, when it is known at compile time (weights, folded values)
  const QParams* qparams = nullptr;  // the value's qparams (Value::qparams), when it has them
  std::string_view name;             // the value's name, for error messages (valid during Prepare)
  // Set by the executor for a present input that is not constant: computes the value's data for the run being
  // compiled (a shape or a count computed from a graph input). Prepare functions call InputData, not this.
  std::function<Result<const Tensor*>()> run_time_data;
};

// The data of an input that fixes an output's shape (Reshape's shape, Slice's starts, TopK's k): the constant, or,
// for a value computed from graph inputs, its data in the run being compiled. When the graph is compiled before any
// run, such data is unknown: this fails and the executor compiles the graph again for each run's input data.
Result<const Tensor*> InputData(const ValueInfo& info);

struct OutputInfo {
  DType dtype = DType::kF32;
  Shape shape;
};

struct OpRunArgs {
  // One per node input slot; an omitted optional input is a view with null data and an empty shape.
  std::span<const ConstTensorView> inputs;
  // One per node output slot (omitted optional outputs still get a buffer).
  std::span<const TensorView> outputs;
  // PreparedOp::scratch_bytes bytes, 64-byte aligned, contents unspecified, private to this call.
  std::span<std::byte> scratch;
  const Context& context;
};

// A kernel bound to one node: shapes, attributes and packed weights fixed at Prepare. Run is called concurrently by
// every caller of the compiled graph, so it must not modify the kernel; all per-call state lives in the scratch.
// Run only computes: it fails only on data-dependent errors (an index out of range).
class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual Status Run(const OpRunArgs& args) const = 0;
};

template <typename Fn>
class LambdaKernel final : public OpKernel {
 public:
  explicit LambdaKernel(Fn fn) : fn_(std::move(fn)) {}
  Status Run(const OpRunArgs& args) const override { return fn_(args); }

 private:
  Fn fn_;
};

// A kernel from a callable `Status(const OpRunArgs&)` (usually a lambda capturing the prepared parameters).
template <typename Fn>
std::unique_ptr<OpKernel> MakeKernel(Fn fn) {
  return std::make_unique<LambdaKernel<Fn>>(std::move(fn));
}

struct PreparedOp {
  std::vector<OutputInfo> outputs;  // one per node output slot
  std::unique_ptr<OpKernel> kernel;
  size_t scratch_bytes = 0;
  std::string kernel_name;  // what runs, e.g. "conv2d_f32_im2col_eigen"; recorded in the Context
  // Set by operators whose outputs are known at Prepare whatever the input data (Shape): one tensor per output
  // slot. The executor then treats the outputs as constants and never runs the node.
  std::vector<Tensor> constant_outputs;
};

class OpRegistry;

struct OpPrepareArgs {
  const Node& node;
  std::span<const ValueInfo> inputs;  // one per node input slot
  const Context& context;
  // The most elements any output may have (CompileOptions::max_tensor_elements, or Shape::kMaxElements). Prepare
  // functions that allocate in proportion to an output check it first.
  int64_t max_output_elements = Shape::kMaxElements;
  // One per node output slot: the output value's qparams (Value::qparams), or nullptr when it has none or the slot
  // is omitted. Quantized operators take their output scale and zero point from here.
  std::span<const QParams* const> output_qparams;
  // One per node output slot: the output value's name ("" for an omitted slot), for error messages.
  std::span<const std::string_view> output_names = {};
  // The registry compiling the graph, for operators that compile subgraphs (If, Loop); may be null.
  const OpRegistry* registry = nullptr;
};

// Validates node and inputs (arity, dtypes, ranks, attributes, axes), infers the outputs and builds the kernel.
// Errors need not name the node: the executor prefixes "failed to compile node '<name>' (<op>)".
using OpPrepareFn = std::function<Result<PreparedOp>(const OpPrepareArgs& args)>;

class OpRegistry {
 public:
  // Fails if (domain, op_type) is already registered.
  Status Register(std::string_view domain, std::string_view op_type, OpPrepareFn prepare);
  // The Prepare function, or nullptr. Domain "ai.onnx" is the same as "".
  const OpPrepareFn* Find(std::string_view domain, std::string_view op_type) const;
  // "Conv", "Relu", ..., "<domain>.<op>" for other domains; sorted.
  std::vector<std::string> OpTypes() const;

 private:
  std::map<std::pair<std::string, std::string>, OpPrepareFn> ops_;
};

}  // namespace octet

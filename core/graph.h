// The graph IR: Values (named tensors: graph inputs, constants, node outputs), Nodes (named operator applications
// with typed attributes) and the Graph holding both, nodes in topological order once sorted and verified.
//
// Names are the keys the rest of octet uses (observers, qconfig mappings, reports, test vectors): a node's name is
// hierarchical ("layer1.0.conv1", the ONNX node name, or the builder's), a constant's name is its parameter name
// ("layer1.0.conv1.weight"). Operator kinds are ONNX op types ("Conv", "Gemm") in a domain ("" = ONNX's default).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/dtype.h"
#include "core/graph_attribute.h"
#include "core/qparams.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

// A dimension not known until the executor binds the inputs (an ONNX dim_param such as "batch").
inline constexpr int64_t kUnknownDim = -1;

// Index of a Value in its Graph.
using ValueId = int32_t;
// An omitted optional input or output of a node (ONNX's empty name).
inline constexpr ValueId kNoValue = -1;

enum class ValueKind {
  kInput,     // fed by the caller of Run
  kConstant,  // data known when the graph is built (weights, initializers)
  kNode,      // produced by a node
};

const char* ValueKindName(ValueKind kind);

struct Value {
  std::string name;
  ValueKind kind = ValueKind::kNode;
  DType dtype = DType::kF32;
  // Inputs: the declared shape (dims may be kUnknownDim). Constants: data's shape. Node outputs: unset until shape
  // inference (the executor keeps inferred shapes itself and never writes them back).
  std::optional<Shape> shape;
  // Inputs only: per dim of `shape`, the name of an unknown dim (an ONNX dim_param such as "batch"; "" when unnamed
  // or known). Empty when no name is known. Tools print symbolic shapes with it; the executor ignores it.
  std::vector<std::string> dim_names;
  // kConstant only.
  Tensor data;
  // Integer values of a quantized graph (u8, s8, s32): what the integers mean. The dtype must match `dtype`; for a
  // constant the qparams must fit its shape (per-channel axis and count). Float values have none. Operators read
  // their inputs' and outputs' qparams at Prepare (ValueInfo::qparams, OpPrepareArgs::output_qparams).
  std::optional<QParams> qparams;
};

class Graph;

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for ONNX's default domain
  AttributeMap attributes;
  std::vector<ValueId> inputs;   // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;  // kNoValue for an omitted optional output
  // Control flow (If's then_branch/else_branch, Loop's body), by attribute name: closed graphs whose trailing inputs
  // are the outer values they read, which are also this node's trailing inputs (ops/float/control_flow.h).
  std::map<std::string, std::shared_ptr<const Graph>> subgraphs = {};
};

// A graph is a plain container: Add* functions check only what keeps it addressable (unique value names, ids in
// range); everything else (one producer per value, inputs defined before use, unique node names, acyclicity) is
// VerifyGraph's job (core/verifier.h), so importers can add nodes in file order and sort afterwards.
class Graph {
 public:
  explicit Graph(std::string name = "graph") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // A graph input, fed at Run. dims may be kUnknownDim.
  Result<ValueId> AddInput(const std::string& name, DType dtype, Shape shape);
  // A constant with its data.
  Result<ValueId> AddConstant(const std::string& name, Tensor data);
  // A value a node will produce; its dtype is fixed by shape inference, `dtype` is only a hint.
  Result<ValueId> AddNodeValue(const std::string& name, DType dtype = DType::kF32);
  // Appends a node; every id in inputs/outputs must be in range or kNoValue. Returns the node's index.
  Result<int> AddNode(Node node);
  // Appends `id` to the graph outputs (a value may be listed once).
  Status AddOutput(ValueId id);

  int num_values() const { return static_cast<int>(values_.size()); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Value& value(ValueId id) const { return values_.at(static_cast<size_t>(id)); }
  const Node& node(int index) const { return nodes_.at(static_cast<size_t>(index)); }
  // Mutable access for passes. Rename values only through RenameValue (the name index must follow).
  Value& mutable_value(ValueId id) { return values_.at(static_cast<size_t>(id)); }
  Node& mutable_node(int index) { return nodes_.at(static_cast<size_t>(index)); }
  std::vector<Node>& mutable_nodes() { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  std::vector<ValueId>& mutable_outputs() { return outputs_; }

  // The id of the value called `name`, or kNoValue.
  ValueId FindValue(const std::string& name) const;
  // The index of the node called `name`, or -1 (linear scan).
  int FindNode(const std::string& name) const;
  Status RenameValue(ValueId id, const std::string& new_name);

  // For each value, the index of the node producing it, or -1 (inputs, constants, values nobody produces). If two
  // nodes produce a value, the later one wins (VerifyGraph rejects such graphs).
  std::vector<int> Producers() const;

  // Reorders the nodes so every node follows the producers of its inputs, keeping the existing order where it
  // already is topological (a stable Kahn sort). Fails, naming the nodes involved, when the nodes form a cycle.
  Status SortTopologically();

  // A copy without the constants that no node reads and that are no graph output (passes that replace a weight by
  // its quantized form leave the float one behind). Names, order and everything else stay; value ids change.
  Graph WithoutUnusedConstants() const;

  // Elements in all constants used by some node (a "parameter count").
  int64_t NumParameters() const;

  // A text dump: inputs, constants (shape only), nodes with attributes, outputs. Deterministic.
  std::string ToString() const;

 private:
  Result<ValueId> AddValue(Value value);

  std::string name_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::unordered_map<std::string, ValueId> value_index_;
};

// "'name'" of a value id in error messages, "(none)" for kNoValue.
std::string QuotedValueName(const Graph& graph, ValueId id);

}  // namespace octet

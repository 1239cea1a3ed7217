// Executor: compile (verify, bind input shapes, prepare each node, fold constants, plan the arena) and run.
#include "core/executor.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include <fmt/ranges.h>

#include "core/memory_plan.h"
#include "core/verifier.h"

namespace octet {
namespace {

// Where the data of a node's input or output slot lives during a Run.
enum class Storage : uint8_t { kAbsent, kInput, kConstant, kArena, kOutput };

struct SlotRef {
  Storage storage = Storage::kAbsent;
  DType dtype = DType::kF32;
  const Shape* shape = nullptr;
  int64_t index = 0;                 // kInput / kOutput: position; kArena: byte offset
  const Tensor* constant = nullptr;  // kConstant
};

struct Step {
  int node_index = 0;
  const OpKernel* kernel = nullptr;
  size_t in_begin = 0, in_count = 0, out_begin = 0, out_count = 0;
};

const Shape& EmptyShape() {
  static const Shape kEmpty{0};
  return kEmpty;
}

constexpr int64_t kAlign = 64;
int64_t AlignUp(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

}  // namespace

struct Executor::Impl {
  Graph graph;
  const Context* context = nullptr;
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  std::vector<Tensor> folded;        // per value: data computed at Compile (empty unless folded)
  std::vector<Storage> storage;      // per value
  std::vector<int64_t> location;     // per value: input/output position or arena offset
  std::vector<std::unique_ptr<OpKernel>> kernels;  // per node; null when folded
  std::vector<std::string> kernel_names;           // per node
  std::vector<Shape> absent_output_shapes;         // shapes of omitted optional outputs (stable storage)
  std::vector<Step> steps;
  std::vector<SlotRef> in_slots, out_slots;
  std::vector<int> output_runtime_index;  // per graph output: position among runtime outputs, or -1
  int64_t scratch_offset = 0;
  int64_t arena_total = 0;

  mutable std::mutex pool_mutex;
  mutable std::vector<Tensor> arena_pool;

  // Graphs where an output shape depends on a graph input's data (a Reshape whose shape is an input) are compiled
  // again for each run's data ("specialised"); the specialisations are cached, keyed by the data they read.
  struct Specialisation {
    std::vector<Tensor> data;  // per graph input: the data the compile read, or empty when it read none
    std::shared_ptr<const Executor> executor;
  };
  static constexpr size_t kMaxSpecialisations = 8;
  bool deferred = false;                  // Compile stopped at such a node: Run compiles specialisations
  std::unique_ptr<OpRegistry> registry;   // deferred: a copy, for the specialised compiles
  CompileOptions options;                 // deferred: likewise
  mutable std::mutex specialisation_mutex;
  mutable std::vector<Specialisation> specialisations;  // most recent last
  // While compiling: the run's inputs (specialising) and what Prepare read of them.
  bool specialising = false;
  std::span<const Tensor> run_inputs;
  std::vector<bool> inputs_read;            // per graph input
  bool needs_run_time_data = false;         // the current Prepare asked for data only a run has
  std::vector<int> producer;                // per value: the node computing it, or -1
  std::vector<Tensor> run_time_values;      // per value: data computed for Prepare while specialising
  std::vector<bool> has_run_time_value;     // per value

  static Result<std::unique_ptr<Impl>> Build(const Graph& graph, const Context& context, const OpRegistry& registry,
                                             const CompileOptions& options, std::span<const Tensor> run_inputs,
                                             bool specialising);
  Result<const Tensor*> RunTimeValue(ValueId id, const std::vector<PreparedOp>& prepared);
  Result<std::shared_ptr<const Executor>> Specialise(std::span<const Tensor> inputs) const;
  Status PrepareNodes(const OpRegistry& registry, const CompileOptions& options, std::vector<PreparedOp>& prepared,
                      std::vector<bool>& runtime, size_t& max_scratch);
  void AssignStorage();
  Status PlanSteps(const std::vector<PreparedOp>& prepared, const std::vector<bool>& runtime, size_t max_scratch,
                   const CompileOptions& options);

  const Tensor* ConstantData(ValueId id) const {
    if (!folded[static_cast<size_t>(id)].raw_data() && graph.value(id).kind != ValueKind::kConstant) return nullptr;
    return folded[static_cast<size_t>(id)].raw_data() ? &folded[static_cast<size_t>(id)] : &graph.value(id).data;
  }

  Result<Tensor> AcquireArena() const {
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      if (!arena_pool.empty()) {
        Tensor t = std::move(arena_pool.back());
        arena_pool.pop_back();
        return t;
      }
    }
    return Tensor::Create(DType::kU8, Shape{arena_total});
  }
  void ReleaseArena(Tensor arena) const {
    std::lock_guard<std::mutex> lock(pool_mutex);
    arena_pool.push_back(std::move(arena));
  }
};

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::Executor(Executor&&) noexcept = default;
Executor& Executor::operator=(Executor&&) noexcept = default;
Executor::~Executor() = default;

const Graph& Executor::graph() const { return impl_->graph; }
DType Executor::value_dtype(ValueId id) const { return impl_->dtypes.at(static_cast<size_t>(id)); }
const Shape& Executor::value_shape(ValueId id) const { return impl_->shapes.at(static_cast<size_t>(id)); }
const std::string& Executor::kernel_name(int node_index) const {
  return impl_->kernel_names.at(static_cast<size_t>(node_index));
}
bool Executor::is_folded(int node_index) const {
  return impl_->kernel_names.at(static_cast<size_t>(node_index)) == "folded";
}
int64_t Executor::arena_bytes() const { return impl_->arena_total; }

namespace {

Status BindInputShapes(const Graph& graph, const CompileOptions& options, std::vector<Shape>& shapes) {
  const std::string where = fmt::format("failed to compile graph '{}'", graph.name());
  for (const auto& [name, shape] : options.input_shapes) {
    const ValueId id = graph.FindValue(name);
    if (id == kNoValue || graph.value(id).kind != ValueKind::kInput) {
      return InvalidArgument("{}: a shape is given for '{}', which is not a graph input", where, name);
    }
  }
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    Shape shape = *v.shape;
    for (const auto& [name, given] : options.input_shapes) {
      if (name != v.name) continue;
      bool agrees = given.rank() == shape.rank();
      for (int d = 0; agrees && d < shape.rank(); ++d) {
        agrees = shape.dim(d) == kUnknownDim || shape.dim(d) == given.dim(d);
      }
      if (!agrees) {
        return InvalidArgument("{}: input '{}' is declared {}, which shape {} does not match", where, v.name,
                               shape, given);
      }
      shape = given;
    }
    for (int d = 0; d < shape.rank(); ++d) {
      if (shape.dim(d) < 0) {
        return InvalidArgument("{}: input '{}' has shape {} with unknown dimension {}: give its shape in "
                               "CompileOptions::input_shapes",
                               where, v.name, shape, d);
      }
    }
    auto checked = Shape::Create(shape.dims());
    if (!checked.ok()) return checked.status().WithContext(fmt::format("{}: input '{}'", where, v.name));
    if (options.max_tensor_elements > 0 && checked->NumElements() > options.max_tensor_elements) {
      return OutOfRange("{}: input '{}' of shape {} has more than {} elements", where, v.name, *checked,
                        options.max_tensor_elements);
    }
    shapes[static_cast<size_t>(id)] = std::move(*checked);
  }
  return OkStatus();
}

Status CheckOperatorsExist(const Graph& graph, const OpRegistry& registry) {
  std::vector<std::string> missing;
  for (const Node& node : graph.nodes()) {
    if (registry.Find(node.domain, node.op_type) == nullptr) {
      missing.push_back(fmt::format("'{}' ({}{}{})", node.name, node.domain, node.domain.empty() ? "" : ".",
                                    node.op_type));
    }
  }
  if (missing.empty()) return OkStatus();
  return Unimplemented("failed to compile graph '{}': {} node(s) use operators octet does not support: {}",
                       graph.name(), missing.size(), fmt::join(missing, ", "));
}

}  // namespace

namespace {

// Runs a prepared kernel once, at Compile, on constant inputs; returns its outputs.
Result<std::vector<Tensor>> Fold(const Node& node, const PreparedOp& op, const std::vector<ValueInfo>& infos,
                                 const Context& context) {
  std::vector<ConstTensorView> in_views(node.inputs.size(), ConstTensorView(DType::kF32, &EmptyShape(), nullptr));
  for (size_t s = 0; s < node.inputs.size(); ++s) {
    if (infos[s].present) in_views[s] = ConstTensorView(*infos[s].constant);
  }
  std::vector<Tensor> results(node.outputs.size());
  std::vector<TensorView> out_views;
  for (size_t s = 0; s < node.outputs.size(); ++s) {
    OCTET_ASSIGN_OR_RETURN(results[s], Tensor::Create(op.outputs[s].dtype, op.outputs[s].shape));
    out_views.emplace_back(results[s]);
  }
  OCTET_ASSIGN_OR_RETURN(Tensor scratch, Tensor::Create(DType::kU8, Shape{static_cast<int64_t>(op.scratch_bytes)}));
  const std::span<std::byte> scratch_bytes(static_cast<std::byte*>(scratch.raw_data()), op.scratch_bytes);
  Status st = op.kernel->Run(OpRunArgs{in_views, out_views, scratch_bytes, context});
  if (!st.ok()) return st.WithContext(fmt::format("failed to fold constant node '{}' ({})", node.name, node.op_type));
  return results;
}

}  // namespace

// Prepares every node in order (shape inference and kernel choice) and folds those whose inputs are all constant.
// Fills dtypes, shapes, folded and kernel_names; `prepared[n]` keeps the kernels of the nodes that run.
Status Executor::Impl::PrepareNodes(const OpRegistry& registry, const CompileOptions& options,
                                    std::vector<PreparedOp>& prepared, std::vector<bool>& runtime,
                                    size_t& max_scratch) {
  const Graph& g = graph;
  for (int n = 0; n < g.num_nodes(); ++n) {
    const Node& node = g.node(n);
    const std::string where = fmt::format("failed to compile node '{}' ({})", node.name, node.op_type);
    std::vector<ValueInfo> infos(node.inputs.size());
    bool all_constant = true;
    for (size_t s = 0; s < node.inputs.size(); ++s) {
      const ValueId in = node.inputs[s];
      if (in == kNoValue) continue;
      ValueInfo& info = infos[s];
      info.present = true;
      info.dtype = dtypes[static_cast<size_t>(in)];
      info.shape = shapes[static_cast<size_t>(in)];
      info.constant = ConstantData(in);
      if (g.value(in).qparams) info.qparams = &*g.value(in).qparams;
      info.name = g.value(in).name;
      if (info.constant == nullptr) {
        all_constant = false;
        info.run_time_data = [this, &prepared, in]() { return RunTimeValue(in, prepared); };
      }
    }
    std::vector<const QParams*> output_qparams(node.outputs.size(), nullptr);
    std::vector<std::string_view> output_names(node.outputs.size());
    for (size_t s = 0; s < node.outputs.size(); ++s) {
      const ValueId out = node.outputs[s];
      if (out != kNoValue && g.value(out).qparams) output_qparams[s] = &*g.value(out).qparams;
      if (out != kNoValue) output_names[s] = g.value(out).name;
    }
    const OpPrepareFn& prepare = *registry.Find(node.domain, node.op_type);
    const int64_t limit = options.max_tensor_elements > 0 ? options.max_tensor_elements : Shape::kMaxElements;
    needs_run_time_data = false;
    auto result = prepare(OpPrepareArgs{node, infos, *context, limit, output_qparams, output_names, &registry});
    if (!result.ok() && needs_run_time_data) {
      // An output shape depends on a graph input's data: the nodes from here on are compiled for each run.
      deferred = true;
      for (int m = n; m < g.num_nodes(); ++m) kernel_names[static_cast<size_t>(m)] = "compiled per run";
      return OkStatus();
    }
    if (!result.ok()) return result.status().WithContext(where);
    PreparedOp& op = prepared[static_cast<size_t>(n)];
    op = std::move(*result);
    if (op.outputs.size() != node.outputs.size() || op.kernel == nullptr) {
      return Internal("{}: the operator returned {} outputs for {} slots", where, op.outputs.size(),
                      node.outputs.size());
    }
    for (size_t s = 0; s < node.outputs.size(); ++s) {
      auto checked = Shape::Create(op.outputs[s].shape.dims());
      if (!checked.ok()) return checked.status().WithContext(fmt::format("{}: output {}", where, s));
      if (options.max_tensor_elements > 0 && checked->NumElements() > options.max_tensor_elements) {
        return OutOfRange("{}: output {} of shape {} has more than {} elements", where, s, *checked,
                          options.max_tensor_elements);
      }
      const ValueId out = node.outputs[s];
      if (out == kNoValue) continue;
      if (output_qparams[s] != nullptr && output_qparams[s]->dtype() != op.outputs[s].dtype) {
        return InvalidArgument("{}: output '{}' is {} but its qparams are {}", where, g.value(out).name,
                               op.outputs[s].dtype, output_qparams[s]->dtype());
      }
      dtypes[static_cast<size_t>(out)] = op.outputs[s].dtype;
      shapes[static_cast<size_t>(out)] = op.outputs[s].shape;
    }
    kernel_names[static_cast<size_t>(n)] = op.kernel_name;

    std::vector<Tensor> constants;
    if (!op.constant_outputs.empty()) {
      if (op.constant_outputs.size() != node.outputs.size()) {
        return Internal("{}: {} constant outputs for {} slots", where, op.constant_outputs.size(), node.outputs.size());
      }
      constants = std::move(op.constant_outputs);
    } else if (options.fold_constants && all_constant) {
      OCTET_ASSIGN_OR_RETURN(constants, Fold(node, op, infos, *context));
    }
    if (!constants.empty()) {
      for (size_t s = 0; s < node.outputs.size(); ++s) {
        if (node.outputs[s] != kNoValue) folded[static_cast<size_t>(node.outputs[s])] = std::move(constants[s]);
      }
      kernel_names[static_cast<size_t>(n)] = "folded";
      continue;
    }
    runtime[static_cast<size_t>(n)] = true;
    max_scratch = std::max(max_scratch, op.scratch_bytes);
    context->RecordKernel(node.op_type, op.kernel_name);
  }
  return OkStatus();
}

// The data of a value that is not constant, for a Prepare that needs it: a graph input's data in the run being
// specialised, or the producing node's outputs, computed with its prepared kernel (inputs first, recursively).
Result<const Tensor*> Executor::Impl::RunTimeValue(ValueId id, const std::vector<PreparedOp>& prepared) {
  const size_t v = static_cast<size_t>(id);
  if (const Tensor* c = ConstantData(id)) return c;
  if (has_run_time_value[v]) return &run_time_values[v];
  const Value& value = graph.value(id);
  if (value.kind == ValueKind::kInput) {
    const auto& ins = graph.inputs();
    const size_t pos = static_cast<size_t>(std::find(ins.begin(), ins.end(), id) - ins.begin());
    if (!specialising || pos >= run_inputs.size()) {
      needs_run_time_data = true;
      return Unimplemented("'{}' is computed from graph input '{}', known only at run time", value.name, value.name);
    }
    inputs_read[pos] = true;
    return &run_inputs[pos];
  }
  const int p = producer[v];
  if (p < 0 || prepared[static_cast<size_t>(p)].kernel == nullptr) {
    return Internal("value '{}' has no prepared producer", value.name);
  }
  const Node& node = graph.node(p);
  std::vector<ValueInfo> infos(node.inputs.size());
  for (size_t s = 0; s < node.inputs.size(); ++s) {
    if (node.inputs[s] == kNoValue) continue;
    infos[s].present = true;
    OCTET_ASSIGN_OR_RETURN(infos[s].constant, RunTimeValue(node.inputs[s], prepared));
  }
  OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> results, Fold(node, prepared[static_cast<size_t>(p)], infos, *context));
  for (size_t s = 0; s < node.outputs.size(); ++s) {
    const ValueId out = node.outputs[s];
    if (out == kNoValue) continue;
    run_time_values[static_cast<size_t>(out)] = std::move(results[s]);
    has_run_time_value[static_cast<size_t>(out)] = true;
  }
  return &run_time_values[v];
}

// Where each value lives during a Run: graph inputs are the caller's tensors, constants (given or folded) stay
// where they are, runtime graph outputs get tensors of their own per call, everything else is in the arena.
void Executor::Impl::AssignStorage() {
  const Graph& g = graph;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    storage[static_cast<size_t>(g.inputs()[i])] = Storage::kInput;
    location[static_cast<size_t>(g.inputs()[i])] = static_cast<int64_t>(i);
  }
  for (ValueId id = 0; id < g.num_values(); ++id) {
    if (ConstantData(id) != nullptr) storage[static_cast<size_t>(id)] = Storage::kConstant;
  }
  int runtime_outputs = 0;
  for (ValueId out : g.outputs()) {
    if (storage[static_cast<size_t>(out)] == Storage::kAbsent) {
      storage[static_cast<size_t>(out)] = Storage::kOutput;
      location[static_cast<size_t>(out)] = runtime_outputs;
      output_runtime_index.push_back(runtime_outputs++);
    } else {
      output_runtime_index.push_back(-1);
    }
  }
}

// The steps (nodes that run), their input/output slots, and one arena for every arena value, omitted outputs and
// the largest scratch.
Status Executor::Impl::PlanSteps(const std::vector<PreparedOp>& prepared, const std::vector<bool>& runtime,
                                 size_t max_scratch, const CompileOptions& options) {
  const Graph& g = graph;
  const size_t num_values = static_cast<size_t>(g.num_values());
  std::vector<int> first_step(num_values, -1), last_step(num_values, -1);
  for (int n = 0; n < g.num_nodes(); ++n) {
    if (!runtime[static_cast<size_t>(n)]) continue;
    const int step = static_cast<int>(steps.size());
    const Node& node = g.node(n);
    for (ValueId in : node.inputs) {
      if (in != kNoValue) last_step[static_cast<size_t>(in)] = step;
    }
    for (ValueId out : node.outputs) {
      if (out != kNoValue) first_step[static_cast<size_t>(out)] = last_step[static_cast<size_t>(out)] = step;
    }
    steps.push_back(Step{n, prepared[static_cast<size_t>(n)].kernel.get(), 0, 0, 0, 0});
  }
  std::vector<BufferRequest> requests;
  std::vector<ValueId> request_value;  // kNoValue for an omitted output's buffer
  for (ValueId id = 0; id < g.num_values(); ++id) {
    if (first_step[static_cast<size_t>(id)] >= 0 && storage[static_cast<size_t>(id)] == Storage::kAbsent) {
      storage[static_cast<size_t>(id)] = Storage::kArena;
      requests.push_back(BufferRequest{
          shapes[static_cast<size_t>(id)].NumElements() * static_cast<int64_t>(DTypeSize(dtypes[static_cast<size_t>(id)])),
          first_step[static_cast<size_t>(id)], last_step[static_cast<size_t>(id)]});
      request_value.push_back(id);
    }
  }

  size_t absent_outputs = 0;
  for (const Step& step : steps) {
    for (ValueId out : g.node(step.node_index).outputs) absent_outputs += out == kNoValue ? 1 : 0;
  }
  absent_output_shapes.reserve(absent_outputs);  // slots point into it: no reallocation after this
  std::vector<std::pair<size_t, size_t>> absent_out_request;  // (out slot index, request index)
  for (size_t k = 0; k < steps.size(); ++k) {
    Step& step = steps[k];
    const Node& node = g.node(step.node_index);
    const PreparedOp& op = prepared[static_cast<size_t>(step.node_index)];
    step.in_begin = in_slots.size();
    step.in_count = node.inputs.size();
    for (ValueId in : node.inputs) {
      SlotRef ref;
      if (in == kNoValue) {
        ref.shape = &EmptyShape();
      } else {
        ref.storage = storage[static_cast<size_t>(in)];
        ref.dtype = dtypes[static_cast<size_t>(in)];
        ref.shape = &shapes[static_cast<size_t>(in)];
        ref.constant = ConstantData(in);
      }
      in_slots.push_back(ref);
    }
    step.out_begin = out_slots.size();
    step.out_count = node.outputs.size();
    for (size_t s = 0; s < node.outputs.size(); ++s) {
      const ValueId out = node.outputs[s];
      SlotRef ref;
      ref.dtype = op.outputs[s].dtype;
      if (out == kNoValue) {
        absent_output_shapes.push_back(op.outputs[s].shape);
        ref.storage = Storage::kArena;
        ref.shape = &absent_output_shapes.back();
        absent_out_request.emplace_back(out_slots.size(), requests.size());
        requests.push_back(BufferRequest{ref.shape->NumElements() * static_cast<int64_t>(DTypeSize(ref.dtype)),
                                         static_cast<int>(k), static_cast<int>(k)});
        request_value.push_back(kNoValue);
      } else {
        ref.storage = storage[static_cast<size_t>(out)];
        ref.shape = &shapes[static_cast<size_t>(out)];
      }
      out_slots.push_back(ref);
    }
  }

  const MemoryPlan plan = PlanMemory(requests, kAlign, static_cast<int64_t>(kTensorPaddingBytes));
  for (size_t r = 0; r < requests.size(); ++r) {
    if (request_value[r] != kNoValue) location[static_cast<size_t>(request_value[r])] = plan.offsets[r];
  }
  for (const auto& [slot, r] : absent_out_request) out_slots[slot].index = plan.offsets[r];
  for (const Step& step : steps) {
    const Node& node = g.node(step.node_index);
    for (size_t s = 0; s < step.in_count; ++s) {
      const ValueId in = node.inputs[s];
      if (in != kNoValue) in_slots[step.in_begin + s].index = location[static_cast<size_t>(in)];
    }
    for (size_t s = 0; s < step.out_count; ++s) {
      const ValueId out = node.outputs[s];
      if (out != kNoValue) out_slots[step.out_begin + s].index = location[static_cast<size_t>(out)];
    }
  }
  scratch_offset = plan.arena_bytes;
  arena_total = plan.arena_bytes + AlignUp(static_cast<int64_t>(max_scratch));
  if (options.max_arena_bytes > 0 && arena_total > options.max_arena_bytes) {
    return OutOfRange("failed to compile graph '{}': its activations need {} bytes, over the limit of {}", g.name(),
                      arena_total, options.max_arena_bytes);
  }
  return OkStatus();
}

Result<std::unique_ptr<Executor::Impl>> Executor::Impl::Build(const Graph& graph, const Context& context,
                                                             const OpRegistry& registry,
                                                             const CompileOptions& options,
                                                             std::span<const Tensor> run_inputs, bool specialising) {
  OCTET_RETURN_IF_ERROR(VerifyGraph(graph));
  OCTET_RETURN_IF_ERROR(CheckOperatorsExist(graph, registry));

  auto impl = std::make_unique<Impl>();
  Impl& m = *impl;
  m.graph = graph;
  m.context = &context;
  const Graph& g = m.graph;
  const size_t num_values = static_cast<size_t>(g.num_values());
  const size_t num_nodes = static_cast<size_t>(g.num_nodes());
  m.dtypes.assign(num_values, DType::kF32);
  m.shapes.assign(num_values, Shape{});
  m.folded.resize(num_values);
  m.storage.assign(num_values, Storage::kAbsent);
  m.location.assign(num_values, 0);
  m.kernels.resize(num_nodes);
  m.kernel_names.resize(num_nodes);
  m.specialising = specialising;
  m.run_inputs = run_inputs;
  m.inputs_read.assign(g.inputs().size(), false);
  m.producer.assign(num_values, -1);
  m.run_time_values.resize(num_values);
  m.has_run_time_value.assign(num_values, false);
  for (int n = 0; n < g.num_nodes(); ++n) {
    for (ValueId out : g.node(n).outputs) {
      if (out != kNoValue) m.producer[static_cast<size_t>(out)] = n;
    }
  }
  for (ValueId id = 0; id < g.num_values(); ++id) {
    const Value& v = g.value(id);
    m.dtypes[static_cast<size_t>(id)] = v.dtype;
    if (v.kind == ValueKind::kConstant) m.shapes[static_cast<size_t>(id)] = v.data.shape();
  }
  OCTET_RETURN_IF_ERROR(BindInputShapes(g, options, m.shapes));

  std::vector<PreparedOp> prepared(num_nodes);
  std::vector<bool> runtime(num_nodes, false);
  size_t max_scratch = 0;
  OCTET_RETURN_IF_ERROR(m.PrepareNodes(registry, options, prepared, runtime, max_scratch));
  // Data computed for Prepare is not kept: the specialisation runs those nodes like any other.
  m.run_time_values = {};
  m.run_inputs = {};
  if (m.deferred) {
    m.registry = std::make_unique<OpRegistry>(registry);
    m.options = options;
    return impl;
  }
  m.AssignStorage();
  OCTET_RETURN_IF_ERROR(m.PlanSteps(prepared, runtime, max_scratch, options));
  for (size_t n = 0; n < num_nodes; ++n) {
    if (runtime[n]) m.kernels[n] = std::move(prepared[n].kernel);
  }
  return impl;
}

Result<Executor> Executor::Compile(const Graph& graph, const Context& context, const OpRegistry& registry,
                                   const CompileOptions& options) {
  OCTET_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Impl::Build(graph, context, registry, options, {}, false));
  return Executor(std::move(impl));
}

// The executor compiled for these inputs' data: a cached one when its compile read the same data, else a new one.
Result<std::shared_ptr<const Executor>> Executor::Impl::Specialise(std::span<const Tensor> inputs) const {
  std::lock_guard<std::mutex> lock(specialisation_mutex);
  for (size_t k = specialisations.size(); k-- > 0;) {
    const Specialisation& sp = specialisations[k];
    bool same = true;
    for (size_t i = 0; same && i < inputs.size(); ++i) {
      const Tensor& d = sp.data[i];
      if (d.raw_data() == nullptr) continue;
      const size_t bytes = static_cast<size_t>(d.shape().NumElements()) * DTypeSize(d.dtype());
      same = std::memcmp(d.raw_data(), inputs[i].raw_data(), bytes) == 0;
    }
    if (same) return sp.executor;
  }
  OCTET_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, Build(graph, *context, *registry, options, inputs, true));
  Specialisation sp;
  sp.data.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (impl->inputs_read[i]) {
      OCTET_ASSIGN_OR_RETURN(sp.data[i], inputs[i].Clone());
    }
  }
  sp.executor = std::make_shared<const Executor>(Executor(std::move(impl)));
  if (specialisations.size() == kMaxSpecialisations) specialisations.erase(specialisations.begin());
  specialisations.push_back(std::move(sp));
  return specialisations.back().executor;
}

Result<std::vector<Tensor>> Executor::RunNamed(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                               const RunOptions& options) const {
  const Graph& g = impl_->graph;
  std::vector<Tensor> ordered(g.inputs().size());
  std::vector<bool> given(g.inputs().size(), false);
  for (const auto& [name, tensor] : inputs) {
    auto it = std::find_if(g.inputs().begin(), g.inputs().end(),
                           [&, &n = name](ValueId id) { return g.value(id).name == n; });
    if (it == g.inputs().end()) {
      return InvalidArgument("failed to run graph '{}': it has no input named '{}'", g.name(), name);
    }
    const size_t pos = static_cast<size_t>(it - g.inputs().begin());
    if (given[pos]) return InvalidArgument("failed to run graph '{}': input '{}' is given twice", g.name(), name);
    given[pos] = true;
    ordered[pos] = tensor;
  }
  for (size_t i = 0; i < given.size(); ++i) {
    if (!given[i]) {
      return InvalidArgument("failed to run graph '{}': input '{}' is missing", g.name(),
                             g.value(g.inputs()[i]).name);
    }
  }
  return Run(ordered, options);
}

Result<std::vector<Tensor>> Executor::Run(std::span<const Tensor> inputs, const RunOptions& options) const {
  const Impl& m = *impl_;
  const Graph& g = m.graph;
  if (inputs.size() != g.inputs().size()) {
    return InvalidArgument("failed to run graph '{}': {} inputs given, {} expected", g.name(), inputs.size(),
                           g.inputs().size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueId id = g.inputs()[i];
    const DType dtype = m.dtypes[static_cast<size_t>(id)];
    const Shape& shape = m.shapes[static_cast<size_t>(id)];
    if (inputs[i].dtype() != dtype || inputs[i].shape() != shape) {
      return InvalidArgument("failed to run graph '{}': input '{}' must be {} {}, got {} {}", g.name(),
                             g.value(id).name, dtype, shape, inputs[i].dtype(), inputs[i].shape());
    }
  }

  if (m.deferred) {
    OCTET_ASSIGN_OR_RETURN(std::shared_ptr<const Executor> specialised, m.Specialise(inputs));
    return specialised->Run(inputs, options);
  }

  std::vector<Tensor> runtime_outputs;
  for (ValueId out : g.outputs()) {
    if (m.storage[static_cast<size_t>(out)] != Storage::kOutput) continue;
    OCTET_ASSIGN_OR_RETURN(Tensor t,
                           Tensor::Create(m.dtypes[static_cast<size_t>(out)], m.shapes[static_cast<size_t>(out)]));
    runtime_outputs.push_back(std::move(t));
  }
  OCTET_ASSIGN_OR_RETURN(Tensor arena, m.AcquireArena());
  auto* base = static_cast<std::byte*>(arena.raw_data());
  auto resolve = [&](const SlotRef& ref) -> void* {
    switch (ref.storage) {
      case Storage::kAbsent: return nullptr;
      case Storage::kInput: return const_cast<void*>(inputs[static_cast<size_t>(ref.index)].raw_data());
      case Storage::kConstant: return const_cast<void*>(ref.constant->raw_data());
      case Storage::kArena: return base + ref.index;
      case Storage::kOutput: return runtime_outputs[static_cast<size_t>(ref.index)].raw_data();
    }
    return nullptr;
  };
  std::vector<ConstTensorView> in_views;
  in_views.reserve(m.in_slots.size());
  for (const SlotRef& ref : m.in_slots) in_views.emplace_back(ref.dtype, ref.shape, resolve(ref));
  std::vector<TensorView> out_views;
  out_views.reserve(m.out_slots.size());
  for (const SlotRef& ref : m.out_slots) out_views.emplace_back(ref.dtype, ref.shape, resolve(ref));
  const std::span<std::byte> scratch(base + m.scratch_offset,
                                     static_cast<size_t>(m.arena_total - m.scratch_offset));

  Status status;
  for (const Step& step : m.steps) {
    const Node& node = g.node(step.node_index);
    const std::span<const ConstTensorView> ins(in_views.data() + step.in_begin, step.in_count);
    const std::span<const TensorView> outs(out_views.data() + step.out_begin, step.out_count);
    const NodeCall call{step.node_index, node, ins, outs};
    for (const NodeHook& hook : options.before_node) {
      status = hook(call);
      if (!status.ok()) break;
    }
    if (!status.ok()) {
      status = status.WithContext(fmt::format("hook before node '{}' ({})", node.name, node.op_type));
      break;
    }
    status = step.kernel->Run(OpRunArgs{ins, outs, scratch, *m.context});
    if (!status.ok()) {
      status = status.WithContext(fmt::format("failed to run node '{}' ({})", node.name, node.op_type));
      break;
    }
    for (const NodeHook& hook : options.after_node) {
      status = hook(call);
      if (!status.ok()) break;
    }
    if (!status.ok()) {
      status = status.WithContext(fmt::format("hook after node '{}' ({})", node.name, node.op_type));
      break;
    }
  }
  m.ReleaseArena(std::move(arena));
  if (!status.ok()) return status;

  std::vector<Tensor> results;
  results.reserve(g.outputs().size());
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const ValueId out = g.outputs()[i];
    switch (m.storage[static_cast<size_t>(out)]) {
      case Storage::kOutput:
        results.push_back(std::move(runtime_outputs[static_cast<size_t>(m.output_runtime_index[i])]));
        break;
      case Storage::kInput: {
        OCTET_ASSIGN_OR_RETURN(Tensor t, inputs[static_cast<size_t>(m.location[static_cast<size_t>(out)])].Clone());
        results.push_back(std::move(t));
        break;
      }
      case Storage::kConstant: {
        OCTET_ASSIGN_OR_RETURN(Tensor t, m.ConstantData(out)->Clone());
        results.push_back(std::move(t));
        break;
      }
      case Storage::kAbsent:
      case Storage::kArena:
        return Internal("failed to run graph '{}': output '{}' has no storage", g.name(), g.value(out).name);
    }
  }
  return results;
}

}  // namespace octet

// If and Loop over octet's executor: a subgraph is compiled as a graph of its
// own, fed the node's inputs.
#include "ops/float/control_flow.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/executor.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

Result<const Graph*> Subgraph(const OpPrepareArgs& args, const char* attribute) {
  auto it = args.node.subgraphs.find(attribute);
  if (it == args.node.subgraphs.end() || it->second == nullptr) {
    return InvalidArgument("the subgraph attribute '{}' is missing", attribute);
  }
  return it->second.get();
}

Result<size_t> OuterInputs(const OpPrepareArgs& args, size_t formal_inputs) {
  OCTET_ASSIGN_OR_RETURN(int64_t outer, args.node.attributes.GetInt(kOuterInputsAttribute, 0));
  if (outer < 0 || static_cast<size_t>(outer) > args.inputs.size() ||
      args.inputs.size() - static_cast<size_t>(outer) > formal_inputs) {
    return InvalidArgument(
        "{} inputs with {} outer values: at most {} inputs "
        "of its own are allowed",
        args.inputs.size(), outer, formal_inputs);
  }
  return static_cast<size_t>(outer);
}

// `sub` compiled for inputs of these dtypes and shapes (its declared ones are
// placeholders). The registry is the one compiling the outer graph, so
// quantized operators in a branch run too.
Result<Executor> CompileSubgraph(const OpPrepareArgs& args, const Graph& sub, std::span<const DType> dtypes,
                                 std::span<const Shape> shapes, const char* what) {
  if (sub.inputs().size() != dtypes.size()) {
    return InvalidArgument("{} has {} inputs, {} are given", what, sub.inputs().size(), dtypes.size());
  }
  Graph g = sub;
  for (size_t k = 0; k < dtypes.size(); ++k) {
    Value& v = g.mutable_value(g.inputs()[k]);
    v.dtype = dtypes[k];
    v.shape = shapes[k];
    v.dim_names.clear();
  }
  const OpRegistry fallback = args.registry == nullptr ? FloatOpRegistry() : OpRegistry();
  CompileOptions options;
  options.max_tensor_elements = args.max_output_elements;
  auto exec = Executor::Compile(g, args.context, args.registry != nullptr ? *args.registry : fallback, options);
  if (!exec.ok()) return exec.status().WithContext(what);
  return exec;
}

// Runs a compiled subgraph; wraps errors with `what`.
Result<std::vector<Tensor>> RunSubgraph(const Executor& exec, std::span<const Tensor> inputs, const char* what) {
  auto out = exec.Run(inputs);
  if (!out.ok()) return out.status().WithContext(what);
  return out;
}

// The data of every input slot from `first` on (the outer values, or all of
// Loop's), read like a shape input.
Result<std::vector<Tensor>> InputTensors(const OpPrepareArgs& args, size_t first) {
  std::vector<Tensor> tensors;
  for (size_t s = first; s < args.inputs.size(); ++s) {
    if (!args.inputs[s].present) return InvalidArgument("input {} is empty; an outer value must be present", s);
    auto data = InputData(args.inputs[s]);
    if (!data.ok()) return data.status().WithContext(fmt::format("input {} ('{}')", s, args.inputs[s].name));
    tensors.push_back(**data);
  }
  return tensors;
}

Result<bool> Condition(const ValueInfo& info, const char* what) {
  if (info.shape.NumElements() != 1) return InvalidArgument("{} must have one element, got shape {}", what, info.shape);
  auto data = InputData(info);
  if (!data.ok()) return data.status().WithContext(what);
  const Tensor& t = **data;
  switch (t.dtype()) {
    case DType::kF32: return t.values<float>()[0] != 0.0f;
    case DType::kU8: return t.values<uint8_t>()[0] != 0;
    case DType::kS8: return t.values<int8_t>()[0] != 0;
    case DType::kS32: return t.values<int32_t>()[0] != 0;
  }
  return InvalidArgument("{} has an unknown dtype", what);
}

bool Deferred(const Executor& exec) {
  for (int n = 0; n < exec.graph().num_nodes(); ++n) {
    if (exec.kernel_name(n) == "compiled per run") return true;
  }
  return false;
}

// Outputs computed at compile time: the executor treats them as constants (the
// kernel never runs).
PreparedOp ConstantResult(std::vector<Tensor> outputs, std::string kernel_name) {
  std::vector<OutputInfo> infos;
  for (const Tensor& t : outputs) infos.push_back({t.dtype(), t.shape()});
  PreparedOp op = MakePrepared(std::move(infos), MakeKernel([](const OpRunArgs&) -> Status {
                                 return Internal("a control-flow node computed at compile time was run");
                               }),
                               std::move(kernel_name));
  op.constant_outputs = std::move(outputs);
  return op;
}

Result<PreparedOp> PrepareIf(const OpPrepareArgs& args) {
  if (args.inputs.empty() || !args.inputs[0].present) return InvalidArgument("If needs input 0 (cond)");
  OCTET_ASSIGN_OR_RETURN(size_t outer, OuterInputs(args, 1));
  OCTET_ASSIGN_OR_RETURN(bool cond, Condition(args.inputs[0], "input 0 (cond)"));
  const char* branch = cond ? "then_branch" : "else_branch";
  OCTET_ASSIGN_OR_RETURN(const Graph* sub, Subgraph(args, branch));
  if (sub->outputs().size() != args.node.outputs.size()) {
    return InvalidArgument("{} has {} outputs, the node {}", branch, sub->outputs().size(), args.node.outputs.size());
  }
  const size_t first = args.inputs.size() - outer;
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  for (size_t s = first; s < args.inputs.size(); ++s) {
    dtypes.push_back(args.inputs[s].dtype);
    shapes.push_back(args.inputs[s].shape);
  }
  OCTET_ASSIGN_OR_RETURN(Executor exec, CompileSubgraph(args, *sub, dtypes, shapes, branch));
  if (Deferred(exec)) {
    // The branch's output shapes depend on the outer values' data: run it now,
    // for this run's data.
    OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> ins, InputTensors(args, first));
    OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> outs, RunSubgraph(exec, ins, branch));
    return ConstantResult(std::move(outs), fmt::format("if_{}_at_compile", branch));
  }
  std::vector<OutputInfo> infos;
  for (ValueId id : exec.graph().outputs()) infos.push_back({exec.value_dtype(id), exec.value_shape(id)});
  auto shared = std::make_shared<const Executor>(std::move(exec));
  auto kernel = MakeKernel([shared, first, branch](const OpRunArgs& r) -> Status {
    std::vector<Tensor> ins;
    for (size_t s = first; s < r.inputs.size(); ++s) {
      OCTET_ASSIGN_OR_RETURN(Tensor t, r.inputs[s].ToTensor());
      ins.push_back(std::move(t));
    }
    OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> outs, RunSubgraph(*shared, ins, branch));
    for (size_t k = 0; k < outs.size(); ++k) {
      if (outs[k].shape() != r.outputs[k].shape() || outs[k].dtype() != r.outputs[k].dtype()) {
        return Internal("{} output {} is {} {}, compiled as {} {}", branch, k, outs[k].dtype(), outs[k].shape(),
                        r.outputs[k].dtype(), r.outputs[k].shape());
      }
      if (outs[k].SizeBytes() > 0) std::memcpy(r.outputs[k].raw_data(), outs[k].raw_data(), outs[k].SizeBytes());
    }
    return OkStatus();
  });
  return MakePrepared(std::move(infos), std::move(kernel), fmt::format("if_{}", branch));
}

// Stacks equal-shaped tensors along a new axis 0; `empty` is used when there
// are none.
Result<Tensor> Stack(const std::vector<Tensor>& parts, size_t k) {
  if (parts.empty()) return Tensor::Create(DType::kF32, Shape{0});
  std::vector<int64_t> dims = {static_cast<int64_t>(parts.size())};
  for (int64_t d : parts[0].shape().dims()) dims.push_back(d);
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(parts[0].dtype(), Shape(dims)));
  auto* dst = static_cast<std::byte*>(out.raw_data());
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].shape() != parts[0].shape() || parts[i].dtype() != parts[0].dtype()) {
      return InvalidArgument("scan output {} is {} {} at iteration {} but {} {} at iteration 0", k, parts[i].dtype(),
                             parts[i].shape(), i, parts[0].dtype(), parts[0].shape());
    }
    if (parts[i].SizeBytes() > 0)
      std::memcpy(dst + i * parts[i].SizeBytes(), parts[i].raw_data(), parts[i].SizeBytes());
  }
  return out;
}

Result<PreparedOp> PrepareLoop(const OpPrepareArgs& args) {
  OCTET_ASSIGN_OR_RETURN(const Graph* body, Subgraph(args, "body"));
  const size_t body_ins = body->inputs().size();
  if (body_ins < 2 || args.inputs.size() != body_ins) {
    return InvalidArgument(
        "the body has {} inputs for the node's {} (trip "
        "count, cond, carried values, outer values)",
        body_ins, args.inputs.size());
  }
  OCTET_ASSIGN_OR_RETURN(size_t outer, OuterInputs(args, args.inputs.size()));
  const size_t carried = args.inputs.size() - 2 - outer;
  const size_t scans = body->outputs().size() < 1 + carried ? 0 : body->outputs().size() - 1 - carried;
  if (body->outputs().size() != 1 + carried + scans || args.node.outputs.size() != carried + scans) {
    return InvalidArgument("the body has {} outputs for {} carried values and the node {} outputs",
                           body->outputs().size(), carried, args.node.outputs.size());
  }
  int64_t trips = -1;  // no limit
  if (args.inputs[0].present) {
    OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> m, ConstantInts(args, 0, "M (trip count)"));
    if (m.size() != 1) return InvalidArgument("input 0 (M) must have one element, got {}", m.size());
    trips = std::max<int64_t>(m[0], 0);
  }
  bool cond = true;
  const bool has_cond = args.inputs[1].present;
  if (has_cond) {
    OCTET_ASSIGN_OR_RETURN(cond, Condition(args.inputs[1], "input 1 (cond)"));
  }
  if (trips < 0 && !has_cond) return InvalidArgument("Loop without M and cond never ends");
  // Everything the body reads: the carried initial values and the outer values.
  OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> state, InputTensors(args, 2));
  OCTET_ASSIGN_OR_RETURN(Tensor iter, Tensor::Create(DType::kS32, Shape{}));
  OCTET_ASSIGN_OR_RETURN(Tensor cond_t, Tensor::Create(DType::kU8, Shape{}));
  std::vector<std::vector<Tensor>> scan_parts(scans);
  std::unique_ptr<Executor> exec;
  std::vector<Shape> compiled_shapes;
  constexpr int64_t kMaxIterations = int64_t{1} << 24;  // a bound on untrusted models' work
  for (int64_t i = 0; (trips < 0 || i < trips) && cond; ++i) {
    if (i >= kMaxIterations) return OutOfRange("Loop ran over {} iterations", kMaxIterations);
    iter.values<int32_t>()[0] = static_cast<int32_t>(i);
    cond_t.values<uint8_t>()[0] = 1;
    std::vector<Tensor> ins = {iter, cond_t};
    ins.insert(ins.end(), state.begin(), state.end());
    std::vector<DType> dtypes;
    std::vector<Shape> shapes;
    for (const Tensor& t : ins) {
      dtypes.push_back(t.dtype());
      shapes.push_back(t.shape());
    }
    if (exec == nullptr || shapes != compiled_shapes) {  // carried values may change shape between
                                                         // iterations
      OCTET_ASSIGN_OR_RETURN(Executor e, CompileSubgraph(args, *body, dtypes, shapes, "body"));
      exec = std::make_unique<Executor>(std::move(e));
      compiled_shapes = shapes;
    }
    OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> outs, RunSubgraph(*exec, ins, "body"));
    if (has_cond) {
      const Tensor& c = outs[0];
      if (c.shape().NumElements() != 1) return InvalidArgument("the body's cond output has shape {}", c.shape());
      cond = c.dtype() == DType::kF32 ? c.values<float>()[0] != 0.0f : c.values<uint8_t>()[0] != 0;
    }
    for (size_t k = 0; k < carried; ++k) state[k] = std::move(outs[1 + k]);
    for (size_t k = 0; k < scans; ++k) scan_parts[k].push_back(std::move(outs[1 + carried + k]));
  }
  std::vector<Tensor> results(state.begin(), state.begin() + static_cast<std::ptrdiff_t>(carried));
  for (size_t k = 0; k < scans; ++k) {
    OCTET_ASSIGN_OR_RETURN(Tensor stacked, Stack(scan_parts[k], k));
    OCTET_RETURN_IF_ERROR(CheckOutputElements(args, stacked.shape().dims()));
    results.push_back(std::move(stacked));
  }
  return ConstantResult(std::move(results), "loop_at_compile");
}

}  // namespace

Status RegisterControlFlowOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kIf, PrepareIf));
  return RegisterFloatOp(registry, FloatOp::kLoop, PrepareLoop);
}

}  // namespace octet::float_ops

// `octet bench model`: compiles a model once, then times Run; optionally per op type through the executor's hooks.
#include "tools/octet/model_bench_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "bench/harness/timing.h"
#include "core/executor.h"
#include "core/latency.h"
#include "ops/float/float_fusion.h"
#include "ops/int8/nhwc_layout.h"
#include "tools/octet/bench_flags.h"
#include "tools/octet/model_command.h"
#include "tools/octet/symbolic_shapes.h"

namespace octet::cli {
namespace {

struct ModelBenchCommand : BenchFlags {
  std::string model;
  std::vector<std::string> input_shapes;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  bool per_op = false;
  bool per_node = false;
  std::string int8_layout = "nhwc";  // ops/int8/nhwc_layout.h: "nchw" skips the pass (for before/after timings)
  std::string float_fusion = "on";   // ops/float/float_fusion.h: "off" skips the pass (for before/after timings)
};

// The tensors of --input files; seeded inputs for the others: uniform [-1, 1) for floats; zeros for integers (valid
// as indices and as shape data).
Result<std::vector<Tensor>> MakeInputs(const Executor& exec, std::map<std::string, Tensor>& files) {
  std::mt19937_64 rng(20261121);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<Tensor> inputs;
  for (ValueId id : exec.graph().inputs()) {
    if (auto it = files.find(exec.graph().value(id).name); it != files.end()) {
      inputs.push_back(std::move(it->second));
      continue;
    }
    OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(exec.value_dtype(id), exec.value_shape(id)));
    if (t.dtype() == DType::kF32) {
      for (int64_t i = 0; i < t.NumElements(); ++i) t.data<float>()[i] = uniform(rng);
    } else {
      std::memset(t.raw_data(), 0, t.SizeBytes());
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

Status CheckFinite(const Executor& exec, const std::vector<Tensor>& outputs) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k].dtype() != DType::kF32) continue;
    for (int64_t i = 0; i < outputs[k].NumElements(); ++i) {
      if (!std::isfinite(outputs[k].data<float>()[i])) {
        return DataLoss("output '{}' element {} is {}", exec.graph().value(exec.graph().outputs()[k]).name, i,
                        outputs[k].data<float>()[i]);
      }
    }
  }
  return OkStatus();
}

struct OpTypeTime {
  int nodes = 0;
  double us = 0.0;      // wall time, summed over the timed runs
  double cpu_us = 0.0;  // the calling thread's CPU time, likewise
  std::set<std::string> kernels;
};

// Runs `runs` times with a before/after hook pair timing every node; returns the time per op type.
// `per_node_cpu_us` receives each node's calling-thread CPU time per run (0 for folded nodes).
Result<std::map<std::string, OpTypeTime>> TimePerOpType(const Executor& exec, const std::vector<Tensor>& inputs,
                                                        int runs, std::vector<double>& per_node_cpu_us) {
  using Clock = std::chrono::steady_clock;
  const Graph& g = exec.graph();
  const size_t nodes = static_cast<size_t>(g.num_nodes());
  std::vector<Clock::time_point> started(nodes);
  std::vector<int64_t> started_cpu(nodes, 0);
  std::vector<double> node_us(nodes, 0.0), node_cpu_us(nodes, 0.0);
  RunOptions options;
  options.before_node.push_back([&](const NodeCall& call) {
    started_cpu[static_cast<size_t>(call.node_index)] = NowNs(LatencyClock::kThreadCpu);
    started[static_cast<size_t>(call.node_index)] = Clock::now();
    return OkStatus();
  });
  options.after_node.push_back([&](const NodeCall& call) {
    const auto elapsed = Clock::now() - started[static_cast<size_t>(call.node_index)];
    const size_t n = static_cast<size_t>(call.node_index);
    node_us[n] += std::chrono::duration<double, std::micro>(elapsed).count();
    node_cpu_us[n] += MicrosecondsSince(LatencyClock::kThreadCpu, started_cpu[n]);
    return OkStatus();
  });
  for (int r = 0; r < runs; ++r) OCTET_RETURN_IF_ERROR(exec.Run(inputs, options).status());
  per_node_cpu_us.assign(nodes, 0.0);
  for (size_t n = 0; n < nodes; ++n) per_node_cpu_us[n] = node_cpu_us[n] / runs;
  std::map<std::string, OpTypeTime> by_type;
  for (int n = 0; n < g.num_nodes(); ++n) {
    if (exec.is_folded(n)) continue;
    OpTypeTime& t = by_type[g.node(n).op_type];
    ++t.nodes;
    t.us += node_us[static_cast<size_t>(n)];
    t.cpu_us += node_cpu_us[static_cast<size_t>(n)];
    t.kernels.insert(exec.kernel_name(n));
  }
  return by_type;
}

int RunModelBench(const ModelBenchCommand& c) {
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  CompileOptions options;
  if (Status s = ParseInputShapes(c.input_shapes, options); !s.ok()) return ReportUsage(s.message());
  std::map<std::string, std::string> input_files;
  for (const std::string& in : c.inputs) {
    auto kv = SplitAssignment(in, "--input");
    if (!kv.ok()) return ReportUsage(kv.status().message());
    const bool shaped = std::any_of(options.input_shapes.begin(), options.input_shapes.end(),
                                    [&](const auto& given) { return given.first == kv->first; });
    if (shaped || !input_files.emplace(kv->first, kv->second).second) {
      return ReportUsage(fmt::format("--input and --input-shape name '{}' more than once", kv->first));
    }
  }
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Result<LoadedModel> model = LoadModelFile(c.model);
  if (!model.ok()) return ReportFailure(model.status());
  std::map<std::string, Tensor> files;
  for (const auto& [name, file] : input_files) {
    Result<Tensor> t = ReadTensorFile(file);
    if (!t.ok()) return ReportFailure(t.status());
    options.input_shapes.emplace_back(name, t->shape());
    files.emplace(name, std::move(*t));
  }
  // Dims left dynamic (a dim_param such as "batch", or unnamed) are timed at 1, one line each saying so.
  const Graph laid_out = c.int8_layout == "nhwc" ? int8_ops::PlanNhwcLayout(model->graph) : model->graph;
  const Graph planned = c.float_fusion == "on" ? float_ops::FuseFloatActivations(laid_out) : laid_out;
  const Graph& graph = planned;
  auto one = [](const DynamicDim&) { return int64_t{1}; };
  for (const DynamicDim& d : FindDynamicDims(graph, options)) {
    fmt::print(stderr,
               "octet: input '{}' dim {} ({}) is dynamic: assuming 1 (set it with --input-shape {} or --input "
               "{}=FILE.npy)\n",
               d.input, d.dim, d.symbol == "?" ? "unnamed" : "'" + d.symbol + "'",
               InputShapeArgument(graph, d.input, options, one), d.input);
  }
  options = BindDynamicDims(graph, options, one);
  const OpRegistry registry = RegistryFor(*model);
  Result<Executor> exec = Executor::Compile(graph, *context, registry, options);
  if (!exec.ok()) return ReportFailure(exec.status().WithContext(fmt::format("failed to compile '{}'", c.model)));
  Result<std::vector<Tensor>> inputs = MakeInputs(*exec, files);
  if (!inputs.ok()) return ReportFailure(inputs.status());

  Result<std::vector<Tensor>> first = exec->Run(*inputs);
  Status status = first.ok() ? CheckFinite(*exec, *first) : first.status();
  if (!status.ok()) return ReportFailure(status.WithContext(fmt::format("failed to run '{}'", c.model)));
  const Result<bench::Timing> timed =
      bench::MeasureStatusCalls([&] { return exec->Run(*inputs).status(); }, c.TimingOptions());
  if (!timed.ok()) return ReportFailure(timed.status().WithContext(fmt::format("failed to run '{}'", c.model)));
  const bench::Timing& timing = *timed;
  // The calling thread's CPU time: on a shared machine it counts only the time the model really had the CPU.
  Result<double> cpu_us =
      MedianRunUs(LatencyClock::kThreadCpu, 0, c.repetitions, [&] { return exec->Run(*inputs).status(); });
  if (!cpu_us.ok()) return ReportFailure(cpu_us.status().WithContext(fmt::format("failed to run '{}'", c.model)));
  int nodes = 0;
  for (int n = 0; n < exec->graph().num_nodes(); ++n) nodes += exec->is_folded(n) ? 0 : 1;

  if (c.json) {
    nlohmann::ordered_json j;
    j["op"] = "model";
    j["model"] = c.model;
    j["threads"] = context->threads();
    j["enabled_isas"] = context->enabled_isas().ToString();
    j["us"] = timing.median_us;
    j["us_min"] = timing.min_us;
    j["us_max"] = timing.max_us;
    j["cpu_us"] = *cpu_us;
    j["repetitions"] = timing.repetitions;
    j["calls_per_repetition"] = timing.calls_per_repetition;
    j["nodes"] = nodes;
    j["arena_bytes"] = exec->arena_bytes();
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("model {}: {} nodes, {} thread(s), ISAs {}: {}; calling thread's CPU time {:.1f} us\n", c.model, nodes,
               context->threads(), context->enabled_isas().ToString(), bench::TimingText(timing), *cpu_us);
  }
  if (c.per_op || c.per_node) {
    std::vector<double> node_cpu_us;
    auto by_type = TimePerOpType(*exec, *inputs, c.repetitions, node_cpu_us);
    if (!by_type.ok()) return ReportFailure(by_type.status().WithContext(fmt::format("failed to run '{}'", c.model)));
    double total = 0.0;
    for (const auto& [op, t] : *by_type) total += t.us;
    for (const auto& [op, t] : *by_type) {
      if (!c.per_op) break;
      const double us = t.us / c.repetitions;
      const double share = total > 0 ? t.us / total : 0.0;
      if (c.json) {
        nlohmann::ordered_json j;
        j["op"] = "model_op";
        j["op_type"] = op;
        j["nodes"] = t.nodes;
        j["us"] = us;
        j["cpu_us"] = t.cpu_us / c.repetitions;
        j["share"] = share;
        j["kernels"] = t.kernels;
        fmt::print("{}\n", j.dump());
      } else {
        fmt::print("  {:<20} {:4} nodes {:10.1f} us {:5.1f}%  CPU {:10.1f} us  {}\n", op, t.nodes, us,
                   100 * share, t.cpu_us / c.repetitions, fmt::join(t.kernels, ", "));
      }
    }
    // Per node, in graph order, for per-layer comparisons (e.g. against bench/onednn_f32_conv_bench's rows).
    for (int n = 0; c.per_node && n < exec->graph().num_nodes(); ++n) {
      if (exec->is_folded(n)) continue;
      const Node& node = exec->graph().node(n);
      const double cpu = node_cpu_us[static_cast<size_t>(n)];
      if (c.json) {
        nlohmann::ordered_json j;
        j["op"] = "model_node";
        j["node"] = node.name;
        j["op_type"] = node.op_type;
        j["cpu_us"] = cpu;
        j["kernel"] = exec->kernel_name(n);
        fmt::print("{}\n", j.dump());
      } else {
        fmt::print("  node {:<40} {:<16} CPU {:10.1f} us  {}\n", node.name, node.op_type, cpu, exec->kernel_name(n));
      }
    }
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

void AddModelBenchCommand(CLI::App& app, CommandRegistry& registry) {
  CLI::App* bench = app.get_subcommand("bench");
  auto c = std::make_shared<ModelBenchCommand>();
  CLI::App* m = bench->add_subcommand("model", "Whole-model latency of a float model (Compile outside the timing)");
  m->add_option("model", c->model, "The model (.onnx or .octet)")->required()->type_name("MODEL");
  m->add_option("--input-shape", c->input_shapes, "Shape for an input with unknown dims, NAME=D0,D1,...")
      ->type_name("NAME=DIMS");
  m->add_option("--input", c->inputs, "An input's data (and shape) from a file, NAME=FILE.npy; others are seeded")
      ->type_name("NAME=FILE");
  m->add_flag("--per-op", c->per_op, "Also time every node through hooks and print the time per op type");
  m->add_flag("--per-node", c->per_node, "Also print every node's CPU time per run, in graph order");
  m->add_option("--int8-layout", c->int8_layout,
                "Activation layout between int8 operators: nhwc (the layout pass, default) or nchw (a transpose "
                "around every QConv)")
      ->check(CLI::IsMember({"nhwc", "nchw"}))
      ->type_name("nhwc|nchw");
  m->add_option("--float-fusion", c->float_fusion,
                "Relu/Clip folded into the float Conv/Gemm before them: on (the fusion pass, default) or off")
      ->check(CLI::IsMember({"on", "off"}))
      ->type_name("on|off");
  c->AddTo(m);
  registry.Add(m, [c] { return RunModelBench(*c); });
}

}  // namespace octet::cli

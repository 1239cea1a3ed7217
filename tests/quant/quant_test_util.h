// Helpers for the quant/ tests: small builder models with non-trivial BatchNorm statistics, random batches, running a
// graph while recording chosen values through hooks, and static quantization with observers calibrated on another
// graph. Header-only: the test binary compiles main.cc,
// test_util.cc and the *_test.cc files.
#pragma once

#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/builder.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "quant/bias_correction.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "tests/test_util.h"

#include <algorithm>
#include <limits>

#include <catch2/catch.hpp>

namespace octet::testing {

inline void RandomizeBatchNorms(Graph& graph, std::mt19937_64& rng) {
  for (const Node& n : graph.nodes()) {
    if (n.op_type != "BatchNormalization") continue;
    const int64_t c = graph.value(n.inputs[1]).data.NumElements();
    graph.mutable_value(n.inputs[1]).data = RandomTensor(rng, Shape{c}, 0.5f, 1.5f);   // gamma
    graph.mutable_value(n.inputs[2]).data = RandomTensor(rng, Shape{c}, -0.5f, 0.5f);  // beta
    graph.mutable_value(n.inputs[3]).data = RandomTensor(rng, Shape{c}, -0.3f, 0.3f);  // running mean
    graph.mutable_value(n.inputs[4]).data = RandomTensor(rng, Shape{c}, 0.5f, 2.0f);   // running var
  }
}

inline std::map<std::string, std::vector<Tensor>> RunAndRecord(const Graph& graph, const OpRegistry& registry,
                                                        const std::vector<std::vector<Tensor>>& batches,
                                                        const std::vector<std::string>& names) {
  std::map<std::string, std::vector<Tensor>> out;
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  for (const std::vector<Tensor>& batch : batches) {
    CompileOptions co;
    for (size_t k = 0; k < batch.size(); ++k) {
      co.input_shapes.emplace_back(graph.value(graph.inputs()[k]).name, batch[k].shape());
      for (const std::string& n : names) {
        if (n == graph.value(graph.inputs()[k]).name) out[n].push_back(batch[k].Clone().value());
      }
    }
    auto exec = Executor::Compile(graph, context, registry, co);
    REQUIRE(exec.ok());
    RunOptions run;
    run.after_node.push_back([&](const NodeCall& call) -> Status {
      for (size_t k = 0; k < call.node.outputs.size(); ++k) {
        if (call.node.outputs[k] == kNoValue) continue;
        const std::string& name = graph.value(call.node.outputs[k]).name;
        if (std::find(names.begin(), names.end(), name) != names.end()) {
          out[name].push_back(call.outputs[k].ToTensor().value());
        }
      }
      return OkStatus();
    });
    auto y = exec->Run(batch, run);
    REQUIRE(y.ok());
  }
  return out;
}

// Calibrates `prepared` on `batches` in `context` (the scalar kernels by default) without the progress line; a
// failure fails the test with octet's message.
inline void CalibrateQuietly(PreparedGraph& prepared, std::span<const std::vector<Tensor>> batches,
                             const Context& context = ScalarContext()) {
  CalibrateOptions quiet;
  quiet.progress = [](int64_t, int64_t) {};
  const Status s = Calibrate(prepared, context, batches, quiet);
  INFO(s.message());
  REQUIRE(s.ok());
}

// `graph` prepared with `mapping` and calibrated quietly on the scalar kernels over three batches of `batch_shape`,
// uniform in [-1, 1) from `rng`.
inline PreparedGraph CalibratedOnRandom(const Graph& graph, const QConfigMapping& mapping, std::mt19937_64& rng,
                                        const Shape& batch_shape) {
  auto prepared = Prepare(graph, mapping);
  INFO(prepared.status().message());
  REQUIRE(prepared.ok());
  std::vector<std::vector<Tensor>> batches;
  for (int i = 0; i < 3; ++i) batches.push_back({RandomTensor(rng, batch_shape, -1.0f, 1.0f)});
  CalibrateQuietly(*prepared, batches);
  return std::move(*prepared);
}

// `graph` quantized statically with `qconfig`, its activation observers calibrated on `calib` through `calibrated`
// (for example the graph before bias correction; `graph` itself when null) on `context`.
inline Graph ConvertCalibratedThrough(const Graph& graph, const QConfig& qconfig,
                                      const std::vector<std::vector<Tensor>>& calib, const Context& context,
                                      const Graph* calibrated = nullptr) {
  QConfigMapping mapping;
  mapping.SetGlobal(qconfig);
  auto observed = Prepare(calibrated != nullptr ? *calibrated : graph, mapping);
  REQUIRE(observed.ok());
  REQUIRE(Calibrate(*observed, context, calib).ok());
  auto prepared = Prepare(graph, mapping);
  REQUIRE(prepared.ok());
  REQUIRE(TransferActivationObservers(*observed, *prepared).ok());
  auto converted = Convert(*prepared);
  INFO(converted.status().message());
  REQUIRE(converted.ok());
  return std::move(*converted);
}

inline std::pair<float, float> MinMaxOf(const std::vector<Tensor>& tensors) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (const Tensor& t : tensors) {
    for (float v : t.values<float>()) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  return {lo, hi};
}

inline Graph SmallCnn(uint64_t seed) {
  GraphBuilder b("small_cnn", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 3, 8, 8});
  Conv2dOptions c;
  c.in_channels = 3;
  c.out_channels = 8;
  c.padding = {1, 1};
  x = b.Conv2d("conv1", x, c);
  x = b.BatchNorm2d("bn1", x, 8);
  x = b.ReLU("relu1", x);
  x = b.MaxPool2d("pool1", x, Pool2dOptions{});
  x = b.Flatten("flatten", x);
  x = b.Linear("fc1", x, 8 * 4 * 4, 16);
  x = b.ReLU("relu2", x);
  x = b.Linear("fc2", x, 16, 5);
  b.Output(x);
  Graph g = std::move(b).Build().value();
  std::mt19937_64 rng(seed);
  RandomizeBatchNorms(g, rng);
  return g;
}

}  // namespace octet::testing

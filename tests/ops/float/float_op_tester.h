// Test helpers for the float operators: run one node through the executor with FloatOpRegistry, random tensors,
// and comparisons that print the first bad element.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/cpu_features.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "tests/test_util.h"
#include "ops/float/registry.h"

namespace octet::testing {

struct OpInput {
  Tensor tensor;
  bool constant = false;
  bool absent = false;
};
inline OpInput In(Tensor t) { return OpInput{std::move(t), false, false}; }
inline OpInput Const(Tensor t) { return OpInput{std::move(t), true, false}; }
inline OpInput Absent() { return OpInput{Tensor(), false, true}; }

inline const OpRegistry& FloatRegistry() {
  static const OpRegistry registry = FloatOpRegistry();
  return registry;
}

// One node of `op_type` fed by graph inputs (or constants), compiled with fold_constants off so the kernel runs at
// Run, with `threads` threads and the ISAs `isas` (default: every ISA this CPU has, so the best kernels run; the
// sgemm family is also tested kernel by kernel in sgemm_test.cc).
inline Result<std::vector<Tensor>> RunFloatOp(const std::string& op_type, const std::vector<OpInput>& inputs,
                                              AttributeMap attributes = {}, int num_outputs = 1, int threads = 1,
                                              IsaSet isas = DetectedIsas()) {
  Graph g("test");
  Node node;
  node.name = "op";
  node.op_type = op_type;
  node.attributes = std::move(attributes);
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const OpInput& in = inputs[i];
    if (in.absent) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    const std::string name = fmt::format("in{}", i);
    if (in.constant) {
      OCTET_ASSIGN_OR_RETURN(ValueId id, g.AddConstant(name, in.tensor));
      node.inputs.push_back(id);
    } else {
      OCTET_ASSIGN_OR_RETURN(ValueId id, g.AddInput(name, in.tensor.dtype(), in.tensor.shape()));
      node.inputs.push_back(id);
      feeds.push_back(in.tensor);
    }
  }
  for (int k = 0; k < num_outputs; ++k) {
    OCTET_ASSIGN_OR_RETURN(ValueId id, g.AddNodeValue(fmt::format("out{}", k)));
    node.outputs.push_back(id);
    OCTET_RETURN_IF_ERROR(g.AddOutput(id));
  }
  OCTET_RETURN_IF_ERROR(g.AddNode(std::move(node)).status());
  const Context context = Context::ForIsas(isas, threads);
  CompileOptions options;
  options.fold_constants = false;
  OCTET_ASSIGN_OR_RETURN(Executor exec, Executor::Compile(g, context, FloatRegistry(), options));
  return exec.Run(feeds);
}

inline Tensor IntTensor(const Shape& shape, const std::vector<int32_t>& values) {
  return Tensor::FromValues<int32_t>(shape, values).value();
}

inline Tensor FloatTensor(const Shape& shape, const std::vector<float>& values) {
  return Tensor::FromValues<float>(shape, values).value();
}

// |got - want| <= atol + rtol * |want| everywhere; reports the first element that is not.
inline void ExpectClose(const Tensor& got, const std::vector<float>& want, float atol = 1e-5f, float rtol = 1e-4f) {
  REQUIRE(got.dtype() == DType::kF32);
  REQUIRE(static_cast<size_t>(got.NumElements()) == want.size());
  const float* g = got.data<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    const bool both_nan = std::isnan(g[i]) && std::isnan(want[i]);
    if (!both_nan && !(std::fabs(g[i] - want[i]) <= atol + rtol * std::fabs(want[i]))) {
      FAIL("element " << i << " of shape " << got.shape().ToString() << ": got " << g[i] << ", want " << want[i]);
    }
  }
}

inline bool BitEqual(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.SizeBytes()) == 0;
}

// Guards against vacuous comparisons: the values are not all equal.
inline bool NotConstant(const std::vector<float>& v) {
  for (float x : v) {
    if (x != v.front()) return true;
  }
  return false;
}

inline std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

// Calls fn(i, idx) for every flat index i of `out` with its multi-index (row-major).
template <typename Fn>
void ForEachIndex(const Shape& out, Fn fn) {
  std::vector<int64_t> idx(static_cast<size_t>(out.rank()), 0);
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    int64_t rem = i;
    for (int d = out.rank() - 1; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = rem % out.dim(d);
      rem /= out.dim(d);
    }
    fn(i, idx);
  }
}

inline int64_t RandomDim(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

}  // namespace octet::testing

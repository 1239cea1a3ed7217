// Test helpers for the int8 non-GEMM operators (QAdd, QMul, pools, QConcat, QLookup, QClamp): one node in a graph
// whose values carry qparams, compiled with QuantizedGraphRegistry(); random qparams and codes; dequantization for
// the float sanity checks.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/qparams.h"
#include "core/tensor.h"
#include "quant/quantized_registry.h"
#include "tests/ops/int8/int8_op_tester.h"
#include "tests/test_util.h"

namespace octet::testing {

inline const OpRegistry& QuantizedRegistry() {
  static const OpRegistry registry = QuantizedGraphRegistry();
  return registry;
}

// Graph inputs (or constants) with optional qparams are int8_op_tester.h's QInput: one definition for the whole test
// binary (two structs of one name would break the one-definition rule).

// One node `op_type` in `domain` (default "octet") fed by `inputs`, its output value carrying `output_qparams`;
// compiled without constant folding and run under `context`.
inline Result<Tensor> RunQOp(const std::string& op_type, const std::vector<QInput>& inputs,
                             const std::optional<QParams>& output_qparams, AttributeMap attributes,
                             const Context& context, const std::string& domain = "octet") {
  Graph g("test");
  Node node;
  node.name = "node";
  node.op_type = op_type;
  node.domain = domain;
  node.attributes = std::move(attributes);
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const QInput& in = inputs[i];
    const std::string name = fmt::format("in{}", i);
    ValueId id = kNoValue;
    if (in.constant) {
      OCTET_ASSIGN_OR_RETURN(id, g.AddConstant(name, in.tensor));
    } else {
      OCTET_ASSIGN_OR_RETURN(id, g.AddInput(name, in.tensor.dtype(), in.tensor.shape()));
      feeds.push_back(in.tensor);
    }
    g.mutable_value(id).qparams = in.qparams;
    node.inputs.push_back(id);
  }
  OCTET_ASSIGN_OR_RETURN(ValueId out, g.AddNodeValue("out", output_qparams ? output_qparams->dtype() : DType::kF32));
  g.mutable_value(out).qparams = output_qparams;
  node.outputs.push_back(out);
  OCTET_RETURN_IF_ERROR(g.AddOutput(out));
  OCTET_RETURN_IF_ERROR(g.AddNode(std::move(node)).status());
  CompileOptions options;
  options.fold_constants = false;
  OCTET_ASSIGN_OR_RETURN(Executor exec, Executor::Compile(g, context, QuantizedRegistry(), options));
  OCTET_ASSIGN_OR_RETURN(std::vector<Tensor> outs, exec.Run(feeds));
  return std::move(outs[0]);
}

// Per-tensor qparams over dtype's full range: scale log-uniform in [0.005, 0.2], zero point anywhere in range
// (ends included now and then).
inline QParams RandomActivationQParams(std::mt19937_64& rng, DType dtype) {
  const float scale = std::exp2(std::uniform_real_distribution<float>(std::log2(0.005f), std::log2(0.2f))(rng));
  const int32_t lo = dtype == DType::kU8 ? 0 : -128, hi = dtype == DType::kU8 ? 255 : 127;
  int32_t zp = std::uniform_int_distribution<int32_t>(lo, hi)(rng);
  if (rng() % 8 == 0) zp = rng() % 2 ? lo : hi;
  return QParams::PerTensor(dtype, scale, zp).value();
}

// Codes uniform over the dtype's range.
inline Tensor RandomCodes(std::mt19937_64& rng, DType dtype, const Shape& shape) {
  Tensor t = Tensor::Create(dtype, shape).value();
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.NumElements(); ++i) p[i] = static_cast<uint8_t>(rng());
  return t;
}

// Element i of a u8 / s8 tensor as an integer.
inline int32_t CodeAt(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kU8 ? int32_t{static_cast<const uint8_t*>(t.raw_data())[i]}
                                 : int32_t{static_cast<const int8_t*>(t.raw_data())[i]};
}

inline float Dequantized(const Tensor& t, const QParams& qp, int64_t i) {
  return static_cast<float>(CodeAt(t, i) - qp.zero_point()) * qp.scale();
}

// Fails at the first element where the two u8 / s8 tensors differ, printing it.
inline void RequireSameCodes(const Tensor& got, const Tensor& want) {
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    if (CodeAt(got, i) != CodeAt(want, i)) {
      FAIL("element " << i << " of " << got.shape().ToString() << ": got " << CodeAt(got, i) << ", want "
                      << CodeAt(want, i));
    }
  }
}

// Guards against vacuous tests: the codes are not (nearly) all one value.
inline bool VariedCodes(const Tensor& t) {
  if (t.NumElements() < 8) return true;
  std::vector<int64_t> counts(256, 0);
  for (int64_t i = 0; i < t.NumElements(); ++i) ++counts[static_cast<size_t>(CodeAt(t, i) & 0xFF)];
  for (int64_t c : counts) {
    if (c * 4 > t.NumElements() * 3) return false;
  }
  return true;
}

inline Tensor EmptyLike(DType dtype, const Shape& shape) { return Tensor::Create(dtype, shape).value(); }

}  // namespace octet::testing

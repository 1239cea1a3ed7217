// A finite-difference checker for the float backward functions (ops/float/grad): the loss L = sum_k <R_k, Y_k>
// with fixed random R_k (double accumulation) is differentiated by central differences in each element of the
// checked inputs, and compared with the backward's dL/dX for dL/dY_k = R_k.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "ops/float/grad/backward.h"
#include "ops/float/grad/batch_norm_backward.h"
#include "ops/float/grad/run_node.h"
#include "ops/float/registry.h"

namespace octet::testing {

struct GradCase {
  std::string op;
  AttributeMap attributes;
  std::vector<Tensor> inputs;  // a default Tensor for an omitted input (set present[i] = false)
  std::vector<bool> present;   // default: all present
  std::vector<bool> known;     // inputs Prepare must see as constants (shapes, bounds); default: none
  std::vector<bool> check;     // inputs whose gradient is checked
  int outputs = 1;
  bool training = false;  // BatchNormalization with batch statistics
  double step = 1e-2;     // central-difference step
  double tolerance = 2e-3;  // |analytic - numeric| <= tolerance * (1 + |numeric|)
};

inline const OpRegistry& ForwardRegistry() {
  static const OpRegistry registry = FloatOpRegistry();
  return registry;
}

inline Node MakeNode(const GradCase& c) {
  Node node;
  node.name = c.op + "_under_test";
  node.op_type = c.op;
  node.attributes = c.attributes;
  for (size_t i = 0; i < c.inputs.size(); ++i) node.inputs.push_back(static_cast<ValueId>(i));
  for (int k = 0; k < c.outputs; ++k) node.outputs.push_back(static_cast<ValueId>(100 + k));
  return node;
}

inline std::vector<Tensor> Forward(const GradCase& c, const Node& node, const std::vector<Tensor>& inputs,
                                   const Context& context) {
  if (c.training) {
    Tensor rm = inputs[3].Clone().value(), rv = inputs[4].Clone().value();
    const float_ops::BatchNormTrainingArgs args = float_ops::ReadBatchNormTrainingArgs(node).value();
    return {float_ops::BatchNormTrainingForward(inputs[0], inputs[1], inputs[2], rm, rv, args).value()};
  }
  std::vector<bool> p = c.present, k = c.known;
  std::unique_ptr<bool[]> pb(new bool[p.size()]), kb(new bool[k.size()]);
  for (size_t i = 0; i < p.size(); ++i) pb[i] = p[i], kb[i] = k[i];
  auto out = float_ops::RunNode(ForwardRegistry(), node, inputs, std::span<const bool>(pb.get(), p.size()),
                                std::span<const bool>(kb.get(), k.size()), context);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return *std::move(out);
}

inline double Objective(const std::vector<Tensor>& outputs, const std::vector<Tensor>& weights) {
  double sum = 0.0;
  for (size_t k = 0; k < weights.size(); ++k) {
    for (int64_t i = 0; i < weights[k].NumElements(); ++i) {
      sum += static_cast<double>(weights[k].data<float>()[i]) * outputs[k].data<float>()[i];
    }
  }
  return sum;
}

// Runs the check; returns the number of elements compared (so callers can assert the check was not vacuous).
inline int64_t CheckGradients(GradCase c, std::mt19937_64& rng) {
  if (c.present.empty()) c.present.assign(c.inputs.size(), true);
  if (c.known.empty()) c.known.assign(c.inputs.size(), false);
  const Context context = Context::ForIsas(DetectedIsas(), 1);
  const Node node = MakeNode(c);
  const std::vector<Tensor> y = Forward(c, node, c.inputs, context);
  std::vector<Tensor> weights;
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const Tensor& t : y) {
    Tensor w = Tensor::Create(DType::kF32, t.shape()).value();
    for (float& v : w.values<float>()) v = u(rng);
    weights.push_back(std::move(w));
  }
  std::unique_ptr<bool[]> needs(new bool[c.inputs.size()]);
  for (size_t i = 0; i < c.inputs.size(); ++i) needs[i] = i < c.check.size() && c.check[i];
  const float_ops::BackwardRegistry registry = float_ops::FloatBackwardRegistry();
  const float_ops::BackwardFn* fn = registry.Find(c.op);
  REQUIRE(fn != nullptr);
  std::vector<Tensor> inputs_for_backward = c.inputs;
  for (size_t i = 0; i < inputs_for_backward.size(); ++i) {
    if (!c.present[i]) inputs_for_backward[i] = Tensor::Create(DType::kF32, Shape{0}).value();
  }
  float_ops::BackwardArgs args{node,  inputs_for_backward, y, weights, std::span<const bool>(needs.get(), c.inputs.size()),
                               c.training, context};
  auto grads = (*fn)(args);
  INFO(grads.status().ToString());
  REQUIRE(grads.ok());
  int64_t compared = 0;
  for (size_t slot = 0; slot < c.inputs.size(); ++slot) {
    if (!needs[slot]) continue;
    const Tensor& g = (*grads)[slot];
    REQUIRE(g.shape() == c.inputs[slot].shape());
    for (int64_t i = 0; i < g.NumElements(); ++i) {
      std::vector<Tensor> plus = c.inputs, minus = c.inputs;
      plus[slot] = c.inputs[slot].Clone().value();
      minus[slot] = c.inputs[slot].Clone().value();
      plus[slot].data<float>()[i] += static_cast<float>(c.step);
      minus[slot].data<float>()[i] -= static_cast<float>(c.step);
      // The perturbation actually applied (float rounding of x + h).
      const double h2 = static_cast<double>(plus[slot].data<float>()[i]) - minus[slot].data<float>()[i];
      const double numeric =
          (Objective(Forward(c, node, plus, context), weights) - Objective(Forward(c, node, minus, context), weights)) /
          h2;
      const double analytic = g.data<float>()[i];
      INFO(c.op << " input " << slot << " element " << i << ": analytic " << analytic << ", numeric " << numeric);
      REQUIRE(std::abs(analytic - numeric) <= c.tolerance * (1.0 + std::abs(numeric)));
      ++compared;
    }
  }
  return compared;
}

}  // namespace octet::testing

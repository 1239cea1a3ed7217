// The finite-difference check of a TrainingGraph's gradients, shared by the training tests: each checked element of
// a parameter is moved by +-h and the loss's central difference compared with the gradient Backward left.
#pragma once

#include <cstdint>
#include <functional>

#include <catch2/catch.hpp>

#include "core/tensor.h"
#include "quant/training/training_graph.h"

namespace octet::testing {

// The tolerance of the comparison: |gradient - numeric| within margin + epsilon * |numeric| (Catch's Approx).
struct GradientTolerance {
  double margin = 1e-4;
  double epsilon = 2e-3;
};

// Checks every `step`-th element of parameter p's gradient against the central difference of `loss` (h = 1e-2),
// restoring each element; returns how many elements it compared.
inline int64_t CheckFiniteDifferences(training::TrainingGraph& tg, size_t p, int64_t step,
                                      const std::function<double()>& loss, GradientTolerance tolerance = {}) {
  Tensor param = tg.parameter(p);
  int64_t compared = 0;
  for (int64_t i = 0; i < param.NumElements(); i += step) {
    const float saved = param.data<float>()[i];
    param.data<float>()[i] = saved + 1e-2f;
    const double plus = loss();
    param.data<float>()[i] = saved - 1e-2f;
    const double minus = loss();
    param.data<float>()[i] = saved;
    INFO(tg.parameter_name(p) << "[" << i << "]");
    CHECK(tg.gradient(p).data<float>()[i] ==
          Approx((plus - minus) / 2e-2).margin(tolerance.margin).epsilon(tolerance.epsilon));
    ++compared;
  }
  return compared;
}

}  // namespace octet::testing

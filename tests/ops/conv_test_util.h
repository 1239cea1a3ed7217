// Helpers for the convolution tests: random output stages scaled for a convolution's accumulators, and the whole
// operator computed from the spec's functions only (reference::QConv2dAccumulate, then linear_op_test_util.h's
// stage). Weights and activations come from linear_op_test_util.h (OHWI weights, NHWC activations).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/qparams.h"
#include "core/tensor.h"
#include "ops/conv2d_params.h"
#include "ops/qgemm.h"
#include "ops/reference/qconv2d_reference.h"
#include "ops/reference/qgemm_reference.h"
#include "tests/ops/linear_op_test_util.h"

namespace octet::testing {

// Scales chosen so that requantized outputs spread over the range for accumulators of this many terms (not all
// saturated: the test would then prove little).
inline QGemmOutput RandomConvOutput(std::mt19937_64& rng, QGemmStage stage, int64_t c_out, int64_t k) {
  // acc ~ sqrt(k) * 128 * 74; a_scale * w_scale ~ 0.02 * 0.005 -> real ~ 1e-4 * acc.
  const float spread = 1e-4f * 128.0f * 74.0f * std::sqrt(static_cast<float>(std::max<int64_t>(k, 1)));
  return RandomLinearOutput(rng, stage, c_out, spread / 40.0f, spread / 40.0f * 0.1f);
}

// The reference result of the whole operator as bytes (u8/s8, int32 or float per the stage).
inline std::vector<uint8_t> ReferenceQConv2d(const QTensor& x, const QTensor& w, const Conv2dParams& params,
                                             const QGemmOutput& out) {
  const reference::Conv2dGeometry g = Conv2dGeometryFor(params, w.shape(), x.shape(), "test").value();
  const int64_t n = g.c_out, m = g.n * g.OutH() * g.OutW();
  const std::vector<int32_t> w_zp = LinearWeightZeroPoints(w, n);
  std::vector<int32_t> acc(static_cast<size_t>(m * n));
  const int32_t x_zp = x.qparams().zero_point();
  if (x.values().dtype() == DType::kU8) {
    reference::QConv2dAccumulate(g, x.values().data<uint8_t>(), x_zp, w.values().data<int8_t>(), w_zp.data(),
                                 acc.data());
  } else {
    reference::QConv2dAccumulate(g, x.values().data<int8_t>(), x_zp, w.values().data<int8_t>(), w_zp.data(),
                                 acc.data());
  }
  return ReferenceLinearStage(acc, m, n, x.qparams().scale(), w, out);
}

}  // namespace octet::testing

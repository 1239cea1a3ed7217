// The activation a float Conv or Gemm applies in its kernels' store (ReLU, or Clip such as ReLU6), set by the float
// fusion pass (ops/float/float_fusion.h) in place of a separate Relu or Clip node. Both forms compute exactly the
// expressions of the Relu and Clip operators (ops/float/unary.cc) on the same float values, so a fused graph's
// outputs are bit-identical to the unfused one's, NaN and signed zero included.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace octet::float_ops {

struct FusedActivation {
  enum class Kind : uint8_t { kNone, kRelu, kClip };
  Kind kind = Kind::kNone;
  float lo = -INFINITY, hi = INFINITY;  // kClip's bounds

  bool active() const { return kind != Kind::kNone; }
  // Relu: x > 0 ? x : 0 (NaN and -0 give +0). Clip: min(max(x, lo), hi) as std:: computes them (NaN stays NaN).
  float Apply(float x) const {
    if (kind == Kind::kRelu) return x > 0.0f ? x : 0.0f;
    if (kind == Kind::kClip) return std::min(std::max(x, lo), hi);
    return x;
  }
  void Apply(float* y, int64_t count) const {
    if (kind == Kind::kNone) return;
    for (int64_t i = 0; i < count; ++i) y[i] = Apply(y[i]);
  }
  // The same on a vector of any SIMD width (xsimd batch), element for element equal to Apply(float): the selects
  // spell out the comparisons std::max / std::min make, so the result never depends on how a max instruction treats
  // NaN or zeros.
  template <class V>
  V ApplyVector(V y) const {
    if (kind == Kind::kRelu) return select(y > V(0.0f), y, V(0.0f));
    if (kind == Kind::kClip) {
      y = select(y < V(lo), V(lo), y);     // std::max(y, lo) is (y < lo) ? lo : y
      return select(V(hi) < y, V(hi), y);  // std::min(y, hi) is (hi < y) ? hi : y
    }
    return y;
  }
};

}  // namespace octet::float_ops

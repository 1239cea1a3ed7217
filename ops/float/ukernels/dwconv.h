// The float depthwise-convolution kernel family: one channel plane of a 2-D depthwise convolution (NCHW, one filter
// per channel), y = bias + sum over taps of w * x, zero padding. ops/float/conv.cc splits the planes over threads and
// picks the kernel once, at Prepare.
//
// Float sums are not bit-exact across kernels (FMA contraction); every kernel is tested against a double-precision
// reference with a tolerance.
#pragma once

#include <cstdint>
#include <span>

#include "core/ukernel_list.h"
#include "ops/float/ukernels/fused_activation.h"

namespace octet::float_ops {

struct DwconvPlaneArgs {
  const float* x = nullptr;  // [h, w]
  int64_t h = 0, w = 0;
  const float* weights = nullptr;  // [kh, kw]
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0;
  float bias = 0.0f;
  float* y = nullptr;  // [oh, ow]
  int64_t oh = 0, ow = 0;
  FusedActivation activation;  // applied to each output after its last tap (a fused Relu or Clip)
};

using DwconvPlaneFn = void (*)(const DwconvPlaneArgs& args);

#define OCTET_DWCONV_UKERNEL(isa, fn) void fn(const DwconvPlaneArgs& args);
#include "ops/float/ukernels/dwconv.inc"
#undef OCTET_DWCONV_UKERNEL

// Candidates, best first, scalar last.
std::span<const UkernelEntry<DwconvPlaneFn>> DwconvUkernels();

}  // namespace octet::float_ops

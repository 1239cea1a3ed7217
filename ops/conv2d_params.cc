// Validation of convolution parameters and the geometry of a call; every message names the offending value.
#include "ops/conv2d_params.h"

#include <fmt/format.h>

namespace octet {

std::string Conv2dParams::ToString() const {
  return fmt::format("kernel {}x{}, stride {}x{}, pad {}x{}, dilation {}x{}, groups {}", kernel_h, kernel_w, stride_h,
                     stride_w, pad_h, pad_w, dilation_h, dilation_w, groups);
}

Status ValidateConv2dWeights(const Conv2dParams& p, const Shape& weights, const char* op) {
  struct Named {
    const char* name;
    int64_t value;
    int64_t min;
  };
  const Named checks[] = {{"kernel_h", p.kernel_h, 1}, {"kernel_w", p.kernel_w, 1},     {"stride_h", p.stride_h, 1},
                          {"stride_w", p.stride_w, 1}, {"pad_h", p.pad_h, 0},           {"pad_w", p.pad_w, 0},
                          {"dilation_h", p.dilation_h, 1}, {"dilation_w", p.dilation_w, 1}, {"groups", p.groups, 1}};
  for (const Named& c : checks) {
    if (c.value < c.min) {
      return InvalidArgument("failed to create {}: {} must be >= {}, got {}", op, c.name, c.min, c.value);
    }
    // Products of these with image sizes must stay far from int64 overflow.
    if (c.value > (int64_t{1} << 24)) {
      return InvalidArgument("failed to create {}: {} must be <= 2^24, got {}", op, c.name, c.value);
    }
  }
  if (weights.rank() != 4) {
    return InvalidArgument("failed to create {}: weights must have shape [c_out, kernel_h, kernel_w, c_in / groups] "
                           "(OHWI), got {}",
                           op, weights);
  }
  if (weights.dim(1) != p.kernel_h || weights.dim(2) != p.kernel_w) {
    return InvalidArgument("failed to create {}: weights of shape {} do not match kernel {}x{}", op, weights,
                           p.kernel_h, p.kernel_w);
  }
  if (weights.dim(0) < 1 || weights.dim(3) < 1) {
    return InvalidArgument("failed to create {}: weights must have c_out >= 1 and c_in / groups >= 1, got shape {}",
                           op, weights);
  }
  if (weights.dim(0) % p.groups != 0) {
    return InvalidArgument("failed to create {}: groups = {} must divide c_out = {}", op, p.groups, weights.dim(0));
  }
  return OkStatus();
}

Result<reference::Conv2dGeometry> Conv2dGeometryFor(const Conv2dParams& p, const Shape& weights, const Shape& input,
                                                    const char* op) {
  if (input.rank() != 4) {
    return InvalidArgument("failed to run {}: the input must be NHWC of rank 4, got shape {}", op, input);
  }
  const int64_t c_in = p.groups * weights.dim(3);
  if (input.dim(3) != c_in) {
    return InvalidArgument("failed to run {}: the input must have c_in = groups * {} = {} channels, got shape {}", op,
                           weights.dim(3), c_in, input);
  }
  reference::Conv2dGeometry g;
  g.n = input.dim(0);
  g.h = input.dim(1);
  g.w = input.dim(2);
  g.c_in = c_in;
  g.c_out = weights.dim(0);
  g.kh = p.kernel_h;
  g.kw = p.kernel_w;
  g.stride_h = p.stride_h;
  g.stride_w = p.stride_w;
  g.pad_h = p.pad_h;
  g.pad_w = p.pad_w;
  g.dilation_h = p.dilation_h;
  g.dilation_w = p.dilation_w;
  g.groups = p.groups;
  if (g.OutH() < 1 || g.OutW() < 1) {
    return InvalidArgument("failed to run {}: the dilated kernel {}x{} (dilation {}x{}) does not fit the input {}x{} "
                           "padded by {}x{}",
                           op, p.kernel_h, p.kernel_w, p.dilation_h, p.dilation_w, g.h, g.w, p.pad_h, p.pad_w);
  }
  return g;
}

}  // namespace octet

// Direct N-D convolution and transposed convolution: one output element at a time over its in-range kernel taps.
#include "ops/float/conv_nd.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "core/threading.h"
#include "ops/float/op_util.h"

namespace octet::float_ops {
namespace {

struct ConvNdGeometry {
  int64_t n = 0, c = 0, oc = 0, groups = 1;
  std::vector<int64_t> in, out, kernel, strides, dilations, pads;  // pads: begin per axis, then end per axis
};

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

Status RunConvNd(const ConvNdGeometry& g, const OpRunArgs& r) {
  const float* x = r.inputs[0].data<float>();
  const float* w = r.inputs[1].data<float>();
  const float* bias = r.inputs.size() > 2 && r.inputs[2].raw_data() != nullptr ? r.inputs[2].data<float>() : nullptr;
  float* y = r.outputs[0].data<float>();
  const size_t nd = g.in.size();
  const int64_t in_size = Product(g.in), out_size = Product(g.out), k_size = Product(g.kernel);
  const int64_t cg = g.c / g.groups, ocg = g.oc / g.groups;
  ParallelFor(r.context, g.n * g.oc, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> o(nd), k(nd);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / g.oc, m = t % g.oc, grp = m / ocg;
      float* yp = y + t * out_size;
      std::fill(o.begin(), o.end(), 0);
      for (int64_t oi = 0; oi < out_size; ++oi) {
        double acc = bias != nullptr ? bias[m] : 0.0;
        std::fill(k.begin(), k.end(), 0);
        for (int64_t ki = 0; ki < k_size; ++ki) {
          int64_t flat = 0;
          bool inside = true;
          for (size_t d = 0; d < nd && inside; ++d) {
            const int64_t pos = o[d] * g.strides[d] - g.pads[d] + k[d] * g.dilations[d];
            inside = pos >= 0 && pos < g.in[d];
            flat = flat * g.in[d] + pos;
          }
          if (inside) {
            for (int64_t ci = 0; ci < cg; ++ci) {
              const float xv = x[(b * g.c + grp * cg + ci) * in_size + flat];
              acc += static_cast<double>(xv) * w[(m * cg + ci) * k_size + ki];
            }
          }
          for (size_t d = nd; d-- > 0;) {  // next kernel tap
            if (++k[d] < g.kernel[d]) break;
            k[d] = 0;
          }
        }
        yp[oi] = static_cast<float>(acc);
        for (size_t d = nd; d-- > 0;) {  // next output position
          if (++o[d] < g.out[d]) break;
          o[d] = 0;
        }
      }
    }
  });
  return OkStatus();
}

// ConvTranspose as a gather: y[b, m, o] = B[m] + sum over c of m's group and taps k with o = i * s - pad + k * d of
// x[b, c, i] * W[c, m % (M / group), k].
Status RunConvTransposeNd(const ConvNdGeometry& g, const OpRunArgs& r) {
  const float* x = r.inputs[0].data<float>();
  const float* w = r.inputs[1].data<float>();
  const float* bias = r.inputs.size() > 2 && r.inputs[2].raw_data() != nullptr ? r.inputs[2].data<float>() : nullptr;
  float* y = r.outputs[0].data<float>();
  const size_t nd = g.in.size();
  const int64_t in_size = Product(g.in), out_size = Product(g.out), k_size = Product(g.kernel);
  const int64_t cg = g.c / g.groups, ocg = g.oc / g.groups;
  ParallelFor(r.context, g.n * g.oc, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> o(nd), k(nd);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / g.oc, m = t % g.oc, grp = m / ocg, mg = m % ocg;
      float* yp = y + t * out_size;
      std::fill(o.begin(), o.end(), 0);
      for (int64_t oi = 0; oi < out_size; ++oi) {
        double acc = bias != nullptr ? bias[m] : 0.0;
        std::fill(k.begin(), k.end(), 0);
        for (int64_t ki = 0; ki < k_size; ++ki) {
          int64_t flat = 0;
          bool inside = true;
          for (size_t d = 0; d < nd && inside; ++d) {
            const int64_t num = o[d] + g.pads[d] - k[d] * g.dilations[d];
            const int64_t pos = num >= 0 ? num / g.strides[d] : -1;
            inside = num >= 0 && num % g.strides[d] == 0 && pos < g.in[d];
            flat = flat * g.in[d] + pos;
          }
          if (inside) {
            for (int64_t ci = 0; ci < cg; ++ci) {
              const int64_t c = grp * cg + ci;
              acc += static_cast<double>(x[(b * g.c + c) * in_size + flat]) * w[(c * ocg + mg) * k_size + ki];
            }
          }
          for (size_t d = nd; d-- > 0;) {  // next kernel tap
            if (++k[d] < g.kernel[d]) break;
            k[d] = 0;
          }
        }
        yp[oi] = static_cast<float>(acc);
        for (size_t d = nd; d-- > 0;) {  // next output position
          if (++o[d] < g.out[d]) break;
          o[d] = 0;
        }
      }
    }
  });
  return OkStatus();
}

}  // namespace

Result<PreparedOp> PrepareConvNd(const OpPrepareArgs& args) {
  if (args.inputs.size() < 2 || !args.inputs[1].present) {
    return InvalidArgument("input W (the weight) is missing: Conv takes X, W and an optional B");
  }
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 3));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 1, DType::kF32));
  const Shape& x = args.inputs[0].shape;
  const Shape& w = args.inputs[1].shape;
  if (x.rank() < 3 || w.rank() != x.rank()) return InvalidArgument("X {} and W {} must be [N, C, spatial...]", x, w);
  const AttributeMap& at = args.node.attributes;
  ConvNdGeometry g;
  g.n = x.dim(0), g.c = x.dim(1), g.oc = w.dim(0);
  OCTET_ASSIGN_OR_RETURN(g.groups, at.GetInt("group", 1));
  if (g.groups <= 0 || g.c % g.groups != 0 || g.oc % g.groups != 0 || w.dim(1) * g.groups != g.c) {
    return InvalidArgument(
        "group {} must be positive and divide the input channels {} and output channels {}, and W {} "
        "must have input channels / group",
        g.groups, g.c, g.oc, w);
  }
  if (Present(args, 2)) {
    OCTET_RETURN_IF_ERROR(CheckInput(args, 2, DType::kF32));
    if (args.inputs[2].shape != Shape{g.oc})
      return InvalidArgument("B must be [{}], got {}", g.oc, args.inputs[2].shape);
  }
  const size_t nd = static_cast<size_t>(x.rank() - 2);
  g.kernel.assign(w.dims().begin() + 2, w.dims().end());
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_attr, at.GetInts("kernel_shape", g.kernel));
  if (kernel_attr != g.kernel) return InvalidArgument("kernel_shape does not match the weight's spatial dims {}", w);
  OCTET_ASSIGN_OR_RETURN(g.strides, at.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(g.dilations, at.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads_attr, at.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(std::string auto_pad, at.GetString("auto_pad", "NOTSET"));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("strides", g.strides, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("dilations", g.dilations, nd));
  OCTET_RETURN_IF_ERROR(CheckedProduct(g.kernel).status().WithContext("kernel_shape"));
  g.in.assign(x.dims().begin() + 2, x.dims().end());
  OCTET_ASSIGN_OR_RETURN(g.pads, ResolvePads(auto_pad, pads_attr, g.in, g.kernel, g.strides, g.dilations));
  std::vector<int64_t> out_dims = {g.n, g.oc};
  for (size_t d = 0; d < nd; ++d) {
    OCTET_ASSIGN_OR_RETURN(int64_t o, WindowOutputSize(g.in[d], g.kernel[d], g.strides[d], g.pads[d], g.pads[d + nd],
                                                       g.dilations[d], false));
    g.out.push_back(o);
    out_dims.push_back(o);
  }
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, out_dims));
  return MakePrepared({{DType::kF32, Shape(out_dims)}}, MakeKernel([g](const OpRunArgs& r) { return RunConvNd(g, r); }),
                      "conv_f32_nd_direct");
}

Result<std::vector<int64_t>> ConvTransposePads(const std::string& auto_pad, std::span<const int64_t> pads,
                                               std::span<const int64_t> output_shape, std::span<const int64_t> in,
                                               std::span<const int64_t> kernel, std::span<const int64_t> strides,
                                               std::span<const int64_t> dilations,
                                               std::span<const int64_t> output_padding) {
  const size_t nd = in.size();
  if (output_shape.empty() && (auto_pad == "NOTSET" || auto_pad == "VALID")) {
    std::vector<int64_t> result(pads.begin(), pads.end());
    if (auto_pad == "VALID" || result.empty()) result.assign(2 * nd, 0);
    if (result.size() != 2 * nd) return InvalidArgument("pads must have {} values, got {}", 2 * nd, result.size());
    for (int64_t p : result) {
      if (p < 0) return InvalidArgument("pads must be >= 0, got [{}]", fmt::join(result, ", "));
    }
    return result;
  }
  if (!output_shape.empty() && output_shape.size() != nd) {
    return InvalidArgument("output_shape must have {} values, got {}", nd, output_shape.size());
  }
  std::vector<int64_t> result(2 * nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t target = output_shape.empty() ? in[i] * strides[i] : output_shape[i];
    if (!output_shape.empty() && (target < 1 || target > (int64_t{1} << 30))) {
      return InvalidArgument("output_shape [{}] must be in [1, 2^30] on axis {}", fmt::join(output_shape, ", "), i);
    }
    // A negative total (output_shape beyond what the op produces) gives negative pads; floor division splits it as
    // ONNX's reference does.
    const int64_t total = strides[i] * (in[i] - 1) + output_padding[i] + ((kernel[i] - 1) * dilations[i] + 1) - target;
    const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
    if (auto_pad == "SAME_UPPER") {
      result[i] = half;
      result[i + nd] = total - half;
    } else {
      result[i] = total - half;
      result[i + nd] = half;
    }
  }
  return result;
}

Result<PreparedOp> PrepareConvTransposeNd(const OpPrepareArgs& args) {
  if (args.inputs.size() < 2 || !args.inputs[1].present) {
    return InvalidArgument("input W (the weight) is missing: ConvTranspose takes X, W and an optional B");
  }
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 3));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 1, DType::kF32));
  const Shape& x = args.inputs[0].shape;
  const Shape& w = args.inputs[1].shape;
  if (x.rank() < 3 || w.rank() != x.rank()) return InvalidArgument("X {} and W {} must be [N, C, spatial...]", x, w);
  const AttributeMap& at = args.node.attributes;
  ConvNdGeometry g;
  g.n = x.dim(0), g.c = x.dim(1);
  OCTET_ASSIGN_OR_RETURN(g.groups, at.GetInt("group", 1));
  if (g.groups <= 0 || g.c % g.groups != 0 || w.dim(0) != g.c) {
    return InvalidArgument("W {} must be [C, M/group, k...] for X {} with group {}", w, x, g.groups);
  }
  g.oc = w.dim(1) * g.groups;
  if (Present(args, 2)) {
    OCTET_RETURN_IF_ERROR(CheckInput(args, 2, DType::kF32));
    if (args.inputs[2].shape != Shape{g.oc})
      return InvalidArgument("B must be [{}], got {}", g.oc, args.inputs[2].shape);
  }
  const size_t nd = static_cast<size_t>(x.rank() - 2);
  g.kernel.assign(w.dims().begin() + 2, w.dims().end());
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_attr, at.GetInts("kernel_shape", g.kernel));
  if (kernel_attr != g.kernel) return InvalidArgument("kernel_shape does not match the weight's spatial dims {}", w);
  OCTET_ASSIGN_OR_RETURN(g.strides, at.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(g.dilations, at.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads_attr, at.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(std::string auto_pad, at.GetString("auto_pad", "NOTSET"));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> output_padding,
                         at.GetInts("output_padding", std::vector<int64_t>(nd, 0)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> output_shape, at.GetInts("output_shape", {}));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("strides", g.strides, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("dilations", g.dilations, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("kernel_shape", g.kernel, nd));
  if (output_padding.size() != nd) return InvalidArgument("output_padding must have {} values", nd);
  // Every factor below 2^20 keeps each product and sum far inside int64.
  constexpr int64_t kLimit = int64_t{1} << 20;
  for (size_t i = 0; i < nd; ++i) {
    if (output_padding[i] < 0 || output_padding[i] >= std::max(g.strides[i], g.dilations[i])) {
      return InvalidArgument("output_padding must be in [0, max(stride, dilation)), got {}", output_padding[i]);
    }
    if (std::max({x.dim(2 + static_cast<int>(i)), g.kernel[i], g.strides[i], g.dilations[i]}) > kLimit) {
      return OutOfRange("ConvTranspose sizes, strides and dilations beyond 2^20 are not supported");
    }
  }
  g.in.assign(x.dims().begin() + 2, x.dims().end());
  OCTET_ASSIGN_OR_RETURN(g.pads, ConvTransposePads(auto_pad, pads_attr, output_shape, g.in, g.kernel, g.strides,
                                                   g.dilations, output_padding));
  std::vector<int64_t> out_dims = {g.n, g.oc};
  for (size_t d = 0; d < nd; ++d) {
    if (g.pads[d] > kLimit || g.pads[d + nd] > kLimit || g.pads[d] < -kLimit || g.pads[d + nd] < -kLimit) {
      return OutOfRange("ConvTranspose pads beyond 2^20 are not supported");
    }
    const int64_t o = g.strides[d] * (g.in[d] - 1) + output_padding[d] + (g.kernel[d] - 1) * g.dilations[d] + 1 -
                      g.pads[d] - g.pads[d + nd];
    if (o < 1) return InvalidArgument("the output would be empty on spatial axis {} (pads too large)", d);
    g.out.push_back(o);
    out_dims.push_back(o);
  }
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, out_dims));
  return MakePrepared({{DType::kF32, Shape(out_dims)}},
                      MakeKernel([g](const OpRunArgs& r) { return RunConvTransposeNd(g, r); }),
                      "conv_transpose_f32_nd_direct");
}

}  // namespace octet::float_ops

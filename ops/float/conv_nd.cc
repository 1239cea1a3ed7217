// Direct N-D convolution: one output element at a time over its in-range kernel taps.
#include "ops/float/conv_nd.h"

#include <string>
#include <vector>

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

}  // namespace octet::float_ops

// DepthToSpace and SpaceToDepth as one gather: each output element's input offset follows from ONNX's
// reshape-transpose-reshape definition, computed per output row (n, c, h) with the w loop innermost.
#include "ops/float/depth_space.h"

#include "core/threading.h"
#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

Result<PreparedOp> PrepareDepthSpace(const OpPrepareArgs& args, bool to_space) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_RETURN_IF_ERROR(CheckRank(args, 0, 4, 4));
  OCTET_RETURN_IF_ERROR(CheckPassThroughQParams(args));
  const Shape& x = args.inputs[0].shape;
  OCTET_ASSIGN_OR_RETURN(int64_t b, args.node.attributes.GetInt("blocksize"));
  if (b < 1) return InvalidArgument("attribute 'blocksize' must be >= 1, got {}", b);
  bool crd = false;
  if (to_space) {
    OCTET_ASSIGN_OR_RETURN(std::string mode, args.node.attributes.GetString("mode", "DCR"));
    if (mode != "DCR" && mode != "CRD") return InvalidArgument("attribute 'mode' must be DCR or CRD, got '{}'", mode);
    crd = mode == "CRD";
  }
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  Shape out;
  if (to_space) {
    if (c % (b * b) != 0) return InvalidArgument("channels {} are not a multiple of blocksize^2 = {}", c, b * b);
    out = Shape{n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0)
      return InvalidArgument("height {} and width {} must be multiples of blocksize {}", h, w, b);
    out = Shape{n, c * b * b, h / b, w / b};
  }
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, out.dims()));
  const DType dtype = args.inputs[0].dtype;
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const int64_t oc = out.dim(1), oh = out.dim(2), ow = out.dim(3);
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* px = r.inputs[0].data<T>();
      T* py = r.outputs[0].data<T>();
      ParallelFor(r.context, n * oc * oh, 16, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t yh = row % oh, yc = (row / oh) % oc, yn = row / (oh * oc);
          T* dst = py + row * ow;
          for (int64_t yw = 0; yw < ow; ++yw) {
            int64_t ic, ih, iw;
            if (to_space) {
              const int64_t bh = yh % b, bw = yw % b;
              ih = yh / b, iw = yw / b;
              ic = crd ? yc * b * b + bh * b + bw : (bh * b + bw) * oc + yc;
            } else {
              // Output channel = (bh * b + bw) * C + c.
              const int64_t block = yc / c, xc = yc % c;
              ic = xc, ih = yh * b + block / b, iw = yw * b + block % b;
            }
            dst[yw] = px[((yn * c + ic) * h + ih) * w + iw];
          }
        }
      });
    });
    return OkStatus();
  });
  return MakePrepared({{dtype, out}}, std::move(kernel),
                      fmt::format("{}_{}", to_space ? "depth_to_space" : "space_to_depth", DTypeName(dtype)));
}

}  // namespace

Status RegisterDepthSpaceOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kDepthToSpace,
                                        [](const OpPrepareArgs& a) { return PrepareDepthSpace(a, true); }));
  return RegisterFloatOp(registry, FloatOp::kSpaceToDepth,
                         [](const OpPrepareArgs& a) { return PrepareDepthSpace(a, false); });
}

}  // namespace octet::float_ops

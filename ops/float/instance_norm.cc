// InstanceNormalization, one plane per task; mean and (biased) variance accumulated in double, as ONNX's reference
// computes them in the input's precision with numpy's pairwise sums (double keeps large planes close to that).
#include "ops/float/instance_norm.h"

#include <cmath>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

Result<PreparedOp> PrepareInstanceNorm(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 3, 3));
  for (size_t s = 0; s < 3; ++s) OCTET_RETURN_IF_ERROR(CheckInput(args, s, DType::kF32));
  OCTET_RETURN_IF_ERROR(CheckRank(args, 0, 3, 8));
  const Shape& x = args.inputs[0].shape;
  const int64_t c = x.dim(1);
  for (size_t s = 1; s < 3; ++s) {
    if (args.inputs[s].shape != Shape{c}) {
      return InvalidArgument("input {} ({}) must have shape [{}], got {}", s, s == 1 ? "scale" : "B", c,
                             args.inputs[s].shape);
    }
  }
  OCTET_ASSIGN_OR_RETURN(float eps, args.node.attributes.GetFloat("epsilon", 1e-5f));
  const int64_t planes = x.dim(0) * c;
  const int64_t size = x.Product(2, x.rank());
  auto kernel = MakeKernel([planes, size, c, eps](const OpRunArgs& r) -> Status {
    const float* px = r.inputs[0].data<float>();
    const float* scale = r.inputs[1].data<float>();
    const float* bias = r.inputs[2].data<float>();
    float* py = r.outputs[0].data<float>();
    ParallelFor(r.context, planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float* xp = px + p * size;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < size; ++i) sum += xp[i];
        const double mean = size > 0 ? sum / static_cast<double>(size) : 0.0;
        for (int64_t i = 0; i < size; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
        const double var = size > 0 ? sq / static_cast<double>(size) : 0.0;
        const double a = scale[p % c] / std::sqrt(var + static_cast<double>(eps));
        const double b = bias[p % c] - a * mean;
        float* yp = py + p * size;
        for (int64_t i = 0; i < size; ++i) yp[i] = static_cast<float>(a * xp[i] + b);
      }
    });
    return OkStatus();
  });
  return MakePrepared({{DType::kF32, x}}, std::move(kernel), "instance_norm_f32");
}

}  // namespace

Status RegisterInstanceNormOps(OpRegistry& registry) {
  return RegisterFloatOp(registry, FloatOp::kInstanceNormalization, PrepareInstanceNorm);
}

}  // namespace octet::float_ops

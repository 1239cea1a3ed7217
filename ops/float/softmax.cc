// Softmax, LogSoftmax and Hardmax along one axis: [outer, axis, inner] with the axis strided by `inner`.
#include "ops/float/softmax.h"

#include <algorithm>
#include <cmath>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"
#include "ops/float/ukernels/softmax_row.h"

namespace octet::float_ops {
namespace {

// Softmax along the innermost axis: contiguous rows, each through the softmax-row kernel chosen here (the vector
// exp: attention's Softmax ran std::exp per score, 9% of a 4-block encoder's float time).
Result<PreparedOp> PrepareSoftmaxRows(const Shape& x, int64_t rows, int64_t len, const Context& context) {
  const auto& entry = SelectUkernel(context, SoftmaxRowUkernels());
  const SoftmaxRowFn fn = entry.fn;
  auto kernel = MakeKernel([fn, rows, len](const OpRunArgs& r) -> Status {
    const float* px = r.inputs[0].data<float>();
    float* py = r.outputs[0].data<float>();
    ParallelFor(r.context, rows, std::max<int64_t>(1, 4096 / len), [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) fn(px + t * len, py + t * len, len);
    });
    return OkStatus();
  });
  return MakePrepared({{DType::kF32, x}}, std::move(kernel), fmt::format("softmax_f32+{}", entry.name));
}

Result<PreparedOp> PrepareSoftmax(const OpPrepareArgs& args, bool log, bool hard = false) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  const Shape& x = args.inputs[0].shape;
  if (x.rank() == 0) return InvalidArgument("X must have rank >= 1");
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, args.node.attributes.GetInt("axis", -1));
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, x.rank()));
  const int64_t outer = x.Product(0, axis), len = x.dim(axis), inner = x.Product(axis + 1, x.rank());
  if (!log && !hard && inner == 1 && len > 0) return PrepareSoftmaxRows(x, outer, len, args.context);
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const float* px = r.inputs[0].data<float>();
    float* py = r.outputs[0].data<float>();
    ParallelFor(r.context, outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(len, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t t = begin; t < end; ++t) {
                    const int64_t o = t / inner, i = t % inner;
                    const float* xs = px + o * len * inner + i;
                    float* ys = py + o * len * inner + i;
                    float m = -INFINITY;
                    for (int64_t k = 0; k < len; ++k) m = std::max(m, xs[k * inner]);
                    if (hard) {  // 1 at the first maximum, 0 elsewhere
                      bool found = false;
                      for (int64_t k = 0; k < len; ++k) {
                        const bool here = !found && xs[k * inner] == m;
                        ys[k * inner] = here ? 1.0f : 0.0f;
                        found = found || here;
                      }
                      continue;
                    }
                    float sum = 0.0f;
                    for (int64_t k = 0; k < len; ++k) {
                      const float e = std::exp(xs[k * inner] - m);
                      if (!log) ys[k * inner] = e;
                      sum += e;
                    }
                    if (log) {
                      const float ls = std::log(sum);
                      for (int64_t k = 0; k < len; ++k) ys[k * inner] = xs[k * inner] - m - ls;
                    } else {
                      const float inv = 1.0f / sum;
                      for (int64_t k = 0; k < len; ++k) ys[k * inner] *= inv;
                    }
                  }
                });
    return OkStatus();
  });
  return MakePrepared({{DType::kF32, x}}, std::move(kernel),
                      hard ? "hardmax_f32" : log ? "log_softmax_f32" : "softmax_f32");
}

}  // namespace

Status RegisterSoftmaxOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(
      RegisterFloatOp(registry, FloatOp::kSoftmax, [](const OpPrepareArgs& a) { return PrepareSoftmax(a, false); }));
  OCTET_RETURN_IF_ERROR(
      RegisterFloatOp(registry, FloatOp::kLogSoftmax, [](const OpPrepareArgs& a) { return PrepareSoftmax(a, true); }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kHardmax,
                                        [](const OpPrepareArgs& a) { return PrepareSoftmax(a, false, true); }));
  return OkStatus();
}

}  // namespace octet::float_ops

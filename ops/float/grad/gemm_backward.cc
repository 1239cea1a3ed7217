// Gemm and MatMul backward.
#include "ops/float/grad/gemm_backward.h"

#include <vector>

#include "ops/float/op_util.h"
#include "ops/float/sgemm.h"

namespace octet::float_ops {
namespace {

// C[m, n] (+)= alpha * A[m, k] B[k, n], each operand stored as written or transposed (row-major, dense).
void Product(const BackwardArgs& args, int64_t m, int64_t n, int64_t k, const float* a, bool a_transposed,
             const float* b, bool b_transposed, float* c, float alpha, bool accumulate) {
  SgemmArgs s;
  s.m = m, s.n = n, s.k = k;
  s.a = a, s.trans_a = a_transposed, s.lda = a_transposed ? m : k;
  s.b = b, s.trans_b = b_transposed, s.ldb = b_transposed ? k : n;
  s.c = c, s.ldc = n;
  s.alpha = alpha;
  s.accumulate = accumulate;
  Sgemm(args.context, SelectSgemm(args.context).fn, s);
}

Result<std::vector<Tensor>> GemmBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(float alpha, at.GetFloat("alpha", 1.0f));
  OCTET_ASSIGN_OR_RETURN(float beta, at.GetFloat("beta", 1.0f));
  OCTET_ASSIGN_OR_RETURN(int64_t trans_a, at.GetInt("transA", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t trans_b, at.GetInt("transB", 0));
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  if (a.shape().rank() != 2 || b.shape().rank() != 2) return InvalidArgument("Gemm operands must be 2-D");
  const int64_t m = trans_a ? a.shape().dim(1) : a.shape().dim(0);
  const int64_t k = trans_a ? a.shape().dim(0) : a.shape().dim(1);
  const int64_t n = trans_b ? b.shape().dim(0) : b.shape().dim(1);
  OCTET_ASSIGN_OR_RETURN(Tensor dy, OutputGrad(args, 0));
  const float* g = dy.data<float>();
  if (NeedsGrad(args, 0)) {
    OCTET_ASSIGN_OR_RETURN(Tensor da, Tensor::Create(DType::kF32, a.shape()));
    if (!trans_a) {  // dA[m, k] = dY[m, n] op(B)^T[n, k]
      Product(args, m, k, n, g, false, b.data<float>(), !trans_b, da.data<float>(), alpha, false);
    } else {  // dA[k, m] = op(B)[k, n] dY^T[n, m]
      Product(args, k, m, n, b.data<float>(), trans_b != 0, g, true, da.data<float>(), alpha, false);
    }
    grads[0] = std::move(da);
  }
  if (NeedsGrad(args, 1)) {
    OCTET_ASSIGN_OR_RETURN(Tensor db, Tensor::Create(DType::kF32, b.shape()));
    if (!trans_b) {  // dB[k, n] = op(A)^T[k, m] dY[m, n]
      Product(args, k, n, m, a.data<float>(), !trans_a, g, false, db.data<float>(), alpha, false);
    } else {  // dB[n, k] = dY^T[n, m] op(A)[m, k]
      Product(args, n, k, m, g, true, a.data<float>(), trans_a != 0, db.data<float>(), alpha, false);
    }
    grads[1] = std::move(db);
  }
  if (NeedsGrad(args, 2) && args.inputs[2].NumElements() > 0) {
    OCTET_ASSIGN_OR_RETURN(Tensor dc, ReduceToShape(dy, args.inputs[2].shape()));
    for (float& v : dc.values<float>()) v *= beta;
    grads[2] = std::move(dc);
  }
  return grads;
}

Result<std::vector<Tensor>> MatMulBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  Shape a = args.inputs[0].shape();
  Shape b = args.inputs[1].shape();
  if (a.rank() == 0 || b.rank() == 0) return InvalidArgument("MatMul operands must have rank >= 1");
  if (a.rank() == 1) a = Shape{1, a.dim(0)};
  if (b.rank() == 1) b = Shape{b.dim(0), 1};
  const int64_t m = a.dim(a.rank() - 2), k = a.dim(a.rank() - 1), n = b.dim(b.rank() - 1);
  const Shape a_batch(std::vector<int64_t>(a.dims().begin(), a.dims().end() - 2));
  const Shape b_batch(std::vector<int64_t>(b.dims().begin(), b.dims().end() - 2));
  OCTET_ASSIGN_OR_RETURN(Shape batch, BroadcastShapes(a_batch, b_batch));
  const std::vector<int64_t> sa = BroadcastStrides(a_batch, batch), sb = BroadcastStrides(b_batch, batch);
  OCTET_ASSIGN_OR_RETURN(Tensor dy, OutputGrad(args, 0));
  const bool want_a = NeedsGrad(args, 0), want_b = NeedsGrad(args, 1);
  Tensor da, db;
  if (want_a) {
    OCTET_ASSIGN_OR_RETURN(da, Tensor::Create(DType::kF32, args.inputs[0].shape()));
  }
  if (want_b) {
    OCTET_ASSIGN_OR_RETURN(db, Tensor::Create(DType::kF32, args.inputs[1].shape()));
  }
  const float* pa = args.inputs[0].data<float>();
  const float* pb = args.inputs[1].data<float>();
  const float* g = dy.data<float>();
  for (int64_t t = 0; t < batch.NumElements(); ++t) {
    int64_t rem = t, oa = 0, ob = 0;
    for (int d = batch.rank() - 1; d >= 0; --d) {
      const int64_t i = rem % batch.dim(d);
      rem /= batch.dim(d);
      oa += i * sa[static_cast<size_t>(d)];
      ob += i * sb[static_cast<size_t>(d)];
    }
    const float* gt = g + t * m * n;
    // Accumulate: a broadcast operand receives the sum over the batch entries that read it.
    if (want_a) Product(args, m, k, n, gt, false, pb + ob * k * n, true, da.data<float>() + oa * m * k, 1.0f, true);
    if (want_b) Product(args, k, n, m, pa + oa * m * k, true, gt, false, db.data<float>() + ob * k * n, 1.0f, true);
  }
  if (want_a) grads[0] = std::move(da);
  if (want_b) grads[1] = std::move(db);
  return grads;
}

}  // namespace

Status RegisterGemmBackward(BackwardRegistry& registry) {
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kGemm, GemmBackward));
  OCTET_RETURN_IF_ERROR(registry.Register(FloatOp::kMatMul, MatMulBackward));
  return OkStatus();
}

}  // namespace octet::float_ops

// Gemm and MatMul.
#include "ops/float/gemm.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "ops/float/float_fusion.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"
#include "ops/float/sgemm.h"

namespace octet::float_ops {
namespace {

Result<PreparedOp> PrepareGemm(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 3));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 1, DType::kF32));
  OCTET_RETURN_IF_ERROR(CheckRank(args, 0, 2, 2));
  OCTET_RETURN_IF_ERROR(CheckRank(args, 1, 2, 2));
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(int64_t trans_a, at.GetInt("transA", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t trans_b, at.GetInt("transB", 0));
  OCTET_ASSIGN_OR_RETURN(float alpha, at.GetFloat("alpha", 1.0f));
  OCTET_ASSIGN_OR_RETURN(float beta, at.GetFloat("beta", 1.0f));
  OCTET_ASSIGN_OR_RETURN(const FusedActivation activation, ReadFusedActivation(at));
  const Shape& a = args.inputs[0].shape;
  const Shape& b = args.inputs[1].shape;
  const int64_t m = trans_a ? a.dim(1) : a.dim(0);
  const int64_t k = trans_a ? a.dim(0) : a.dim(1);
  const int64_t kb = trans_b ? b.dim(1) : b.dim(0);
  const int64_t n = trans_b ? b.dim(0) : b.dim(1);
  if (k != kb) {
    return InvalidArgument("inner dimensions differ: A {} (transA={}) and B {} (transB={})", a, trans_a, b, trans_b);
  }
  const Shape out{m, n};
  const bool has_c = Present(args, 2);
  std::vector<int64_t> c_strides;
  if (has_c) {
    OCTET_RETURN_IF_ERROR(CheckInput(args, 2, DType::kF32));
    const Shape& c = args.inputs[2].shape;
    auto bc = BroadcastShapes(c, out);
    if (!bc.ok() || *bc != out) {
      return InvalidArgument("input C (bias) {} does not broadcast to the output {} (A {}, B {})", c, out, a, b);
    }
    c_strides = BroadcastStrides(c, out);
  }
  const auto& sgemm = SelectSgemm(args.context);
  const SgemmBlockFn fn = sgemm.fn;
  // A constant B (Linear's weight) is packed once, here, into the kernel's B panels (weight prepacking); for a
  // kernel without panels a transposed one is transposed to [K, N], the layout it reads in place.
  std::shared_ptr<std::vector<float>> packed_b, panels_b;
  if (SgemmPanelCols(fn) > 0 && args.inputs[1].constant != nullptr) {
    panels_b = std::make_shared<std::vector<float>>(
        PackSgemmB(fn, k, n, trans_b != 0, args.inputs[1].constant->data<float>(), b.dim(1)));
  } else if (trans_b && args.inputs[1].constant != nullptr) {
    packed_b = std::make_shared<std::vector<float>>(static_cast<size_t>(k * n));
    const float* src = args.inputs[1].constant->data<float>();
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t q = 0; q < k; ++q) (*packed_b)[static_cast<size_t>(q * n + j)] = src[j * k + q];
    }
  }
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    float* y = r.outputs[0].data<float>();
    if (has_c) {
      const float* c = r.inputs[2].data<float>();
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) y[i * n + j] = beta * c[i * c_strides[0] + j * c_strides[1]];
      }
    }
    SgemmArgs g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.trans_a = trans_a != 0;
    g.trans_b = trans_b != 0;
    g.a = r.inputs[0].data<float>();
    g.lda = r.inputs[0].dim(1);
    g.b = r.inputs[1].data<float>();
    g.ldb = r.inputs[1].dim(1);
    if (packed_b) {
      g.trans_b = false;
      g.b = packed_b->data();
      g.ldb = n;
    }
    if (panels_b) g.packed_b = panels_b->data();
    g.c = y;
    g.ldc = n;
    g.alpha = alpha;
    g.accumulate = has_c && beta != 0.0f;
    g.activation = activation;  // a Relu/Clip folded in by the float fusion pass, after C
    Sgemm(r.context, fn, g);
    return OkStatus();
  });
  return MakePrepared({{DType::kF32, out}}, std::move(kernel),
                      fmt::format("gemm_f32+{}{}", sgemm.name, ActivationSuffix(activation)));
}

Result<PreparedOp> PrepareMatMul(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 1, DType::kF32));
  Shape a = args.inputs[0].shape;
  Shape b = args.inputs[1].shape;
  if (a.rank() == 0 || b.rank() == 0) return InvalidArgument("MatMul operands must have rank >= 1, got {} and {}", a, b);
  const bool a_vector = a.rank() == 1;
  const bool b_vector = b.rank() == 1;
  if (a_vector) a = Shape{1, a.dim(0)};
  if (b_vector) b = Shape{b.dim(0), 1};
  const int64_t m = a.dim(a.rank() - 2), k = a.dim(a.rank() - 1);
  const int64_t kb = b.dim(b.rank() - 2), n = b.dim(b.rank() - 1);
  if (k != kb) {
    return InvalidArgument("inner dimensions differ: {} and {}", args.inputs[0].shape, args.inputs[1].shape);
  }
  const Shape a_batch(std::vector<int64_t>(a.dims().begin(), a.dims().end() - 2));
  const Shape b_batch(std::vector<int64_t>(b.dims().begin(), b.dims().end() - 2));
  OCTET_ASSIGN_OR_RETURN(Shape batch, BroadcastShapes(a_batch, b_batch));
  std::vector<int64_t> out_dims = batch.dims();
  if (!a_vector) out_dims.push_back(m);
  if (!b_vector) out_dims.push_back(n);
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, out_dims));
  // Batch offsets (in matrices) of each operand for every output batch index.
  const int64_t batches = batch.NumElements();
  const std::vector<int64_t> sa = BroadcastStrides(a_batch, batch), sb = BroadcastStrides(b_batch, batch);
  std::vector<int64_t> offsets_a(static_cast<size_t>(batches)), offsets_b(static_cast<size_t>(batches));
  for (int64_t t = 0; t < batches; ++t) {
    int64_t rem = t, oa = 0, ob = 0;
    for (int d = batch.rank() - 1; d >= 0; --d) {
      const int64_t i = rem % batch.dim(d);
      rem /= batch.dim(d);
      oa += i * sa[static_cast<size_t>(d)];
      ob += i * sb[static_cast<size_t>(d)];
    }
    offsets_a[static_cast<size_t>(t)] = oa * m * k;
    offsets_b[static_cast<size_t>(t)] = ob * k * n;
  }
  const auto& sgemm = SelectSgemm(args.context);
  const SgemmBlockFn fn = sgemm.fn;
  // A constant B shared by every batch index (a Linear layer's weight) is packed once, here, into the kernel's B
  // panels (weight prepacking).
  std::shared_ptr<std::vector<float>> panels_b;
  if (SgemmPanelCols(fn) > 0 && args.inputs[1].constant != nullptr && b_batch.NumElements() == 1) {
    panels_b = std::make_shared<std::vector<float>>(
        PackSgemmB(fn, k, n, false, args.inputs[1].constant->data<float>(), n));
  }
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const float* pa = r.inputs[0].data<float>();
    const float* pb = r.inputs[1].data<float>();
    float* y = r.outputs[0].data<float>();
    std::vector<SgemmArgs> products(static_cast<size_t>(batches));
    for (int64_t t = 0; t < batches; ++t) {
      SgemmArgs& g = products[static_cast<size_t>(t)];
      g.m = m;
      g.n = n;
      g.k = k;
      g.a = pa + offsets_a[static_cast<size_t>(t)];
      g.lda = k;
      g.b = pb + offsets_b[static_cast<size_t>(t)];
      g.ldb = n;
      if (panels_b) g.packed_b = panels_b->data();
      g.c = y + t * m * n;
      g.ldc = n;
    }
    SgemmBatch(r.context, fn, products);
    return OkStatus();
  });
  return MakePrepared({{DType::kF32, Shape(std::move(out_dims))}}, std::move(kernel),
                      fmt::format("matmul_f32+{}", sgemm.name));
}

}  // namespace

Status RegisterGemmOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kGemm, PrepareGemm));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kMatMul, PrepareMatMul));
  return OkStatus();
}

}  // namespace octet::float_ops

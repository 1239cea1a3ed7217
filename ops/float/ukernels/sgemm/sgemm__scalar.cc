// The scalar-tier sgemm kernel: Eigen's own blocked product on the build's baseline SIMD (SSE2 on x86-64, NEON on
// aarch64). The reference path, and the kernel wherever no packed kernel is enabled.
#include <Eigen/Core>

#include "ops/float/ukernels/sgemm.h"

namespace octet::float_ops {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;
using ConstMap = Eigen::Map<const RowMajor, Eigen::Unaligned, Stride>;
using Map = Eigen::Map<RowMajor, Eigen::Unaligned, Stride>;

template <typename A, typename B>
void Product(const SgemmBlockArgs& g, const A& a, const B& b) {
  Map c(g.c, g.m, g.n, Stride(g.ldc));
  if (g.accumulate) {
    if (g.alpha == 1.0f) {
      c.noalias() += a * b;
    } else {
      c.noalias() += g.alpha * (a * b);
    }
  } else if (g.alpha == 1.0f) {
    c.noalias() = a * b;
  } else {
    c.noalias() = g.alpha * (a * b);
  }
  if (g.bias != nullptr) c.colwise() += Eigen::Map<const Eigen::VectorXf>(g.bias, g.m);
  for (int64_t i = 0; i < g.m; ++i) g.activation.Apply(g.c + i * g.ldc, g.n);
}

}  // namespace

void sgemm_f32_eigen__scalar(const SgemmBlockArgs& g) {
  if (!g.trans_a && !g.trans_b) {
    Product(g, ConstMap(g.a, g.m, g.k, Stride(g.lda)), ConstMap(g.b, g.k, g.n, Stride(g.ldb)));
  } else if (!g.trans_a && g.trans_b) {
    Product(g, ConstMap(g.a, g.m, g.k, Stride(g.lda)), ConstMap(g.b, g.n, g.k, Stride(g.ldb)).transpose());
  } else if (g.trans_a && !g.trans_b) {
    Product(g, ConstMap(g.a, g.k, g.m, Stride(g.lda)).transpose(), ConstMap(g.b, g.k, g.n, Stride(g.ldb)));
  } else {
    Product(g, ConstMap(g.a, g.k, g.m, Stride(g.lda)).transpose(), ConstMap(g.b, g.n, g.k, Stride(g.ldb)).transpose());
  }
}

}  // namespace octet::float_ops

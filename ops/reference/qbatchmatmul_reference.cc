// QBatchMatMul's layout, weight transform and scalar arithmetic (the formulas are in the header).
#include "ops/reference/qbatchmatmul_reference.h"

#include <algorithm>

#include "ops/reference/qgemm_reference.h"

namespace octet::reference {

Result<BatchMatMulShape> MakeBatchMatMulShape(const Shape& a, const Shape& b) {
  if (a.rank() < 2 || b.rank() < 2) return InvalidArgument("A {} and B {} must have rank >= 2", a, b);
  BatchMatMulShape s;
  s.m = a.dim(a.rank() - 2);
  s.k = a.dim(a.rank() - 1);
  s.n = b.dim(b.rank() - 1);
  if (b.dim(b.rank() - 2) != s.k) {
    return InvalidArgument("A {} and B {}: K differs ({} and {})", a, b, s.k, b.dim(b.rank() - 2));
  }
  const int batch_rank = std::max(a.rank(), b.rank()) - 2;
  std::vector<int64_t> dims(static_cast<size_t>(batch_rank));
  std::vector<int64_t> a_stride(dims.size(), 0), b_stride(dims.size(), 0);
  int64_t as = s.m * s.k, bs = s.k * s.n;
  for (int d = batch_rank - 1; d >= 0; --d) {
    const int ad = d - (batch_rank - (a.rank() - 2)), bd = d - (batch_rank - (b.rank() - 2));
    const int64_t da = ad >= 0 ? a.dim(ad) : 1, db = bd >= 0 ? b.dim(bd) : 1;
    if (da != db && da != 1 && db != 1) {
      return InvalidArgument("the batch dims of A {} and B {} do not broadcast", a, b);
    }
    dims[static_cast<size_t>(d)] = std::max(da, db);
    a_stride[static_cast<size_t>(d)] = da == 1 ? 0 : as;
    b_stride[static_cast<size_t>(d)] = db == 1 ? 0 : bs;
    as *= da;
    bs *= db;
  }
  int64_t batches = 1;
  for (int64_t d : dims) batches *= d;
  for (int64_t i = 0; i < batches; ++i) {
    int64_t rem = i, ao = 0, bo = 0;
    for (int d = batch_rank - 1; d >= 0; --d) {
      const int64_t c = rem % dims[static_cast<size_t>(d)];
      rem /= dims[static_cast<size_t>(d)];
      ao += c * a_stride[static_cast<size_t>(d)];
      bo += c * b_stride[static_cast<size_t>(d)];
    }
    s.a_offsets.push_back(ao);
    s.b_offsets.push_back(bo);
  }
  dims.push_back(s.m);
  dims.push_back(s.n);
  s.output = Shape(dims);
  return s;
}

int32_t BatchMatMulWeightShift(DType b_dtype, int64_t quant_min, int64_t quant_max) {
  if (quant_max - quant_min <= 127) return static_cast<int32_t>(quant_min) + 64;
  return b_dtype == DType::kU8 ? 128 : 0;
}

void BatchMatMulWeights(DType b_dtype, const void* b, int64_t k, int64_t n, int32_t shift, int8_t* w) {
  const bool u8 = b_dtype == DType::kU8;
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < k; ++i) {
      const int32_t code = u8 ? int32_t{static_cast<const uint8_t*>(b)[i * n + j]}
                              : int32_t{static_cast<const int8_t*>(b)[i * n + j]};
      w[j * k + i] = static_cast<int8_t>(std::clamp(code - shift, -128, 127));
    }
  }
}

Result<Tensor> QBatchMatMul(const Tensor& a, const QParams& a_qp, const Tensor& b, const QParams& b_qp,
                            const QParams& y_qp) {
  OCTET_ASSIGN_OR_RETURN(const BatchMatMulShape s, MakeBatchMatMulShape(a.shape(), b.shape()));
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(y_qp.dtype(), s.output));
  const size_t m = static_cast<size_t>(s.m), k = static_cast<size_t>(s.k), n = static_cast<size_t>(s.n);
  std::vector<int8_t> w(n * k);
  std::vector<int32_t> acc(m * n);
  const float multiplier = QGemmFp32Multiplier(a_qp.scale(), b_qp.scale(), y_qp.scale());
  std::vector<float> multipliers(n, multiplier);
  QGemmStageParams stage;
  stage.stage = QGemmStage::kFp32;
  stage.multipliers = multipliers.data();
  stage.signed_output = y_qp.dtype() == DType::kS8;
  stage.zero_point = y_qp.zero_point();
  stage.lo = static_cast<int32_t>(y_qp.quant_min());
  stage.hi = static_cast<int32_t>(y_qp.quant_max());
  for (size_t batch = 0; batch < s.a_offsets.size(); ++batch) {
    const auto* bb = static_cast<const uint8_t*>(b.raw_data()) + s.b_offsets[batch];
    const int32_t shift = BatchMatMulWeightShift(b.dtype(), b_qp.quant_min(), b_qp.quant_max());
    BatchMatMulWeights(b.dtype(), bb, s.k, s.n, shift, w.data());
    const int32_t w_zp = b_qp.zero_point() - shift;
    const std::vector<int32_t> w_zps(n, w_zp);
    const auto* ab = static_cast<const uint8_t*>(a.raw_data()) + s.a_offsets[batch];  // 1-byte codes: offsets are bytes
    if (a.dtype() == DType::kU8) {
      QGemmAccumulate(m, n, k, ab, k, a_qp.zero_point(), w.data(), k, w_zps.data(), acc.data(), n);
    } else {
      QGemmAccumulate(m, n, k, reinterpret_cast<const int8_t*>(ab), k, a_qp.zero_point(), w.data(), k, w_zps.data(),
                      acc.data(), n);
    }
    QGemmApplyStage(m, n, acc.data(), n, stage, static_cast<uint8_t*>(y.raw_data()) + batch * m * n, n);
  }
  return y;
}

}  // namespace octet::reference

// Scalar qvadd kernels: the portable fallback, the reference's QAddFp32Value element by element.
#include "ops/reference/qelementwise_reference.h"
#include "ops/ukernels/qvadd.h"

namespace octet {
namespace {

template <typename T>
void QVAddScalar(size_t n, const T* a, const T* b, T* y, const QVAddParams& p) {
  for (size_t i = 0; i < n; ++i) y[i] = static_cast<T>(reference::QAddFp32Value(a[i], b[i], p));
}

}  // namespace

void qvadd_u8_minmax_fp32_ukernel__scalar(size_t n, const uint8_t* a, const uint8_t* b, uint8_t* y,
                                          const QVAddParams& p) {
  QVAddScalar(n, a, b, y, p);
}
void qvadd_s8_minmax_fp32_ukernel__scalar(size_t n, const int8_t* a, const int8_t* b, int8_t* y,
                                          const QVAddParams& p) {
  QVAddScalar(n, a, b, y, p);
}

}  // namespace octet

// The portable QBatchMatMul packing kernel: the shifted transpose into an N x K buffer, then QGemmPackWeights (any
// layout, the int16 one included).
#include <vector>

#include "ops/ukernels/qbmm_pack.h"

namespace octet {

void qbmm_pack_ukernel__scalar(const QGemmLayout& layout, const uint8_t* b, size_t b_stride, size_t k, size_t n,
                               uint8_t shift, int8_t* packed, int32_t* col_sums) {
  std::vector<int8_t> w(n * k);
  for (size_t j = 0; j < n; ++j) {
    for (size_t i = 0; i < k; ++i)
      w[j * k + i] = static_cast<int8_t>(static_cast<uint8_t>(b[i * b_stride + j] - shift));
  }
  QGemmPackWeights(layout, n, k, w.data(), k, packed, col_sums);
}

}  // namespace octet

// The sgemm family's candidate list, built from sgemm.inc.
#include <algorithm>
#include <vector>

#include "ops/float/ukernels/sgemm.h"

namespace octet::float_ops {

std::span<const UkernelEntry<SgemmBlockFn>> SgemmUkernels() {
  static const std::vector<UkernelEntry<SgemmBlockFn>> list = {
#define OCTET_SGEMM_UKERNEL(isa, fn, mr, nr) {Isa::isa, #fn, &fn},
#include "ops/float/ukernels/sgemm.inc"
#undef OCTET_SGEMM_UKERNEL
  };
  return list;
}

int SgemmPanelRows(SgemmBlockFn kernel) {
#define OCTET_SGEMM_UKERNEL(isa, fn, mr, nr) \
  if (kernel == &fn) return mr;
#include "ops/float/ukernels/sgemm.inc"
#undef OCTET_SGEMM_UKERNEL
  return 0;
}

int SgemmPanelCols(SgemmBlockFn kernel) {
#define OCTET_SGEMM_UKERNEL(isa, fn, mr, nr) \
  if (kernel == &fn) return nr;
#include "ops/float/ukernels/sgemm.inc"
#undef OCTET_SGEMM_UKERNEL
  return 0;
}

int64_t PackedSgemmABlockOffset(SgemmBlockFn kernel, int64_t block, int64_t k) {
  const int64_t mr = SgemmPanelRows(kernel);
  if (mr == 0) return 0;
  return block * ((kSgemmMaxM + mr - 1) / mr * mr) * k;
}

std::vector<float> PackSgemmA(SgemmBlockFn kernel, int64_t m, int64_t k, bool trans_a, const float* a, int64_t lda) {
  const int64_t mr = SgemmPanelRows(kernel);
  if (mr == 0 || m <= 0 || k <= 0) return {};
  const int64_t blocks = (m + kSgemmMaxM - 1) / kSgemmMaxM;
  std::vector<float> packed(static_cast<size_t>(PackedSgemmABlockOffset(kernel, blocks - 1, k)), 0.0f);
  const int64_t last_rows = m - (blocks - 1) * kSgemmMaxM;
  packed.resize(packed.size() + static_cast<size_t>((last_rows + mr - 1) / mr * mr * k), 0.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t m0 = b * kSgemmMaxM;
    const int64_t rows = std::min(kSgemmMaxM, m - m0);
    const int64_t panels = (rows + mr - 1) / mr;
    float* out = packed.data() + PackedSgemmABlockOffset(kernel, b, k);
    for (int64_t k0 = 0; k0 < k; k0 += kSgemmKc) {
      const int64_t kc = std::min(kSgemmKc, k - k0);
      for (int64_t i = 0; i < panels; ++i) {
        for (int64_t p = 0; p < kc; ++p) {
          for (int64_t r = 0; r < mr; ++r) {
            const int64_t row = m0 + i * mr + r;
            float v = 0.0f;
            if (row < m) v = trans_a ? a[(k0 + p) * lda + row] : a[row * lda + k0 + p];
            *out++ = v;
          }
        }
      }
    }
  }
  return packed;
}

std::vector<float> PackSgemmB(SgemmBlockFn kernel, int64_t k, int64_t n, bool trans_b, const float* b, int64_t ldb) {
  const int64_t nr = SgemmPanelCols(kernel);
  if (nr == 0 || n <= 0 || k <= 0) return {};
  const int64_t panels = (n + nr - 1) / nr;
  std::vector<float> packed(static_cast<size_t>(panels * k * nr), 0.0f);
  float* out = packed.data();
  for (int64_t j = 0; j < panels; ++j) {
    const int64_t width = std::min(nr, n - j * nr);
    for (int64_t p = 0; p < k; ++p, out += nr) {
      for (int64_t c = 0; c < width; ++c) {
        const int64_t col = j * nr + c;
        out[c] = trans_b ? b[col * ldb + p] : b[p * ldb + col];
      }
    }
  }
  return packed;
}

}  // namespace octet::float_ops

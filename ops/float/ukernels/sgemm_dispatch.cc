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

int64_t PackedSgemmAFloats(SgemmBlockFn kernel, int64_t m, int64_t k) {
  const int64_t mr = SgemmPanelRows(kernel);
  if (mr == 0 || m <= 0 || k <= 0) return 0;
  const int64_t blocks = (m + kSgemmMaxM - 1) / kSgemmMaxM;
  const int64_t last_rows = m - (blocks - 1) * kSgemmMaxM;
  return PackedSgemmABlockOffset(kernel, blocks - 1, k) + (last_rows + mr - 1) / mr * mr * k;
}

int64_t PackedSgemmAPanels(SgemmBlockFn kernel, int64_t m) {
  const int64_t mr = SgemmPanelRows(kernel);
  if (mr == 0 || m <= 0) return 0;
  const int64_t block_panels = (kSgemmMaxM + mr - 1) / mr;
  const int64_t blocks = (m + kSgemmMaxM - 1) / kSgemmMaxM;
  const int64_t last_rows = m - (blocks - 1) * kSgemmMaxM;
  return (blocks - 1) * block_panels + (last_rows + mr - 1) / mr;
}

namespace {

// Panel `panel` of a block of `block_panels` panels, every k slice: out[slice][panel][p][r] = A(row0 + r, k0 + p),
// zero from row `row_end` (the block's end) on. MR is a template constant so the row loop unrolls (the per-call packing
// of activations, where its speed counts, runs here too).
template <int MR>
void PackAPanel(int64_t row_end, int64_t k, bool trans_a, const float* a, int64_t lda, int64_t row0,
                int64_t block_panels, int64_t panel, float* block_out) {
  const int64_t rows = std::min<int64_t>(MR, row_end - row0);
  for (int64_t k0 = 0; k0 < k; k0 += kSgemmKc) {
    const int64_t kc = std::min(kSgemmKc, k - k0);
    float* out = block_out + block_panels * MR * k0 + panel * kc * MR;
    if (trans_a) {
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = a + (k0 + p) * lda + row0;
        for (int64_t r = 0; r < rows; ++r) out[p * MR + r] = src[r];
        for (int64_t r = rows; r < MR; ++r) out[p * MR + r] = 0.0f;
      }
    } else if (rows == MR) {
      const float* src[MR];
      for (int r = 0; r < MR; ++r) src[r] = a + (row0 + r) * lda + k0;
      for (int64_t p = 0; p < kc; ++p) {
        for (int r = 0; r < MR; ++r) out[p * MR + r] = src[r][p];
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t r = 0; r < rows; ++r) out[p * MR + r] = a[(row0 + r) * lda + k0 + p];
        for (int64_t r = rows; r < MR; ++r) out[p * MR + r] = 0.0f;
      }
    }
  }
}

}  // namespace

void PackSgemmAPanels(SgemmBlockFn kernel, int64_t m, int64_t k, bool trans_a, const float* a, int64_t lda,
                      int64_t panel_begin, int64_t panel_end, float* packed) {
  const int64_t mr = SgemmPanelRows(kernel);
  if (mr == 0 || m <= 0 || k <= 0) return;
  const int64_t full_block_panels = (kSgemmMaxM + mr - 1) / mr;
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const int64_t b = panel / full_block_panels, i = panel % full_block_panels;
    const int64_t m0 = b * kSgemmMaxM;
    const int64_t row_end = std::min(m, m0 + kSgemmMaxM);
    const int64_t block_panels = (row_end - m0 + mr - 1) / mr;
    const int64_t row0 = m0 + i * mr;
    float* block_out = packed + PackedSgemmABlockOffset(kernel, b, k);
    switch (mr) {
      case 6:
        PackAPanel<6>(row_end, k, trans_a, a, lda, row0, block_panels, i, block_out);
        break;
      case 8:
        PackAPanel<8>(row_end, k, trans_a, a, lda, row0, block_panels, i, block_out);
        break;
      default: {
        // Any other MR: the same layout, one row at a time.
        const int64_t rows = std::min(mr, row_end - row0);
        for (int64_t k0 = 0; k0 < k; k0 += kSgemmKc) {
          const int64_t kc = std::min(kSgemmKc, k - k0);
          float* out = block_out + block_panels * mr * k0 + i * kc * mr;
          for (int64_t p = 0; p < kc; ++p) {
            for (int64_t r = 0; r < mr; ++r) {
              out[p * mr + r] =
                  r < rows ? (trans_a ? a[(k0 + p) * lda + row0 + r] : a[(row0 + r) * lda + k0 + p]) : 0.0f;
            }
          }
        }
      }
    }
  }
}

std::vector<float> PackSgemmA(SgemmBlockFn kernel, int64_t m, int64_t k, bool trans_a, const float* a, int64_t lda) {
  std::vector<float> packed(static_cast<size_t>(PackedSgemmAFloats(kernel, m, k)));
  PackSgemmAPanels(kernel, m, k, trans_a, a, lda, 0, PackedSgemmAPanels(kernel, m), packed.data());
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

// Scalar qgemm kernels and the weight packer: the portable fallback for every layout (no register tile: one
// output at a time, reading the packed weights, s8 or int16, through the layout's formula) and the one definition of
// the packed layout (ops/ukernels/qgemm.h). Accumulation wraps mod 2^32 in uint32_t, as the SIMD kernels' does; the
// stages call the reference's per-value functions (qgemm/scalar_epilogue.h).
#include <cstring>

#include "ops/ukernels/qgemm.h"
#include "ops/ukernels/qgemm/scalar_epilogue.h"

namespace octet {

void QGemmPackWeights(const QGemmLayout& layout, size_t n, size_t k, const int8_t* w, size_t w_stride,
                      int8_t* packed, int32_t* col_sums) {
  const size_t nr = layout.nr, kr = layout.kr;
  const size_t np = layout.PaddedN(n), kp = layout.PaddedK(k);
  std::memset(packed, 0, layout.PackedBytes(n, k));
  auto* wide = reinterpret_cast<int16_t*>(packed);  // int16 layouts: the buffer is 2-byte aligned
  for (size_t j = 0; j < np; ++j) {
    int32_t sum = 0;
    if (j < n) {
      const size_t panel = (j / nr) * (kp * nr) + (j % nr) * kr;
      for (size_t kk = 0; kk < k; ++kk) {
        const int8_t v = w[j * w_stride + kk];
        const size_t e = panel + (kk / kr) * (nr * kr) + kk % kr;
        if (layout.w_bytes == 2) {
          wide[e] = v;
        } else {
          packed[e] = v;
        }
        sum += v;  // |sum| <= 128 * K < 2^31 for every K the operator accepts
      }
    }
    col_sums[j] = sum;
  }
}

namespace {

template <typename TA, QGemmStage kStage>
void Run(const QGemmUkernelArgs& args) {
  const QGemmUkernelParams& p = *args.params;
  const QGemmStageParams& s = p.stage;
  OCTET_DCHECK(s.stage == kStage);
  const size_t nr = args.layout.nr, kr = args.layout.kr;
  const bool wide = args.layout.w_bytes == 2;
  const TA* a = static_cast<const TA*>(args.a);
  for (size_t i = 0; i < args.m; ++i) {
    for (size_t j = 0; j < args.n; ++j) {
      const int8_t* panel = args.w + (j / nr) * args.w_panel_stride;
      uint32_t acc = static_cast<uint32_t>(p.col_offsets[j]);
      for (size_t kk = 0; kk < args.k; ++kk) {
        const size_t e = (kk / kr) * (nr * kr) + (j % nr) * kr + kk % kr;
        const int32_t wv = wide ? int32_t{reinterpret_cast<const int16_t*>(panel)[e]} : int32_t{panel[e]};
        const int32_t product = int32_t{a[i * args.a_stride + kk]} * wv;
        acc += static_cast<uint32_t>(product);
      }
      if (p.w_zero_points != nullptr) {
        acc -= static_cast<uint32_t>(p.w_zero_points[j]) * static_cast<uint32_t>(p.row_sums[i]);
      }
      const int32_t v = static_cast<int32_t>(acc);
      const size_t o = i * args.y_stride + j;
      StoreQGemmStageValue<kStage>(s, v, j, args.y, o);
    }
  }
}

}  // namespace

void qgemm_u8s8_s32_ukernel__scalar(const QGemmUkernelArgs& args) { Run<uint8_t, QGemmStage::kS32>(args); }
void qgemm_u8s8_minmax_fp32_ukernel__scalar(const QGemmUkernelArgs& args) { Run<uint8_t, QGemmStage::kFp32>(args); }
void qgemm_u8s8_minmax_q31_ukernel__scalar(const QGemmUkernelArgs& args) { Run<uint8_t, QGemmStage::kQ31>(args); }
void qgemm_u8s8_minmax_fbgemm_ukernel__scalar(const QGemmUkernelArgs& args) { Run<uint8_t, QGemmStage::kFbgemm>(args); }
void qgemm_u8s8_f32_ukernel__scalar(const QGemmUkernelArgs& args) { Run<uint8_t, QGemmStage::kF32>(args); }
void qgemm_s8s8_s32_ukernel__scalar(const QGemmUkernelArgs& args) { Run<int8_t, QGemmStage::kS32>(args); }
void qgemm_s8s8_minmax_fp32_ukernel__scalar(const QGemmUkernelArgs& args) { Run<int8_t, QGemmStage::kFp32>(args); }
void qgemm_s8s8_minmax_q31_ukernel__scalar(const QGemmUkernelArgs& args) { Run<int8_t, QGemmStage::kQ31>(args); }
void qgemm_s8s8_minmax_fbgemm_ukernel__scalar(const QGemmUkernelArgs& args) { Run<int8_t, QGemmStage::kFbgemm>(args); }
void qgemm_s8s8_f32_ukernel__scalar(const QGemmUkernelArgs& args) { Run<int8_t, QGemmStage::kF32>(args); }

}  // namespace octet

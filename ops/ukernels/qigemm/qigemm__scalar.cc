// Scalar qigemm kernels: the portable fallback for every layout and tile size (one output at a time, reading the
// packed weights, s8 or int16, through the layout's formula and A through the indirection buffer). Accumulation
// wraps mod 2^32 in uint32_t, as the SIMD kernels' does; the stages are qgemm's scalar ones.
#include "ops/ukernels/qgemm/scalar_epilogue.h"
#include "ops/ukernels/qigemm.h"

namespace octet {
namespace {

template <typename TA, QGemmStage kStage>
void Run(const QIgemmUkernelArgs& args) {
  const QGemmUkernelParams& p = *args.params;
  const QGemmStageParams& s = p.stage;
  OCTET_DCHECK(s.stage == kStage);
  const size_t nr = args.layout.nr, kr = args.layout.kr;
  const bool wide = args.layout.w_bytes == 2;
  for (size_t i = 0; i < args.m; ++i) {
    const void* const* pointers = args.indirection + (i / args.mr) * args.taps * args.mr + i % args.mr;
    for (size_t j = 0; j < args.n; ++j) {
      const int8_t* panel = args.w + (j / nr) * args.w_panel_stride;
      uint32_t acc = static_cast<uint32_t>(p.col_offsets[j]);
      for (size_t t = 0; t < args.taps; ++t) {
        const TA* a = reinterpret_cast<const TA*>(static_cast<const uint8_t*>(pointers[t * args.mr]) + args.a_offset);
        for (size_t ck = 0; ck < args.c; ++ck) {
          const size_t kk = t * args.c + ck;
          const size_t e = (kk / kr) * (nr * kr) + (j % nr) * kr + kk % kr;
          const int32_t wv = wide ? int32_t{reinterpret_cast<const int16_t*>(panel)[e]} : int32_t{panel[e]};
          acc += static_cast<uint32_t>(int32_t{a[ck]} * wv);
        }
      }
      if (p.w_zero_points != nullptr) {
        acc -= static_cast<uint32_t>(p.w_zero_points[j]) * static_cast<uint32_t>(p.row_sums[i]);
      }
      StoreQGemmStageValue<kStage>(s, static_cast<int32_t>(acc), j, args.y, i * args.y_stride + j);
    }
  }
}

}  // namespace

void qigemm_u8s8_s32_ukernel__scalar(const QIgemmUkernelArgs& args) { Run<uint8_t, QGemmStage::kS32>(args); }
void qigemm_u8s8_minmax_fp32_ukernel__scalar(const QIgemmUkernelArgs& args) { Run<uint8_t, QGemmStage::kFp32>(args); }
void qigemm_u8s8_minmax_q31_ukernel__scalar(const QIgemmUkernelArgs& args) { Run<uint8_t, QGemmStage::kQ31>(args); }
void qigemm_u8s8_minmax_fbgemm_ukernel__scalar(const QIgemmUkernelArgs& args) {
  Run<uint8_t, QGemmStage::kFbgemm>(args);
}
void qigemm_u8s8_f32_ukernel__scalar(const QIgemmUkernelArgs& args) { Run<uint8_t, QGemmStage::kF32>(args); }
void qigemm_s8s8_s32_ukernel__scalar(const QIgemmUkernelArgs& args) { Run<int8_t, QGemmStage::kS32>(args); }
void qigemm_s8s8_minmax_fp32_ukernel__scalar(const QIgemmUkernelArgs& args) { Run<int8_t, QGemmStage::kFp32>(args); }
void qigemm_s8s8_minmax_q31_ukernel__scalar(const QIgemmUkernelArgs& args) { Run<int8_t, QGemmStage::kQ31>(args); }
void qigemm_s8s8_minmax_fbgemm_ukernel__scalar(const QIgemmUkernelArgs& args) {
  Run<int8_t, QGemmStage::kFbgemm>(args);
}
void qigemm_s8s8_f32_ukernel__scalar(const QIgemmUkernelArgs& args) { Run<int8_t, QGemmStage::kF32>(args); }

}  // namespace octet

// Defines a file's ten qdwconv entry points (u8/s8 activations x five stages) from its Run<TA, kStage> template,
// so every ISA file exposes the same names as qdwconv.inc lists.
#pragma once

#define OCTET_QDWCONV_DEFINE(isa_name, ct)                                                                          \
  void qdwconv_u8s8_s32_ukernel_c##ct##__##isa_name(const QDwConvUkernelArgs& a) { Run<uint8_t, QGemmStage::kS32>(a); } \
  void qdwconv_u8s8_minmax_fp32_ukernel_c##ct##__##isa_name(const QDwConvUkernelArgs& a) {                          \
    Run<uint8_t, QGemmStage::kFp32>(a);                                                                             \
  }                                                                                                                 \
  void qdwconv_u8s8_minmax_q31_ukernel_c##ct##__##isa_name(const QDwConvUkernelArgs& a) {                           \
    Run<uint8_t, QGemmStage::kQ31>(a);                                                                              \
  }                                                                                                                 \
  void qdwconv_u8s8_minmax_fbgemm_ukernel_c##ct##__##isa_name(const QDwConvUkernelArgs& a) {                        \
    Run<uint8_t, QGemmStage::kFbgemm>(a);                                                                           \
  }                                                                                                                 \
  void qdwconv_u8s8_f32_ukernel_c##ct##__##isa_name(const QDwConvUkernelArgs& a) { Run<uint8_t, QGemmStage::kF32>(a); } \
  void qdwconv_s8s8_s32_ukernel_c##ct##__##isa_name(const QDwConvUkernelArgs& a) { Run<int8_t, QGemmStage::kS32>(a); }  \
  void qdwconv_s8s8_minmax_fp32_ukernel_c##ct##__##isa_name(const QDwConvUkernelArgs& a) {                          \
    Run<int8_t, QGemmStage::kFp32>(a);                                                                              \
  }                                                                                                                 \
  void qdwconv_s8s8_minmax_q31_ukernel_c##ct##__##isa_name(const QDwConvUkernelArgs& a) {                           \
    Run<int8_t, QGemmStage::kQ31>(a);                                                                               \
  }                                                                                                                 \
  void qdwconv_s8s8_minmax_fbgemm_ukernel_c##ct##__##isa_name(const QDwConvUkernelArgs& a) {                        \
    Run<int8_t, QGemmStage::kFbgemm>(a);                                                                            \
  }                                                                                                                 \
  void qdwconv_s8s8_f32_ukernel_c##ct##__##isa_name(const QDwConvUkernelArgs& a) { Run<int8_t, QGemmStage::kF32>(a); }

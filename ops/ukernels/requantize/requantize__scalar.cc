// Scalar requantize kernels: the portable fallback, the reference's loops behind the family's signature.
#include "ops/reference/requantize_reference.h"
#include "ops/ukernels/requantize.h"

namespace octet {

void requantize_s32_u8_fp32_ukernel__scalar(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                            uint8_t* y, size_t y_stride, const RequantizeFp32Params& p) {
  reference::RequantizeFp32(rows, channels, acc, acc_stride, y, y_stride, p);
}
void requantize_s32_s8_fp32_ukernel__scalar(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                            int8_t* y, size_t y_stride, const RequantizeFp32Params& p) {
  reference::RequantizeFp32(rows, channels, acc, acc_stride, y, y_stride, p);
}
void requantize_s32_u8_q31_ukernel__scalar(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                           uint8_t* y, size_t y_stride, const RequantizeQ31Params& p) {
  reference::RequantizeQ31(rows, channels, acc, acc_stride, y, y_stride, p);
}
void requantize_s32_s8_q31_ukernel__scalar(size_t rows, size_t channels, const int32_t* acc, size_t acc_stride,
                                           int8_t* y, size_t y_stride, const RequantizeQ31Params& p) {
  reference::RequantizeQ31(rows, channels, acc, acc_stride, y, y_stride, p);
}

}  // namespace octet

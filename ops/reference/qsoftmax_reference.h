// Scalar specification of QSoftmax (ops/int8/int8_ops.h): Softmax over the last axis of a u8 / s8 tensor.
//
// Method: exp by a 256-entry table (TFLite's approach), not I-BERT's polynomial. With per-tensor int8 logits the
// distance of a code from its row's maximum, j = max_row - q_i, takes at most 256 values, so exp(-sx j) can be
// tabulated once at Prepare from the scale alone: no approximation error beyond the table's rounding, one load per
// element, and no range reduction. I-BERT's second-order polynomial pays off when the logits are int32 (a matmul's
// accumulators, too many values to tabulate); octet's QSoftmax reads requantized int8 logits.
//
//   table[j] = rne(exp(-sx j) * 2^23)   for j in [0, 255]  (double exp, computed once; table[0] = 2^23)
//   e_i      = table[max_row - q_i]                         (uint32)
//   S        = sum_i e_i                                    (uint64)
//   y_i      = clamp(zy + floor((e_i * M + S * 2^15) / (S * 2^16)), y_quant_min, y_quant_max)
//              M = rne(2^16 / sy)  (uint64; sy >= 2^-16),   i.e. zy + e_i / S / sy rounded half up
// Rows have at most 2^24 elements (S and e_i * M stay below 2^63).
//
// Error against float Softmax of the dequantized input: the table rounding (2^-24 relative) and the final rounding;
// the integer result differs from rne(float_softmax / sy) + zy by at most 1 (tested).
#pragma once

#include <array>
#include <cstdint>

#include "core/status.h"

namespace octet::reference {

inline constexpr int kQSoftmaxExpBits = 23;

struct QSoftmaxParams {
  std::array<uint32_t, 256> exp_table{};
  uint64_t multiplier = 0;  // M
  int32_t y_zp = 0, y_quant_min = 0, y_quant_max = 255;
};

// Fails when a scale is not positive and finite, or y_scale < 2^-16.
Result<QSoftmaxParams> MakeQSoftmaxParams(float x_scale, float y_scale, int32_t y_zp, int32_t y_quant_min,
                                          int32_t y_quant_max);

// One row of n codes (X and Y are uint8_t or int8_t).
template <typename X, typename Y>
void QSoftmaxRow(const QSoftmaxParams& p, int64_t n, const X* x, Y* y);

}  // namespace octet::reference

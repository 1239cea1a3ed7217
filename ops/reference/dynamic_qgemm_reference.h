// Scalar specification of dynamic quantization (DESIGN.md §6, numerics.md §2.12): activation qparams chosen per
// call from the live range with PyTorch's ChooseQuantizationParams, then the int8 GEMM with a float output stage.
// The dynamic operators (ops/int8/dynamic_gemm_op.h, dynamic_rnn_op.h) equal this composition bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace octet::reference {

// What ChooseQuantizationParams returns: the scale in double as PyTorch keeps it (the tensor stores float(scale)).
struct ChosenQParams {
  double scale = 1.0;
  int32_t zero_point = 0;
};

// PyTorch 1.13's quant_utils::ChooseQuantizationParams (aten/src/ATen/native/quantized/cpu/QuantUtils.h, the same
// as fbgemm::ChooseQuantizationParams), for min <= max, both finite, qmin < qmax:
//   reduce_range: qmin /= 2, qmax /= 2 (C++ integer division: [0, 255] -> [0, 127])
//   preserve_sparsity and min < 0 < max: widen to the symmetric range max(|min / sq_min|, |max / sq_max|) *
//     [sq_min, sq_max] with sq_min = -((qmax - qmin) / 2 + 1), sq_max = (qmax - qmin) / 2
//   min = min(min, 0), max = max(max, 0)                                   (0 exactly representable)
//   scale = (double(max) - min) / (qmax - qmin); 0.1 when float(scale) is 0 or its float reciprocal is infinite
//   force_scale_power_of_two: scale rounded up to a power of two
//   scale < 6.1e-5f (fp16's smallest normal): scale = 6.1e-5f and the range widened by the same factor (in float)
//   zero point from the end whose error term |q_end| - |end / scale| is smaller (double), the midpoint
//   (qmin + qmax) / 2 when preserve_sparsity and min < 0 < max, clamped to [qmin, qmax], else rounded half to even.
ChosenQParams ChooseQuantizationParams(float min, float max, int32_t qmin, int32_t qmax,
                                       bool preserve_sparsity = false, bool force_scale_power_of_two = false,
                                       bool reduce_range = false);

// The u8 activation qparams of a dynamic GEMM for activations x (n contiguous floats, finite): the range
// [min(x), max(x)] (0 when n is 0) through ChooseQuantizationParams(min, max, 0, 255, false, false, reduce_range),
// as FBGEMM's dynamic linear (qlinear_dynamic.cpp) does. quant_max is 255, or 127 with reduce_range.
struct DynamicActivationQParams {
  float scale = 1.0f;  // float(ChosenQParams::scale): what quantization and the output stage use
  int32_t zero_point = 0;
  int32_t quant_min = 0;
  int32_t quant_max = 255;
};
DynamicActivationQParams ChooseDynamicActivationQParams(size_t n, const float* x, bool reduce_range);

// Dynamic GEMM, the composition of the references:
//   (s, zp) = ChooseDynamicActivationQParams(all m x k activations)
//   a[i][p] = QuantizeValue<uint8_t>(x[i][p], 1.0f / s, zp, 0, quant_max)                  (quantize_reference.h)
//   acc     = QGemmAccumulate(a, zp, w, w_zero_points)                                      (qgemm_reference.h)
//   y[i][j] = DequantizeAccumulatorValue(acc[i][j], s, w_scales[j], bias ? bias[j] : 0)     (the kF32 stage)
// x: m rows of k floats, x_stride apart. w: n rows (output channels) of k s8 values, w_stride apart, with per
// channel scales and zero points (per-tensor weights repeat one). y: m rows of n floats, y_stride apart. Returns
// the chosen activation qparams.
DynamicActivationQParams DynamicQGemm(size_t m, size_t n, size_t k, const float* x, size_t x_stride,
                                      const int8_t* w, size_t w_stride, const float* w_scales,
                                      const int32_t* w_zero_points, const float* bias, bool reduce_range, float* y,
                                      size_t y_stride);

}  // namespace octet::reference

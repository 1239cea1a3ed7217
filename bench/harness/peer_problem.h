// The peer problem of every int8 GEMM and convolution benchmark (../shared/peers/README.md): u8 activations with zero
// point 117, per-tensor symmetric s8 weights, s32 bias, one output scale chosen by the y_scale rule, output zero point
// 121, u8 out. `bench/` (Google Benchmark) and `octet bench gemm|conv` both build it here, so they time the same data.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/qparams.h"
#include "core/status.h"
#include "ops/conv2d_params.h"
#include "ops/qgemm.h"

namespace octet::bench {

inline constexpr int32_t kPeerActivationZeroPoint = 117;
inline constexpr int32_t kPeerOutputZeroPoint = 121;
inline constexpr float kPeerActivationScale = 0.02f;
inline constexpr float kPeerWeightScale = 0.003f;

// The y_scale rule: for uniform operands the accumulator's spread is sqrt(K) * 73.9 (u8 around 117) * 73.9 (s8);
// the output scale maps it to about 40 LSB, so few u8 outputs clamp. `k` is the reduction length (at least 1).
float PeerOutputScale(int64_t k);

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};

struct ConvShape {
  int64_t c_in = 0, c_out = 0, h = 0, w = 0, kh = 0, kw = 0, stride = 1, pad = 0, groups = 1;
};

// kS32: plain u8 x s8 -> s32 (activation zero point 0, no bias); kFp32, kQ31, kFbgemm: the quantized linear layer with
// that requantization (fbgemm takes its bias as float, the others as s32).
struct GemmProblemOptions {
  QGemmStage stage = QGemmStage::kFp32;
  int activation_bits = 8;  // 7: activations in [0, 127] (PyTorch's reduce_range)
};

struct GemmProblem {
  QTensor a;  // M x K u8
  QTensor w;  // N x K s8
  QGemmOutput output;
};

struct ConvProblem {
  Conv2dParams params;
  QTensor x;  // 1 x H x W x C_in u8 (NHWC)
  QTensor w;  // C_out x KH x KW x C_in/groups s8 (OHWI)
  QGemmOutput output;
};

// The requantization scheme of a u8 output by name: "fp32", "q31" or "fbgemm" (reference::QGemmStageName).
Result<QGemmStage> ParseRequantScheme(std::string_view scheme);

// Seeded (the same data on every call): A, then W, then the bias, from one mt19937_64.
Result<GemmProblem> MakeGemmProblem(const GemmShape& shape, const GemmProblemOptions& options);
// Requantized with `stage` (not kS32). The shape must be valid (groups divide both channel counts). Activations are
// drawn in [0, 2^activation_bits - 1] (7: PyTorch's reduce_range, where AVX2's vpmaddubsw cannot saturate).
Result<ConvProblem> MakeConvProblem(const ConvShape& shape, QGemmStage stage, int activation_bits = 8);

// 2 M N K and 2 OH OW C_out (C_in / groups) KH KW: the operation counts GOPS figures divide by.
double GemmOps(const GemmShape& shape);
double ConvOps(const ConvShape& shape, int64_t out_h, int64_t out_w);

}  // namespace octet::bench

// The qdwconv kernel family: depthwise convolution (one filter per channel, channel multiplier 1) over an
// indirection buffer, with qgemm's fused output stages. Spec: reference::QConv2dAccumulate with groups = channels
// (ops/reference/qconv2d_reference.h) then reference::QGemmApplyStage; operator: ops/qdwconv.h.
//
// Kernel names follow <op>_<dtypes>_<fusion>_<requant>_ukernel_c<CT>__<isa> (qgemm's grammar, ops/ukernels/qgemm.h):
//   qdwconv_u8s8_minmax_fp32_ukernel_c16__avx512vnni    16 channels per step, 8-bit out, fp32 requantization
// <dtypes> is activation then weight dtype. CT is the channel tile of the inner loop; any channel count is served
// (tails are masked or staged), so CT only matters for speed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/dtype.h"
#include "core/isa.h"
#include "ops/ukernels/qgemm.h"

namespace octet {

// Packed weights: int16 [taps][PaddedChannels(c)], tap t = ky * kw + kx, zeros in the channel padding. Widened once
// at pack time because every kernel multiplies in 16-bit lanes (vpmaddwd / vpdpwssd / smlal), and the padding lets
// a kernel load whole vectors of weights.
inline constexpr size_t kQDwConvChannelAlign = 64;
// The most taps (kh * kw) a kernel accepts: the SIMD kernels widen one channel block of weights into registers or a
// stack buffer of this many vectors. Larger depthwise filters go through the grouped GEMM path of qconv2d.
inline constexpr size_t kQDwConvMaxTaps = 64;
inline size_t QDwConvPaddedChannels(size_t c) {
  return (c + kQDwConvChannelAlign - 1) / kQDwConvChannelAlign * kQDwConvChannelAlign;
}
// w: [c][taps] s8 (the OHWI conv weights of a depthwise layer), packed: taps * PaddedChannels(c) int16.
void QDwConvPackWeights(size_t channels, size_t taps, const int8_t* w, int16_t* packed);

// The 7-bit layout, for kernels that multiply with vpmaddubsw (u8 x s8 pairs summed in saturating int16): exact
// when every activation byte is in [0, 127], since |x0 * w0 + x1 * w1| <= 127 * 128 * 2 < 2^15 for any s8 weights.
// Only whole blocks of 32 channels: per block, per quad of taps (taps padded to a multiple of 4 with zero weights),
// four 32-byte vectors; vector v, dword d, byte k holds w[c][4 * quad + k] for channel
// c = 32 * block + 4 * v + d % 4 + 16 * (d / 4), the order two rounds of in-lane unpacks (bytes, then words) leave
// the 32 channels of four taps in.
inline size_t QDwConvQuadBlocks(size_t channels) { return channels / 32; }
inline size_t QDwConvQuadPackedBytes(size_t channels, size_t taps) {
  return QDwConvQuadBlocks(channels) * (taps + 3) / 4 * 128;
}
void QDwConvPackWeightsQuads(size_t channels, size_t taps, const int8_t* w, int8_t* packed);

// One call computes `pixels` output pixels, all channels:
//   acc[p][c] = sum_t x_t[c] * w[t][c] + col_offsets[c]        (int32, wrapping; x_t = input[p * taps + t])
//   y[p * y_pixel_stride + c] = stage(acc[p][c])
// col_offsets[c] = bias[c] - x_zp * sum_t w[t][c] (QGemmColumnOffset with K = taps and weight zero point 0), so pad
// taps, which point at a row of x_zp bytes, add exactly 0 and the result equals the reference whenever the exact sum
// fits int32 (the operator's bound). input[p * taps + t] points at `channels` readable bytes; kernels never read
// past them. params: per-channel arrays readable up to the next multiple of 16 entries; w_zero_points and
// row_sums must be null (symmetric weights). No allocation, no threads.
struct QDwConvUkernelArgs {
  size_t channels = 0;
  size_t taps = 0;
  size_t pixels = 0;
  const void* const* input = nullptr;
  const int16_t* w = nullptr;  // packed, QDwConvPaddedChannels(channels) int16 per tap
  void* y = nullptr;           // int32_t, float, uint8_t or int8_t per the stage
  size_t y_pixel_stride = 0;   // elements
  const QGemmUkernelParams* params = nullptr;
  // Optional (null: unused): the weights in QDwConvPackWeightsQuads's layout, set by the caller only for u8
  // activations when every byte the input pointers reach (the pad row included) is <= 127, or when every weight is
  // within [-64, 64] (pair sums within 2 * 255 * 64 = 32640 for any byte). The AVX2 kernels then run
  // the whole 32-channel blocks with vpmaddubsw, four taps per vpmaddubsw + vpmaddwd pair, with identical results;
  // other kernels ignore it.
  const int8_t* w_quads = nullptr;
};
using QDwConvUkernelFn = void (*)(const QDwConvUkernelArgs& args);

struct QDwConvUkernelEntry {
  Isa isa;
  const char* name;
  QDwConvUkernelFn fn;
  DType a_dtype;  // u8 or s8
  QGemmStage stage;
  uint32_t channel_tile;
};

#define OCTET_QDWCONV_UKERNEL(isa, a_dtype, stage, ct, fn) void fn(const QDwConvUkernelArgs& args);
#include "ops/ukernels/qdwconv.inc"
#undef OCTET_QDWCONV_UKERNEL

// Every qdwconv kernel, best first within each (activation dtype, stage), scalar last.
std::span<const QDwConvUkernelEntry> QDwConvUkernels();
// The first kernel of the list for this dtype and stage whose ISA the context enables (scalar always qualifies).
const QDwConvUkernelEntry& SelectQDwConvUkernel(const Context& context, DType a_dtype, QGemmStage stage);
// One line per candidate of the dtype and stage: chosen, or why skipped.
std::vector<std::string> ExplainQDwConvSelection(const Context& context, DType a_dtype, QGemmStage stage);

}  // namespace octet

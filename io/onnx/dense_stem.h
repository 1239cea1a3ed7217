// The "dense stem" form of a one-input-channel int8 Conv, shared by the QDQ export (qdq_export_dense_stem.cc) and
// the import that recognises it (qdq_import_dense_stem.cc): the Conv written as ONE Gemm over the image's pixels.
//
// Why: ONNX Runtime 1.30 runs a QLinearConv one image at a time (one small GEMM per image, a fixed cost of ~2 us),
// so a stem such as the digits CNN's (1x8x8 images, 1 -> 8 channels, 3x3) runs slower in int8 than ORT's float
// Conv. As one Gemm of [N, H*W] codes by a dense [OH*OW*O, H*W] weight it runs as ORT's QGemm over the whole batch.
//
// The dense weight T holds at row (oy * OW + ox) * O + o, column iy * W + ix the tap w[o, 0, ky, kx] that reads
// input pixel (iy, ix) for output pixel (oy, ox), and zero elsewhere. A padded tap contributes nothing in either
// form (QLinearConv pads with the input's zero point, (zp - zp) * w = 0), and T's zeros are real zeros since the
// weight's zero points are 0, so every int32 accumulator is the Conv's. Rows are in NHWC order so that ORT's
// layout pass runs a following MaxPool as its NHWC MaxPool; a Reshape and a Transpose give the Conv's NCHW output.
//
// The rule: one input channel, group 1, dilations 1, a static H x W, weight zero points 0, and T at most
// kDenseStemMaxBytes. The limit: T costs H*W multiply-adds per output where the Conv costs KH*KW (7x for the 3x3
// stem on 8x8), and its size is added to the model; 64 KiB is twice the digits stem's 32 KiB (measured there:
// 1.2-1.3x ORT's float at batch 32 for every preset, tests/onnx/ort_qdq/bench_digits.sh), so that T stays in the
// L2 cache. Larger images keep the Conv form (not measured). At batch 1 no form beats ORT's float (its int8
// kernels cost a fixed 5-10 us per operator), nor does this one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace octet {

inline constexpr int64_t kDenseStemMaxBytes = 64 * 1024;

struct DenseStem {
  int64_t height = 0, width = 0;  // the image, one channel
  int64_t kernel_h = 0, kernel_w = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;

  int64_t OutH() const { return (height + pad_top + pad_bottom - kernel_h) / stride_h + 1; }
  int64_t OutW() const { return (width + pad_left + pad_right - kernel_w) / stride_w + 1; }
  int64_t Pixels() const { return OutH() * OutW(); }
  int64_t Cols() const { return height * width; }
  // Whether the numbers describe a Conv with at least one output pixel.
  bool Valid() const;
};

// The mark octet's export puts on the Gemm: the Conv's name, then ".octet_dense_stem_1x8x8_k3x3_s1x1_p1x1x1x1"
// (image, kernel, strides, pads top x left x bottom x right). The import folds only Gemms so named back into a
// Conv, after checking that the weight is that Conv's dense form.
std::string DenseStemName(const std::string& conv_name, const DenseStem& stem);
// The stem a name marks, and the Conv's name in `conv_name`; nullopt for any other name.
std::optional<DenseStem> ParseDenseStemName(std::string_view name, std::string* conv_name);

// Calls f(row, col, ky, kx) for every in-image tap of every output pixel, o = 0 (add o to row for channel o).
template <typename F>
void ForEachDenseStemTap(const DenseStem& s, int64_t channels, F&& f) {
  const int64_t ow = s.OutW();
  for (int64_t oy = 0; oy < s.OutH(); ++oy) {
    for (int64_t ox = 0; ox < ow; ++ox) {
      for (int64_t ky = 0; ky < s.kernel_h; ++ky) {
        for (int64_t kx = 0; kx < s.kernel_w; ++kx) {
          const int64_t iy = oy * s.stride_h - s.pad_top + ky, ix = ox * s.stride_w - s.pad_left + kx;
          if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width) continue;
          f((oy * ow + ox) * channels, iy * s.width + ix, ky, kx);
        }
      }
    }
  }
}

}  // namespace octet

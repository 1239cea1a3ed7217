// Scalar specification of the indirect convolution front end (the indirection-buffer design of QNNPACK and
// XNNPACK's igemm): instead of gathering each output pixel's receptive field into a dense im2col row, a kernel reads
// the NHWC input through pointers, one per (output pixel, tap), each to the c_in contiguous bytes of one input pixel
// or, for a tap in the padding, to a row of zero-point bytes. The buffer depends on the shape and two base
// addresses only, so it is built once per (input, shape) and no activation byte is copied. The arithmetic is
// QConv2dAccumulate's (qconv2d_reference.h); the indirect kernels equal these loops bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/reference/qconv2d_reference.h"

namespace octet::reference {

// Layout for register tiles of `mr` output pixels ([n][oy][ox] order, M = n * out_h * out_w pixels, taps = kh * kw
// in (ky, kx) order): the pointer of pixel p * mr + i at tap t is entry (p * taps + t) * mr + i, so a kernel reads
// one tile's mr pointers per tap from consecutive entries. The last tile, when partial, repeats its last pixel (a
// kernel may compute rows it does not store). Entries: ceil(M / mr) * taps * mr.
size_t ConvIndirectionSize(const Conv2dGeometry& g, size_t mr);

// Fills indirection[ConvIndirectionSize(g, mr)]: each entry points at channel 0 of an input pixel of `x` (NHWC,
// 1-byte elements), or at `zero_row` (c_in bytes of the input zero point) for a tap outside the image. A kernel adds
// the group's channel offset g * (c_in / groups) to every pointer.
void BuildConvIndirection(const Conv2dGeometry& g, size_t mr, const void* x, const void* zero_row,
                          const void** indirection);

// acc[m][o] (m = output pixel, o < c_out) = sum_{t < taps, i < cg} (a_t[g * cg + i] - x_zp) * (w[o][t][i] - w_zp[o]),
// a_t the pointer of pixel m at tap t, g = o's group: QConv2dAccumulate's result when the buffer comes from
// BuildConvIndirection (a zero-row tap adds exactly 0). Computed in int64 and checked to fit int32. TA is uint8_t or
// int8_t.
template <typename TA>
void QConv2dIndirectAccumulate(const Conv2dGeometry& g, size_t mr, const void* const* indirection, int32_t x_zp,
                               const int8_t* w, const int32_t* w_zero_points, int32_t* acc);

}  // namespace octet::reference

// Copies of short byte runs by fixed-size moves: a memcpy of a variable size is a library call, and the int8 kernels
// and im2col copy many runs of a few bytes (a partial output row, a 3-channel stem's kernel row).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace octet {
// Internal linkage on purpose: the per-ISA kernel files include this with their own -m flags, and one inline
// definition shared across objects built for different ISAs could be linked into a caller that cannot run it.
namespace {

// Copies n < 16 bytes: two overlapping moves of the largest power of two not above n.
__attribute__((always_inline)) inline void CopyShort(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n >= 8) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else if (n >= 2) {
    std::memcpy(dst, src, 2);
    std::memcpy(dst + n - 2, src + n - 2, 2);
  } else if (n == 1) {
    dst[0] = src[0];
  }
}

}  // namespace
}  // namespace octet

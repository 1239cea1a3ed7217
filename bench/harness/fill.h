// Seeded data fillers of the benchmarks: a xorshift32 stream, so a benchmark's data is the same on every run and every
// machine (std::uniform_*_distribution is not specified bit for bit across standard libraries).
#pragma once

#include <cstdint>
#include <span>

namespace octet::bench {

// Marsaglia's xorshift32; `state` must not be 0.
inline uint32_t NextXorshift32(uint32_t& state) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

// Quantize inputs for scale 0.05, zero point 117: uniform in [-6.5, 7.5), so most land inside the u8 range and some
// saturate at each end, with +Inf and -Inf as the first two values.
void FillQuantizeInputs(std::span<float> x, uint32_t seed);

// Every bit pattern of T, uniformly (the low bits of the stream).
template <typename T>
void FillIntegers(std::span<T> q, uint32_t seed) {
  for (T& v : q) v = static_cast<T>(NextXorshift32(seed));
}

}  // namespace octet::bench

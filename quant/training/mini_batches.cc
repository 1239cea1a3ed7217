// Seeded mini-batches.
#include "quant/training/mini_batches.h"

#include <cstring>
#include <numeric>
#include <random>

namespace octet::training {
namespace {

// Uniform in [0, bound) by rejection (no modulo bias), from the standard-defined 64-bit Mersenne twister.
uint64_t Below(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t v;
  do {
    v = rng();
  } while (v >= limit);
  return v % bound;
}

}  // namespace

Result<std::vector<std::vector<int64_t>>> MiniBatches(int64_t count, int64_t batch_size, uint64_t seed,
                                                      int64_t epoch, bool shuffle, bool drop_last) {
  if (count < 0 || batch_size < 1) {
    return InvalidArgument("mini-batches need count >= 0 and batch size >= 1, got {} and {}", count, batch_size);
  }
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  if (shuffle) {
    // One stream per (seed, epoch), so epochs can be replayed independently.
    std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(epoch),
                      static_cast<uint32_t>(static_cast<uint64_t>(epoch) >> 32)};
    std::mt19937_64 rng(seq);
    for (int64_t i = count - 1; i > 0; --i) {
      std::swap(order[static_cast<size_t>(i)], order[Below(rng, static_cast<uint64_t>(i) + 1)]);
    }
  }
  std::vector<std::vector<int64_t>> batches;
  for (int64_t begin = 0; begin < count; begin += batch_size) {
    const int64_t end = std::min(count, begin + batch_size);
    if (drop_last && end - begin < batch_size) break;
    batches.emplace_back(order.begin() + begin, order.begin() + end);
  }
  return batches;
}

Result<Tensor> GatherRows(const Tensor& data, std::span<const int64_t> rows) {
  if (data.shape().rank() < 1) return InvalidArgument("cannot take rows of a scalar");
  const int64_t n = data.shape().dim(0);
  std::vector<int64_t> dims = data.shape().dims();
  dims[0] = static_cast<int64_t>(rows.size());
  OCTET_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(data.dtype(), Shape(dims)));
  const size_t row_bytes = n == 0 ? 0 : data.SizeBytes() / static_cast<size_t>(n);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= n) return OutOfRange("row {} is outside [0, {})", rows[i], n);
    std::memcpy(static_cast<std::byte*>(out.raw_data()) + i * row_bytes,
                static_cast<const std::byte*>(data.raw_data()) + static_cast<size_t>(rows[i]) * row_bytes, row_bytes);
  }
  return out;
}

}  // namespace octet::training

// Seeded shuffling of a data set into mini-batches, and gathering a batch's rows. The permutation is a
// Fisher-Yates shuffle driven by std::mt19937_64 (whose output the C++ standard fixes) with unbiased bounded draws
// written here, so a seed gives the same batches with every compiler and library.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace octet::training {

// The sample indices [0, count) of epoch `epoch`, shuffled from (seed, epoch) when `shuffle`, cut into batches of
// `batch_size` (the last one shorter unless drop_last).
Result<std::vector<std::vector<int64_t>>> MiniBatches(int64_t count, int64_t batch_size, uint64_t seed,
                                                      int64_t epoch, bool shuffle = true, bool drop_last = false);

// Rows `rows` of `data` (dimension 0), in that order, as a new tensor [rows.size(), ...].
Result<Tensor> GatherRows(const Tensor& data, std::span<const int64_t> rows);

}  // namespace octet::training

// PlanMemory: places buffers with known lifetimes in one arena so that buffers alive at the same time never
// overlap, reusing the space of dead ones. The executor plans its activations with it once, at Compile.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace octet {

struct BufferRequest {
  int64_t size_bytes = 0;
  // Inclusive range of execution steps during which the buffer must keep its contents.
  int first_step = 0;
  int last_step = 0;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per request, each a multiple of the alignment
  int64_t arena_bytes = 0;       // a multiple of the alignment
};

// Greedy offset assignment (largest buffers first, each at the lowest offset that does not overlap a buffer whose
// lifetime intersects its own). Each buffer is given its size rounded up to `alignment` plus `padding` bytes that
// kernels may over-read. Deterministic: depends only on the requests.
MemoryPlan PlanMemory(std::span<const BufferRequest> requests, int64_t alignment = 64, int64_t padding = 64);

}  // namespace octet

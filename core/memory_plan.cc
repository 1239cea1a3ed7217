// Greedy arena placement of buffers by lifetime.
#include "core/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace octet {

MemoryPlan PlanMemory(std::span<const BufferRequest> requests, int64_t alignment, int64_t padding) {
  const size_t n = requests.size();
  std::vector<int64_t> sizes(n);
  for (size_t i = 0; i < n; ++i) {
    sizes[i] = (requests[i].size_bytes + padding + alignment - 1) / alignment * alignment;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    return requests[a].first_step < requests[b].first_step;
  });

  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;  // [begin, end) of placed buffers whose lifetime meets this one
  for (size_t i : order) {
    busy.clear();
    for (size_t j : placed) {
      const bool overlap =
          requests[j].first_step <= requests[i].last_step && requests[i].first_step <= requests[j].last_step;
      if (overlap) busy.emplace_back(plan.offsets[j], plan.offsets[j] + sizes[j]);
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + sizes[i] <= begin) break;  // fits in the gap before this buffer
      offset = std::max(offset, end);
    }
    plan.offsets[i] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + sizes[i]);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace octet

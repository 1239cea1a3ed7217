// The parallel backends of ParallelFor: oneTBB inside the context's arena, or a plain loop.
#include "core/threading.h"

#if OCTET_WITH_TBB
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#endif

namespace octet {

void* internal_ContextArena(const Context& context);

namespace internal {

void ParallelForTiles(const Context& context, int64_t n, int64_t tile, TileFn fn, void* closure) {
  const int64_t tiles = (n + tile - 1) / tile;
  auto run_tile = [&](int64_t t) {
    const int64_t begin = t * tile;
    fn(closure, begin, begin + tile < n ? begin + tile : n);
  };
#if OCTET_WITH_TBB
  auto* arena = static_cast<tbb::task_arena*>(internal_ContextArena(context));
  if (arena != nullptr) {
    arena->execute([&] {
      tbb::parallel_for(tbb::blocked_range<int64_t>(0, tiles, 1),
                        [&](const tbb::blocked_range<int64_t>& r) {
                          for (int64_t t = r.begin(); t < r.end(); ++t) run_tile(t);
                        },
                        tbb::simple_partitioner());
    });
    return;
  }
#else
  (void)context;
#endif
  for (int64_t t = 0; t < tiles; ++t) run_tile(t);
}

void ParallelForSlotTiles(const Context& context, int64_t n, int64_t tile, SlotTileFn fn, void* closure) {
  const int64_t tiles = (n + tile - 1) / tile;
  auto run_tile = [&](int64_t t, int slot) {
    const int64_t begin = t * tile;
    fn(closure, begin, begin + tile < n ? begin + tile : n, slot);
  };
#if OCTET_WITH_TBB
  auto* arena = static_cast<tbb::task_arena*>(internal_ContextArena(context));
  if (arena != nullptr) {
    arena->execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<int64_t>(0, tiles, 1),
          [&](const tbb::blocked_range<int64_t>& r) {
            // The arena has context.threads() slots; each running thread holds its own index.
            const int index = tbb::this_task_arena::current_thread_index();
            const int slot = index >= 0 && index < context.threads() ? index : 0;
            for (int64_t t = r.begin(); t < r.end(); ++t) run_tile(t, slot);
          },
          tbb::simple_partitioner());
    });
    return;
  }
#else
  (void)context;
#endif
  for (int64_t t = 0; t < tiles; ++t) run_tile(t, 0);
}

}  // namespace internal
}  // namespace octet

// ParallelFor: the one way octet splits work over threads, deterministically.
#pragma once

#include <cstdint>

#include "core/context.h"

namespace octet {

// Runs fn(begin, end) over [0, n) cut into tiles of `tile` items (the last may be shorter). The tiles depend only on
// n and tile, never on the thread count, so any computation whose tiles are independent gives bit-identical
// results at any thread count. Tiles run on the context's threads (serially with one thread or the serial
// backend). fn must not throw.
template <typename Fn>
void ParallelFor(const Context& context, int64_t n, int64_t tile, Fn&& fn);

// The same, with fn(begin, end, slot): slot is in [0, context.threads()) and no two tiles that run at the same time
// share one, so a tile may use per-slot scratch (sized for context.threads() slots) without locks. Which slot a tile
// gets depends on scheduling: results must not depend on it.
template <typename Fn>
void ParallelForSlots(const Context& context, int64_t n, int64_t tile, Fn&& fn);

namespace internal {
using TileFn = void (*)(void* closure, int64_t begin, int64_t end);
void ParallelForTiles(const Context& context, int64_t n, int64_t tile, TileFn fn, void* closure);
using SlotTileFn = void (*)(void* closure, int64_t begin, int64_t end, int slot);
void ParallelForSlotTiles(const Context& context, int64_t n, int64_t tile, SlotTileFn fn, void* closure);
}  // namespace internal

template <typename Fn>
void ParallelFor(const Context& context, int64_t n, int64_t tile, Fn&& fn) {
  if (n <= 0) return;
  if (tile <= 0) tile = n;
  if (n <= tile || context.threads() == 1) {
    for (int64_t begin = 0; begin < n; begin += tile) fn(begin, begin + tile < n ? begin + tile : n);
    return;
  }
  internal::ParallelForTiles(
      context, n, tile,
      [](void* closure, int64_t begin, int64_t end) { (*static_cast<std::remove_reference_t<Fn>*>(closure))(begin, end); },
      &fn);
}

template <typename Fn>
void ParallelForSlots(const Context& context, int64_t n, int64_t tile, Fn&& fn) {
  if (n <= 0) return;
  if (tile <= 0) tile = n;
  if (n <= tile || context.threads() == 1) {
    for (int64_t begin = 0; begin < n; begin += tile) fn(begin, begin + tile < n ? begin + tile : n, 0);
    return;
  }
  internal::ParallelForSlotTiles(
      context, n, tile,
      [](void* closure, int64_t begin, int64_t end, int slot) {
        (*static_cast<std::remove_reference_t<Fn>*>(closure))(begin, end, slot);
      },
      &fn);
}

}  // namespace octet

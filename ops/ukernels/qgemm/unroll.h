// Unroll<N>(f): f(std::integral_constant<size_t, 0>{}), ..., f(integral_constant<N - 1>) as straight-line code. The
// qgemm kernels index their register tiles (arrays of vectors) with these constants, so the compiler sees constant
// indices from the start and keeps every accumulator in a register (a `#pragma unroll` loop is unrolled too late for
// that in GCC 12, which then keeps a copy of the tile in memory).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

// Marks the lambdas passed to Unroll: they must be inlined for the constant indices to reach the optimizer.
#define OCTET_INLINE __attribute__((always_inline))

namespace octet {
namespace {

template <typename F, size_t... I>
__attribute__((always_inline)) inline void UnrollImpl(F&& f, std::index_sequence<I...>) {
  (f(std::integral_constant<size_t, I>{}), ...);
}

template <size_t N, typename F>
__attribute__((always_inline)) inline void Unroll(F&& f) {
  UnrollImpl(f, std::make_index_sequence<N>{});
}

}  // namespace
}  // namespace octet

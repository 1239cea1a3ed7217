// Min/max kernel for NEON (4 lanes): xsimd_kernels.h's MinMax for xsimd::neon64, 4 vectors per step.
#include "observers/kernels/xsimd_kernels.h"

namespace octet {

MinMaxResult minmax_f32_ukernel__neon(size_t n, const float* x) { return xsimd_kernels::MinMax<xsimd::neon64>(n, x); }

}  // namespace octet

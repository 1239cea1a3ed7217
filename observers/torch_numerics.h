// Float arithmetic of the PyTorch 1.13 CPU operators that HistogramObserver's Python code calls, reproduced
// operation by operation so that octet's histogram observers give PyTorch's numbers bit for bit. "1.13" means
// Debian's python3-torch 1.13 running its AVX2 kernels (8 float lanes), on which tests/data/observers was recorded.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace octet::torch_numerics {

// torch.sum of a contiguous float32 vector (aten/src/ATen/native/cpu/SumKernel.cpp): 8-lane vectors summed as
// four interleaved rows with cascade levels of 16 vectors, the leftover vectors into row 0, rows added 1..3 into 0,
// then the scalar tail and the eight lanes added in order to a float accumulator. Every addition rounds to float32.
float Sum(std::span<const float> x);

// torch.cumsum of float32 (cumsum_cpu_kernel): accumulated in double, each output rounded to float32.
std::vector<float> Cumsum(std::span<const float> x);

// torch.div(a, b, rounding_mode='floor') in float32 (c10::div_floor_floating): the quotient rebuilt from fmod so
// that it matches Python's floor division.
float DivFloor(float a, float b);

// torch.linspace(start, end, steps) in float32 as PyTorch 1.13's AVX2 kernel computes it with one thread
// (linspace_kernel through cpu_serial_kernel_vec): step = (end - start) / (steps - 1); f(k) = fma(step, k, start)
// below steps / 2 and fma(-step, steps - 1 - k, end) from there on; elements before the last multiple of 16 are
// written 8 at a time, as f(first) + lane * step (Vectorized::arange, two roundings), the rest are f(i). Measured
// against torch.linspace with tests/data/observers/generate.py (the "linspace" primitive).
float LinspaceAt(float start, float end, int64_t steps, int64_t i);

// Python's int(float): truncation toward zero, as a double (1.13's HistogramObserver passes int(min_val) to histc).
double TruncToInt(float v);

}  // namespace octet::torch_numerics

// PyTorch 1.13 float arithmetic, operation by operation (see torch_numerics.h).
#include "observers/torch_numerics.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace octet::torch_numerics {
namespace {

constexpr int kLanes = 8;  // Vectorized<float>::size() with AVX2
using Vec = std::array<float, kLanes>;

void AddTo(Vec& acc, const Vec& v) {
  for (int k = 0; k < kLanes; ++k) acc[k] = acc[k] + v[k];
}

Vec Load(const float* p) {
  Vec v;
  std::copy(p, p + kLanes, v.begin());
  return v;
}

// c10::utils::CeilLog2: 1 for x <= 2.
int64_t CeilLog2(int64_t x) {
  if (x <= 2) return 1;
  int64_t r = 0;
  uint64_t v = static_cast<uint64_t>(x) - 1;
  while (v != 0) {
    ++r;
    v >>= 1;
  }
  return r;
}

// multi_row_sum<Vec, 4>: rows of four vectors (row i = vectors 4i .. 4i+3), summed in cascade levels.
std::array<Vec, 4> MultiRowSum(const float* data, int64_t rows) {
  constexpr int64_t kLevels = 4;
  const int64_t level_power = std::max<int64_t>(4, CeilLog2(rows) / kLevels);
  const int64_t level_step = int64_t{1} << level_power;
  const int64_t level_mask = level_step - 1;
  std::array<std::array<Vec, 4>, kLevels> acc{};
  int64_t i = 0;
  for (; i + level_step <= rows;) {
    for (int64_t j = 0; j < level_step; ++j, ++i) {
      for (int k = 0; k < 4; ++k) AddTo(acc[0][static_cast<size_t>(k)], Load(data + (i * 4 + k) * kLanes));
    }
    for (int64_t j = 1; j < kLevels; ++j) {
      for (int k = 0; k < 4; ++k) {
        Vec& lower = acc[static_cast<size_t>(j - 1)][static_cast<size_t>(k)];
        AddTo(acc[static_cast<size_t>(j)][static_cast<size_t>(k)], lower);
        lower = Vec{};
      }
      const int64_t mask = level_mask << (j * level_power);
      if ((i & mask) != 0) break;
    }
  }
  for (; i < rows; ++i) {
    for (int k = 0; k < 4; ++k) AddTo(acc[0][static_cast<size_t>(k)], Load(data + (i * 4 + k) * kLanes));
  }
  for (int64_t j = 1; j < kLevels; ++j) {
    for (int k = 0; k < 4; ++k) {
      AddTo(acc[0][static_cast<size_t>(k)], acc[static_cast<size_t>(j)][static_cast<size_t>(k)]);
    }
  }
  return acc[0];
}

}  // namespace

float Sum(std::span<const float> x) {
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t vec_size = n / kLanes;
  const int64_t rows = vec_size / 4;
  std::array<Vec, 4> partial = MultiRowSum(x.data(), rows);
  for (int64_t i = rows * 4; i < vec_size; ++i) AddTo(partial[0], Load(x.data() + i * kLanes));
  for (int k = 1; k < 4; ++k) AddTo(partial[0], partial[static_cast<size_t>(k)]);
  float acc = 0.0f;
  for (int64_t k = vec_size * kLanes; k < n; ++k) acc = acc + x[static_cast<size_t>(k)];
  for (int k = 0; k < kLanes; ++k) acc = acc + partial[0][static_cast<size_t>(k)];
  return acc;
}

std::vector<float> Cumsum(std::span<const float> x) {
  std::vector<float> out(x.size());
  double acc = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    acc += static_cast<double>(x[i]);
    out[i] = static_cast<float>(acc);
  }
  return out;
}

float DivFloor(float a, float b) {
  if (b == 0.0f) return a / b;
  const float mod = std::fmod(a, b);
  float div = (a - mod) / b;
  if (mod != 0.0f && (b < 0.0f) != (mod < 0.0f)) div -= 1.0f;
  float floordiv;
  if (div != 0.0f) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5f) floordiv += 1.0f;
  } else {
    floordiv = std::copysign(0.0f, a / b);
  }
  return floordiv;
}

float LinspaceAt(float start, float end, int64_t steps, int64_t i) {
  if (steps == 1) return start;
  const float step = (end - start) / static_cast<float>(steps - 1);
  const int64_t halfway = steps / 2;
  // The fused multiply-adds are the contractions GCC makes in PyTorch's AVX2 kernel file (built with -mfma).
  auto from_ends = [&](int64_t k) {
    return k < halfway ? std::fma(step, static_cast<float>(k), start)
                       : std::fma(-step, static_cast<float>(steps - k - 1), end);
  };
  const int64_t vectorized = steps - steps % (2 * kLanes);
  if (i >= vectorized) return from_ends(i);
  // A vector of kLanes elements from its first index: base + lane * step, each rounded separately.
  const int64_t lane = i % kLanes;
  const float base = from_ends(i - lane);
  return lane == 0 ? base : base + static_cast<float>(lane) * step;
}

double TruncToInt(float v) { return std::trunc(static_cast<double>(v)); }

}  // namespace octet::torch_numerics

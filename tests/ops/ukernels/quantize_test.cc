// Every compiled quantize and dequantize kernel equals the scalar reference bit for bit.
#include <catch2/catch.hpp>

#include <cstring>

#include "core/dtype.h"
#include "ops/reference/quantize_reference.h"
#include "ops/ukernels/dequantize.h"
#include "ops/ukernels/quantize.h"
#include "tests/ops/ukernels/elementwise_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

// An output buffer of n + 1 elements (the last is a sentinel that must survive) starting 64-byte aligned, so the
// kernels' aligned non-temporal store paths run too.
template <typename T>
struct AlignedOutput {
  AlignedOutput(size_t n, T fill) : storage(n + 1 + 64 / sizeof(T), fill) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + ((64 - p % 64) % 64) / sizeof(T);
  }
  std::vector<T> storage;
  T* data;
};

template <typename T>
void CheckQuantizeKernel(const UkernelEntry<QuantizeUkernelFn<T>>& kernel, size_t n, std::mt19937_64& rng) {
  const DType dtype = DTypeOf<T>::value;
  int32_t qmin, qmax;
  testing::RandomQuantRange(rng, DTypeMin(dtype), DTypeMax(dtype), &qmin, &qmax);
  const int32_t zp = testing::RandomZeroPoint(rng, qmin, qmax);
  const float scale = testing::RandomScale(rng);
  const std::vector<float> x = testing::AwkwardFloats(rng, n, scale, qmin, qmax, /*with_non_finite=*/true);
  const QuantizeParams p{1.0f / scale, zp, qmin, qmax, /*stream_stores=*/(rng() & 1) != 0};
  std::vector<T> want(n + 1, T{42});
  AlignedOutput<T> out(n, T{42});
  T* got = out.data;
  size_t ref_nans = 0;
  for (size_t i = 0; i < n; ++i) {
    ref_nans += std::isnan(x[i]) ? 1 : 0;
    want[i] = reference::QuantizeValue<T>(x[i], p.inv_scale, zp, qmin, qmax);
  }
  const size_t nans = kernel.fn(n, x.data(), got, p);
  INFO(kernel.name << " n=" << n << " scale=" << scale << " zp=" << zp << " range=[" << qmin << "," << qmax
                   << "] stream=" << p.stream_stores);
  CHECK(nans == ref_nans);
  for (size_t i = 0; i <= n; ++i) {
    if (want[i] != got[i]) {
      FAIL_CHECK("index " << i << " x=" << (i < n ? x[i] : 0.0f) << " want " << int64_t{want[i]} << " got "
                          << int64_t{got[i]});
      return;
    }
  }
}

template <typename T>
void CheckDequantizeKernel(const UkernelEntry<DequantizeUkernelFn<T>>& kernel, size_t n, std::mt19937_64& rng) {
  const DType dtype = DTypeOf<T>::value;
  const int32_t zp = testing::RandomZeroPoint(rng, static_cast<int32_t>(DTypeMin(dtype)),
                                              static_cast<int32_t>(DTypeMax(dtype)));
  const float scale = testing::RandomScale(rng);
  std::vector<T> q(n);
  for (auto& v : q) {
    const uint64_t r = rng();
    std::memcpy(&v, &r, sizeof(T));
    if (rng() % 8 == 0) v = (rng() & 1) ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
  }
  std::vector<float> want(n + 1, 7.0f);
  AlignedOutput<float> out(n, 7.0f);
  float* got = out.data;
  for (size_t i = 0; i < n; ++i) want[i] = reference::DequantizeValue<T>(q[i], scale, zp);
  const bool stream = (rng() & 1) != 0;
  kernel.fn(n, q.data(), got, DequantizeParams{scale, zp, stream});
  INFO(kernel.name << " n=" << n << " scale=" << scale << " zp=" << zp << " stream=" << stream);
  for (size_t i = 0; i <= n; ++i) {
    if (std::memcmp(&want[i], &got[i], sizeof(float)) != 0) {
      FAIL_CHECK("index " << i << " q=" << (i < n ? int64_t{q[i]} : 0) << " want " << want[i] << " got " << got[i]);
      return;
    }
  }
}

template <typename T>
void QuantizeAllKernels() {
  auto rng = testing::MakeRng(std::string("quantize") + DTypeName(DTypeOf<T>::value));
  for (const auto& kernel : QuantizeUkernels<T>()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    for (size_t n = 0; n <= 130; ++n) CheckQuantizeKernel(kernel, n, rng);  // every tail of every vector width
    for (int trial = 0; trial < 200; ++trial) CheckQuantizeKernel(kernel, testing::RandomSize(rng, 20000), rng);
  }
}

template <typename T>
void DequantizeAllKernels() {
  auto rng = testing::MakeRng(std::string("dequantize") + DTypeName(DTypeOf<T>::value));
  for (const auto& kernel : DequantizeUkernels<T>()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    for (size_t n = 0; n <= 130; ++n) CheckDequantizeKernel(kernel, n, rng);
    for (int trial = 0; trial < 200; ++trial) CheckDequantizeKernel(kernel, testing::RandomSize(rng, 20000), rng);
  }
}

TEST_CASE("quantize kernels equal the reference: f32 -> u8", "[quantize]") { QuantizeAllKernels<uint8_t>(); }
TEST_CASE("quantize kernels equal the reference: f32 -> s8", "[quantize]") { QuantizeAllKernels<int8_t>(); }
TEST_CASE("quantize kernels equal the reference: f32 -> s32", "[quantize]") { QuantizeAllKernels<int32_t>(); }
TEST_CASE("dequantize kernels equal the reference: u8 -> f32", "[dequantize]") { DequantizeAllKernels<uint8_t>(); }
TEST_CASE("dequantize kernels equal the reference: s8 -> f32", "[dequantize]") { DequantizeAllKernels<int8_t>(); }
TEST_CASE("dequantize kernels equal the reference: s32 -> f32", "[dequantize]") { DequantizeAllKernels<int32_t>(); }

TEST_CASE("quantize reference: PyTorch's tie rule and saturation", "[quantize]") {
  // rne(x / s) with the zero point added after rounding (numerics.md §2.1 items 1 and 3).
  const float ties[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f};
  const int8_t want_s8[] = {0, 2, 2, 0, -2, -2};
  for (int i = 0; i < 6; ++i) CHECK(reference::QuantizeValue<int8_t>(ties[i], 1.0f, 0, -128, 127) == want_s8[i]);
  CHECK(reference::QuantizeValue<uint8_t>(2.5f, 1.0f, 3, 0, 255) == 5);
  CHECK(reference::QuantizeValue<uint8_t>(3.5f, 1.0f, 3, 0, 255) == 7);
  CHECK(reference::QuantizeValue<uint8_t>(-2.5f, 1.0f, 3, 0, 255) == 1);
  // ±Inf and huge values saturate to the range ends (DESIGN.md §4), NaN gives the zero point.
  CHECK(reference::QuantizeValue<int8_t>(INFINITY, 0.1f, 3, -128, 127) == 127);
  CHECK(reference::QuantizeValue<int8_t>(-INFINITY, 0.1f, 3, -128, 127) == -128);
  CHECK(reference::QuantizeValue<int32_t>(1e30f, 1.0f, 5, INT32_MIN, INT32_MAX) == INT32_MAX);
  CHECK(reference::QuantizeValue<int32_t>(-1e30f, 1.0f, 5, INT32_MIN, INT32_MAX) == INT32_MIN);
  CHECK(reference::QuantizeValue<uint8_t>(NAN, 1.0f, 77, 0, 255) == 77);
  // A custom range clamps inside the dtype.
  CHECK(reference::QuantizeValue<uint8_t>(100.0f, 1.0f, 0, 0, 15) == 15);
  CHECK(reference::DequantizeValue<int32_t>(INT32_MIN, 1.0f, INT32_MAX) == -4294967295.0f);
}

}  // namespace
}  // namespace octet

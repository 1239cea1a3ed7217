// Every compiled QBatchMatMul packing kernel equals its spec (reference::BatchMatMulWeights then QGemmPackWeights)
// byte for byte in the packed weights and exactly in the column sums, on awkward N, K and row strides, u8 and s8
// codes and the shifts QBatchMatMul uses; and the selection serves the layout asked for.
#include "ops/ukernels/qbmm_pack.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "core/cpu_features.h"
#include "ops/reference/qbatchmatmul_reference.h"
#include "tests/test_util.h"

namespace octet {
namespace {

void CheckPack(const QBmmPackUkernelEntry& kernel, const QGemmLayout& layout, std::mt19937_64& rng, DType dtype,
               size_t k, size_t n) {
  const size_t b_stride = n + (rng() % 3 == 0 ? rng() % 19 : 0);
  // A quant range of 128 codes (7-bit, shift qmin + 64) or the full dtype (shift 128 for u8, 0 for s8); codes are
  // drawn inside it, where the kernels' contract holds.
  const bool seven_bit = rng() % 2 == 0;
  const int32_t dmin = dtype == DType::kU8 ? 0 : -128;
  const int32_t qmin = seven_bit ? dmin + static_cast<int32_t>(rng() % 129) : dmin;
  const int32_t qmax = seven_bit ? qmin + 127 : dmin + 255;
  const int32_t shift = reference::BatchMatMulWeightShift(dtype, qmin, qmax);
  std::vector<uint8_t> b(k * b_stride + 1);
  for (auto& v : b)
    v = static_cast<uint8_t>(qmin + static_cast<int32_t>(rng() % static_cast<uint64_t>(qmax - qmin + 1)));
  std::vector<int8_t> w(n * k);
  reference::BatchMatMulWeights(dtype, b.data(), static_cast<int64_t>(k), static_cast<int64_t>(n), shift, w.data());
  // BatchMatMulWeights reads rows n apart: repack B densely for it when the kernel gets a padded stride.
  if (b_stride != n) {
    std::vector<uint8_t> dense(k * n);
    for (size_t i = 0; i < k; ++i) std::copy_n(b.data() + i * b_stride, n, dense.data() + i * n);
    reference::BatchMatMulWeights(dtype, dense.data(), static_cast<int64_t>(k), static_cast<int64_t>(n), shift,
                                  w.data());
  }
  const size_t bytes = layout.PackedBytes(n, k), np = layout.PaddedN(n);
  std::vector<int8_t> want(bytes + 1), got(bytes + 1, 0x55);
  std::vector<int32_t> want_sums(np + 1, -7), got_sums(np + 1, -7);
  QGemmPackWeights(layout, n, k, w.data(), k, want.data(), want_sums.data());
  want[bytes] = 0x55;
  kernel.fn(layout, b.data(), b_stride, k, n, static_cast<uint8_t>(shift), got.data(), got_sums.data());
  INFO(kernel.name << " layout " << QGemmLayoutName(layout) << " " << DTypeName(dtype) << " k=" << k << " n=" << n
                   << " b_stride=" << b_stride << " quant range [" << qmin << ", " << qmax << "] shift " << shift);
  for (size_t i = 0; i <= bytes; ++i) {
    if (want[i] != got[i]) {
      FAIL_CHECK("packed byte " << i << " want " << int{want[i]} << " got " << int{got[i]});
      return;
    }
  }
  for (size_t j = 0; j <= np; ++j) {
    if (want_sums[j] != got_sums[j]) {
      FAIL_CHECK("col_sums[" << j << "] want " << want_sums[j] << " got " << got_sums[j]);
      return;
    }
  }
}

TEST_CASE("qbmm_pack kernels equal BatchMatMulWeights + QGemmPackWeights on every shape, stride and shift",
          "[int8_misc]") {
  auto rng = testing::MakeRng("qbmm_pack");
  const std::vector<QGemmLayout> layouts = {kQGemmLayoutX86, kQGemmLayoutX86Wide, kQGemmLayoutN16K4, kQGemmLayoutN16K8};
  for (const auto& kernel : QBmmPackUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    for (const QGemmLayout& layout : layouts) {
      if (!(kernel.layout == kQGemmLayoutAny || kernel.layout == layout)) continue;
      for (DType dtype : {DType::kU8, DType::kS8}) {
        for (size_t k = 1; k <= 9; ++k) {
          for (size_t n = 1; n <= 35; ++n) CheckPack(kernel, layout, rng, dtype, k, n);
        }
        for (int trial = 0; trial < 40; ++trial) {
          CheckPack(kernel, layout, rng, dtype, 1 + rng() % 200, 1 + rng() % 150);
        }
      }
    }
  }
}

TEST_CASE("qbmm_pack selection serves the layout, scalar last", "[int8_misc]") {
  const auto list = QBmmPackUkernels();
  REQUIRE(!list.empty());
  CHECK(list.back().isa == Isa::kScalar);
  CHECK(list.back().layout == kQGemmLayoutAny);
  const Context scalar = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  CHECK(SelectQBmmPackUkernel(scalar, kQGemmLayoutX86).isa == Isa::kScalar);
  const Context all = Context::ForIsas(DetectedIsas(), 1);
  for (const QGemmLayout& layout : {kQGemmLayoutX86, kQGemmLayoutX86Wide}) {
    const QBmmPackUkernelEntry& e = SelectQBmmPackUkernel(all, layout);
    CHECK((e.layout == kQGemmLayoutAny || e.layout == layout));
  }
}

}  // namespace
}  // namespace octet

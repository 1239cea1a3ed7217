// Every compiled byte lookup kernel equals reference::LookupBytes at every length around its vector widths, at odd
// offsets and in place, writes no byte past y[n - 1], and reads every table entry (all 256 byte values appear).
#include "ops/ukernels/lut.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "ops/reference/qlookup_reference.h"
#include "tests/test_util.h"

namespace octet {
namespace {

void CheckLut(const UkernelEntry<LutUkernelFn>& kernel, std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> table(256);
  for (auto& t : table) t = static_cast<uint8_t>(rng());
  const size_t x_offset = rng() % 64, y_offset = rng() % 64;
  std::vector<uint8_t> x(x_offset + n);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i < 256 + x_offset ? i - x_offset : rng());
  // y starts as a random pattern: bytes outside [0, n) must keep it.
  std::vector<uint8_t> want(y_offset + n + 64);
  for (auto& b : want) b = static_cast<uint8_t>(rng());
  std::vector<uint8_t> got = want;
  reference::LookupBytes(table.data(), x.data() + x_offset, n, want.data() + y_offset);
  kernel.fn(table.data(), x.data() + x_offset, n, got.data() + y_offset);
  INFO(kernel.name << " n=" << n << " offsets " << x_offset << "/" << y_offset);
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) {
      FAIL_CHECK("byte " << i << " want " << int{want[i]} << " got " << int{got[i]});
      return;
    }
  }
  // In place: y aliasing x.
  std::vector<uint8_t> in_place(x.begin() + static_cast<std::ptrdiff_t>(x_offset), x.end());
  kernel.fn(table.data(), in_place.data(), n, in_place.data());
  for (size_t i = 0; i < n; ++i) {
    if (in_place[i] != want[y_offset + i]) {
      FAIL_CHECK("in place, byte " << i << " want " << int{want[y_offset + i]} << " got " << int{in_place[i]});
      return;
    }
  }
}

TEST_CASE("lut kernels equal the reference at every length and offset, in place too", "[int8_misc]") {
  auto rng = testing::MakeRng("lut_kernels");
  for (const auto& kernel : LutUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    for (size_t n = 0; n <= 200; ++n) CheckLut(kernel, rng, n);
    for (size_t n : {size_t{256}, size_t{257}, size_t{1000}, size_t{4099}}) CheckLut(kernel, rng, n);
  }
}

TEST_CASE("lut selection: the best enabled kernel, scalar last", "[int8_misc]") {
  const auto list = LutUkernels();
  REQUIRE(!list.empty());
  CHECK(list.back().isa == Isa::kScalar);
  const Context scalar = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  CHECK(SelectUkernel(scalar, list).isa == Isa::kScalar);
}

}  // namespace
}  // namespace octet

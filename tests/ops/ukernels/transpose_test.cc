// Every compiled transpose kernel equals reference::TransposeBytes bit for bit, writes no byte outside the
// transpose, and the selection picks the best enabled one.
#include "ops/ukernels/transpose.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/reference/transpose_reference.h"
#include "tests/test_util.h"

namespace octet {
namespace {

// One case: a rows x cols transpose whose source elements are `step` bytes apart, with row strides padded by
// up to 40 bytes and both buffers at odd offsets, so every block edge, tail and misalignment is met.
void CheckTranspose(const UkernelEntry<TransposeBytesUkernelFn>& kernel, std::mt19937_64& rng, size_t rows, size_t cols,
                    size_t step) {
  const size_t src_stride = (cols == 0 ? 1 : (cols - 1) * step + 1) + rng() % 41;
  const size_t dst_stride = rows + rng() % 41;
  const size_t src_offset = rng() % 64, dst_offset = rng() % 64;
  std::vector<uint8_t> src(src_offset + rows * src_stride + 1);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  // The destination starts as a random pattern: bytes outside the transpose must keep it.
  std::vector<uint8_t> want(dst_offset + cols * dst_stride + 64);
  for (auto& b : want) b = static_cast<uint8_t>(rng());
  std::vector<uint8_t> got = want;
  reference::TransposeBytes(src.data() + src_offset, src_stride, step, rows, cols, want.data() + dst_offset,
                            dst_stride);
  kernel.fn(src.data() + src_offset, src_stride, step, rows, cols, got.data() + dst_offset, dst_stride);
  INFO(kernel.name << " rows=" << rows << " cols=" << cols << " step=" << step << " src_stride=" << src_stride
                   << " dst_stride=" << dst_stride << " offsets " << src_offset << "/" << dst_offset);
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) {
      FAIL_CHECK("byte " << i << " want " << int{want[i]} << " got " << int{got[i]});
      return;
    }
  }
}

TEST_CASE("transpose kernels equal the reference on every size, step, stride and offset", "[qconv2d]") {
  auto rng = testing::MakeRng("transpose");
  for (const auto& kernel : TransposeBytesUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    // Every combination of block edges up to two 16x32 blocks, contiguous and strided.
    for (size_t rows = 0; rows <= 40; ++rows) {
      for (size_t cols = 0; cols <= 70; ++cols) CheckTranspose(kernel, rng, rows, cols, rows % 3 == 2 ? 2 : 1);
    }
    for (int trial = 0; trial < 300; ++trial) {
      const size_t step = trial % 4 == 3 ? 1 + rng() % 3 : 1;
      CheckTranspose(kernel, rng, testing::RandomSize(rng, 600), testing::RandomSize(rng, 600), step);
    }
  }
}

TEST_CASE("transpose selection: the best enabled kernel, scalar last", "[qconv2d]") {
  const auto list = TransposeBytesUkernels();
  REQUIRE(!list.empty());
  CHECK(list.back().isa == Isa::kScalar);
  CHECK(std::string(SelectUkernel(testing::ContextFor(Isa::kScalar), list).name) == "transpose_x8_ukernel__scalar");
#if defined(__x86_64__)
  CHECK(std::string(SelectUkernel(testing::ContextFor(Isa::kAvx2), list).name) == "transpose_x8_ukernel__avx2");
#endif
}

}  // namespace
}  // namespace octet

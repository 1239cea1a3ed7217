// The indirect convolution's spec (ops/reference/qconv2d_indirect_reference.h) against qconv2d's (QConv2dAccumulate):
// equal accumulators on random awkward geometries (strides, dilations, pads, groups, batches, tiles of 1 to 32
// pixels), u8 and s8 activations with zero points at and inside the range ends, affine weights; and the buffer's
// layout: partial tiles repeat their last pixel, pad taps and only they point at the zero row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "ops/reference/qconv2d_indirect_reference.h"
#include "ops/reference/qconv2d_reference.h"
#include "tests/test_util.h"

namespace octet {
namespace {

reference::Conv2dGeometry RandomGeometry(std::mt19937_64& rng) {
  for (;;) {
    reference::Conv2dGeometry g;
    g.n = 1 + static_cast<int64_t>(rng() % 2);
    g.h = 1 + static_cast<int64_t>(rng() % 9);
    g.w = 1 + static_cast<int64_t>(rng() % 9);
    g.groups = 1 + static_cast<int64_t>(rng() % 3);
    g.c_in = g.groups * (1 + static_cast<int64_t>(rng() % 7));
    g.c_out = g.groups * (1 + static_cast<int64_t>(rng() % 5));
    g.kh = rng() % 8 == 0 ? 7 : 1 + static_cast<int64_t>(rng() % 4);
    g.kw = rng() % 8 == 0 ? 7 : 1 + static_cast<int64_t>(rng() % 4);
    g.stride_h = 1 + static_cast<int64_t>(rng() % 3);
    g.stride_w = 1 + static_cast<int64_t>(rng() % 3);
    g.dilation_h = 1 + static_cast<int64_t>(rng() % 2);
    g.dilation_w = 1 + static_cast<int64_t>(rng() % 2);
    g.pad_h = static_cast<int64_t>(rng() % static_cast<uint64_t>(std::min<int64_t>(g.kh, 3)));
    g.pad_w = static_cast<int64_t>(rng() % static_cast<uint64_t>(std::min<int64_t>(g.kw, 3)));
    if (g.OutH() > 0 && g.OutW() > 0) return g;
  }
}

template <typename TA>
void CheckOne(std::mt19937_64& rng, const reference::Conv2dGeometry& g, size_t mr, int64_t* pad_taps) {
  const int64_t taps = g.kh * g.kw, m = g.n * g.OutH() * g.OutW();
  std::vector<TA> x(static_cast<size_t>(g.n * g.h * g.w * g.c_in));
  for (TA& v : x) v = static_cast<TA>(rng());
  std::vector<int8_t> w(static_cast<size_t>(g.c_out * taps * (g.c_in / g.groups)));
  for (int8_t& v : w) v = static_cast<int8_t>(rng());
  std::vector<int32_t> w_zp(static_cast<size_t>(g.c_out));
  for (int32_t& z : w_zp) z = static_cast<int32_t>(rng() % 9) - 4;
  constexpr int32_t kLo = std::is_same_v<TA, uint8_t> ? 0 : -128, kHi = kLo + 255;
  const int32_t ends[] = {kLo, kHi, kLo + 1 + static_cast<int32_t>(rng() % 254)};
  const int32_t x_zp = ends[rng() % 3];
  const std::vector<TA> zero_row(static_cast<size_t>(g.c_in), static_cast<TA>(x_zp));

  std::vector<const void*> ind(reference::ConvIndirectionSize(g, mr));
  REQUIRE(ind.size() == (static_cast<size_t>(m) + mr - 1) / mr * mr * static_cast<size_t>(taps));
  reference::BuildConvIndirection(g, mr, x.data(), zero_row.data(), ind.data());
  // Layout: pad taps (and only they) use the zero row; a partial tile's extra rows repeat the last pixel.
  const int64_t tiles = static_cast<int64_t>(ind.size() / (mr * static_cast<size_t>(taps)));
  for (int64_t p = 0; p < tiles; ++p) {
    for (int64_t t = 0; t < taps; ++t) {
      for (size_t i = 0; i < mr; ++i) {
        const int64_t pixel = std::min(p * static_cast<int64_t>(mr) + static_cast<int64_t>(i), m - 1);
        const int64_t b = pixel / (g.OutH() * g.OutW()), oy = (pixel / g.OutW()) % g.OutH(), ox = pixel % g.OutW();
        const int64_t iy = oy * g.stride_h - g.pad_h + (t / g.kw) * g.dilation_h;
        const int64_t ix = ox * g.stride_w - g.pad_w + (t % g.kw) * g.dilation_w;
        const bool inside = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
        const void* want = inside ? static_cast<const void*>(x.data() + ((b * g.h + iy) * g.w + ix) * g.c_in)
                                  : static_cast<const void*>(zero_row.data());
        INFO("tile " << p << ", tap " << t << ", row " << i);
        REQUIRE(ind[static_cast<size_t>((p * taps + t) * static_cast<int64_t>(mr)) + i] == want);
        *pad_taps += !inside;
      }
    }
  }

  std::vector<int32_t> expect(static_cast<size_t>(m * g.c_out)), got(expect.size(), -1);
  reference::QConv2dAccumulate(g, x.data(), x_zp, w.data(), w_zp.data(), expect.data());
  reference::QConv2dIndirectAccumulate<TA>(g, mr, ind.data(), x_zp, w.data(), w_zp.data(), got.data());
  for (size_t k = 0; k < expect.size(); ++k) {
    INFO("accumulator " << k);
    REQUIRE(got[k] == expect[k]);
  }
}

TEST_CASE("The indirect convolution's reference equals QConv2dAccumulate on random geometries", "[qconv2d]") {
  std::mt19937_64 rng = testing::MakeRng("qconv2d_indirect_reference");
  int64_t pad_taps = 0, cases = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const reference::Conv2dGeometry g = RandomGeometry(rng);
    const size_t mrs[] = {1, 2, 3, 4, 6, 8, 32};
    const size_t mr = mrs[rng() % 7];
    INFO("n " << g.n << " h " << g.h << " w " << g.w << " c_in " << g.c_in << " c_out " << g.c_out << " groups "
              << g.groups << " k " << g.kh << "x" << g.kw << " stride " << g.stride_h << "," << g.stride_w << " pad "
              << g.pad_h << "," << g.pad_w << " dilation " << g.dilation_h << "," << g.dilation_w << " mr " << mr);
    if (rng() & 1) {
      CheckOne<uint8_t>(rng, g, mr, &pad_taps);
    } else {
      CheckOne<int8_t>(rng, g, mr, &pad_taps);
    }
    ++cases;
  }
  CHECK(cases == 300);
  CHECK(pad_taps > 0);  // the zero row was exercised
}

}  // namespace
}  // namespace octet

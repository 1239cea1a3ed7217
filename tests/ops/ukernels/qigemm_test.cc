// Every qigemm kernel (ops/ukernels/qigemm.inc) this machine runs, against the convolution's reference: random
// geometries (strides, dilations, pads, groups through a_offset, batches, partial last tiles), u8 and s8 activations
// with zero points at and inside the range ends, symmetric and affine weights, every output stage; the kernel's y
// equals QConv2dAccumulate + QGemmApplyStage byte for byte, and nothing outside the block is written.
#include "ops/ukernels/qigemm.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <set>
#include <tuple>
#include <vector>

#include "ops/reference/qconv2d_indirect_reference.h"
#include "ops/reference/qconv2d_reference.h"
#include "ops/reference/qgemm_reference.h"
#include "tests/ops/stage_arrays.h"
#include "tests/test_util.h"

namespace octet {
namespace {

struct Stats {
  size_t outputs = 0, distinct = 0, pad_taps = 0;
};

reference::Conv2dGeometry RandomGeometry(std::mt19937_64& rng, uint32_t c_multiple) {
  for (;;) {
    reference::Conv2dGeometry g;
    g.n = 1 + static_cast<int64_t>(rng() % 2);
    g.h = 1 + static_cast<int64_t>(rng() % 8);
    g.w = 1 + static_cast<int64_t>(rng() % 8);
    g.groups = 1 + static_cast<int64_t>(rng() % 2);
    const int64_t cg = c_multiple * (1 + static_cast<int64_t>(rng() % (c_multiple == 1 ? 9 : 4)));
    g.c_in = g.groups * cg;
    g.c_out = g.groups * (1 + static_cast<int64_t>(rng() % 53));
    g.kh = 1 + static_cast<int64_t>(rng() % 3);
    g.kw = rng() % 6 == 0 ? 7 : 1 + static_cast<int64_t>(rng() % 3);
    g.stride_h = 1 + static_cast<int64_t>(rng() % 2);
    g.stride_w = 1 + static_cast<int64_t>(rng() % 2);
    g.dilation_h = 1 + static_cast<int64_t>(rng() % 2);
    g.dilation_w = 1;
    g.pad_h = static_cast<int64_t>(rng() % static_cast<uint64_t>(g.kh));
    g.pad_w = static_cast<int64_t>(rng() % static_cast<uint64_t>(std::min<int64_t>(g.kw, 3)));
    if (g.OutH() > 0 && g.OutW() > 0) return g;
  }
}

// fixed: the geometry to use instead of a random one.
template <typename TA>
void CheckKernel(std::mt19937_64& rng, const QIgemmUkernelEntry& kernel, Stats* stats,
                 const reference::Conv2dGeometry* fixed = nullptr) {
  const reference::Conv2dGeometry g = fixed != nullptr ? *fixed : RandomGeometry(rng, kernel.c_multiple);
  const QGemmLayout layout = kernel.layout.nr != 0 ? kernel.layout
                             : (rng() & 1)         ? kQGemmLayoutX86Wide
                                                   : kQGemmLayoutN16K4;
  const size_t mr = kernel.mr > 1 ? kernel.mr : 1 + rng() % 5;
  const size_t taps = static_cast<size_t>(g.kh * g.kw), cg = static_cast<size_t>(g.c_in / g.groups);
  const size_t og = static_cast<size_t>(g.c_out / g.groups), k = taps * cg;
  const size_t m = static_cast<size_t>(g.n * g.OutH() * g.OutW()), n = static_cast<size_t>(g.c_out);
  const bool affine = rng() % 3 == 0;
  INFO(kernel.name << ": n " << g.n << " h " << g.h << " w " << g.w << " c_in " << g.c_in << " c_out " << g.c_out
                   << " groups " << g.groups << " k " << g.kh << "x" << g.kw << " stride " << g.stride_h << ","
                   << g.stride_w << " pad " << g.pad_h << "," << g.pad_w << " dilation_h " << g.dilation_h << " mr "
                   << mr << " layout " << QGemmLayoutName(layout) << " affine " << affine);

  constexpr int32_t kLo = std::is_same_v<TA, uint8_t> ? 0 : -128, kHi = kLo + 255;
  const int32_t zps[] = {kLo, kHi, kLo + 1 + static_cast<int32_t>(rng() % 254)};
  const int32_t x_zp = zps[rng() % 3];
  std::vector<TA> x(static_cast<size_t>(g.n * g.h * g.w * g.c_in));
  for (TA& v : x) v = static_cast<TA>(rng());
  const std::vector<TA> zero_row(static_cast<size_t>(g.c_in), static_cast<TA>(x_zp));
  std::vector<int8_t> w(n * k);
  // vpmaddubsw kernels: weights within [-64, 64], so no pair sum of any activations can leave int16.
  const bool narrow = kernel.requirement == QGemmRequirement::kPairSumsFitInt16;
  for (int8_t& v : w) v = narrow ? static_cast<int8_t>(static_cast<int>(rng() % 129) - 64) : static_cast<int8_t>(rng());
  const size_t padded = n + 64;
  std::vector<int32_t> w_zp(padded, 0);
  for (size_t j = 0; affine && j < n; ++j) w_zp[j] = static_cast<int32_t>(rng() % 21) - 10;

  std::vector<int32_t> acc(m * n);
  reference::QConv2dAccumulate(g, x.data(), x_zp, w.data(), w_zp.data(), acc.data());
  std::vector<const void*> ind(reference::ConvIndirectionSize(g, mr));
  reference::BuildConvIndirection(g, mr, x.data(), zero_row.data(), ind.data());
  for (const void* p : ind) stats->pad_taps += p == zero_row.data();

  // Stage parameters per output channel, scaled so the outputs spread over the range.
  const QGemmStage stage = kernel.stage;
  testing::StageArrays st(padded);
  for (size_t j = 0; j < n; ++j) {
    int64_t col_max = 1;
    for (size_t i = 0; i < m; ++i) col_max = std::max<int64_t>(col_max, std::abs(int64_t{acc[i * n + j]}));
    const double real = 60.0 / static_cast<double>(col_max) * (0.6 + 0.1 * static_cast<double>(rng() % 9));
    st.multipliers[j] = static_cast<float>(real);
    reference::QuantizeMultiplier(real, &st.q31_m[j], &st.q31_s[j]);
    st.bias_s32[j] = static_cast<int32_t>(rng() % 2001) - 1000;
    st.bias_f32[j] = static_cast<float>(st.bias_s32[j]) * 0.37f;
    st.w_scales[j] = 0.002f + 0.0005f * static_cast<float>(rng() % 5);
  }
  QGemmStageParams sp = st.Params(stage, 0.0173f);
  sp.signed_output = rng() & 1;
  sp.zero_point = sp.signed_output ? -7 : 121;
  sp.lo = sp.signed_output ? -128 : 0;
  sp.hi = sp.signed_output ? 127 : 255;
  if (rng() % 3 == 0) sp.lo = sp.zero_point;  // a fused ReLU

  const size_t out_size = stage == QGemmStage::kS32 || stage == QGemmStage::kF32 ? 4 : 1;
  const size_t y_bytes = (m * n + 16) * out_size;
  std::vector<uint8_t> want(y_bytes, 0x5C), got(y_bytes, 0x5C);
  reference::QGemmApplyStage(m, n, acc.data(), n, sp, want.data(), n);

  // One call per group: its weight rows packed over K = taps * cg, its channels through a_offset, its columns of y.
  const bool int_bias = stage == QGemmStage::kS32 || stage == QGemmStage::kFp32 || stage == QGemmStage::kQ31;
  for (size_t grp = 0; grp < static_cast<size_t>(g.groups); ++grp) {
    const size_t j0 = grp * og;
    std::vector<int8_t> packed(layout.PackedBytes(og, k) + 64);
    std::vector<int32_t> col_sums(layout.PaddedN(og) + 64, 0), col_offsets(og + 64, 0), row_sums(m, 0);
    QGemmPackWeights(layout, og, k, w.data() + j0 * k, k, packed.data(), col_sums.data());
    for (size_t j = 0; j < og; ++j) {
      col_offsets[j] = QGemmColumnOffset(int_bias ? st.bias_s32[j0 + j] : 0, x_zp, col_sums[j], static_cast<int64_t>(k),
                                         w_zp[j0 + j]);
    }
    for (size_t i = 0; i < m; ++i) {
      int64_t sum = 0;
      for (size_t t = 0; t < taps; ++t) {
        const TA* a = static_cast<const TA*>(ind[((i / mr) * taps + t) * mr + i % mr]) + grp * cg;
        for (size_t c = 0; c < cg; ++c) sum += a[c];
      }
      row_sums[i] = static_cast<int32_t>(sum);
    }
    QGemmUkernelParams params;
    params.col_offsets = col_offsets.data();
    params.col_sums = col_sums.data();
    params.w_zero_points = affine ? w_zp.data() + j0 : nullptr;
    params.row_sums = affine ? row_sums.data() : nullptr;
    params.stage = sp;
    params.stage.bias_s32 = nullptr;
    params.stage.multipliers += j0;
    params.stage.q31_multipliers += j0;
    params.stage.q31_shifts += j0;
    params.stage.bias_f32 += j0;
    params.stage.w_scales += j0;
    QIgemmUkernelArgs args;
    args.m = m;
    args.n = og;
    args.taps = taps;
    args.c = cg;
    args.indirection = ind.data();
    args.mr = mr;
    args.a_offset = grp * cg;
    args.w = packed.data();
    args.w_panel_stride = layout.PanelStride(k);
    args.layout = layout;
    args.y = got.data() + j0 * out_size;
    args.y_stride = n;
    args.params = &params;
    kernel.fn(args);
  }
  for (size_t b = 0; b < y_bytes; ++b) {
    INFO("byte " << b << " (element " << b / out_size << ", row " << b / out_size / n << ", column " << b / out_size % n
                 << ")");
    REQUIRE(int{got[b]} == int{want[b]});
  }
  std::set<std::vector<uint8_t>> distinct;
  for (size_t e = 0; e < m * n; ++e) {
    distinct.insert(std::vector<uint8_t>(want.begin() + static_cast<std::ptrdiff_t>(e * out_size),
                                         want.begin() + static_cast<std::ptrdiff_t>((e + 1) * out_size)));
  }
  stats->outputs += m * n;
  stats->distinct += distinct.size();
}

TEST_CASE("qigemm kernels equal the convolution reference on random geometries", "[qconv2d]") {
  std::mt19937_64 rng = testing::MakeRng("qigemm");
  for (const QIgemmUkernelEntry& kernel : QIgemmUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name)) continue;
    Stats stats;
    for (int iter = 0; iter < 40; ++iter) {
      if (kernel.a_dtype == DType::kU8) {
        CheckKernel<uint8_t>(rng, kernel, &stats);
      } else {
        CheckKernel<int8_t>(rng, kernel, &stats);
      }
    }
    INFO(kernel.name);
    CHECK(stats.pad_taps > 0);
    CHECK(stats.distinct > stats.outputs / 20);  // not saturated nor constant
  }
}

// Wide channels: a panel's taps are walked in chunks that fit L1 (one or two taps of 256-512 channels), over groups
// of tiles (more than 16 tiles of rows here, and partial last tiles and panels), so the chunked sums are checked
// against the reference.
TEST_CASE("qigemm kernels equal the convolution reference with wide channels (chunks of taps)", "[qconv2d]") {
  std::mt19937_64 rng = testing::MakeRng("qigemm wide");
  std::vector<reference::Conv2dGeometry> shapes;
  for (const auto& [hw, c_in, c_out, stride] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{7, 512, 37, 1}, {9, 256, 50, 1}, {17, 260, 19, 2}}) {
    reference::Conv2dGeometry g;
    g.n = 1;
    g.h = g.w = hw;
    g.c_in = c_in;
    g.c_out = c_out;
    g.kh = g.kw = 3;
    g.stride_h = g.stride_w = stride;
    g.pad_h = g.pad_w = 1;
    shapes.push_back(g);
  }
  for (const QIgemmUkernelEntry& kernel : QIgemmUkernels()) {
    if (!testing::CanRun(kernel.isa, kernel.name) || kernel.isa == Isa::kScalar) continue;
    Stats stats;
    for (const reference::Conv2dGeometry& g : shapes) {
      if (kernel.a_dtype == DType::kU8) {
        CheckKernel<uint8_t>(rng, kernel, &stats, &g);
      } else {
        CheckKernel<int8_t>(rng, kernel, &stats, &g);
      }
    }
    INFO(kernel.name);
    CHECK(stats.pad_taps > 0);
    CHECK(stats.distinct > 100);  // 8-bit outputs have at most 256 values per shape: not saturated nor constant
  }
}

}  // namespace
}  // namespace octet

// Every qdwconv kernel against the reference: channel counts at and around every tile width (odd ones included),
// 3x3 and 5x5 tap counts and odd ones, 1..17 pixels, strided outputs, zero points at the range ends, clamps.
// Kernels of ISAs this machine cannot run are reported as skipped.
#include <catch2/catch.hpp>

#include <string>

#include "ops/ukernels/qdwconv.h"
#include "tests/ops/ukernels/qdwconv_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

bool Runnable(const QDwConvUkernelEntry& e) { return testing::CanRun(e.isa, e.name); }

TEST_CASE("qdwconv kernels: channel tails, taps, pixels", "[qdwconv]") {
  auto rng = testing::MakeRng("qdwconv_kernels");
  for (const auto& e : QDwConvUkernels()) {
    if (!Runnable(e)) continue;
    for (size_t c : {1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 47, 64, 65, 144}) {
      for (size_t taps : {9, 25}) {
        testing::QDwConvTester().channels(c).taps(taps).pixels(1 + rng() % 17).Test(e, rng);
      }
    }
    for (size_t taps : {1, 2, 3, 4, 7, 49, 64}) testing::QDwConvTester().channels(24).taps(taps).pixels(9).Test(e, rng);
  }
}

TEST_CASE("qdwconv kernels: zero points, clamps, signed output, strided pixels", "[qdwconv]") {
  auto rng = testing::MakeRng("qdwconv_params");
  for (const auto& e : QDwConvUkernels()) {
    if (!Runnable(e)) continue;
    for (int32_t zp : {0, 1, 128, 254, 255}) {
      testing::QDwConvTester().channels(19).taps(9).pixels(5).zero_point(zp).Test(e, rng);
    }
    testing::QDwConvTester().channels(37).taps(25).pixels(4).output_zero_point(0).Test(e, rng);
    testing::QDwConvTester().channels(37).taps(25).pixels(4).output_zero_point(255).Test(e, rng);
    testing::QDwConvTester().channels(21).taps(9).pixels(6).lo(121).hi(200).Test(e, rng);  // fused ReLU and a cap
    testing::QDwConvTester().channels(21).taps(9).pixels(6).signed_output(true).Test(e, rng);
    testing::QDwConvTester().channels(13).taps(9).pixels(10).y_pixel_stride(29).Test(e, rng);
  }
}

TEST_CASE("qdwconv kernels: 7-bit activations (the AVX2 vpmaddubsw path) equal the reference", "[qdwconv]") {
  auto rng = testing::MakeRng("qdwconv_seven_bit");
  for (const auto& e : QDwConvUkernels()) {
    if (!Runnable(e) || e.a_dtype != DType::kU8) continue;
    // Whole 32-channel blocks, blocks with a widening-path tail, and fewer than 32 (no block at all).
    for (size_t c : {31, 32, 33, 64, 95, 144, 200}) {
      for (size_t taps : {1, 3, 4, 5, 8, 9, 25, 49, 64}) {
        for (int32_t zp : {0, 77, 127}) {
          testing::QDwConvTester()
              .channels(c)
              .taps(taps)
              .pixels(1 + rng() % 19)
              .zero_point(zp)
              .seven_bit(true)
              .Test(e, rng);
        }
      }
    }
    testing::QDwConvTester().channels(64).taps(9).pixels(7).seven_bit(true).lo(121).hi(200).Test(e, rng);
    testing::QDwConvTester().channels(96).taps(9).pixels(9).seven_bit(true).signed_output(true).Test(e, rng);
    testing::QDwConvTester().channels(32).taps(9).pixels(10).y_pixel_stride(45).seven_bit(true).Test(e, rng);
  }
}

TEST_CASE("qdwconv kernels: full-range activations with weights in [-64, 64] (the vpmaddubsw path) equal the reference",
          "[qdwconv]") {
  auto rng = testing::MakeRng("qdwconv_small_weights");
  for (const auto& e : QDwConvUkernels()) {
    if (!Runnable(e) || e.a_dtype != DType::kU8) continue;
    for (size_t c : {31, 32, 33, 64, 95, 144}) {
      for (size_t taps : {1, 3, 4, 5, 9, 25, 64}) {
        for (int32_t zp : {0, 128, 255}) {
          testing::QDwConvTester()
              .channels(c)
              .taps(taps)
              .pixels(1 + rng() % 19)
              .zero_point(zp)
              .small_weights(true)
              .Test(e, rng);
        }
      }
    }
    testing::QDwConvTester().channels(96).taps(9).pixels(9).small_weights(true).signed_output(true).Test(e, rng);
  }
}

TEST_CASE("qdwconv kernels: randomized shapes", "[.long]") {
  auto rng = testing::MakeRng("qdwconv_long");
  for (int iter = 0; iter < 200; ++iter) {
    const size_t c = 1 + testing::RandomSize(rng, 300), taps = 1 + rng() % kQDwConvMaxTaps;
    const size_t px = 1 + rng() % 40;
    for (const auto& e : QDwConvUkernels()) {
      if (!Runnable(e)) continue;
      testing::QDwConvTester()
          .channels(c)
          .taps(taps)
          .pixels(px)
          .zero_point(static_cast<int32_t>(rng() % 256))
          .check_varied(false)
          .Test(e, rng);
      if (e.a_dtype == DType::kU8) {
        testing::QDwConvTester()
            .channels(c)
            .taps(taps)
            .pixels(px)
            .zero_point(static_cast<int32_t>(rng() % 128))
            .seven_bit(true)
            .check_varied(false)
            .Test(e, rng);
      }
    }
  }
}

TEST_CASE("qdwconv dispatch: the first enabled candidate, scalar last", "[qdwconv]") {
  for (Isa isa : testing::CompiledIsaList()) {
    const Context ctx = testing::ContextFor(isa);
    for (DType dt : {DType::kU8, DType::kS8}) {
      const auto& e = SelectQDwConvUkernel(ctx, dt, QGemmStage::kFp32);
      CHECK(e.a_dtype == dt);
      CHECK(e.stage == QGemmStage::kFp32);
      bool has = false;
      for (const auto& c : QDwConvUkernels()) has = has || (c.isa == isa && c.a_dtype == dt);
      CHECK(e.isa == (has ? isa : Isa::kScalar));
      const auto lines = ExplainQDwConvSelection(ctx, dt, QGemmStage::kFp32);
      REQUIRE(!lines.empty());
      CHECK_THAT(lines.back(), Catch::Contains("__scalar"));
    }
  }
}

}  // namespace
}  // namespace octet

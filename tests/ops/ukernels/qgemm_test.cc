// Every compiled qgemm kernel equals the reference bit for bit: k below, at, above and multiples of the k group and
// of the 64-byte K alignment; m and n tails of each register tile; prime strides; affine weights; zero points at the
// ends of their ranges; saturation at both clamp ends; accumulators at the int32 limits; and a [.long] sweep of
// 10,000 random shapes per ISA (a fast subset runs by default).
#include <catch2/catch.hpp>

#include <array>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ops/reference/qgemm_reference.h"
#include "ops/ukernels/qgemm.h"
#include "tests/ops/ukernels/qgemm_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::QGemmTester;

// Under qemu (the aarch64 suite) every case costs ~50x more: run thinner grids there.
#if defined(__aarch64__)
constexpr bool kEmulated = true;
#else
constexpr bool kEmulated = false;
#endif

std::vector<const QGemmUkernelEntry*> Kernels(std::initializer_list<QGemmStage> stages) {
  std::vector<const QGemmUkernelEntry*> v;
  for (const auto& e : QGemmUkernels()) {
    for (QGemmStage s : stages) {
      if (e.stage == s && testing::CanRun(e.isa, e.name)) v.push_back(&e);
    }
  }
  return v;
}

size_t Mr(const QGemmUkernelEntry& e) { return e.mr; }
size_t Nr(const QGemmUkernelEntry& e) { return e.nr > 1 ? e.nr : 16; }
size_t Kr(const QGemmUkernelEntry& e) { return e.layout.kr > 0 ? e.layout.kr : 4; }

// 1, 2 and 3 below a prime just above the tight stride.
size_t PrimeAbove(size_t v) {
  auto prime = [](size_t x) {
    if (x < 2) return false;
    for (size_t d = 2; d * d <= x; ++d) {
      if (x % d == 0) return false;
    }
    return true;
  };
  size_t p = v + 1;
  while (!prime(p)) ++p;
  return p;
}

TEST_CASE("qgemm kernels: k below, at, above and multiples of the k group and the K alignment", "[qgemm]") {
  auto rng = testing::MakeRng("qgemm_k");
  for (const auto* e : Kernels({QGemmStage::kS32})) {
    const size_t kr = Kr(*e);
    std::set<size_t> ks = {1, kr - 1, kr, kr + 1, 2 * kr, 3 * kr + 1, 15, 16, 17, 63, 64, 65, 127, 128, 129};
    if (!kEmulated) ks.insert({191, 256, 300, 513});
    for (size_t k : ks) {
      if (k == 0) continue;
      for (size_t m : {size_t{1}, Mr(*e), Mr(*e) + 1}) {
        for (size_t n : {Nr(*e), Nr(*e) + 1}) {
          QGemmTester().m(m).n(n).k(k).rng(&rng).Test(*e);
        }
      }
    }
  }
}

TEST_CASE("qgemm kernels: m and n tails of each register tile", "[qgemm]") {
  auto rng = testing::MakeRng("qgemm_mn");
  for (const auto* e : Kernels({QGemmStage::kS32})) {
    const size_t mr = Mr(*e), nr = Nr(*e);
    std::set<size_t> ms, ns = {1, 15, 16, 17, nr - 1, nr, nr + 1, 2 * nr, 2 * nr + 17};
    for (size_t m = 1; m <= 2 * mr + 1; ++m) ms.insert(m);
    if (mr > 8 && kEmulated) ms = {1, 2, mr - 1, mr, mr + 1, 2 * mr + 1};
    if (mr >= 16) ms = {1, 2, 15, 16, 17, mr - 1, mr, mr + 1, 2 * mr + 1};
    for (size_t m : ms) {
      for (size_t n : ns) {
        if (n == 0) continue;
        QGemmTester().m(m).n(n).k(kEmulated ? 13 : 67).rng(&rng).Test(*e);
      }
    }
  }
}

TEST_CASE("qgemm kernels: every output stage, prime strides, affine weights, u8 and s8 outputs", "[qgemm]") {
  auto rng = testing::MakeRng("qgemm_stages");
  std::map<std::string, size_t> distinct;
  for (const auto* e : Kernels({QGemmStage::kS32, QGemmStage::kFp32, QGemmStage::kQ31, QGemmStage::kFbgemm,
                                QGemmStage::kF32})) {
    const size_t mr = Mr(*e), nr = Nr(*e);
    const std::vector<std::array<size_t, 3>> shapes = {
        {mr, nr, 64}, {mr + 1, nr + 3, 29}, {1, 2 * nr + 5, 100}, {2 * mr + 1, 17, 5}, {3, 1, 1}};
    for (const auto& [m, n, k] : shapes) {
      for (bool signed_output : {false, true}) {
        for (bool affine : {false, true}) {
          QGemmTester t;
          t.m(m).n(n).k(k).a_stride(PrimeAbove(k)).y_stride(PrimeAbove(n)).signed_output(signed_output).rng(&rng);
          if (affine) t.w_zero_points(-20, 9);
          const auto stats = t.Test(*e);
          distinct[e->name] += stats.distinct;
        }
      }
    }
  }
  // Guard against a vacuous test: outputs are varied, not one saturated value.
  for (const auto& [name, d] : distinct) {
    INFO(name);
    CHECK(d > 100);
  }
}

TEST_CASE("qgemm kernels: saturation at both clamp ends and fused ReLU", "[qgemm]") {
  auto rng = testing::MakeRng("qgemm_clamp");
  for (const auto* e : Kernels({QGemmStage::kFp32, QGemmStage::kQ31, QGemmStage::kFbgemm})) {
    for (bool signed_output : {false, true}) {
      const int32_t zp = signed_output ? 5 : 121;
      const int32_t dmin = signed_output ? -128 : 0, dmax = signed_output ? 127 : 255;
      auto run = [&](int32_t lo, int32_t hi, double gain) {
        return QGemmTester()
            .m(std::max<size_t>(Mr(*e) + 1, 9))
            .n(Nr(*e) + 5)
            .k(40)
            .signed_output(signed_output)
            .output(zp, lo, hi)
            .gain(gain)
            .rng(&rng)
            .Test(*e);
      };
      INFO(e->name << (signed_output ? " s8" : " u8") << " out");
      // The dtype's range with a large gain: both ends reached, most outputs still inside.
      const auto full = run(dmin, dmax, 2.0);
      CHECK(full.at_lo > 0);
      CHECK(full.at_hi > 0);
      CHECK(full.at_lo + full.at_hi < full.outputs / 2);
      // Fused ReLU: lo = zero point.
      const auto relu = run(zp, dmax, 1.0);
      CHECK(relu.at_lo > 0);
      CHECK(relu.at_lo < relu.outputs * 3 / 4);
      // A narrow window (ReLU6-like): both bounds reached.
      const auto window = run(zp - 3, zp + 40, 1.0);
      CHECK(window.at_lo > 0);
      CHECK(window.at_hi > 0);
    }
  }
}

TEST_CASE("qgemm kernels: zero points at the ends of their ranges", "[qgemm]") {
  auto rng = testing::MakeRng("qgemm_zp");
  for (const auto* e : Kernels({QGemmStage::kS32, QGemmStage::kFp32})) {
    const bool s8 = e->a_dtype == DType::kS8;
    for (int32_t a_zp : {s8 ? -128 : 0, s8 ? 127 : 255}) {
      for (const auto& [zlo, zhi] : std::vector<std::pair<int32_t, int32_t>>{{-128, -128}, {127, 127}, {-128, 127}}) {
        QGemmTester().m(Mr(*e) + 2).n(Nr(*e) + 2).k(37).a_zero_point(a_zp).w_zero_points(zlo, zhi).rng(&rng).Test(*e);
      }
    }
  }
}

TEST_CASE("qgemm kernels: accumulators at the int32 limits wrap back to the exact value", "[qgemm]") {
  // Every term at one corner of the product range with the largest K the bound allows: intermediate sums of a kernel
  // (before the zero-point terms) leave int32, the exact result does not.
  struct Corner {
    int32_t a, a_zp, w, w_zp;
  };
  for (const auto* e : Kernels({QGemmStage::kS32})) {
    const bool s8 = e->a_dtype == DType::kS8;
    const std::vector<Corner> corners =
        s8 ? std::vector<Corner>{{-128, 0, -128, 0}, {127, -128, 127, -128}, {-128, 127, 127, -128}}
           : std::vector<Corner>{{255, 0, -128, 0}, {0, 255, 127, -128}, {255, 0, 127, -128}, {0, 255, -128, 127}};
    for (const Corner& c : corners) {
      const int64_t k = reference::QGemmMaxK(s8 ? -128 : 0, s8 ? 127 : 255, c.a_zp, -128, 127, c.w_zp);
      REQUIRE(k > 0);
      const size_t kk = static_cast<size_t>(std::min<int64_t>(k, 100000));
      QGemmTester()
          .m(2)
          .n(Nr(*e) + 1)
          .k(kk)
          .a_range(c.a, c.a)
          .w_range(c.w, c.w)
          .a_zero_point(c.a_zp)
          .w_zero_points(c.w_zp, c.w_zp)
          .with_bias(false)
          .Test(*e);
    }
  }
}

TEST_CASE("qgemm scalar kernels read every packed layout", "[qgemm]") {
  auto rng = testing::MakeRng("qgemm_layouts");
  for (const auto* e : Kernels({QGemmStage::kS32, QGemmStage::kFp32})) {
    if (e->isa != Isa::kScalar) continue;
    for (const QGemmLayout& layout : {kQGemmLayoutX86, kQGemmLayoutX86Wide, kQGemmLayoutN16K4, kQGemmLayoutN16K8}) {
      for (size_t k : {1, 7, 8, 9, 65}) {
        QGemmTester().m(3).n(33).k(k).layout(layout).w_zero_points(-3, 3).rng(&rng).Test(*e);
      }
    }
  }
}

// Random shapes leaning to small sizes and tile edges, random zero points, strides, stages and output types.
void RandomShapes(size_t per_isa) {
  auto rng = testing::MakeRng("qgemm_random");
  std::map<Isa, std::vector<const QGemmUkernelEntry*>> by_isa;
  for (const auto& e : QGemmUkernels()) {
    if (testing::CanRun(e.isa, e.name)) by_isa[e.isa].push_back(&e);
  }
  for (const auto& [isa, kernels] : by_isa) {
    size_t failures = 0;
    for (size_t t = 0; t < per_isa && failures == 0; ++t) {
      const QGemmUkernelEntry& e = *kernels[rng() % kernels.size()];
      const bool s8 = e.a_dtype == DType::kS8;
      const size_t m = testing::RandomSize(rng, 3 * e.mr + 2), n = testing::RandomSize(rng, 3 * Nr(e) + 2);
      const size_t k = testing::RandomSize(rng, kEmulated ? 200 : 700);
      QGemmTester tester;
      tester.m(m).n(n).k(k).rng(&rng);
      tester.a_stride(k + rng() % 9).y_stride(n + rng() % 5).signed_output(rng() & 1);
      tester.a_zero_point(s8 ? static_cast<int32_t>(rng() % 256) - 128 : static_cast<int32_t>(rng() % 256));
      if (rng() % 3 == 0) {
        const int32_t z = static_cast<int32_t>(rng() % 256) - 128;
        tester.w_zero_points(std::min(z, 0), std::max(z, 0));
      }
      if (rng() % 4 == 0) tester.a_range(s8 ? -64 : 0, s8 ? 63 : 127);  // 7-bit activations
      if (rng() % 4 == 0) tester.w_range(-64, 64);
      if (e.stage != QGemmStage::kS32 && e.stage != QGemmStage::kF32 && rng() % 4 == 0) {
        const int32_t dmin = (rng() & 1) ? -128 : 0;
        tester.signed_output(dmin < 0);
        const int32_t zp = dmin + static_cast<int32_t>(rng() % 256);
        tester.output(zp, std::max(dmin, zp - 10), std::min(dmin + 255, zp + 60)).gain(3.0);
      }
      if (!tester.Test(e).passed) ++failures;
    }
    INFO("ISA " << IsaName(isa));
    CHECK(failures == 0);
  }
}

TEST_CASE("qgemm kernels: random shapes per ISA (fast subset)", "[qgemm]") { RandomShapes(kEmulated ? 150 : 600); }

TEST_CASE("qgemm kernels: 10,000 random shapes per ISA", "[.long]") { RandomShapes(10000); }

}  // namespace
}  // namespace octet

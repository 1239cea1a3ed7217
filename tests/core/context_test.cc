// ISA vocabulary, CPU detection, Context (ISA caps, OCTET_ISA, kernel record) and deterministic ParallelFor.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/cpu_features.h"
#include "core/isa.h"
#include "core/threading.h"

namespace octet {
namespace {

TEST_CASE("ISA names round-trip and caps enable lower tiers", "[core]") {
  for (Isa isa : kAllIsas) CHECK(ParseIsa(IsaName(isa)).value() == isa);
  CHECK_FALSE(ParseIsa("avx512").ok());
  CHECK(IsaSet::UpTo(Isa::kAvxVnni) == IsaSet::Of({Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni}));
  CHECK(IsaSet::UpTo(Isa::kScalar) == IsaSet::Of({Isa::kScalar}));
  CHECK(IsaSet::UpTo(Isa::kNeonDot) == IsaSet::Of({Isa::kScalar, Isa::kNeon, Isa::kNeonDot}));
  CHECK(IsaSet::ParseCap("avx2,neon").value() == IsaSet::Of({Isa::kScalar, Isa::kAvx2, Isa::kNeon}));
  CHECK_FALSE(IsaSet::ParseCap("avx2,").ok());
  CHECK(IsaSet::UpTo(Isa::kAmx).Best() == Isa::kAmx);
  CHECK(IsaSet::Of({Isa::kScalar, Isa::kAvx2}).ToString() == "scalar,avx2");
}

TEST_CASE("Detected ISAs are consistent with the CPU features", "[core]") {
  const CpuFeatures& f = GetCpuFeatures();
  const IsaSet detected = DetectedIsas();
  CHECK(detected.Contains(Isa::kScalar));
  if (detected.Contains(Isa::kAvx512Vnni)) CHECK((f.avx512f && f.avx512bw && f.avx512_vnni));
  if (detected.Contains(Isa::kAmx)) CHECK((f.amx_tile && f.amx_int8 && f.amx_unavailable_reason.empty()));
  if (detected.Contains(Isa::kNeonDot)) CHECK(f.asimddp);
  CHECK(detected.Intersect(CompiledIsas()) == detected);
  INFO("features: " << f.ToString() << "; detected: " << detected.ToString());
  SUCCEED();
}

TEST_CASE("Context intersects detected ISAs with the caller's cap and OCTET_ISA", "[core]") {
  ContextOptions options;
  options.isa_cap = IsaSet::UpTo(Isa::kScalar);
  CHECK(Context::Create(options).value().enabled_isas() == IsaSet::Of({Isa::kScalar}));

  ::setenv("OCTET_ISA", "scalar", 1);
  CHECK(Context::Create().value().enabled_isas() == IsaSet::Of({Isa::kScalar}));
  ContextOptions ignore_env;
  ignore_env.use_environment = false;
  CHECK(Context::Create(ignore_env).value().enabled_isas() == DetectedIsas());
  ::setenv("OCTET_ISA", "avx9000", 1);
  auto bad = Context::Create();
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("OCTET_ISA") && Catch::Contains("avx9000"));
  ::unsetenv("OCTET_ISA");

  ContextOptions threads;
  threads.threads = -3;
  CHECK_FALSE(Context::Create(threads).ok());
}

TEST_CASE("Context records which kernel ran", "[core]") {
  Context ctx = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  CHECK(ctx.LastKernel("quantize_f32_u8").empty());
  ctx.RecordKernel("quantize_f32_u8", "quantize_f32_u8_ukernel__scalar");
  CHECK(ctx.LastKernel("quantize_f32_u8") == "quantize_f32_u8_ukernel__scalar");
}

TEST_CASE("Context records kernels through a KernelFamily handle, per context, by either API", "[core]") {
  static const KernelFamily family("context_test_family");
  const KernelFamily same("context_test_family");
  CHECK(same.id() == family.id());
  CHECK(KernelFamily("context_test_other").id() != family.id());
  Context a = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  Context b = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  CHECK(a.LastKernel("context_test_family").empty());
  a.RecordKernel(family, "kernel_one");
  CHECK(a.LastKernel("context_test_family") == "kernel_one");
  CHECK(b.LastKernel("context_test_family").empty());
  a.RecordKernel("context_test_family", std::string("kernel_") + "two");  // by name: copied
  CHECK(a.LastKernel("context_test_family") == "kernel_two");
  a.RecordKernel(family, "kernel_three");
  CHECK(a.LastKernel("context_test_family") == "kernel_three");
  CHECK(a.LastKernel("context_test_never_recorded").empty());
}

TEST_CASE("ParallelFor covers every tile once, at any thread count", "[core]") {
  for (int threads : {1, 2, 3}) {
    Context ctx = Context::ForIsas(IsaSet::Of({Isa::kScalar}), threads);
    for (int64_t n : {0, 1, 7, 64, 1000, 100003}) {
      for (int64_t tile : {1, 5, 64, 4096}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::atomic<int64_t> tiles{0};
        std::atomic<bool> aligned{true};
        ParallelFor(ctx, n, tile, [&](int64_t begin, int64_t end) {
          // Tiles depend only on n and tile.
          if (begin % tile != 0 || end != std::min(n, begin + tile)) aligned = false;
          tiles.fetch_add(1);
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
        });
        INFO("threads " << threads << " n " << n << " tile " << tile);
        CHECK(aligned.load());
        CHECK(tiles.load() == (n + tile - 1) / tile);
        int64_t once = 0;
        for (auto& h : hits) once += h.load() == 1 ? 1 : 0;
        CHECK(once == n);
      }
    }
  }
  CHECK((std::string(ThreadingBackendName()) == "tbb" || std::string(ThreadingBackendName()) == "serial"));
}

}  // namespace
}  // namespace octet

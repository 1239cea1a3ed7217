// The benchmark harness (bench/harness): shape parsing, the peer problem, the reference spot check on real kernel
// output (and that it catches a changed output), the fillers and the kernel-name ISA.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "bench/harness/fill.h"
#include "bench/harness/kernel_isa.h"
#include "bench/harness/peer_problem.h"
#include "bench/harness/shapes.h"
#include "bench/harness/spot_check.h"
#include "bench/harness/timing.h"
#include "core/context.h"
#include "ops/qconv2d.h"
#include "ops/qgemm.h"
#include "tests/test_util.h"

namespace octet {
namespace {

Tensor RunGemm(const bench::GemmProblem& p) {
  const Context context = testing::ContextFor(Isa::kScalar);
  const PackedWeights packed = PackedWeights::Prepack(context, p.w).value();
  const QGemmPlan plan = QGemmPlan::Create(packed, p.a.qparams(), p.output).value();
  Tensor y = Tensor::Create(plan.output_dtype(), Shape{p.a.shape().dim(0), p.w.shape().dim(0)}).value();
  REQUIRE(plan.RunInto(context, p.a.values(), y).ok());
  return y;
}

Tensor RunConv(const bench::ConvProblem& p) {
  const Context context = testing::ContextFor(Isa::kScalar);
  const QConv2dPlan plan = QConv2dPlan::Create(context, p.w, p.params, p.x.qparams(), p.output).value();
  Tensor y = Tensor::Create(plan.output_dtype(), plan.OutputShape(p.x.shape()).value()).value();
  REQUIRE(plan.RunInto(context, p.x.values(), y).ok());
  return y;
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  // fmt, not std::string operator+: g++ 12 at -O1 reports a false -Warray-bounds in the inlined string move.
  const std::string path = fmt::format("{}/octet_harness_test_{}", P_tmpdir, name);
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("harness: element counts, GEMM shapes, conv lines and descriptors parse", "[bench_harness]") {
  CHECK(bench::ParseElementCount("16Mi").value() == (int64_t{16} << 20));
  CHECK(bench::ParseElementCount("64Ki").value() == 65536);
  CHECK(bench::ParseElementCount("1Gi").value() == (int64_t{1} << 30));
  CHECK(bench::ParseElementCount("100003").value() == 100003);
  for (const char* bad : {"0", "12Xi", "Ki", "", "-5", "5Gi", "4294967297", "1 Mi"}) {
    INFO(bad);
    CHECK_FALSE(bench::ParseElementCount(bad).ok());
  }
  const bench::GemmShape g = bench::ParseGemmShape("128x3072x768").value();
  CHECK((g.m == 128 && g.n == 3072 && g.k == 768));
  for (const char* bad : {"1x2", "0x1x1", "1x1x1x", "axbxc", "1x2x3 4"}) CHECK_FALSE(bench::ParseGemmShape(bad).ok());

  const bench::ConvShape c = bench::ParseConvShape("144 144 56 56 3 3 1 1 144").value();
  CHECK((c.c_in == 144 && c.c_out == 144 && c.h == 56 && c.w == 56 && c.kh == 3 && c.kw == 3 && c.stride == 1 &&
         c.pad == 1 && c.groups == 144));
  CHECK_FALSE(bench::ParseConvShape("64 64 56 56 3 3 1 1").ok());     // 8 numbers
  CHECK_FALSE(bench::ParseConvShape("64 66 56 56 3 3 1 1 4").ok());   // groups do not divide c_out
  CHECK_FALSE(bench::ParseConvShape("64 64 56 56 3 3 1 1 1x").ok());  // trailing garbage

  const bench::ConvLayer l = bench::ParseConvDescriptor("ic64oc128ih56kh1sh2 n\"layer2.0.downsample.0\"").value();
  CHECK(l.name == "layer2.0.downsample.0");
  CHECK((l.shape.c_in == 64 && l.shape.c_out == 128 && l.shape.h == 56 && l.shape.w == 56 && l.shape.kh == 1 &&
         l.shape.kw == 1 && l.shape.stride == 2 && l.shape.pad == 0 && l.shape.groups == 1));
  const bench::ConvLayer d = bench::ParseConvDescriptor("g32ic32oc32ih7iw9kh3kw5ph1").value();
  CHECK((d.shape.groups == 32 && d.shape.w == 9 && d.shape.kw == 5 && d.shape.pad == 1 && d.name.empty()));
  CHECK_FALSE(bench::ParseConvDescriptor("ic64oc64ih56kh3xx1").ok());
  CHECK_FALSE(bench::ParseConvDescriptor("ic64oc64ih56kh3 n\"open").ok());
}

TEST_CASE("harness: shape files skip comments and blanks, and errors name the file and line", "[bench_harness]") {
  const std::string good = WriteTemp("gemm.txt", "# comment\n\n1x1024x1024   # single token\n  16x8x4\r\n");
  const auto shapes = bench::ReadGemmShapes(good).value();
  REQUIRE(shapes.size() == 2);
  CHECK((shapes[1].m == 16 && shapes[1].n == 8 && shapes[1].k == 4));

  const std::string bad = WriteTemp("bad_gemm.txt", "1x2x3\n# fine\n1x2\n");
  const Status s = bench::ReadGemmShapes(bad).status();
  CHECK(s.message().find(bad) != std::string::npos);
  CHECK(s.message().find("line 3") != std::string::npos);
  CHECK(bench::ReadGemmShapes(bad + ".missing").status().code() == StatusCode::kNotFound);

  const auto counts = bench::ReadElementCounts(WriteTemp("counts.txt", "16Mi\n2048 # L1\n")).value();
  CHECK((counts.size() == 2 && counts[0] == (int64_t{16} << 20) && counts[1] == 2048));
  const auto layers = bench::ReadConvLayers(WriteTemp("layers.txt", "ic3oc64ih224kh7sh2ph3 n\"conv1\"\n")).value();
  CHECK((layers.size() == 1 && layers[0].name == "conv1" && layers[0].shape.pad == 3));
  const auto convs = bench::ReadConvShapes(WriteTemp("conv.txt", "3 64 224 224 7 7 2 3 1  # stem\n")).value();
  CHECK((convs.size() == 1 && convs[0].kh == 7 && convs[0].stride == 2));
}

TEST_CASE("harness: the peer GEMM problem is seeded and follows the activation bits and stage", "[bench_harness]") {
  bench::GemmProblemOptions o;
  o.activation_bits = 7;
  const bench::GemmProblem p = bench::MakeGemmProblem({5, 19, 37}, o).value();
  const bench::GemmProblem again = bench::MakeGemmProblem({5, 19, 37}, o).value();
  CHECK(p.a.qparams().zero_point() == bench::kPeerActivationZeroPoint);
  CHECK(p.output.output_zero_point == bench::kPeerOutputZeroPoint);
  CHECK(p.output.bias_s32.size() == 19);
  for (int64_t i = 0; i < p.a.values().NumElements(); ++i) {
    CHECK(p.a.values().data<uint8_t>()[i] <= 127);
    CHECK(p.a.values().data<uint8_t>()[i] == again.a.values().data<uint8_t>()[i]);
  }
  for (size_t j = 0; j < p.output.bias_s32.size(); ++j) CHECK(p.output.bias_s32[j] == again.output.bias_s32[j]);

  o.stage = QGemmStage::kS32;
  const bench::GemmProblem plain = bench::MakeGemmProblem({5, 19, 37}, o).value();
  CHECK(plain.a.qparams().zero_point() == 0);
  CHECK(plain.output.bias_s32.empty());
  o.stage = QGemmStage::kFbgemm;
  CHECK(bench::MakeGemmProblem({5, 19, 37}, o).value().output.bias_f32.size() == 19);
  o.activation_bits = 9;
  CHECK_FALSE(bench::MakeGemmProblem({5, 19, 37}, o).ok());
  // The y_scale rule grows with sqrt(K).
  CHECK(std::fabs(bench::PeerOutputScale(400) / bench::PeerOutputScale(100) - 2.0f) < 1e-6f);
  CHECK_FALSE(bench::MakeConvProblem({8, 6, 5, 5, 3, 3, 1, 1, 4}, QGemmStage::kFp32).ok());
}

TEST_CASE("harness: the GEMM spot check passes the kernel's output and catches one changed value", "[bench_harness]") {
  for (QGemmStage stage : {QGemmStage::kS32, QGemmStage::kFp32, QGemmStage::kQ31, QGemmStage::kFbgemm}) {
    bench::GemmProblemOptions o;
    o.stage = stage;
    const bench::GemmProblem p = bench::MakeGemmProblem({7, 21, 45}, o).value();
    Tensor y = RunGemm(p);
    const bench::SpotCheck check = bench::CheckGemm(p, y).value();
    INFO(static_cast<int>(stage));
    CHECK(check.mismatch.empty());
    CHECK(check.checked == 7 * 21);
    if (stage != QGemmStage::kS32) CHECK_FALSE(check.MostlyClamped());
    if (stage == QGemmStage::kS32) {
      y.data<int32_t>()[3 * 21 + 4] += 1;
    } else {
      y.data<uint8_t>()[3 * 21 + 4] ^= 1;
    }
    CHECK(bench::CheckGemm(p, y).value().mismatch.rfind("row 3, column 4: got ", 0) == 0);
  }
  // Past 2^24 multiply-adds: the four corners and 300 samples.
  const bench::GemmProblem big = bench::MakeGemmProblem({64, 260, 1024}, {}).value();
  const bench::SpotCheck sampled = bench::CheckGemm(big, RunGemm(big)).value();
  CHECK(sampled.mismatch.empty());
  CHECK(sampled.checked == 304);
  // A wrong output shape is an error, not a crash.
  CHECK_FALSE(bench::CheckGemm(big, Tensor::Create(DType::kU8, Shape{2, 2}).value()).ok());
}

TEST_CASE("harness: the conv spot check passes the kernel's output and catches one changed value", "[bench_harness]") {
  for (const bench::ConvShape& shape :
       {bench::ConvShape{8, 12, 9, 7, 3, 3, 2, 1, 1}, bench::ConvShape{16, 16, 6, 6, 3, 3, 1, 1, 16}}) {
    for (QGemmStage stage : {QGemmStage::kFp32, QGemmStage::kQ31, QGemmStage::kFbgemm}) {
      const bench::ConvProblem p = bench::MakeConvProblem(shape, stage).value();
      Tensor y = RunConv(p);
      const bench::SpotCheck check = bench::CheckConv(p, y).value();
      CHECK(check.mismatch.empty());
      CHECK(check.checked == static_cast<size_t>(y.NumElements()));
      CHECK_FALSE(check.MostlyClamped());
      const int64_t ow = y.shape().dim(2), co = y.shape().dim(3);
      CHECK(bench::ConvReferenceValue(p, 1, 2, 3).value() == y.data<uint8_t>()[(1 * ow + 2) * co + 3]);
      y.data<uint8_t>()[(1 * ow + 2) * co + 3] ^= 4;
      CHECK(bench::CheckConv(p, y).value().mismatch.rfind("pixel (1, 2), channel 3: got ", 0) == 0);
    }
  }
  const bench::ConvProblem p = bench::MakeConvProblem({4, 4, 5, 5, 3, 3, 1, 1, 1}, QGemmStage::kFp32).value();
  CHECK_FALSE(bench::ConvReferenceValue(p, 5, 0, 0).ok());
}

TEST_CASE("harness: fillers are seeded, quantize inputs saturate, kernel names give their ISA", "[bench_harness]") {
  std::vector<float> x(4096);
  bench::FillQuantizeInputs(x, 0x9e3779b9u);
  CHECK(x[0] == INFINITY);
  CHECK(x[1] == -INFINITY);
  int below = 0, above = 0;
  for (size_t i = 2; i < x.size(); ++i) {
    CHECK((x[i] >= -6.5f && x[i] < 7.5f));
    below += x[i] < 0.05f * (0 - 117);
    above += x[i] > 0.05f * (255 - 117);
  }
  CHECK((below > 0 && above > 0));
  std::vector<int8_t> a(64), b(64), c(64);
  bench::FillIntegers<int8_t>(a, 1u);
  bench::FillIntegers<int8_t>(b, 1u);
  bench::FillIntegers<int8_t>(c, 2u);
  CHECK(a == b);
  CHECK(a != c);

  CHECK(std::string(bench::KernelIsa("qgemm_u8s8_s32_ukernel_32x32c4__amx", "?")) == "amx");
  CHECK(std::string(bench::KernelIsa("quantize_f32_u8_ukernel__avx2", "?")) == "avx2");
  CHECK(std::string(bench::KernelIsa("reference", "scalar")) == "scalar");
  CHECK(std::string(bench::KernelIsa("x__bogus", "?")) == "?");

  bench::TimingOptions o;
  o.warmup_s = 0.0;
  o.repetition_s = 0.0;
  o.repetitions = 4;
  int calls = 0;
  const bench::Timing t = bench::MeasureCalls([&] { ++calls; }, o);
  CHECK(t.repetitions == 4);
  CHECK(calls == 1 + 4 * t.calls_per_repetition);
  CHECK((t.min_us <= t.median_us && t.median_us <= t.max_us));

  // A failing call stops the timing: no call after the first error, and that error comes back.
  calls = 0;
  const Result<bench::Timing> failed =
      bench::MeasureStatusCalls([&] { return ++calls == 2 ? InvalidArgument("second call") : OkStatus(); }, o);
  CHECK(failed.status().message() == "second call");
  CHECK(calls == 2);
  const Result<bench::Timing> fine = bench::MeasureStatusCalls([] { return OkStatus(); }, o);
  REQUIRE(fine.ok());

  bench::Timing shown;
  shown.median_us = 12.34;
  shown.min_us = 12.0;
  shown.max_us = 13.06;
  shown.repetitions = 5;
  shown.calls_per_repetition = 40;
  CHECK(bench::TimingText(shown) == "12.3 us median of 5 (min 12.0, max 13.1)");
  nlohmann::ordered_json j;
  j["op"] = "gemm";
  bench::AddTimingJson(j, shown, "gops", 2.5);
  CHECK(
      j.dump() ==
      R"({"op":"gemm","us":12.34,"gops":2.5,"us_min":12.0,"us_max":13.06,"repetitions":5,"calls_per_repetition":40})");
}

}  // namespace
}  // namespace octet

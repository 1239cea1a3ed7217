// Quantize / dequantize / fake-quantize / requantize over tensors: per-tensor and per-channel on every axis, every
// runnable ISA and 1 or 2 threads give the same bits as the reference; errors name the tensor and the cause.
#include <catch2/catch.hpp>

#include <cstring>

#include "ops/quantize.h"
#include "ops/reference/quantize_reference.h"
#include "ops/reference/requantize_reference.h"
#include "ops/ukernels/quantize.h"
#include "ops/requantize.h"
#include "tests/ops/ukernels/elementwise_tester.h"
#include "tests/test_util.h"

namespace octet {
namespace {

Tensor RandomFloats(std::mt19937_64& rng, const Shape& shape, float scale) {
  Tensor t = Tensor::Create(DType::kF32, shape).value();
  const auto v = testing::AwkwardFloats(rng, static_cast<size_t>(t.NumElements()), scale, -128, 127, false);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

// The reference result of quantizing x with per-channel (or per-tensor) qparams, element by element.
template <typename T>
std::vector<T> ReferenceQuantize(const Tensor& x, const QParams& qp) {
  std::vector<T> out(static_cast<size_t>(x.NumElements()));
  const Shape& s = x.shape();
  const int64_t inner = qp.per_channel() ? s.Product(qp.axis() + 1, s.rank()) : 1;
  const int64_t channels = qp.per_channel() ? s.dim(qp.axis()) : 1;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const size_t c = static_cast<size_t>((i / inner) % channels);
    out[static_cast<size_t>(i)] = reference::QuantizeValue<T>(x.data<float>()[i], 1.0f / qp.scales()[c],
                                                              qp.zero_points()[c], qp.quant_min(), qp.quant_max());
  }
  return out;
}

QParams RandomQParams(std::mt19937_64& rng, DType dtype, const Shape& shape, int axis) {
  int32_t qmin, qmax;
  testing::RandomQuantRange(rng, DTypeMin(dtype), DTypeMax(dtype), &qmin, &qmax);
  if (axis < 0) {
    return QParams::PerTensor(dtype, 0.05f, testing::RandomZeroPoint(rng, qmin, qmax), qmin, qmax).value();
  }
  std::vector<float> scales;
  std::vector<int32_t> zps;
  for (int64_t c = 0; c < shape.dim(axis); ++c) {
    scales.push_back(testing::RandomScale(rng) * 1e-2f + 0.01f);
    zps.push_back(testing::RandomZeroPoint(rng, qmin, qmax));
  }
  return QParams::PerChannel(dtype, scales, zps, axis, qmin, qmax).value();
}

template <typename T>
void CheckQuantizeOp(DType dtype) {
  auto rng = testing::MakeRng(std::string("quantize_op") + DTypeName(dtype));
  const Shape shapes[] = {{3, 5, 7, 2}, {1, 1, 1}, {17}, {2, 0, 3}, {4, 70000}, {300, 3}};
  for (const Shape& shape : shapes) {
    for (int axis = -1; axis < shape.rank(); ++axis) {
      if (axis >= 0 && shape.dim(axis) == 0) continue;  // per-channel qparams need >= 1 channel
      const Tensor x = RandomFloats(rng, shape, 0.05f);
      const QParams qp = RandomQParams(rng, dtype, shape, axis);
      const std::vector<T> want = ReferenceQuantize<T>(x, qp);
      for (Isa isa : testing::CompiledIsaList()) {
        if (!testing::CanRun(isa, std::string("quantize op on ") + IsaName(isa))) continue;
        for (int threads : {1, 2}) {
          const Context ctx = testing::ContextFor(isa, threads);
          INFO("shape " << shape.ToString() << " axis " << axis << " isa " << IsaName(isa) << " threads " << threads);
          const QTensor q = Quantize(ctx, x, qp).value();
          // (an empty std::vector's data() may be null, which memcmp must not see even for 0 bytes)
          REQUIRE((want.empty() || std::memcmp(q.values().data<T>(), want.data(), want.size() * sizeof(T)) == 0));
          if (!x.empty()) {
            // The kernel of this ISA ran if the family has one, else the scalar fallback.
            std::string expected = "__scalar";
            for (const auto& k : QuantizeUkernels<T>()) {
              if (k.isa == isa) expected = std::string("__") + IsaName(isa);
            }
            CHECK_THAT(ctx.LastKernel(std::string("quantize_f32_") + DTypeName(dtype)), Catch::EndsWith(expected));
          }
          // Dequantize is the reference too.
          const Tensor back = Dequantize(ctx, q).value();
          const int64_t inner = qp.per_channel() ? shape.Product(axis + 1, shape.rank()) : 1;
          const int64_t channels = qp.per_channel() ? shape.dim(axis) : 1;
          for (int64_t i = 0; i < x.NumElements(); ++i) {
            const size_t c = static_cast<size_t>((i / inner) % channels);
            const float w = reference::DequantizeValue<T>(want[static_cast<size_t>(i)], qp.scales()[c], qp.zero_points()[c]);
            if (std::memcmp(&w, back.data<float>() + i, sizeof(float)) != 0) {
              FAIL("dequantize index " << i << " want " << w << " got " << back.data<float>()[i]);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("Quantize and Dequantize ops: u8 per-tensor and per-channel, every ISA and thread count", "[quantize]") {
  CheckQuantizeOp<uint8_t>(DType::kU8);
}
TEST_CASE("Quantize and Dequantize ops: s8", "[quantize]") { CheckQuantizeOp<int8_t>(DType::kS8); }
TEST_CASE("Quantize and Dequantize ops: s32", "[quantize]") { CheckQuantizeOp<int32_t>(DType::kS32); }

// A plan chosen once runs the same kernel and gives the same bits as the per-call functions; it records the kernel it
// holds.
template <typename T>
void CheckQuantizePlans(DType dtype) {
  auto rng = testing::MakeRng(std::string("quantize plan") + DTypeName(dtype));
  const Shape shape{6, 33};
  const Tensor x = RandomFloats(rng, shape, 0.05f);
  for (int axis : {-1, 1}) {
    const QParams qp = RandomQParams(rng, dtype, shape, axis);
    for (Isa isa : testing::CompiledIsaList()) {
      if (!testing::CanRun(isa, std::string("quantize plan on ") + IsaName(isa))) continue;
      INFO(DTypeName(dtype) << " axis " << axis << " isa " << IsaName(isa));
      const Context ctx = testing::ContextFor(isa, 2);
      const QuantizePlan plan = QuantizePlan::Create(ctx, dtype).value();
      CHECK(plan.dtype() == dtype);
      CHECK(std::string(plan.kernel_name()) == SelectUkernel(ctx, QuantizeUkernels<T>()).name);
      Tensor y = Tensor::Create(dtype, shape).value();
      REQUIRE(plan.Run(ctx, x, qp, y).ok());
      CHECK(ctx.LastKernel(std::string("quantize_f32_") + DTypeName(dtype)) == plan.kernel_name());
      const QTensor want = Quantize(ctx, x, qp).value();
      REQUIRE(std::memcmp(y.data<T>(), want.values().data<T>(), static_cast<size_t>(y.SizeBytes())) == 0);
      const DequantizePlan back = DequantizePlan::Create(ctx, dtype).value();
      Tensor f = Tensor::Create(DType::kF32, shape).value();
      REQUIRE(back.Run(ctx, want, f).ok());
      CHECK(ctx.LastKernel(std::string("dequantize_") + DTypeName(dtype) + "_f32") == back.kernel_name());
      const Tensor f_want = Dequantize(ctx, want).value();
      REQUIRE(std::memcmp(f.data<float>(), f_want.data<float>(), static_cast<size_t>(f.SizeBytes())) == 0);
    }
  }
}

TEST_CASE("QuantizePlan and DequantizePlan choose once and equal Quantize and Dequantize", "[quantize]") {
  CheckQuantizePlans<uint8_t>(DType::kU8);
  CheckQuantizePlans<int8_t>(DType::kS8);
  CheckQuantizePlans<int32_t>(DType::kS32);
}

TEST_CASE("QuantizePlan and DequantizePlan reject float dtypes and qparams of another dtype", "[quantize]") {
  const Context& ctx = testing::ScalarContext();
  const auto bad = QuantizePlan::Create(ctx, DType::kF32, "w");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'w'") && Catch::Contains("integer type"));
  REQUIRE_FALSE(DequantizePlan::Create(ctx, DType::kF32).ok());
  const QuantizePlan u8 = QuantizePlan::Create(ctx, DType::kU8).value();
  const std::vector<float> values = {0.5f, -1.0f};
  const Tensor x = Tensor::FromValues<float>(Shape{2}, values).value();
  const QParams s8 = QParams::PerTensor(DType::kS8, 0.1f, 0).value();
  Tensor y = Tensor::Create(DType::kS8, Shape{2}).value();
  const Status st = u8.Run(ctx, x, s8, y, {.name = "act"});
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("'act'") && Catch::Contains("u8") && Catch::Contains("s8"));
  const DequantizePlan s8_back = DequantizePlan::Create(ctx, DType::kS8).value();
  const QTensor q = Quantize(ctx, x, QParams::PerTensor(DType::kU8, 0.1f, 128).value()).value();
  Tensor f = Tensor::Create(DType::kF32, Shape{2}).value();
  REQUIRE_FALSE(s8_back.Run(ctx, q, f).ok());
}

TEST_CASE("Quantize rejects NaN by default and names the tensor and index", "[quantize]") {
  const Context ctx = Context::ForIsas(DetectedIsas());
  std::vector<float> v = {1.0f, 2.0f, NAN, 4.0f};
  const Tensor x = Tensor::FromValues<float>(Shape{4}, v).value();
  const QParams qp = QParams::PerTensor(DType::kU8, 0.1f, 10).value();
  auto strict = Quantize(ctx, x, qp, QuantizeOptions{NanPolicy::kError, "conv1.input"});
  REQUIRE_FALSE(strict.ok());
  CHECK_THAT(strict.status().message(), Catch::Contains("conv1.input") && Catch::Contains("index 2"));
  auto permissive = Quantize(ctx, x, qp, QuantizeOptions{NanPolicy::kZeroPoint, "x"});
  REQUIRE(permissive.ok());
  CHECK(permissive->values().data<uint8_t>()[2] == 10);
  auto fq = FakeQuantize(ctx, x, qp);
  REQUIRE_FALSE(fq.ok());
  CHECK_THAT(fq.status().message(), Catch::Contains("NaN"));
}

TEST_CASE("Quantize validates its inputs", "[quantize]") {
  const Context ctx = Context::ForIsas(DetectedIsas());
  const Tensor x = Tensor::Create(DType::kF32, Shape{2, 3}).value();
  const QParams per_channel = QParams::PerChannel(DType::kS8, {0.1f, 0.2f}, {0, 0}, 1, -128, 127).value();
  auto r = Quantize(ctx, x, per_channel);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("2 channels given, dimension 1 has 3"));
  const Tensor ints = Tensor::Create(DType::kS32, Shape{2}).value();
  CHECK_FALSE(Quantize(ctx, ints, QParams::PerTensor(DType::kU8, 1.0f, 0).value()).ok());
  const QParams wide = QParams::PerTensor(DType::kS32, 1.0f, 0).value();
  auto fq = FakeQuantize(ctx, x, wide);
  REQUIRE_FALSE(fq.ok());
  CHECK_THAT(fq.status().message(), Catch::Contains("2^24"));
}

TEST_CASE("FakeQuantize op equals the reference on every ISA and thread count", "[fake_quantize]") {
  auto rng = testing::MakeRng("fake_quantize_op");
  const Shape shape{6, 5, 4001};
  for (int axis = -1; axis < 3; ++axis) {
    const Tensor x = RandomFloats(rng, shape, 0.05f);
    const QParams qp = RandomQParams(rng, DType::kS8, shape, axis);
    std::vector<float> want(static_cast<size_t>(x.NumElements()));
    std::vector<uint8_t> want_mask(want.size());
    const int64_t inner = qp.per_channel() ? shape.Product(axis + 1, 3) : 1;
    const int64_t channels = qp.per_channel() ? shape.dim(axis) : 1;
    for (size_t i = 0; i < want.size(); ++i) {
      const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
      want[i] = reference::FakeQuantizeValue(x.data<float>()[i], qp.scales()[c], 1.0f / qp.scales()[c],
                                             qp.zero_points()[c], qp.quant_min(), qp.quant_max(), &want_mask[i]);
    }
    size_t ones = 0;
    for (uint8_t m : want_mask) ones += m;
    CHECK(ones > want.size() / 20);  // many values inside the range ...
    CHECK(ones < want.size());       // ... and the clamp is exercised
    for (Isa isa : testing::CompiledIsaList()) {
      if (!testing::CanRun(isa, std::string("fake-quantize op on ") + IsaName(isa))) continue;
      for (int threads : {1, 2}) {
        const Context ctx = testing::ContextFor(isa, threads);
        const FakeQuantizeOutput out = FakeQuantize(ctx, x, qp).value();
        REQUIRE(std::memcmp(out.output.data<float>(), want.data(), want.size() * sizeof(float)) == 0);
        REQUIRE(std::memcmp(out.mask.data<uint8_t>(), want_mask.data(), want.size()) == 0);
      }
    }
  }
}

TEST_CASE("Requantize op: fp32 and q31, per-tensor and per-channel, every ISA and thread count", "[requantize]") {
  auto rng = testing::MakeRng("requantize_op");
  const Shape shape{97, 37};
  Tensor acc = Tensor::Create(DType::kS32, shape).value();
  for (auto& v : acc.values<int32_t>()) v = static_cast<int32_t>(static_cast<int64_t>(rng() % 200001) - 100000);
  for (auto scheme : {RequantizeScheme::kFp32, RequantizeScheme::kQ31}) {
    for (bool per_channel : {false, true}) {
      RequantizeSpec spec;
      spec.scheme = scheme;
      spec.output_dtype = DType::kS8;
      spec.zero_point = -7;
      spec.lo = -128;
      spec.hi = 127;
      for (int c = 0; c < (per_channel ? 37 : 1); ++c) spec.multipliers.push_back(0.0007 + c * 1e-5);
      std::vector<int8_t> want(static_cast<size_t>(acc.NumElements()));
      std::vector<float> m(spec.multipliers.begin(), spec.multipliers.end());
      std::vector<int32_t> qm(m.size()), qs(m.size());
      for (size_t i = 0; i < m.size(); ++i) reference::QuantizeMultiplier(spec.multipliers[i], &qm[i], &qs[i]);
      if (scheme == RequantizeScheme::kFp32) {
        reference::RequantizeFp32(97, 37, acc.data<int32_t>(), 37, want.data(), 37,
                                  reference::RequantizeFp32Args{m.data(), per_channel, -7, -128, 127});
      } else {
        reference::RequantizeQ31(97, 37, acc.data<int32_t>(), 37, want.data(), 37,
                                 reference::RequantizeQ31Args{qm.data(), qs.data(), per_channel, -7, -128, 127});
      }
      for (Isa isa : testing::CompiledIsaList()) {
        if (!testing::CanRun(isa, std::string("requantize op on ") + IsaName(isa))) continue;
        for (int threads : {1, 2}) {
          const Context ctx = testing::ContextFor(isa, threads);
          const Tensor y = Requantize(ctx, acc, spec).value();
          REQUIRE(std::memcmp(y.data<int8_t>(), want.data(), want.size()) == 0);
        }
      }
    }
  }
  RequantizeSpec bad;
  bad.multipliers = {1.0, 2.0};
  auto r = Requantize(Context::ForIsas(DetectedIsas()), acc, bad);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("one per channel (37)"));
}

TEST_CASE("RequantizePlan chooses once and equals Requantize; it refuses other dtypes and specs", "[requantize]") {
  auto rng = testing::MakeRng("requantize plan");
  const Shape shape{9, 21};
  Tensor acc = Tensor::Create(DType::kS32, shape).value();
  for (auto& v : acc.values<int32_t>()) v = static_cast<int32_t>(static_cast<int64_t>(rng() % 200001) - 100000);
  for (auto scheme : {RequantizeScheme::kFp32, RequantizeScheme::kQ31}) {
    for (DType dtype : {DType::kU8, DType::kS8}) {
      RequantizeSpec spec;
      spec.scheme = scheme;
      spec.output_dtype = dtype;
      spec.zero_point = dtype == DType::kU8 ? 120 : -3;
      spec.lo = static_cast<int32_t>(DTypeMin(dtype));
      spec.hi = static_cast<int32_t>(DTypeMax(dtype));
      for (int c = 0; c < 21; ++c) spec.multipliers.push_back(0.0009 + c * 2e-5);
      const std::string family = std::string("requantize_s32_") + DTypeName(dtype) + "_" + RequantizeSchemeName(scheme);
      for (Isa isa : testing::CompiledIsaList()) {
        if (!testing::CanRun(isa, std::string("requantize plan on ") + IsaName(isa))) continue;
        INFO(RequantizeSchemeName(scheme) << " " << DTypeName(dtype) << " " << IsaName(isa));
        const Context ctx = testing::ContextFor(isa, 2);
        const RequantizePlan plan = RequantizePlan::Create(ctx, scheme, dtype).value();
        const Tensor y = plan.Run(ctx, acc, spec).value();
        CHECK(ctx.LastKernel(family) == plan.kernel_name());
        CHECK_THAT(plan.kernel_name(), Catch::StartsWith(family));
        const Tensor want = Requantize(ctx, acc, spec).value();
        REQUIRE(std::memcmp(y.raw_data(), want.raw_data(), static_cast<size_t>(y.SizeBytes())) == 0);
      }
    }
  }
  const Context& ctx = testing::ScalarContext();
  REQUIRE_FALSE(RequantizePlan::Create(ctx, RequantizeScheme::kFp32, DType::kS32).ok());
  const RequantizePlan q31_u8 = RequantizePlan::Create(ctx, RequantizeScheme::kQ31, DType::kU8).value();
  RequantizeSpec fp32_u8;
  fp32_u8.multipliers = {0.001};
  const auto r = q31_u8.Run(ctx, acc, fp32_u8);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("q31") && Catch::Contains("fp32"));
}

}  // namespace
}  // namespace octet

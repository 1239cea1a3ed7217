// The int8 pools against the scalar reference (ops/reference/qpool_reference.h) on curated and random NCHW
// geometries (1-D and 2-D, pads, strides, dilations, ceil_mode, count_include_pad both ways), u8 and s8, 1 and 2
// threads; against the float pools on dequantized inputs (max: exactly; average: within 1 LSB); and the errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "ops/reference/qpool_reference.h"
#include "tests/ops/int8/qmisc_op_tester.h"

namespace octet {
namespace {

using testing::QInput;

struct PoolCase {
  Shape x;  // [N, C, W] or [N, C, H, W]
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil_mode = false, count_include_pad = false;
};

std::string Describe(const PoolCase& c) {
  return fmt::format("x {} k [{}] s [{}] p [{}] d [{}] ceil {} include_pad {}", c.x.ToString(),
                     fmt::join(c.kernel, ","), fmt::join(c.strides, ","), fmt::join(c.pads, ","),
                     fmt::join(c.dilations, ","), c.ceil_mode, c.count_include_pad);
}

// Output size along one axis, written out independently of ops/float's WindowOutputSize (PyTorch's rule: with
// ceil_mode the last window must start inside the input or the begin padding).
int64_t OutSize(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe, int64_t d, bool ceil_mode) {
  const int64_t span = d * (k - 1) + 1;
  const int64_t num = in + pb + pe - span;
  int64_t out = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pb) --out;
  return out;
}

reference::QPoolGeometry Geometry(const PoolCase& c) {
  reference::QPoolGeometry g;
  const bool two_d = c.x.rank() == 4;
  g.planes = c.x.dim(0) * c.x.dim(1);
  const size_t nd = c.kernel.size();
  if (two_d) {
    g.h = c.x.dim(2), g.kh = c.kernel[0], g.sh = c.strides[0], g.dh = c.dilations[0];
    g.pad_top = c.pads[0], g.pad_bottom = c.pads[nd];
  }
  g.w = c.x.dim(c.x.rank() - 1);
  g.kw = c.kernel[nd - 1], g.sw = c.strides[nd - 1], g.dw = c.dilations[nd - 1];
  g.pad_left = c.pads[nd - 1], g.pad_right = c.pads[2 * nd - 1];
  g.oh = two_d ? OutSize(g.h, g.kh, g.sh, g.pad_top, g.pad_bottom, g.dh, c.ceil_mode) : 1;
  g.ow = OutSize(g.w, g.kw, g.sw, g.pad_left, g.pad_right, g.dw, c.ceil_mode);
  g.count_include_pad = c.count_include_pad;
  return g;
}

AttributeMap Attributes(const PoolCase& c, bool is_max) {
  AttributeMap at{{"kernel_shape", c.kernel}, {"strides", c.strides}, {"pads", c.pads},
                  {"ceil_mode", int64_t{c.ceil_mode}}};
  if (is_max) {
    at.Set("dilations", c.dilations);
  } else {
    at.Set("count_include_pad", int64_t{c.count_include_pad});
  }
  return at;
}

Tensor Dequantize(const Tensor& q, const QParams& qp) {
  Tensor f = Tensor::Create(DType::kF32, q.shape()).value();
  for (int64_t i = 0; i < q.NumElements(); ++i) f.data<float>()[i] = testing::Dequantized(q, qp, i);
  return f;
}

template <typename T>
Tensor ReferencePool(const PoolCase& c, bool is_max, const Tensor& x, const QParams& qx, const QParams& qy) {
  const reference::QPoolGeometry g = Geometry(c);
  std::vector<int64_t> dims = {c.x.dim(0), c.x.dim(1)};
  if (c.x.rank() == 4) dims.push_back(g.oh);
  dims.push_back(g.ow);
  Tensor y = testing::EmptyLike(qy.dtype(), Shape(dims));
  const T* px = static_cast<const T*>(x.raw_data());
  T* py = static_cast<T*>(y.raw_data());
  if (is_max) {
    reference::QMaxPool(g, px, py, qx.quant_min());
  } else {
    const reference::QAveragePoolParams q{qx.scale(), qy.scale(), qx.zero_point(), qy.zero_point(), qy.quant_min(),
                                          qy.quant_max()};
    reference::QAveragePool(g, q, px, py);
  }
  return y;
}

// y's qparams for an average of x: scale `ratio` times x's, zero point placing x's mid-range real value (the
// average of uniform codes) mid-range in y.
QParams AverageOutputQParams(const QParams& qx, float ratio) {
  const float scale = qx.scale() * ratio;
  const bool u8 = qx.dtype() == DType::kU8;
  const float mid_real = ((u8 ? 127.5f : -0.5f) - static_cast<float>(qx.zero_point())) * qx.scale();
  const int32_t lo = u8 ? 0 : -128;
  const int32_t zp = std::clamp(static_cast<int32_t>(std::lround((u8 ? 127.5f : -0.5f) - mid_real / scale)), lo,
                                lo + 255);
  return QParams::PerTensor(qx.dtype(), scale, zp).value();
}

void CheckPool(std::mt19937_64& rng, const PoolCase& c, bool is_max, DType dtype) {
  const QParams qx = testing::RandomActivationQParams(rng, dtype);
  // Average: y's scale near x's (averages span x's range), zero point mid-range.
  const QParams qy =
      is_max ? qx : AverageOutputQParams(qx, std::uniform_real_distribution<float>(0.7f, 1.3f)(rng));
  const Tensor x = testing::RandomCodes(rng, dtype, c.x);
  const Tensor want = dtype == DType::kU8 ? ReferencePool<uint8_t>(c, is_max, x, qx, qy)
                                          : ReferencePool<int8_t>(c, is_max, x, qx, qy);
  const char* op = is_max ? "QMaxPool" : "QAveragePool";
  INFO(op << " " << Describe(c) << " " << DTypeName(dtype) << ", X " << qx.ToString() << ", Y " << qy.ToString());
  for (int threads : {1, 2, 3}) {
    INFO("threads " << threads);
    const Context ctx = Context::ForIsas(DetectedIsas(), threads);
    const Tensor got = testing::RunQOp(op, {{x, qx}}, qy, Attributes(c, is_max), ctx).value();
    testing::RequireSameCodes(got, want);
  }
  // The float pool on the dequantized input: max exactly, average within 1 LSB (inside y's range).
  const Context ctx = Context::ForIsas(DetectedIsas(), 1);
  const Tensor f = testing::RunQOp(is_max ? "MaxPool" : "AveragePool", {{Dequantize(x, qx), std::nullopt}},
                                   std::nullopt, Attributes(c, is_max), ctx, "")
                       .value();
  REQUIRE(f.shape() == want.shape());
  const float y_lo = static_cast<float>(qy.quant_min() - qy.zero_point()) * qy.scale();
  const float y_hi = static_cast<float>(qy.quant_max() - qy.zero_point()) * qy.scale();
  for (int64_t i = 0; i < f.NumElements(); ++i) {
    const float v = f.data<float>()[i];
    const float got = testing::Dequantized(want, qy, i);
    if (is_max) {
      if (got != v) FAIL("element " << i << ": float max " << v << ", int8 max " << got);
    } else if (v >= y_lo && v <= y_hi && std::fabs(got - v) > qy.scale() * 1.001f) {
      FAIL("element " << i << ": float average " << v << ", int8 " << got << " (more than 1 LSB " << qy.scale()
                      << ")");
    }
  }
}

TEST_CASE("QMaxPool and QAveragePool equal the reference and the float pools", "[int8_misc]") {
  auto rng = testing::MakeRng("qpool_op");
  const std::vector<PoolCase> cases = {
      // ResNet's stem pool: 3x3 stride 2 pad 1.
      {Shape{1, 3, 9, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}},
      {Shape{2, 2, 6, 6}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}},
      // 2x2 stride 2 windows tiling the input (the flat max path), over several parallel tiles; and odd sizes.
      {Shape{2, 5, 64, 300}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}},
      {Shape{1, 3, 7, 9}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}},
      {Shape{1, 4, 6, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false, true},
      {Shape{1, 4, 6, 7}, {3, 3}, {1, 1}, {1, 0, 2, 1}, {1, 1}, false, false},
      // ceil_mode with and without count_include_pad: the last window reaches past the padded input.
      {Shape{1, 2, 7, 8}, {3, 2}, {2, 3}, {1, 0, 1, 1}, {1, 1}, true, true},
      {Shape{1, 2, 7, 8}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true, false},
      // A kernel larger than the input (pads keep it inside), H or W of 1.
      {Shape{1, 3, 2, 3}, {3, 4}, {1, 1}, {1, 2, 1, 1}, {1, 1}, false, true},
      {Shape{2, 3, 1, 9}, {1, 3}, {1, 2}, {0, 1, 0, 1}, {1, 1}},
      // 1-D.
      {Shape{2, 3, 11}, {3}, {2}, {1, 1}, {1}},
      {Shape{1, 5, 6}, {4}, {3}, {2, 1}, {1}, true, true},
  };
  for (const PoolCase& c : cases) {
    for (bool is_max : {true, false}) {
      for (DType dtype : {DType::kU8, DType::kS8}) CheckPool(rng, c, is_max, dtype);
    }
  }
  // Dilations (max only).
  CheckPool(rng, {Shape{1, 2, 8, 9}, {2, 3}, {1, 2}, {1, 1, 0, 1}, {2, 3}}, true, DType::kU8);
  CheckPool(rng, {Shape{1, 3, 13}, {3}, {1}, {1, 1}, {3}}, true, DType::kS8);
  // Random geometries.
  for (int iter = 0; iter < 24; ++iter) {
    PoolCase c;
    const bool two_d = rng() % 3 != 0;
    const bool is_max = rng() % 2 == 0;
    const size_t nd = two_d ? 2 : 1;
    std::vector<int64_t> dims = {1 + static_cast<int64_t>(rng() % 2), 1 + static_cast<int64_t>(rng() % 5)};
    for (size_t i = 0; i < nd; ++i) {
      const int64_t k = 1 + static_cast<int64_t>(rng() % 4);
      const int64_t d = is_max ? 1 + static_cast<int64_t>(rng() % 2) : 1;
      c.kernel.push_back(k);
      c.strides.push_back(1 + static_cast<int64_t>(rng() % 3));
      c.dilations.push_back(d);
      dims.push_back(d * (k - 1) + 1 + static_cast<int64_t>(rng() % 9));
    }
    c.x = Shape(dims);
    c.pads.resize(2 * nd);
    for (size_t i = 0; i < 2 * nd; ++i) c.pads[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(c.kernel[i % nd]));
    c.ceil_mode = rng() % 2 == 0;
    c.count_include_pad = rng() % 2 == 0;
    CheckPool(rng, c, is_max, rng() % 2 ? DType::kU8 : DType::kS8);
  }
}

TEST_CASE("QGlobalMaxPool and QGlobalAveragePool equal the reference and the float pools", "[int8_misc]") {
  auto rng = testing::MakeRng("qglobal_pool_op");
  for (const Shape& shape : {Shape{2, 3, 5, 4}, Shape{1, 5, 1, 1}, Shape{1, 2, 7}, Shape{2, 3, 2, 2, 3},
                             Shape{1, 16, 7, 7}}) {
    for (bool is_max : {true, false}) {
      for (DType dtype : {DType::kU8, DType::kS8}) {
        const QParams qx = testing::RandomActivationQParams(rng, dtype);
        const QParams qy =
            is_max ? qx : AverageOutputQParams(qx, std::uniform_real_distribution<float>(0.2f, 1.0f)(rng));
        const Tensor x = testing::RandomCodes(rng, dtype, shape);
        const int64_t planes = shape.dim(0) * shape.dim(1);
        const int64_t spatial = shape.NumElements() / planes;
        std::vector<int64_t> out_dims(static_cast<size_t>(shape.rank()), 1);
        out_dims[0] = shape.dim(0);
        out_dims[1] = shape.dim(1);
        Tensor want = testing::EmptyLike(dtype, Shape(out_dims));
        const reference::QAveragePoolParams q{qx.scale(), qy.scale(), qx.zero_point(), qy.zero_point(),
                                              qy.quant_min(), qy.quant_max()};
        if (dtype == DType::kU8) {
          const auto* px = static_cast<const uint8_t*>(x.raw_data());
          auto* py = static_cast<uint8_t*>(want.raw_data());
          is_max ? reference::QGlobalMaxPool(planes, spatial, px, py)
                 : reference::QGlobalAveragePool(planes, spatial, q, px, py);
        } else {
          const auto* px = static_cast<const int8_t*>(x.raw_data());
          auto* py = static_cast<int8_t*>(want.raw_data());
          is_max ? reference::QGlobalMaxPool(planes, spatial, px, py)
                 : reference::QGlobalAveragePool(planes, spatial, q, px, py);
        }
        const char* op = is_max ? "QGlobalMaxPool" : "QGlobalAveragePool";
        INFO(op << " " << shape.ToString() << " " << DTypeName(dtype) << ", X " << qx.ToString() << ", Y "
                << qy.ToString());
        for (int threads : {1, 2}) {
          const Tensor got = testing::RunQOp(op, {{x, qx}}, qy, {}, Context::ForIsas(DetectedIsas(), threads)).value();
          testing::RequireSameCodes(got, want);
        }
        const Tensor f = testing::RunQOp(is_max ? "GlobalMaxPool" : "GlobalAveragePool",
                                         {{Dequantize(x, qx), std::nullopt}}, std::nullopt, {},
                                         Context::ForIsas(DetectedIsas(), 1), "")
                             .value();
        const float y_lo = static_cast<float>(qy.quant_min() - qy.zero_point()) * qy.scale();
        const float y_hi = static_cast<float>(qy.quant_max() - qy.zero_point()) * qy.scale();
        for (int64_t i = 0; i < f.NumElements(); ++i) {
          const float v = f.data<float>()[i];
          const float got = testing::Dequantized(want, qy, i);
          const bool inside = v >= y_lo && v <= y_hi;
          if (is_max ? got != v : inside && std::fabs(got - v) > qy.scale() * 1.001f) {
            FAIL("plane " << i << ": float " << v << ", int8 " << got);
          }
        }
      }
    }
  }
}

TEST_CASE("int8 pools: errors name the value and the problem", "[int8_misc]") {
  const Context ctx = Context::ForIsas(DetectedIsas(), 1);
  const Tensor x = Tensor::Create(DType::kU8, Shape{1, 1, 4, 4}).value();
  const QParams q = QParams::PerTensor(DType::kU8, 0.1f, 3).value();
  const QParams other = QParams::PerTensor(DType::kU8, 0.2f, 3).value();
  const AttributeMap k2{{"kernel_shape", std::vector<int64_t>{2, 2}}};
  auto error = [&](const std::string& op, const std::optional<QParams>& qx, const std::optional<QParams>& qy,
                   const AttributeMap& attrs) {
    auto r = testing::RunQOp(op, {{x, qx}}, qy, attrs, ctx);
    REQUIRE_FALSE(r.ok());
    return r.status().ToString();
  };
  using Catch::Contains;
  CHECK_THAT(error("QMaxPool", q, other, k2),
             Contains("failed to compile node 'node' (QMaxPool)") && Contains("output qparams equal to the input's"));
  CHECK_THAT(error("QGlobalMaxPool", q, other, {}), Contains("output qparams equal to the input's"));
  CHECK_THAT(error("QAveragePool", std::nullopt, q, k2), Contains("input 0 (X) 'in0' has no qparams"));
  CHECK_THAT(error("QGlobalAveragePool", q, std::nullopt, {}), Contains("output 0 (Y) 'out' has no qparams"));
  CHECK_THAT(error("QAveragePool", q, q, {}), Contains("kernel_shape"));
  CHECK_THAT(error("QAveragePool", q, q, {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                          {"dilations", std::vector<int64_t>{2, 2}}}),
             Contains("dilations"));
  CHECK_THAT(error("QMaxPool", q, q, {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                      {"pads", std::vector<int64_t>{2, 0, 0, 0}}}),
             Contains("pads must be smaller than the kernel"));
}

}  // namespace
}  // namespace octet

// Converted graphs run: a converted conv -> relu -> maxpool -> flatten -> gemm chain gives, bit for bit, what the
// scalar reference kernels (ops/reference) give when composed by hand from the observers' qparams, for the
// reference, tflite and pytorch-fbgemm profiles, on every ISA this machine runs and with 1 and 3 threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "core/builder.h"
#include "core/executor.h"
#include "observers/qparams_math.h"
#include "ops/reference/qconv2d_reference.h"
#include "ops/reference/qgemm_reference.h"
#include "ops/reference/quantize_reference.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "quant/quantized_registry.h"
#include "tests/ops/stage_arrays.h"
#include "tests/qconfig_test_util.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::RandomTensor;

constexpr int64_t kRunC = 2, kRunH = 6, kRunW = 6, kO = 4, kPooled = 3, kFeatures = kO * kPooled * kPooled,
                  kClasses = 5;

Graph Chain(uint64_t seed) {
  GraphBuilder b("chain", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, kRunC, kRunH, kRunW});
  Conv2dOptions c;
  c.in_channels = kRunC;
  c.out_channels = kO;
  c.padding = {1, 1};
  x = b.Conv2d("conv", x, c);
  x = b.ReLU("relu", x);
  x = b.MaxPool2d("pool", x, Pool2dOptions{});
  x = b.Flatten("flatten", x);
  x = b.Linear("fc", x, kFeatures, kClasses);
  b.Output(x);
  return std::move(b).Build().value();
}

// The weight qparams the profile asks for, from the observer's range (PyTorch's formula over the profile's
// symmetric range), independently of Convert.
QParams ProfileWeightQParams(const PreparedGraph& p, const std::string& name, const NumericsSpec& spec) {
  const QParams q = p.CalculateQParams().value().at(name);
  if (q.quant_min() >= spec.symmetric_weight_quant_min) return q;
  const Observer* obs = p.FindObserver(name);
  QParamsSpec s;
  s.qscheme = q.scheme();
  s.dtype = DType::kS8;
  s.range = QuantRange{spec.symmetric_weight_quant_min, q.quant_max(), true};
  s.eps = obs->options().eps;
  s.axis = q.axis();
  return CalculateQParamsFromRange(obs->min_val(), obs->max_val(), s).value();
}

template <typename T>
T QuantizeOne(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax, const NumericsSpec& spec) {
  return spec.quantize_rounding == QuantizeRounding::kHalfAwayDivide
             ? reference::QuantizeValueHalfAway<T>(x, scale, zp, qmin, qmax)
             : reference::QuantizeValue<T>(x, 1.0f / scale, zp, qmin, qmax);
}

// Weights [channels][rest] quantized per channel (axis 0).
std::vector<int8_t> QuantizeWeights(const Tensor& w, const QParams& q, const NumericsSpec& spec) {
  const int64_t per = w.NumElements() / q.num_channels();
  std::vector<int8_t> out(static_cast<size_t>(w.NumElements()));
  for (int64_t i = 0; i < w.NumElements(); ++i) {
    const size_t c = static_cast<size_t>(i / per);
    out[static_cast<size_t>(i)] = QuantizeOne<int8_t>(w.data<float>()[i], q.scales()[c], q.zero_points()[c],
                                                      q.quant_min(), q.quant_max(), spec);
  }
  return out;
}

// One linear layer's output stage, by the profile: accumulators [m][n] to u8.
std::vector<uint8_t> OutputStage(const std::vector<int32_t>& acc, size_t m, size_t n, const NumericsSpec& spec,
                                 const QParams& xq, const QParams& wq, const QParams& yq, const Tensor& bias,
                                 bool relu) {
  testing::StageArrays s(n);
  for (size_t c = 0; c < n; ++c) {
    const float ws = wq.scales()[c], b = bias.data<float>()[c];
    switch (spec.requantization) {
      case reference::QGemmStage::kQ31:
        reference::QGemmQ31Multiplier(xq.scale(), ws, yq.scale(), &s.q31_m[c], &s.q31_s[c]);
        s.bias_s32[c] = reference::QuantizeBias(b, xq.scale(), ws);
        break;
      case reference::QGemmStage::kFbgemm:
        reference::QGemmFbgemmParams(xq.scale(), ws, yq.scale(), b, &s.multipliers[c], &s.bias_f32[c]);
        break;
      default:
        s.multipliers[c] = reference::QGemmFp32Multiplier(xq.scale(), ws, yq.scale());
        s.bias_s32[c] = reference::QuantizeBias(b, xq.scale(), ws);
        break;
    }
  }
  reference::QGemmStageParams params = s.Params(spec.requantization, /*a_scale=*/1.0f);  // no f32 stage here
  params.signed_output = false;
  params.zero_point = yq.zero_point();
  params.lo = relu ? std::max(yq.zero_point(), yq.quant_min()) : yq.quant_min();
  params.hi = yq.quant_max();
  std::vector<uint8_t> y(m * n);
  reference::QGemmApplyStage(m, n, acc.data(), n, params, y.data(), n);
  return y;
}

// The chain composed from the reference kernels: Quantize, QConv2d (NHWC) + stage + Relu, 2x2 max pool, NCHW
// flatten, QGemm + stage, Dequantize.
std::vector<float> HandComposed(const PreparedGraph& p, const NumericsSpec& spec, const Tensor& x) {
  const auto qp = p.CalculateQParams().value();
  const Graph& g = p.graph();
  const int64_t n = x.shape().dim(0);
  const QParams& xq = qp.at("x");
  const QParams& cq = qp.at("relu");  // conv's fused output, shared by pool and flatten
  const QParams& yq = qp.at("fc");
  // Quantize, NCHW -> NHWC.
  std::vector<uint8_t> xs(static_cast<size_t>(x.NumElements()));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < kRunC; ++c)
      for (int64_t h = 0; h < kRunH; ++h)
        for (int64_t w = 0; w < kRunW; ++w) {
          const float v = x.data<float>()[((b * kRunC + c) * kRunH + h) * kRunW + w];
          xs[static_cast<size_t>(((b * kRunH + h) * kRunW + w) * kRunC + c)] =
              QuantizeOne<uint8_t>(v, xq.scale(), xq.zero_point(), xq.quant_min(), xq.quant_max(), spec);
        }
  // Conv weights OIHW -> OHWI.
  const QParams wq = ProfileWeightQParams(p, "conv.weight", spec);
  const std::vector<int8_t> w_oihw = QuantizeWeights(g.value(g.FindValue("conv.weight")).data, wq, spec);
  std::vector<int8_t> w_ohwi(w_oihw.size());
  for (int64_t o = 0; o < kO; ++o)
    for (int64_t c = 0; c < kRunC; ++c)
      for (int64_t k = 0; k < 9; ++k) {
        w_ohwi[static_cast<size_t>((o * 9 + k) * kRunC + c)] = w_oihw[static_cast<size_t>((o * kRunC + c) * 9 + k)];
      }
  reference::Conv2dGeometry geo;
  geo.n = n;
  geo.h = kRunH;
  geo.w = kRunW;
  geo.c_in = kRunC;
  geo.c_out = kO;
  geo.kh = geo.kw = 3;
  geo.pad_h = geo.pad_w = 1;
  const std::vector<int32_t> w_zp(static_cast<size_t>(kO), 0);
  std::vector<int32_t> acc(static_cast<size_t>(n * kRunH * kRunW * kO));
  reference::QConv2dAccumulate<uint8_t>(geo, xs.data(), xq.zero_point(), w_ohwi.data(), w_zp.data(), acc.data());
  const std::vector<uint8_t> conv = OutputStage(acc, static_cast<size_t>(n * kRunH * kRunW), kO, spec, xq, wq, cq,
                                                g.value(g.FindValue("conv.bias")).data, /*relu=*/true);
  // 2x2 max pool (the integers keep their qparams), flattened in NCHW order.
  std::vector<uint8_t> flat(static_cast<size_t>(n * kFeatures));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < kO; ++o)
      for (int64_t ph = 0; ph < kPooled; ++ph)
        for (int64_t pw = 0; pw < kPooled; ++pw) {
          uint8_t m = 0;
          for (int64_t dy = 0; dy < 2; ++dy)
            for (int64_t dx = 0; dx < 2; ++dx) {
              m = std::max(m, conv[static_cast<size_t>(((b * kRunH + 2 * ph + dy) * kRunW + 2 * pw + dx) * kO + o)]);
            }
          flat[static_cast<size_t>(b * kFeatures + (o * kPooled + ph) * kPooled + pw)] = m;
        }
  // Gemm (transB = 1: weights [classes][features], per channel along axis 0).
  const QParams fq = ProfileWeightQParams(p, "fc.weight", spec);
  const std::vector<int8_t> fw = QuantizeWeights(g.value(g.FindValue("fc.weight")).data, fq, spec);
  const std::vector<int32_t> f_zp(static_cast<size_t>(kClasses), 0);
  std::vector<int32_t> acc2(static_cast<size_t>(n * kClasses));
  reference::QGemmAccumulate<uint8_t>(static_cast<size_t>(n), kClasses, kFeatures, flat.data(), kFeatures,
                                      cq.zero_point(), fw.data(), kFeatures, f_zp.data(), acc2.data(), kClasses);
  const std::vector<uint8_t> y = OutputStage(acc2, static_cast<size_t>(n), kClasses, spec, cq, fq, yq,
                                             g.value(g.FindValue("fc.bias")).data, /*relu=*/false);
  std::vector<float> out;
  for (uint8_t v : y) out.push_back(reference::DequantizeValue(v, yq.scale(), yq.zero_point()));
  return out;
}

TEST_CASE("A converted conv-relu-pool-gemm chain equals the reference kernels composed by hand", "[convert]") {
  std::mt19937_64 rng = testing::MakeRng("convert_run_chain");
  const Graph original = Chain(rng());
  const PreparedGraph prepared = testing::CalibratedOnRandom(original, testing::X86Mapping(ObserverKind::kMinMax), rng,
                                                             Shape{4, kRunC, kRunH, kRunW});
  // A fresh batch reaching a little beyond the calibrated range, so the input saturates somewhere.
  const Tensor x = RandomTensor(rng, Shape{16, kRunC, kRunH, kRunW}, -1.2f, 1.2f);

  for (NumericsProfile profile :
       {NumericsProfile::kReference, NumericsProfile::kTflite, NumericsProfile::kPytorchFbgemm}) {
    INFO("profile " << NumericsProfileName(profile));
    ConvertOptions options;
    options.profile = profile;
    auto converted = Convert(prepared, options);
    INFO(converted.status().message());
    REQUIRE(converted.ok());
    const std::vector<float> expect = HandComposed(prepared, GetNumericsSpec(profile), x);
    std::set<float> distinct(expect.begin(), expect.end());
    CHECK(distinct.size() > expect.size() / 2);  // not saturated nor constant
    for (Isa isa : testing::CompiledIsaList()) {
      if (!testing::CanRun(isa, "convert run chain")) continue;
      for (int threads : {1, 3}) {
        INFO("isa " << IsaName(isa) << ", " << threads << " threads");
        const Tensor y = testing::RunWithInputShapes(*converted, testing::ContextFor(isa, threads),
                                                     QuantizedGraphRegistry(), {x})[0];
        REQUIRE(y.NumElements() == static_cast<int64_t>(expect.size()));
        for (size_t i = 0; i < expect.size(); ++i) {
          INFO("element " << i);
          REQUIRE(y.data<float>()[i] == expect[i]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace octet

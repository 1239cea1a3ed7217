// The peer problem's data: seeded operands, the y_scale rule, bias in the stage's form.
#include "bench/harness/peer_problem.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "ops/reference/qgemm_reference.h"

namespace octet::bench {
namespace {

// Bias in [-10000, 10000], s32 or (fbgemm) float in the accumulator's scale.
void SetBias(std::mt19937_64& rng, int64_t n, QGemmOutput& output) {
  std::vector<int32_t> bias(static_cast<size_t>(n));
  for (auto& b : bias) b = static_cast<int32_t>(rng() % 20001) - 10000;
  if (output.stage == QGemmStage::kFbgemm) {
    for (int32_t b : bias) {
      output.bias_f32.push_back(static_cast<float>(b) * kPeerActivationScale * kPeerWeightScale);
    }
  } else {
    output.bias_s32 = std::move(bias);
  }
}

Result<QTensor> RandomWeights(std::mt19937_64& rng, Shape shape) {
  OCTET_ASSIGN_OR_RETURN(Tensor w, Tensor::Create(DType::kS8, std::move(shape)));
  for (auto& v : w.values<int8_t>()) v = static_cast<int8_t>(rng());
  OCTET_ASSIGN_OR_RETURN(QParams wq, QParams::PerTensor(DType::kS8, kPeerWeightScale, 0));
  return QTensor::Create(std::move(w), std::move(wq));
}

}  // namespace

Result<QGemmStage> ParseRequantScheme(std::string_view scheme) {
  for (QGemmStage stage : {QGemmStage::kFp32, QGemmStage::kQ31, QGemmStage::kFbgemm}) {
    if (scheme == reference::QGemmStageName(stage)) return stage;
  }
  return InvalidArgument("the requantization scheme must be fp32, q31 or fbgemm, got '{}'", scheme);
}

float PeerOutputScale(int64_t k) {
  const double acc_std = std::sqrt(static_cast<double>(std::max<int64_t>(k, 1))) * 73.9 * 73.9;
  return static_cast<float>(kPeerActivationScale * kPeerWeightScale * acc_std / 40.0);
}

Result<GemmProblem> MakeGemmProblem(const GemmShape& shape, const GemmProblemOptions& options) {
  if (options.activation_bits < 1 || options.activation_bits > 8) {
    return InvalidArgument("activation bits must be in [1, 8], got {}", options.activation_bits);
  }
  std::mt19937_64 rng(0x5eed);
  GemmProblem p;
  const bool quantized = options.stage != QGemmStage::kS32;
  OCTET_ASSIGN_OR_RETURN(Tensor a, Tensor::Create(DType::kU8, Shape{shape.m, shape.k}));
  const auto a_mask = static_cast<uint8_t>((1u << options.activation_bits) - 1);
  for (auto& v : a.values<uint8_t>()) v = static_cast<uint8_t>(rng()) & a_mask;
  OCTET_ASSIGN_OR_RETURN(
      QParams aq, QParams::PerTensor(DType::kU8, kPeerActivationScale, quantized ? kPeerActivationZeroPoint : 0));
  OCTET_ASSIGN_OR_RETURN(p.a, QTensor::Create(std::move(a), std::move(aq)));
  OCTET_ASSIGN_OR_RETURN(p.w, RandomWeights(rng, Shape{shape.n, shape.k}));
  if (!quantized) {
    p.output = QGemmOutput::Int32();
    return p;
  }
  p.output = QGemmOutput::Requantized(options.stage, DType::kU8, PeerOutputScale(shape.k), kPeerOutputZeroPoint);
  SetBias(rng, shape.n, p.output);
  return p;
}

Result<ConvProblem> MakeConvProblem(const ConvShape& shape, QGemmStage stage, int activation_bits) {
  if (stage == QGemmStage::kS32) return InvalidArgument("the conv peer problem has a u8 output, not int32");
  if (activation_bits < 1 || activation_bits > 8) {
    return InvalidArgument("activation bits must be in [1, 8], got {}", activation_bits);
  }
  if (shape.groups < 1 || shape.c_in % shape.groups != 0 || shape.c_out % shape.groups != 0) {
    return InvalidArgument("groups {} must divide c_in {} and c_out {}", shape.groups, shape.c_in, shape.c_out);
  }
  std::mt19937_64 rng(0x5eed);
  ConvProblem p;
  p.params.kernel_h = shape.kh;
  p.params.kernel_w = shape.kw;
  p.params.stride_h = p.params.stride_w = shape.stride;
  p.params.pad_h = p.params.pad_w = shape.pad;
  p.params.groups = shape.groups;
  OCTET_ASSIGN_OR_RETURN(Tensor x, Tensor::Create(DType::kU8, Shape{1, shape.h, shape.w, shape.c_in}));
  const auto x_mask = static_cast<uint8_t>((1u << activation_bits) - 1);
  for (auto& v : x.values<uint8_t>()) v = static_cast<uint8_t>(rng()) & x_mask;
  OCTET_ASSIGN_OR_RETURN(QParams xq, QParams::PerTensor(DType::kU8, kPeerActivationScale, kPeerActivationZeroPoint));
  OCTET_ASSIGN_OR_RETURN(p.x, QTensor::Create(std::move(x), std::move(xq)));
  const int64_t per_group = shape.c_in / shape.groups;
  OCTET_ASSIGN_OR_RETURN(p.w, RandomWeights(rng, Shape{shape.c_out, shape.kh, shape.kw, per_group}));
  p.output = QGemmOutput::Requantized(stage, DType::kU8, PeerOutputScale(shape.kh * shape.kw * per_group),
                                      kPeerOutputZeroPoint);
  SetBias(rng, shape.c_out, p.output);
  return p;
}

double GemmOps(const GemmShape& shape) {
  return 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k);
}

double ConvOps(const ConvShape& shape, int64_t out_h, int64_t out_w) {
  return 2.0 * static_cast<double>(out_h * out_w * shape.c_out) * static_cast<double>(shape.c_in / shape.groups) *
         static_cast<double>(shape.kh * shape.kw);
}

}  // namespace octet::bench

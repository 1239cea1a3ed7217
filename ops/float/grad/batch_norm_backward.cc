// BatchNormalization training forward and backward.
#include "ops/float/grad/batch_norm_backward.h"

#include <cmath>
#include <vector>

namespace octet::float_ops {
namespace {

struct Layout {
  int64_t n = 0, c = 0, spatial = 1;
};

Result<Layout> ReadLayout(const Shape& x, int64_t params) {
  if (x.rank() < 2) return InvalidArgument("X must be [N, C, ...], got {}", x);
  Layout l{x.dim(0), x.dim(1), x.Product(2, x.rank())};
  if (params != l.c) return InvalidArgument("per-channel inputs must have {} values, got {}", l.c, params);
  return l;
}

// Per-channel mean and biased variance of X, in double.
void BatchStatistics(const Layout& l, const float* x, std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(static_cast<size_t>(l.c), 0.0);
  var.assign(static_cast<size_t>(l.c), 0.0);
  const double count = static_cast<double>(l.n * l.spatial);
  for (int64_t ch = 0; ch < l.c; ++ch) {
    double sum = 0.0;
    for (int64_t n = 0; n < l.n; ++n) {
      const float* p = x + (n * l.c + ch) * l.spatial;
      for (int64_t i = 0; i < l.spatial; ++i) sum += p[i];
    }
    const double mu = sum / count;
    double sq = 0.0;
    for (int64_t n = 0; n < l.n; ++n) {
      const float* p = x + (n * l.c + ch) * l.spatial;
      for (int64_t i = 0; i < l.spatial; ++i) sq += (p[i] - mu) * (p[i] - mu);
    }
    mean[static_cast<size_t>(ch)] = mu;
    var[static_cast<size_t>(ch)] = sq / count;
  }
}

Result<std::vector<Tensor>> BatchNormBackward(const BackwardArgs& args) {
  std::vector<Tensor> grads = EmptyGrads(args);
  if (args.inputs.size() < 5) return InvalidArgument("BatchNormalization needs 5 inputs");
  OCTET_ASSIGN_OR_RETURN(BatchNormTrainingArgs bn, ReadBatchNormTrainingArgs(args.node));
  const Tensor& xt = args.inputs[0];
  OCTET_ASSIGN_OR_RETURN(Layout l, ReadLayout(xt.shape(), args.inputs[1].NumElements()));
  OCTET_ASSIGN_OR_RETURN(Tensor dy_t, OutputGrad(args, 0));
  const float* x = xt.data<float>();
  const float* dy = dy_t.data<float>();
  const float* scale = args.inputs[1].data<float>();
  std::vector<double> mean, var;
  if (args.training) {
    BatchStatistics(l, x, mean, var);
  } else {
    const float* rm = args.inputs[3].data<float>();
    const float* rv = args.inputs[4].data<float>();
    mean.assign(rm, rm + l.c);
    var.assign(rv, rv + l.c);
  }
  Tensor dx, dscale, dbias;
  if (NeedsGrad(args, 0)) {
    OCTET_ASSIGN_OR_RETURN(dx, Tensor::Create(DType::kF32, xt.shape()));
  }
  OCTET_ASSIGN_OR_RETURN(dscale, Tensor::Create(DType::kF32, Shape{l.c}));
  OCTET_ASSIGN_OR_RETURN(dbias, Tensor::Create(DType::kF32, Shape{l.c}));
  const double count = static_cast<double>(l.n * l.spatial);
  for (int64_t ch = 0; ch < l.c; ++ch) {
    const size_t uc = static_cast<size_t>(ch);
    // The forward computed with float's eps; the sum var + eps is formed in double here.
    const double invstd = 1.0 / std::sqrt(var[uc] + static_cast<double>(bn.epsilon));
    double sum_dy = 0.0, sum_dy_xhat = 0.0;
    for (int64_t n = 0; n < l.n; ++n) {
      const int64_t base = (n * l.c + ch) * l.spatial;
      for (int64_t i = 0; i < l.spatial; ++i) {
        sum_dy += dy[base + i];
        sum_dy_xhat += dy[base + i] * (x[base + i] - mean[uc]) * invstd;
      }
    }
    dscale.data<float>()[ch] = static_cast<float>(sum_dy_xhat);
    dbias.data<float>()[ch] = static_cast<float>(sum_dy);
    if (!NeedsGrad(args, 0)) continue;
    float* out = dx.data<float>();
    const double k = scale[ch] * invstd;
    for (int64_t n = 0; n < l.n; ++n) {
      const int64_t base = (n * l.c + ch) * l.spatial;
      for (int64_t i = 0; i < l.spatial; ++i) {
        if (args.training) {
          const double xhat = (x[base + i] - mean[uc]) * invstd;
          out[base + i] = static_cast<float>(k / count * (count * dy[base + i] - sum_dy - xhat * sum_dy_xhat));
        } else {
          out[base + i] = static_cast<float>(k * dy[base + i]);
        }
      }
    }
  }
  if (NeedsGrad(args, 0)) grads[0] = std::move(dx);
  if (NeedsGrad(args, 1)) grads[1] = std::move(dscale);
  if (NeedsGrad(args, 2)) grads[2] = std::move(dbias);
  return grads;
}

}  // namespace

Result<BatchNormTrainingArgs> ReadBatchNormTrainingArgs(const Node& node) {
  BatchNormTrainingArgs a;
  OCTET_ASSIGN_OR_RETURN(a.epsilon, node.attributes.GetFloat("epsilon", 1e-5f));
  OCTET_ASSIGN_OR_RETURN(float onnx_momentum, node.attributes.GetFloat("momentum", 0.9f));
  a.momentum = 1.0f - onnx_momentum;
  return a;
}

Result<Tensor> BatchNormTrainingForward(const Tensor& x, const Tensor& scale, const Tensor& bias,
                                        Tensor& running_mean, Tensor& running_var, const BatchNormTrainingArgs& args) {
  OCTET_ASSIGN_OR_RETURN(Layout l, ReadLayout(x.shape(), scale.NumElements()));
  if (bias.NumElements() != l.c || running_mean.NumElements() != l.c || running_var.NumElements() != l.c) {
    return InvalidArgument("per-channel inputs must have {} values", l.c);
  }
  const int64_t count = l.n * l.spatial;
  if (count < 2) {
    return InvalidArgument("training BatchNormalization needs more than 1 value per channel, got input {}", x.shape());
  }
  std::vector<double> mean, var;
  BatchStatistics(l, x.data<float>(), mean, var);
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(DType::kF32, x.shape()));
  const float* px = x.data<float>();
  float* py = y.data<float>();
  float* rm = running_mean.data<float>();
  float* rv = running_var.data<float>();
  const float m = args.momentum;
  for (int64_t ch = 0; ch < l.c; ++ch) {
    const size_t uc = static_cast<size_t>(ch);
    const float mu = static_cast<float>(mean[uc]);
    const float invstd = static_cast<float>(1.0 / std::sqrt(var[uc] + static_cast<double>(args.epsilon)));
    const float a = scale.data<float>()[ch] * invstd;
    const float b = bias.data<float>()[ch];
    for (int64_t n = 0; n < l.n; ++n) {
      const int64_t base = (n * l.c + ch) * l.spatial;
      for (int64_t i = 0; i < l.spatial; ++i) py[base + i] = (px[base + i] - mu) * a + b;
    }
    const double unbiased = var[uc] * static_cast<double>(count) / static_cast<double>(count - 1);
    rm[ch] = (1.0f - m) * rm[ch] + m * mu;
    rv[ch] = (1.0f - m) * rv[ch] + m * static_cast<float>(unbiased);
  }
  return y;
}

Status RegisterBatchNormBackward(BackwardRegistry& registry) {
  return registry.Register(FloatOp::kBatchNormalization, BatchNormBackward);
}

}  // namespace octet::float_ops

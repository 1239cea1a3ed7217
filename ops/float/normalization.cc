// BatchNormalization and LayerNormalization.
#include "ops/float/normalization.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

// Per-channel a = scale / sqrt(var + eps), b = B - mean * a.
void FoldBatchNorm(int64_t c, float eps, const float* scale, const float* bias, const float* mean, const float* var,
                   float* a, float* b) {
  for (int64_t i = 0; i < c; ++i) {
    a[i] = scale[i] / std::sqrt(var[i] + eps);
    b[i] = bias[i] - mean[i] * a[i];
  }
}

// training_mode = 1: normalizes with the batch's own mean and (biased) variance per channel, and outputs the
// running statistics updated by `momentum` (input * momentum + batch * (1 - momentum)), as ONNX's reference does.
Result<PreparedOp> PrepareBatchNormTraining(const OpPrepareArgs& args, float eps) {
  OCTET_ASSIGN_OR_RETURN(float momentum, args.node.attributes.GetFloat("momentum", 0.9f));
  const Shape& x = args.inputs[0].shape;
  if (x.rank() < 2) return InvalidArgument("X must be [N, C, ...], got {}", x);
  const int64_t c = x.dim(1), n = x.dim(0), spatial = x.Product(2, x.rank());
  for (size_t s = 1; s < 5; ++s) {
    if (args.inputs[s].shape != Shape{c}) {
      return InvalidArgument("input {} must be [{}] (one value per channel), got {}", s, c, args.inputs[s].shape);
    }
  }
  std::vector<OutputInfo> outs = {{DType::kF32, x}};
  for (size_t k = 1; k < args.node.outputs.size(); ++k) outs.push_back({DType::kF32, Shape{c}});
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const float* px = r.inputs[0].data<float>();
    float* py = r.outputs[0].data<float>();
    const float* scale = r.inputs[1].data<float>();
    const float* bias = r.inputs[2].data<float>();
    for (int64_t ch = 0; ch < c; ++ch) {
      double sum = 0.0, sq = 0.0;
      for (int64_t b = 0; b < n; ++b) {
        const float* xi = px + (b * c + ch) * spatial;
        for (int64_t i = 0; i < spatial; ++i) sum += xi[i], sq += static_cast<double>(xi[i]) * xi[i];
      }
      const double count = static_cast<double>(n * spatial);
      const double mean = count > 0 ? sum / count : 0.0;
      const double var = count > 0 ? std::max(0.0, sq / count - mean * mean) : 0.0;
      const double a = scale[ch] / std::sqrt(var + eps);
      for (int64_t b = 0; b < n; ++b) {
        const float* xi = px + (b * c + ch) * spatial;
        float* yi = py + (b * c + ch) * spatial;
        for (int64_t i = 0; i < spatial; ++i) yi[i] = static_cast<float>((xi[i] - mean) * a + bias[ch]);
      }
      if (r.outputs.size() > 1 && r.outputs[1].raw_data() != nullptr) {
        r.outputs[1].data<float>()[ch] =
            static_cast<float>(r.inputs[3].data<float>()[ch] * momentum + mean * (1.0 - momentum));
      }
      if (r.outputs.size() > 2 && r.outputs[2].raw_data() != nullptr) {
        r.outputs[2].data<float>()[ch] =
            static_cast<float>(r.inputs[4].data<float>()[ch] * momentum + var * (1.0 - momentum));
      }
    }
    return OkStatus();
  });
  return MakePrepared(std::move(outs), std::move(kernel), "batch_norm_training_f32");
}

Result<PreparedOp> PrepareBatchNorm(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 5, 5, 1, 3));
  for (size_t s = 0; s < 5; ++s) OCTET_RETURN_IF_ERROR(CheckInput(args, s, DType::kF32));
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(int64_t training, at.GetInt("training_mode", 0));
  if (training != 0) {
    OCTET_ASSIGN_OR_RETURN(float training_eps, at.GetFloat("epsilon", 1e-5f));
    return PrepareBatchNormTraining(args, training_eps);
  }
  if (args.node.outputs.size() > 1) {
    return Unimplemented("running statistics outputs need training_mode = 1; export in eval mode");
  }
  OCTET_ASSIGN_OR_RETURN(float eps, at.GetFloat("epsilon", 1e-5f));
  const Shape& x = args.inputs[0].shape;
  if (x.rank() < 2) return InvalidArgument("X must be [N, C, ...], got {}", x);
  const int64_t c = x.dim(1);
  for (size_t s = 1; s < 5; ++s) {
    if (args.inputs[s].shape != Shape{c}) {
      return InvalidArgument("input {} must be [{}] (one value per channel), got {}", s, c, args.inputs[s].shape);
    }
  }
  const int64_t n = x.dim(0);
  const int64_t spatial = x.Product(2, x.rank());
  bool constant = true;
  for (size_t s = 1; s < 5; ++s) constant = constant && args.inputs[s].constant != nullptr;
  std::vector<float> a, b;
  if (constant) {
    a.resize(static_cast<size_t>(c));
    b.resize(static_cast<size_t>(c));
    FoldBatchNorm(c, eps, args.inputs[1].constant->data<float>(), args.inputs[2].constant->data<float>(),
                  args.inputs[3].constant->data<float>(), args.inputs[4].constant->data<float>(), a.data(), b.data());
  }
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const float* pa = a.data();
    const float* pb = b.data();
    std::vector<float> la, lb;
    if (!constant) {
      la.resize(static_cast<size_t>(c));
      lb.resize(static_cast<size_t>(c));
      FoldBatchNorm(c, eps, r.inputs[1].data<float>(), r.inputs[2].data<float>(), r.inputs[3].data<float>(),
                    r.inputs[4].data<float>(), la.data(), lb.data());
      pa = la.data();
      pb = lb.data();
    }
    const float* px = r.inputs[0].data<float>();
    float* py = r.outputs[0].data<float>();
    ParallelFor(r.context, n * c, std::max<int64_t>(1, 8192 / std::max<int64_t>(spatial, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t t = begin; t < end; ++t) {
                    const float sa = pa[t % c], sb = pb[t % c];
                    const float* xi = px + t * spatial;
                    float* yi = py + t * spatial;
                    for (int64_t i = 0; i < spatial; ++i) yi[i] = xi[i] * sa + sb;
                  }
                });
    return OkStatus();
  });
  return MakePrepared({{DType::kF32, x}}, std::move(kernel), "batch_norm_f32");
}

// For each element of the normalised block, the offset of the Scale (or B) element it uses, following
// unidirectional broadcasting of `param` to `block`.
Result<std::vector<int64_t>> ParamIndex(const Shape& param, const Shape& block, const char* what) {
  auto b = BroadcastShapes(param, block);
  if (!b.ok() || *b != block) {
    return InvalidArgument("{} {} does not broadcast to the normalised shape {}", what, param, block);
  }
  const std::vector<int64_t> strides = BroadcastStrides(param, block);
  std::vector<int64_t> index(static_cast<size_t>(block.NumElements()));
  for (int64_t i = 0; i < block.NumElements(); ++i) {
    int64_t rem = i, off = 0;
    for (int d = block.rank() - 1; d >= 0; --d) {
      off += (rem % block.dim(d)) * strides[static_cast<size_t>(d)];
      rem /= block.dim(d);
    }
    index[static_cast<size_t>(i)] = off;
  }
  return index;
}

Result<PreparedOp> PrepareLayerNorm(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 3, 1, 3));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 1, DType::kF32));
  const bool has_bias = Present(args, 2);
  if (has_bias) OCTET_RETURN_IF_ERROR(CheckInput(args, 2, DType::kF32));
  const AttributeMap& at = args.node.attributes;
  const Shape& x = args.inputs[0].shape;
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, at.GetInt("axis", -1));
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, x.rank()));
  OCTET_ASSIGN_OR_RETURN(float eps, at.GetFloat("epsilon", 1e-5f));
  OCTET_ASSIGN_OR_RETURN(int64_t stash_type, at.GetInt("stash_type", 1));
  if (stash_type != 1) return Unimplemented("stash_type {} is not supported (only 1, float)", stash_type);
  const Shape block(std::vector<int64_t>(x.dims().begin() + axis, x.dims().end()));
  const int64_t inner = block.NumElements();
  const int64_t outer = x.Product(0, axis);
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> scale_index, ParamIndex(args.inputs[1].shape, block, "Scale"));
  std::vector<int64_t> bias_index;
  if (has_bias) {
    OCTET_ASSIGN_OR_RETURN(bias_index, ParamIndex(args.inputs[2].shape, block, "B"));
  }
  std::vector<int64_t> stat_dims(x.dims().begin(), x.dims().begin() + axis);
  stat_dims.resize(static_cast<size_t>(x.rank()), 1);
  std::vector<OutputInfo> outs = {{DType::kF32, x}};
  for (size_t s = 1; s < args.node.outputs.size(); ++s) outs.push_back({DType::kF32, Shape(stat_dims)});
  const size_t num_outputs = outs.size();
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const float* px = r.inputs[0].data<float>();
    const float* scale = r.inputs[1].data<float>();
    const float* bias = has_bias ? r.inputs[2].data<float>() : nullptr;
    float* py = r.outputs[0].data<float>();
    float* mean_out = num_outputs > 1 ? r.outputs[1].data<float>() : nullptr;
    float* inv_out = num_outputs > 2 ? r.outputs[2].data<float>() : nullptr;
    ParallelFor(r.context, outer, std::max<int64_t>(1, 4096 / std::max<int64_t>(inner, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t o = begin; o < end; ++o) {
                    const float* xi = px + o * inner;
                    float* yi = py + o * inner;
                    double sum = 0.0;
                    for (int64_t i = 0; i < inner; ++i) sum += xi[i];
                    const float mean = static_cast<float>(sum / static_cast<double>(inner));
                    double sq = 0.0;
                    for (int64_t i = 0; i < inner; ++i) {
                      const double d = static_cast<double>(xi[i]) - mean;
                      sq += d * d;
                    }
                    const float var = static_cast<float>(sq / static_cast<double>(inner));
                    const float inv = 1.0f / std::sqrt(var + eps);
                    for (int64_t i = 0; i < inner; ++i) {
                      float v = (xi[i] - mean) * inv * scale[scale_index[static_cast<size_t>(i)]];
                      if (bias) v += bias[bias_index[static_cast<size_t>(i)]];
                      yi[i] = v;
                    }
                    if (mean_out) mean_out[o] = mean;
                    if (inv_out) inv_out[o] = inv;
                  }
                });
    return OkStatus();
  });
  return MakePrepared(std::move(outs), std::move(kernel), "layer_norm_f32");
}

}  // namespace

Status RegisterNormalizationOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kBatchNormalization, PrepareBatchNorm));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kLayerNormalization, PrepareLayerNorm));
  return OkStatus();
}

}  // namespace octet::float_ops

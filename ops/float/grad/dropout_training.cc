#include "ops/float/grad/dropout_training.h"

namespace octet::float_ops {
namespace {

// SplitMix64's finaliser: a well-mixed 64-bit value per (seed, index), so each element's draw is independent of
// how the work is split.
uint64_t Mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The kept elements' factor: 1 / (1 - ratio) in float32, 0 when everything is dropped.
float KeepScale(float ratio) { return ratio >= 1.0f ? 0.0f : 1.0f / (1.0f - ratio); }

Status CheckRatio(float ratio) {
  if (!(ratio >= 0.0f && ratio <= 1.0f)) return InvalidArgument("Dropout ratio must be in [0, 1], got {}", ratio);
  return OkStatus();
}

}  // namespace

Result<DropoutTrainingResult> DropoutTrainingForward(const Tensor& x, float ratio, uint64_t seed) {
  OCTET_RETURN_IF_ERROR(CheckRatio(ratio));
  if (x.dtype() != DType::kF32) return InvalidArgument("Dropout input must be f32, got {}", x.dtype());
  DropoutTrainingResult r;
  OCTET_ASSIGN_OR_RETURN(r.output, Tensor::Create(DType::kF32, x.shape()));
  OCTET_ASSIGN_OR_RETURN(r.mask, Tensor::Create(DType::kU8, x.shape()));
  const float scale = KeepScale(ratio);
  const uint64_t stream = Mix(seed);
  const float* in = x.data<float>();
  float* out = r.output.data<float>();
  uint8_t* mask = r.mask.data<uint8_t>();
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    // A uniform draw in [0, 1) with 24 bits; kept when it is at least the ratio (probability 1 - ratio).
    const float u = static_cast<float>(Mix(stream ^ static_cast<uint64_t>(i)) >> 40) * 0x1.0p-24f;
    const bool keep = u >= ratio && ratio < 1.0f;
    mask[i] = keep ? 1 : 0;
    out[i] = keep ? in[i] * scale : 0.0f;
  }
  return r;
}

Result<Tensor> DropoutTrainingBackward(const Tensor& dy, const Tensor& mask, float ratio) {
  OCTET_RETURN_IF_ERROR(CheckRatio(ratio));
  if (dy.dtype() != DType::kF32 || mask.dtype() != DType::kU8 || dy.shape() != mask.shape()) {
    return InvalidArgument("Dropout backward needs f32 dY and a u8 mask of one shape, got {} {} and {} {}",
                           dy.dtype(), dy.shape(), mask.dtype(), mask.shape());
  }
  OCTET_ASSIGN_OR_RETURN(Tensor dx, Tensor::Create(DType::kF32, dy.shape()));
  const float scale = KeepScale(ratio);
  const float* g = dy.data<float>();
  const uint8_t* m = mask.data<uint8_t>();
  float* out = dx.data<float>();
  for (int64_t i = 0; i < dy.NumElements(); ++i) out[i] = m[i] != 0 ? g[i] * scale : 0.0f;
  return dx;
}

Result<float> DropoutRatio(const Node& node, std::span<const Tensor> inputs, std::span<const bool> present) {
  if (node.inputs.size() < 2 || inputs.size() < 2 || present.size() < 2 || !present[1]) return 0.5f;
  const Tensor& t = inputs[1];
  if (t.dtype() != DType::kF32 || t.NumElements() != 1) {
    return InvalidArgument("Dropout ratio must be one f32 value, got {} of shape {}", t.dtype(), t.shape());
  }
  const float ratio = t.data<float>()[0];
  OCTET_RETURN_IF_ERROR(CheckRatio(ratio));
  return ratio;
}

}  // namespace octet::float_ops

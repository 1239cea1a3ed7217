// Dropout in training mode (PyTorch's nn.Dropout under train()): each element is kept with probability 1 - ratio
// and scaled by 1 / (1 - ratio) (the float32 reciprocal, as PyTorch's noise.div_(1 - p)), or zeroed; the backward
// pass multiplies dY by the same scaled mask. The mask is a pure function of (seed, element index), so a seed
// reproduces it at any thread count. Eval mode is the identity (the float operator and ViewBackward).
#pragma once

#include <cstdint>
#include <span>

#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::float_ops {

struct DropoutTrainingResult {
  Tensor output;  // f32, x's shape
  Tensor mask;    // u8 0/1, x's shape: 1 where the element was kept (ONNX Dropout's mask output)
};

// ratio in [0, 1]; 1 drops everything (output and gradient zero).
Result<DropoutTrainingResult> DropoutTrainingForward(const Tensor& x, float ratio, uint64_t seed);
// dX = dY * mask / (1 - ratio), with the mask of the forward.
Result<Tensor> DropoutTrainingBackward(const Tensor& dy, const Tensor& mask, float ratio);
// The drop probability of a Dropout node: input 1 (a float scalar) when present, else ONNX's default 0.5.
Result<float> DropoutRatio(const Node& node, std::span<const Tensor> inputs, std::span<const bool> present);

}  // namespace octet::float_ops

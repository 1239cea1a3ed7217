// The three FakeQuantizeModule implementations, built by FakeQuantizeModule::Create (one file each).
#pragma once

#include <memory>
#include <string_view>

#include "core/context.h"
#include "core/status.h"
#include "core/tensor.h"
#include "quant/qat/fake_quantize_module.h"

namespace octet::qat {

// Forward's input check: f32 and not empty. `kind` names the module in the message.
Status CheckFakeQuantizeInput(const Tensor& x, std::string_view kind);
// Backward's straight-through estimator: dX = dY * mask (mask u8 0/1 of the last Forward's shape; an empty mask
// passes dY through unchanged: fake-quant was disabled). Fails when dY is not f32 of that shape.
Result<Tensor> StraightThroughBackward(const Tensor& dy, const Tensor& mask, const Shape& x_shape,
                                       std::string_view kind);

// fake_quantize_observer.cc: FakeQuantize (observer + fake_quantize_per_{tensor,channel}_affine).
Result<std::unique_ptr<FakeQuantizeModule>> MakeObserverFakeQuantize(const FakeQuantizeConfig& config,
                                                                      const Context& context);
// fused_moving_avg_obs_fake_quantize.cc: FusedMovingAvgObsFakeQuantize.
Result<std::unique_ptr<FakeQuantizeModule>> MakeFusedMovingAvgObsFakeQuantize(const FakeQuantizeConfig& config,
                                                                               const Context& context);
// learnable_fake_quantize.cc: _LearnableFakeQuantize (LSQ).
Result<std::unique_ptr<FakeQuantizeModule>> MakeLearnableFakeQuantize(const FakeQuantizeConfig& config,
                                                                       const Context& context);

}  // namespace octet::qat

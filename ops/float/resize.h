// Resize (ONNX opsets 11-19 in their opset-13 input order; Upsample and Resize-10 arrive adapted by
// io/onnx/opset_adapters.cc): nearest (four rounding modes), linear and cubic interpolation, every
// coordinate_transformation_mode, scales or sizes (with keep_aspect_ratio_policy), axes, antialias and
// tf_crop_and_resize's roi and extrapolation value.
#pragma once

#include "core/op_registry.h"

namespace octet::float_ops {

// Linear and cubic take f32; nearest moves elements of any dtype octet holds. roi, scales and sizes fix the output
// shape: constants, or computed at run time (the executor then compiles per run's data).
Status RegisterResizeOps(OpRegistry& registry);

}  // namespace octet::float_ops

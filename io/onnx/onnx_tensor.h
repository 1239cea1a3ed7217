// Conversion of ONNX TensorProtos and element types to octet tensors and dtypes, with full validation of dims,
// data lengths and external data locations.
#pragma once

#include <cstdint>
#include <string>

#include <onnx/onnx_pb.h>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::onnx_import {

// The octet dtype holding an ONNX element type: FLOAT f32, UINT8 u8, INT8 s8, INT32 s32, INT64 s32 (saturated),
// BOOL u8. Others are Unimplemented, naming the type.
Result<DType> DTypeFromOnnx(int32_t elem_type);
// "FLOAT", "DOUBLE", ... ("type 42" for unknown codes).
std::string OnnxTypeName(int32_t elem_type);

// A TensorProto as a Tensor. `model_dir` is where external data may be read from (empty: refused). Errors name
// the tensor ("tensor 'conv1.weight': raw_data has 12 bytes, dims [2, 3] of FLOAT need 24").
Result<Tensor> TensorFromOnnx(const onnx::TensorProto& proto, const std::string& model_dir);

}  // namespace octet::onnx_import

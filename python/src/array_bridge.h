// numpy arrays <-> octet Tensors.
//
// In: float32, uint8, int8 and int32 arrays (or anything numpy.asarray accepts,
// such as a CPU torch.Tensor) are copied once into a Tensor: octet's kernels
// may read up to 64 bytes past a buffer's end (kTensorPaddingBytes) and need
// 64-byte alignment, which a numpy buffer does not promise. Out: the array is a
// view of the Tensor's own buffer (no copy), which it keeps alive.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string_view>

#include "core/tensor.h"

namespace octet::python {

// Fails (octet.Error) naming `what` on another dtype, with the numpy call that
// fixes it.
Tensor TensorFromArray(const pybind11::handle &object, std::string_view what);
// A float32 tensor: other float and integer arrays are converted (observers and
// fake-quantize take float32).
Tensor F32TensorFromArray(const pybind11::handle &object,
                          std::string_view what);
pybind11::array ArrayFromTensor(const Tensor &tensor);

} // namespace octet::python

// numpy arrays <-> octet Tensors (see array_bridge.h).
#include "python/src/array_bridge.h"

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "python/src/errors.h"

namespace octet::python {

namespace py = pybind11;

namespace {

Tensor CopyIn(const py::array &array, DType dtype, std::string_view what) {
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  Result<Shape> shape = Shape::Create(dims);
  if (!shape.ok())
    throw StatusError(
        shape.status().WithContext(fmt::format("array '{}'", what)));
  Tensor t = Unwrap(Tensor::Create(dtype, std::move(*shape)));
  if (t.SizeBytes() > 0)
    std::memcpy(t.raw_data(), array.data(), t.SizeBytes());
  return t;
}

template <typename T>
Tensor CopyAs(const py::handle &object, DType dtype, std::string_view what) {
  // forcecast converts the dtype where needed; c_style makes a contiguous copy
  // only when the layout needs one.
  auto array =
      py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(object);
  if (!array) {
    PyErr_Clear();
    throw StatusError(InvalidArgument(
        "'{}' is not an array (numpy.asarray cannot convert a {})", what,
        py::str(py::type::of(object).attr("__name__")).cast<std::string>()));
  }
  return CopyIn(array, dtype, what);
}

} // namespace

Tensor TensorFromArray(const py::handle &object, std::string_view what) {
  py::array array = py::array::ensure(object);
  if (!array) {
    PyErr_Clear();
    throw StatusError(InvalidArgument(
        "'{}' is not an array (numpy.asarray cannot convert a {})", what,
        py::str(py::type::of(object).attr("__name__")).cast<std::string>()));
  }
  const py::dtype dt = array.dtype();
  if (dt.is(py::dtype::of<float>()))
    return CopyAs<float>(array, DType::kF32, what);
  if (dt.is(py::dtype::of<uint8_t>()))
    return CopyAs<uint8_t>(array, DType::kU8, what);
  if (dt.is(py::dtype::of<int8_t>()))
    return CopyAs<int8_t>(array, DType::kS8, what);
  if (dt.is(py::dtype::of<int32_t>()))
    return CopyAs<int32_t>(array, DType::kS32, what);
  const std::string name =
      py::str(static_cast<const py::handle &>(dt)).cast<std::string>();
  throw StatusError(
      InvalidArgument("'{}' has dtype {}; octet takes float32, uint8, int8 and "
                      "int32 arrays (convert with .astype(numpy.float32))",
                      what, name));
}

Tensor F32TensorFromArray(const py::handle &object, std::string_view what) {
  return CopyAs<float>(object, DType::kF32, what);
}

py::array ArrayFromTensor(const Tensor &tensor) {
  py::dtype dtype;
  switch (tensor.dtype()) {
  case DType::kF32:
    dtype = py::dtype::of<float>();
    break;
  case DType::kU8:
    dtype = py::dtype::of<uint8_t>();
    break;
  case DType::kS8:
    dtype = py::dtype::of<int8_t>();
    break;
  case DType::kS32:
    dtype = py::dtype::of<int32_t>();
    break;
  }
  const std::vector<int64_t> &dims = tensor.shape().dims();
  std::vector<py::ssize_t> shape(dims.begin(), dims.end());
  // The capsule owns a copy of the Tensor, which shares (and so keeps alive)
  // its buffer.
  auto *owner = new Tensor(tensor);
  py::capsule base(owner, [](void *p) { delete static_cast<Tensor *>(p); });
  return py::array(dtype, shape, {}, owner->raw_data(), base);
}

} // namespace octet::python

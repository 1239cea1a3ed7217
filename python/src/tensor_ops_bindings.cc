// Python bindings of quantize / dequantize / fake-quantize with PyTorch's names
// and argument order.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <vector>

#include "observers/observer.h"
#include "ops/quantize.h"
#include "python/src/array_bridge.h"
#include "python/src/errors.h"
#include "python/src/model.h"
#include "python/src/observer_options.h"

namespace octet::python {

namespace py = pybind11;

namespace {

const Context &OpsContext() { return DefaultObserverContext(); }

std::vector<float> Scales(const py::handle &v) {
  auto a =
      py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(v);
  if (!a)
    throw py::type_error("scale must be a number or an array of numbers");
  return std::vector<float>(a.data(), a.data() + a.size());
}

std::vector<int32_t> ZeroPoints(const py::handle &v) {
  auto a =
      py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(
          v);
  if (!a)
    throw py::type_error(
        "zero_point must be an integer or an array of integers");
  std::vector<int32_t> out;
  for (py::ssize_t k = 0; k < a.size(); ++k) {
    const int64_t z = a.data()[k];
    if (z < INT32_MIN || z > INT32_MAX)
      throw StatusError(OutOfRange("zero_point {} does not fit int32", z));
    out.push_back(static_cast<int32_t>(z));
  }
  return out;
}

// The narrowest integer dtype holding [quant_min, quant_max]: fake-quantize
// only needs the range.
DType RangeDType(int64_t quant_min, int64_t quant_max) {
  if (quant_min >= 0 && quant_max <= 255)
    return DType::kU8;
  if (quant_min >= -128 && quant_max <= 127)
    return DType::kS8;
  return DType::kS32;
}

py::array QuantizeWith(const py::handle &x, const QParams &q) {
  Tensor t = F32TensorFromArray(x, "x");
  Tensor out;
  {
    py::gil_scoped_release release;
    out = Unwrap(Quantize(OpsContext(), t, q)).values();
  }
  return ArrayFromTensor(out);
}

py::array FakeQuantizeWith(const py::handle &x, const QParams &q) {
  Tensor t = F32TensorFromArray(x, "x");
  Tensor out;
  {
    py::gil_scoped_release release;
    out = Unwrap(FakeQuantize(OpsContext(), t, q)).output;
  }
  return ArrayFromTensor(out);
}

} // namespace

void BindTensorOps(py::module_ &m) {
  m.def(
      "quantize_per_tensor",
      [](const py::handle &x, float scale, int32_t zero_point,
         const py::handle &dtype) {
        return QuantizeWith(x, Unwrap(QParams::PerTensor(DTypeFromPython(dtype),
                                                         scale, zero_point)));
      },
      py::arg("x"), py::arg("scale"), py::arg("zero_point"), py::arg("dtype"),
      "torch.quantize_per_tensor(x, scale, zero_point, dtype).int_repr(): the "
      "integers, as a numpy array.");
  m.def(
      "quantize_per_channel",
      [](const py::handle &x, const py::handle &scales,
         const py::handle &zero_points, int axis, const py::handle &dtype) {
        const DType d = DTypeFromPython(dtype);
        return QuantizeWith(x, Unwrap(QParams::PerChannel(
                                   d, Scales(scales), ZeroPoints(zero_points),
                                   axis, DTypeMin(d), DTypeMax(d))));
      },
      py::arg("x"), py::arg("scales"), py::arg("zero_points"), py::arg("axis"),
      py::arg("dtype"),
      "torch.quantize_per_channel(x, scales, zero_points, axis, "
      "dtype).int_repr().");
  m.def(
      "dequantize",
      [](const py::handle &q, const py::handle &scale,
         const py::handle &zero_point, std::optional<int> axis) {
        Tensor t = TensorFromArray(q, "q");
        if (!IsIntegerDType(t.dtype()))
          throw StatusError(
              InvalidArgument("dequantize needs an integer array 'q'"));
        const DType d = t.dtype();
        QParams qp =
            axis ? Unwrap(QParams::PerChannel(d, Scales(scale),
                                              ZeroPoints(zero_point), *axis,
                                              DTypeMin(d), DTypeMax(d)))
                 : Unwrap(QParams::PerTensor(d, Scales(scale).at(0),
                                             ZeroPoints(zero_point).at(0)));
        QTensor qt = Unwrap(QTensor::Create(t, qp));
        Tensor out;
        {
          py::gil_scoped_release release;
          out = Unwrap(Dequantize(OpsContext(), qt));
        }
        return ArrayFromTensor(out);
      },
      py::arg("q"), py::arg("scale"), py::arg("zero_point"),
      py::arg("axis") = py::none(),
      "scale * (q - zero_point), per tensor or (axis given) per channel.");
  m.def(
      "fake_quantize_per_tensor_affine",
      [](const py::handle &x, float scale, int32_t zero_point,
         int64_t quant_min, int64_t quant_max) {
        return FakeQuantizeWith(x, Unwrap(QParams::PerTensor(
                                       RangeDType(quant_min, quant_max), scale,
                                       zero_point, quant_min, quant_max)));
      },
      py::arg("x"), py::arg("scale"), py::arg("zero_point"),
      py::arg("quant_min"), py::arg("quant_max"),
      "torch.fake_quantize_per_tensor_affine.");
  m.def(
      "fake_quantize_per_channel_affine",
      [](const py::handle &x, const py::handle &scale,
         const py::handle &zero_point, int axis, int64_t quant_min,
         int64_t quant_max) {
        return FakeQuantizeWith(
            x, Unwrap(QParams::PerChannel(RangeDType(quant_min, quant_max),
                                          Scales(scale), ZeroPoints(zero_point),
                                          axis, quant_min, quant_max)));
      },
      py::arg("x"), py::arg("scale"), py::arg("zero_point"), py::arg("axis"),
      py::arg("quant_min"), py::arg("quant_max"),
      "torch.fake_quantize_per_channel_affine.");
}

} // namespace octet::python

// Observer options from Python keywords, with PyTorch's spellings
// (dtype=torch.quint8 or "quint8", qscheme=...).
#pragma once

#include <pybind11/pybind11.h>

#include "core/dtype.h"
#include "core/qparams.h"
#include "observers/observer_options.h"

namespace octet::python {

// "quint8", "torch.quint8", torch.quint8, "u8" ...
DType DTypeFromPython(const pybind11::handle &value);
// "per_tensor_affine", torch.per_tensor_affine ...
QScheme QSchemeFromPython(const pybind11::handle &value);
// The keywords of PyTorch's observer constructors (dtype, qscheme,
// reduce_range, quant_min, quant_max, eps, averaging_constant, ch_axis, bins,
// upsample_rate) and octet's (histogram_variant, percentile, skip_non_finite).
// An unknown keyword raises TypeError, as PyTorch does.
ObserverOptions ObserverOptionsFromKwargs(const pybind11::dict &kwargs);

} // namespace octet::python

// N-D pooling by plain window walks: each output element visits its window's
// in-range taps.
#include "ops/float/pool_nd.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/threading.h"
#include "ops/float/op_util.h"

namespace octet::float_ops {
namespace {

// The product of dims already checked against Shape's limits.
int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

struct NdGeometry {
  int nd = 0;
  int64_t planes = 0;
  std::vector<int64_t> in, out, kernel, strides, dilations,
      pads;  // pads: begin per axis, then end per axis
  bool count_include_pad = false;
  bool column_major = false;  // MaxPool's storage_order 1: Indices count the spatial dims in column-major order
  int64_t InSize() const { return Product(in); }
  int64_t OutSize() const { return Product(out); }
};

template <typename T>
void PoolPlane(const NdGeometry& g, bool is_max, const T* x, T* y, int32_t* indices, int64_t plane_offset) {
  const int nd = g.nd;
  std::vector<int64_t> o(static_cast<size_t>(nd), 0), k(static_cast<size_t>(nd), 0);
  const int64_t out_size = g.OutSize();
  const int64_t kernel_size = Product(g.kernel);
  for (int64_t oi = 0; oi < out_size; ++oi) {
    // o: this output's position; its window starts at o * stride - pad_begin.
    double sum = 0.0;
    int64_t inside = 0, padded = 0;
    T best = std::numeric_limits<T>::lowest();
    bool any = false, nan = false;
    int64_t best_index = 0;
    std::fill(k.begin(), k.end(), 0);
    for (int64_t ki = 0; ki < kernel_size; ++ki) {
      int64_t flat = 0, column = 0, column_stride = 1;  // row-major (reading) and column-major positions
      bool in_range = true, in_padded = true;
      for (int d = 0; d < nd; ++d) {
        const size_t s = static_cast<size_t>(d);
        const int64_t pos = o[s] * g.strides[s] - g.pads[s] + k[s] * g.dilations[s];
        in_range = in_range && pos >= 0 && pos < g.in[s];
        in_padded = in_padded && pos < g.in[s] + g.pads[s + static_cast<size_t>(nd)];
        flat = flat * g.in[s] + pos;
        column += pos * column_stride;
        column_stride *= g.in[s];
      }
      if (in_padded) ++padded;
      if (in_range) {
        ++inside;
        const T v = x[flat];
        if (is_max) {
          if constexpr (std::is_floating_point_v<T>) nan |= v != v;
          if (!any || v > best) best = v, best_index = g.column_major ? column : flat;
          any = true;
        } else {
          sum += static_cast<double>(v);
        }
      }
      for (int d = nd - 1; d >= 0; --d) {  // next kernel position
        const size_t s = static_cast<size_t>(d);
        if (++k[s] < g.kernel[s]) break;
        k[s] = 0;
      }
    }
    if (is_max) {
      if constexpr (std::is_floating_point_v<T>) {
        y[oi] = nan ? std::numeric_limits<T>::quiet_NaN() : best;
      } else {
        y[oi] = best;
      }
      if (indices != nullptr) indices[oi] = static_cast<int32_t>(plane_offset + best_index);
    } else {
      const int64_t count = g.count_include_pad ? padded : inside;
      y[oi] = count > 0 ? static_cast<T>(sum / static_cast<double>(count)) : T(0);
    }
    for (int d = nd - 1; d >= 0; --d) {  // next output position
      const size_t s = static_cast<size_t>(d);
      if (++o[s] < g.out[s]) break;
      o[s] = 0;
    }
  }
}

template <typename T>
std::unique_ptr<OpKernel> PoolKernel(const NdGeometry& g, bool is_max, bool with_indices) {
  return MakeKernel([g, is_max, with_indices](const OpRunArgs& r) -> Status {
    const T* px = r.inputs[0].data<T>();
    T* py = r.outputs[0].data<T>();
    int32_t* pi = with_indices ? r.outputs[1].data<int32_t>() : nullptr;
    const int64_t in_size = g.InSize(), out_size = g.OutSize();
    ParallelFor(r.context, g.planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        PoolPlane<T>(g, is_max, px + p * in_size, py + p * out_size, pi == nullptr ? nullptr : pi + p * out_size,
                     p * in_size);
      }
    });
    return OkStatus();
  });
}

}  // namespace

Result<PreparedOp> PrepareNdPool(const OpPrepareArgs& args, bool is_max) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1, 1, is_max ? 2 : 1));
  const Shape& x = args.inputs[0].shape;
  const DType dtype = args.inputs[0].dtype;
  if (dtype != DType::kF32 && !(is_max && (dtype == DType::kU8 || dtype == DType::kS8))) {
    return InvalidArgument("input 0 must be f32{}, got {}", is_max ? ", u8 or s8" : "", dtype);
  }
  if (args.inputs[0].qparams != nullptr) {
    return InvalidArgument("input 0 is quantized; quantized pools are QMaxPool and QAveragePool");
  }
  if (x.rank() < 3 || x.rank() > 5) return InvalidArgument("X must be [N, C, D1 (, D2 (, D3))], got {}", x);
  NdGeometry g;
  g.nd = x.rank() - 2;
  const size_t nd = static_cast<size_t>(g.nd);
  const AttributeMap& at = args.node.attributes;
  OCTET_ASSIGN_OR_RETURN(g.kernel, at.GetInts("kernel_shape"));
  OCTET_ASSIGN_OR_RETURN(g.strides, at.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(g.dilations, at.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads_attr, at.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(std::string auto_pad, at.GetString("auto_pad", "NOTSET"));
  OCTET_ASSIGN_OR_RETURN(int64_t ceil_mode, at.GetInt("ceil_mode", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t count_include_pad, at.GetInt("count_include_pad", 0));
  OCTET_ASSIGN_OR_RETURN(int64_t storage_order, at.GetInt("storage_order", 0));
  if (storage_order != 0 && storage_order != 1) {
    return InvalidArgument("attribute 'storage_order' must be 0 (row major) or 1 (column major), got {}", storage_order);
  }
  g.column_major = storage_order == 1;
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("kernel_shape", g.kernel, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("strides", g.strides, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("dilations", g.dilations, nd));
  OCTET_RETURN_IF_ERROR(CheckedProduct(g.kernel).status().WithContext("kernel_shape"));
  g.in.assign(x.dims().begin() + 2, x.dims().end());
  OCTET_ASSIGN_OR_RETURN(g.pads, ResolvePads(auto_pad, pads_attr, g.in, g.kernel, g.strides, g.dilations));
  g.count_include_pad = count_include_pad != 0;
  g.planes = x.dim(0) * x.dim(1);
  std::vector<int64_t> out_dims = {x.dim(0), x.dim(1)};
  for (size_t d = 0; d < nd; ++d) {
    // A MaxPool window that sees only padding has no maximum.
    if (is_max && (g.pads[d] >= g.kernel[d] * g.dilations[d] || g.pads[d + nd] >= g.kernel[d] * g.dilations[d])) {
      return InvalidArgument("MaxPool pads must be smaller than the (dilated) kernel");
    }
    OCTET_ASSIGN_OR_RETURN(int64_t o, WindowOutputSize(g.in[d], g.kernel[d], g.strides[d], g.pads[d], g.pads[d + nd],
                                                       g.dilations[d], ceil_mode != 0));
    g.out.push_back(o);
    out_dims.push_back(o);
  }
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, out_dims));
  if (x.NumElements() > std::numeric_limits<int32_t>::max()) {
    return OutOfRange("X has {} elements; octet's Indices are 32-bit", x.NumElements());
  }
  const bool with_indices = args.node.outputs.size() > 1 && args.node.outputs[1] != kNoValue;
  std::vector<OutputInfo> outs = {{dtype, Shape(out_dims)}};
  if (args.node.outputs.size() > 1) outs.push_back({DType::kS32, Shape(out_dims)});
  std::unique_ptr<OpKernel> kernel;
  switch (dtype) {
    case DType::kU8: kernel = PoolKernel<uint8_t>(g, is_max, with_indices); break;
    case DType::kS8: kernel = PoolKernel<int8_t>(g, is_max, with_indices); break;
    default: kernel = PoolKernel<float>(g, is_max, with_indices); break;
  }
  return MakePrepared(std::move(outs), std::move(kernel),
                      fmt::format("{}_pool_nd_{}", is_max ? "max" : "average", DTypeName(dtype)));
}

}  // namespace octet::float_ops

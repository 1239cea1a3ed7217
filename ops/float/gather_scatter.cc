// GatherElements/ScatterElements walk the indices tensor (its shape is the output's, or the updates'), replacing
// the coordinate along `axis` by the index. GatherND/ScatterND read the last indices dim as a coordinate prefix into
// data and copy (or combine) the slice it selects. Scatters copy data to the output first, then apply the updates
// in order on one thread, so that duplicate indices give a fixed result.
#include "ops/float/gather_scatter.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Result<Reduction> ReadReduction(const OpPrepareArgs& args) {
  OCTET_ASSIGN_OR_RETURN(std::string r, args.node.attributes.GetString("reduction", "none"));
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return InvalidArgument("attribute 'reduction' must be none, add, mul, max or min, got '{}'", r);
}

template <typename T>
T Combine(Reduction r, T a, T b) {
  switch (r) {
    case Reduction::kNone:
      return b;
    case Reduction::kAdd:
      return static_cast<T>(a + b);
    case Reduction::kMul:
      return static_cast<T>(a * b);
    case Reduction::kMax:
      return std::max(a, b);
    case Reduction::kMin:
      return std::min(a, b);
  }
  return b;
}

// index in [-len, len) -> [0, len), or an error naming where it was read.
Status WrapIndex(int64_t& index, int64_t len, int64_t at) {
  if (index < -len || index >= len) {
    return OutOfRange("index {} at indices element {} is out of range for an axis of {}", index, at, len);
  }
  if (index < 0) index += len;
  return OkStatus();
}

Status CheckIndices(const OpPrepareArgs& args, size_t slot) {
  if (args.inputs[slot].dtype != DType::kS32) {
    return InvalidArgument("input {} (indices) must be an integer tensor (ONNX int32/int64), got {}", slot,
                           args.inputs[slot].dtype);
  }
  return OkStatus();
}

// GatherElements (updates_slot < 0) and ScatterElements.
Result<PreparedOp> PrepareElements(const OpPrepareArgs& args, bool scatter) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, scatter ? 3 : 2, scatter ? 3 : 2));
  OCTET_RETURN_IF_ERROR(CheckIndices(args, 1));
  const ValueInfo& data = args.inputs[0];
  const Shape& ind = args.inputs[1].shape;
  const int rank = data.shape.rank();
  if (rank == 0 || ind.rank() != rank) {
    return InvalidArgument("indices must have data's rank {} (>= 1), got shape {}", rank, ind);
  }
  OCTET_ASSIGN_OR_RETURN(int64_t axis_attr, args.node.attributes.GetInt("axis", 0));
  OCTET_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_attr, rank));
  for (int d = 0; d < rank; ++d) {
    if (d != axis && ind.dim(d) > data.shape.dim(d)) {
      return InvalidArgument("indices shape {} exceeds data shape {} along axis {}", ind, data.shape, d);
    }
  }
  Reduction reduction = Reduction::kNone;
  if (scatter) {
    if (args.inputs[2].shape != ind || args.inputs[2].dtype != data.dtype) {
      return InvalidArgument("updates must be {} of the indices' shape {}, got {} {}", data.dtype, ind,
                             args.inputs[2].dtype, args.inputs[2].shape);
    }
    OCTET_ASSIGN_OR_RETURN(reduction, ReadReduction(args));
  }
  const std::vector<int64_t> data_strides = RowMajorStrides(data.shape);
  const Shape data_shape = data.shape;
  const Shape ind_shape = ind;
  const DType dtype = data.dtype;
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const int32_t* idx = r.inputs[1].data<int32_t>();
    const int64_t n = ind_shape.NumElements();
    const int64_t axis_len = data_shape.dim(axis);
    Status status;
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = r.inputs[0].data<T>();
      T* y = r.outputs[0].data<T>();
      if (scatter) std::memcpy(y, x, r.outputs[0].SizeBytes());
      std::vector<int64_t> coord(static_cast<size_t>(ind_shape.rank()), 0);
      for (int64_t e = 0; e < n; ++e) {
        int64_t off = 0;
        for (int d = 0; d < ind_shape.rank(); ++d) {
          int64_t c = coord[static_cast<size_t>(d)];
          if (d == axis) {
            c = idx[e];
            status = WrapIndex(c, axis_len, e);
            if (!status.ok()) return;
          }
          off += c * data_strides[static_cast<size_t>(d)];
        }
        if (scatter) {
          y[off] = Combine(reduction, y[off], r.inputs[2].data<T>()[e]);
        } else {
          y[e] = x[off];
        }
        for (int d = ind_shape.rank(); d-- > 0;) {
          if (++coord[static_cast<size_t>(d)] < ind_shape.dim(d)) break;
          coord[static_cast<size_t>(d)] = 0;
        }
      }
    });
    return status;
  });
  return MakePrepared({{dtype, scatter ? data.shape : ind}}, std::move(kernel),
                      fmt::format("{}_elements_{}", scatter ? "scatter" : "gather", DTypeName(dtype)));
}

// GatherND (scatter false) and ScatterND: indices [..., k] address data's first batch_dims + k dims.
Result<PreparedOp> PrepareND(const OpPrepareArgs& args, bool scatter) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, scatter ? 3 : 2, scatter ? 3 : 2));
  OCTET_RETURN_IF_ERROR(CheckIndices(args, 1));
  const ValueInfo& data = args.inputs[0];
  const Shape& ind = args.inputs[1].shape;
  const int r = data.shape.rank(), q = ind.rank();
  OCTET_ASSIGN_OR_RETURN(int64_t b_attr, args.node.attributes.GetInt("batch_dims", 0));
  if (scatter && b_attr != 0) return InvalidArgument("ScatterND has no batch_dims");
  if (r < 1 || q < 1) return InvalidArgument("data and indices must have rank >= 1, got {} and {}", data.shape, ind);
  const int64_t k = ind.dim(q - 1);
  const int b = static_cast<int>(b_attr);
  if (b_attr < 0 || b >= std::min(q, r) || k < 1 || k > r - b) {
    return InvalidArgument("indices {} with batch_dims {} do not address data {}", ind, b_attr, data.shape);
  }
  for (int d = 0; d < b; ++d) {
    if (ind.dim(d) != data.shape.dim(d)) {
      return InvalidArgument("batch dim {} differs: indices {}, data {}", d, ind, data.shape);
    }
  }
  // Output (GatherND) / updates (ScatterND) shape: indices[:-1] + data[b + k:].
  std::vector<int64_t> dims(ind.dims().begin(), ind.dims().end() - 1);
  for (int d = b + static_cast<int>(k); d < r; ++d) dims.push_back(data.shape.dim(d));
  Reduction reduction = Reduction::kNone;
  if (scatter) {
    if (args.inputs[2].shape != Shape(dims) || args.inputs[2].dtype != data.dtype) {
      return InvalidArgument("updates must be {} {}, got {} {}", data.dtype, Shape(dims), args.inputs[2].dtype,
                             args.inputs[2].shape);
    }
    OCTET_ASSIGN_OR_RETURN(reduction, ReadReduction(args));
  }
  const std::vector<int64_t> strides = RowMajorStrides(data.shape);
  const int64_t slice = data.shape.Product(b + static_cast<int>(k), r);
  const int64_t batches = data.shape.Product(0, b);
  const int64_t batch_stride = b > 0 ? strides[static_cast<size_t>(b - 1)] : 0;
  const int64_t per_batch = ind.Product(b, q - 1);  // index tuples per batch
  const Shape data_shape = data.shape;
  const DType dtype = data.dtype;
  auto kernel = MakeKernel([=](const OpRunArgs& rr) -> Status {
    const int32_t* idx = rr.inputs[1].data<int32_t>();
    Status status;
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = rr.inputs[0].data<T>();
      T* y = rr.outputs[0].data<T>();
      if (scatter) std::memcpy(y, x, rr.outputs[0].SizeBytes());
      for (int64_t bi = 0; bi < batches; ++bi) {
        for (int64_t t = 0; t < per_batch; ++t) {
          const int64_t tuple = bi * per_batch + t;
          int64_t off = bi * batch_stride;
          for (int64_t j = 0; j < k; ++j) {
            int64_t c = idx[tuple * k + j];
            const int dim = b + static_cast<int>(j);
            status = WrapIndex(c, data_shape.dim(dim), tuple * k + j);
            if (!status.ok()) return;
            off += c * strides[static_cast<size_t>(dim)];
          }
          if (scatter) {
            const T* u = rr.inputs[2].data<T>() + tuple * slice;
            for (int64_t e = 0; e < slice; ++e) y[off + e] = Combine(reduction, y[off + e], u[e]);
          } else {
            std::memcpy(y + tuple * slice, x + off, static_cast<size_t>(slice) * sizeof(T));
          }
        }
      }
    });
    return status;
  });
  return MakePrepared({{dtype, scatter ? data.shape : Shape(dims)}}, std::move(kernel),
                      fmt::format("{}_nd_{}", scatter ? "scatter" : "gather", DTypeName(dtype)));
}

}  // namespace

Status RegisterGatherScatterOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kGatherElements,
                                        [](const OpPrepareArgs& a) { return PrepareElements(a, false); }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kScatterElements,
                                        [](const OpPrepareArgs& a) { return PrepareElements(a, true); }));
  OCTET_RETURN_IF_ERROR(
      RegisterFloatOp(registry, FloatOp::kGatherND, [](const OpPrepareArgs& a) { return PrepareND(a, false); }));
  return RegisterFloatOp(registry, FloatOp::kScatterND, [](const OpPrepareArgs& a) { return PrepareND(a, true); });
}

}  // namespace octet::float_ops

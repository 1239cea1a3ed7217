// Strided gathers into dense outputs.
#include "ops/float/strided_copy.h"

#include <algorithm>
#include <cstring>

#include "core/threading.h"
#include "ops/float/op_util.h"

namespace octet::float_ops {

StridedView Simplify(StridedView view) {
  StridedView out;
  out.offset = view.offset;
  for (size_t d = 0; d < view.dims.size(); ++d) {
    if (view.dims[d] == 1) continue;
    if (!out.dims.empty() && out.strides.back() == view.strides[d] * view.dims[d]) {
      out.dims.back() *= view.dims[d];
      out.strides.back() = view.strides[d];
    } else {
      out.dims.push_back(view.dims[d]);
      out.strides.push_back(view.strides[d]);
    }
  }
  for (int64_t d : view.dims) {
    if (d == 0) {
      out.dims = {0};
      out.strides = {1};
      break;
    }
  }
  return out;
}

namespace {

template <size_t kSize>
void CopyRows(const StridedView& v, const std::byte* src, std::byte* dst, int64_t row_begin, int64_t row_end) {
  const size_t rank = v.dims.size();
  const int64_t inner = rank == 0 ? 1 : v.dims[rank - 1];
  const int64_t inner_stride = rank == 0 ? 0 : v.strides[rank - 1];
  const size_t outer_rank = rank == 0 ? 0 : rank - 1;
  std::vector<int64_t> idx(outer_rank, 0);
  int64_t rem = row_begin, off = v.offset;
  for (size_t d = outer_rank; d-- > 0;) {
    idx[d] = rem % v.dims[d];
    rem /= v.dims[d];
    off += idx[d] * v.strides[d];
  }
  for (int64_t row = row_begin; row < row_end; ++row) {
    std::byte* out = dst + static_cast<size_t>(row * inner) * kSize;
    if (inner_stride == 1) {
      std::memcpy(out, src + static_cast<ptrdiff_t>(off) * static_cast<ptrdiff_t>(kSize),
                  static_cast<size_t>(inner) * kSize);
    } else {
      for (int64_t i = 0; i < inner; ++i) {
        std::memcpy(out + static_cast<size_t>(i) * kSize,
                    src + static_cast<ptrdiff_t>(off + i * inner_stride) * static_cast<ptrdiff_t>(kSize), kSize);
      }
    }
    for (size_t d = outer_rank; d-- > 0;) {
      off += v.strides[d];
      if (++idx[d] < v.dims[d]) break;
      off -= v.strides[d] * v.dims[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

void StridedCopy(const Context& context, const StridedView& view, size_t element_size, const void* src, void* dst) {
  const StridedView v = Simplify(view);
  int64_t total = 1;
  for (int64_t d : v.dims) total *= d;
  if (total == 0) return;
  const int64_t inner = v.dims.empty() ? 1 : v.dims.back();
  const int64_t rows = total / inner;
  const auto* s = static_cast<const std::byte*>(src);
  auto* t = static_cast<std::byte*>(dst);
  const int64_t tile = std::max<int64_t>(1, (int64_t{1} << 14) / inner);
  ParallelFor(context, rows, tile, [&](int64_t b, int64_t e) {
    switch (element_size) {
      case 1: CopyRows<1>(v, s, t, b, e); break;
      case 2: CopyRows<2>(v, s, t, b, e); break;
      case 4: CopyRows<4>(v, s, t, b, e); break;
      default: CopyRows<8>(v, s, t, b, e); break;
    }
  });
}

PreparedOp PrepareStridedCopy(const OpPrepareArgs& args, StridedView view, std::string kernel_name) {
  const size_t element_size = DTypeSize(args.inputs[0].dtype);
  Shape out(view.dims);
  auto kernel = MakeKernel([view = std::move(view), element_size](const OpRunArgs& r) -> Status {
    StridedCopy(r.context, view, element_size, r.inputs[0].raw_data(), r.outputs[0].raw_data());
    return OkStatus();
  });
  return MakePrepared({{args.inputs[0].dtype, std::move(out)}}, std::move(kernel), std::move(kernel_name));
}

}  // namespace octet::float_ops

// StridedCopy: gathers an arbitrary strided view of a tensor into a dense row-major output, for any element size.
// Transpose, Slice and broadcasting expansions are this one loop with different strides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/op_registry.h"

namespace octet::float_ops {

struct StridedView {
  std::vector<int64_t> dims;     // output dims (row-major, dense)
  std::vector<int64_t> strides;  // source stride of each output dim, in elements (may be negative or 0)
  int64_t offset = 0;            // source element of output element 0
};

// dst[i] = src[offset + sum_d index_d(i) * strides[d]] for every output element i; runs of unit source stride are
// copied with memcpy. Tiles of output rows are split over the context's threads.
void StridedCopy(const Context& context, const StridedView& view, size_t element_size, const void* src, void* dst);

// Drops size-1 dims and merges adjacent dims that are contiguous in the source, without changing the result.
StridedView Simplify(StridedView view);

// The prepared operator that copies `view` of input 0 into output 0 (Transpose, Slice: their Prepare only computes
// the view), recorded as kernel `kernel_name`.
PreparedOp PrepareStridedCopy(const OpPrepareArgs& args, StridedView view, std::string kernel_name);

}  // namespace octet::float_ops

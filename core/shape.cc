// Shape validation and formatting.
#include "core/shape.h"

#include <fmt/ranges.h>

namespace octet {

Result<Shape> Shape::Create(std::vector<int64_t> dims) {
  int64_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return InvalidArgument("failed to create shape [{}]: dimension {} must be >= 0, got {}",
                             fmt::join(dims, ", "), i, dims[i]);
    }
    if (dims[i] != 0 && count > kMaxElements / dims[i]) {
      return OutOfRange("failed to create shape [{}]: more than 2^48 elements", fmt::join(dims, ", "));
    }
    count *= dims[i];
  }
  return Shape(std::move(dims));
}

int64_t Shape::NumElements() const { return Product(0, rank()); }

int64_t Shape::Product(int begin, int end) const {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= dims_[static_cast<size_t>(i)];
  return p;
}

std::string Shape::ToString() const { return fmt::format("[{}]", fmt::join(dims_, ", ")); }

}  // namespace octet

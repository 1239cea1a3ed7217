// Shape: the dimensions of a row-major tensor, with overflow-checked element counts.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/status.h"

namespace octet {

class Shape {
 public:
  Shape() = default;  // rank 0: a scalar with one element
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  // Fails when a dimension is negative or the element count overflows int64 or exceeds `kMaxElements`.
  static Result<Shape> Create(std::vector<int64_t> dims);

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_.at(static_cast<size_t>(i)); }
  const std::vector<int64_t>& dims() const { return dims_; }
  // Product of the dimensions. Only valid for shapes that passed Create (or were built from trusted values).
  int64_t NumElements() const;
  // Product of dims [begin, end).
  int64_t Product(int begin, int end) const;
  // "[2, 3, 4]".
  std::string ToString() const;

  bool operator==(const Shape& other) const = default;

  // A bound that keeps every byte count of any dtype far below int64 and size_t overflow.
  static constexpr int64_t kMaxElements = int64_t{1} << 48;

 private:
  std::vector<int64_t> dims_;
};

}  // namespace octet

template <>
struct fmt::formatter<octet::Shape> : fmt::formatter<std::string_view> {
  auto format(const octet::Shape& s, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(s.ToString(), ctx);
  }
};

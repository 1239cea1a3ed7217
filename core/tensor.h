// Tensor: a dense row-major array of one DType, 64-byte aligned, with shared storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/status.h"

namespace octet {

// Bytes that every tensor buffer carries past its last element, so kernels may over-read a full vector at a tail
// (the XNN_EXTRA_BYTES idea). They are zeroed and never part of the tensor's value.
inline constexpr size_t kTensorPaddingBytes = 64;
inline constexpr size_t kTensorAlignment = 64;

// Copies of a Tensor share their buffer (like torch.Tensor); Clone() makes an independent copy.
class Tensor {
 public:
  Tensor() = default;

  // A zero-filled tensor. Fails on an invalid shape or when memory cannot be had.
  static Result<Tensor> Create(DType dtype, Shape shape);
  // A tensor holding a copy of `values`, which must have shape.NumElements() elements.
  template <typename T>
  static Result<Tensor> FromValues(Shape shape, std::span<const T> values);
  // A tensor over memory owned by someone else (an operator's scratch, the executor's arena), for calling
  // Tensor-based kernels from an operator's Run without allocating. `data` must be 64-byte aligned, hold
  // shape.NumElements() elements plus kTensorPaddingBytes, and outlive every copy of the result. No check, no copy.
  static Tensor Borrow(DType dtype, Shape shape, void* data);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t NumElements() const { return shape_.NumElements(); }
  size_t SizeBytes() const { return static_cast<size_t>(NumElements()) * DTypeSize(dtype_); }
  bool empty() const { return NumElements() == 0; }

  void* raw_data() { return data_.get(); }
  const void* raw_data() const { return data_.get(); }
  // Typed access; the dtype must match T (checked).
  template <typename T>
  T* data();
  template <typename T>
  const T* data() const;
  template <typename T>
  std::span<T> values() { return {data<T>(), static_cast<size_t>(NumElements())}; }
  template <typename T>
  std::span<const T> values() const { return {data<T>(), static_cast<size_t>(NumElements())}; }

  // A deep copy with a buffer of its own.
  Result<Tensor> Clone() const;
  // The same buffer seen with another shape of the same element count.
  Result<Tensor> Reshaped(Shape shape) const;

 private:
  DType dtype_ = DType::kF32;
  Shape shape_{0};
  std::shared_ptr<std::byte> data_;
};

template <typename T>
T* Tensor::data() {
  OCTET_CHECK_EQ(DTypeName(dtype_), DTypeName(DTypeOf<T>::value));
  return reinterpret_cast<T*>(data_.get());
}

template <typename T>
const T* Tensor::data() const {
  OCTET_CHECK_EQ(DTypeName(dtype_), DTypeName(DTypeOf<T>::value));
  return reinterpret_cast<const T*>(data_.get());
}

template <typename T>
Result<Tensor> Tensor::FromValues(Shape shape, std::span<const T> values) {
  OCTET_ASSIGN_OR_RETURN(Tensor t, Create(DTypeOf<T>::value, std::move(shape)));
  if (static_cast<int64_t>(values.size()) != t.NumElements()) {
    return InvalidArgument("failed to create tensor of shape {}: {} values given, {} needed", t.shape(),
                           values.size(), t.NumElements());
  }
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

}  // namespace octet

// TensorView and ConstTensorView: a dtype, a shape and a pointer to row-major data owned by someone else (the
// executor's activation arena, a constant, a caller's tensor). What operators and per-node hooks see.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

class TensorView {
 public:
  TensorView() = default;
  // `shape` must outlive the view; `data` must hold shape->NumElements() elements of dtype.
  TensorView(DType dtype, const Shape* shape, void* data) : dtype_(dtype), shape_(shape), data_(data) {}
  // A view of a whole tensor (which must outlive the view).
  explicit TensorView(Tensor& t) : dtype_(t.dtype()), shape_(&t.shape()), data_(t.raw_data()) {}

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return *shape_; }
  int rank() const { return shape_->rank(); }
  int64_t dim(int i) const { return shape_->dim(i); }
  int64_t NumElements() const { return shape_->NumElements(); }
  size_t SizeBytes() const { return static_cast<size_t>(NumElements()) * DTypeSize(dtype_); }
  void* raw_data() const { return data_; }
  template <typename T>
  T* data() const {
    OCTET_DCHECK(dtype_ == DTypeOf<T>::value);
    return static_cast<T*>(data_);
  }

  // A copy of the viewed data in a tensor of its own.
  Result<Tensor> ToTensor() const {
    OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(dtype_, *shape_));
    if (SizeBytes() > 0) std::memcpy(t.raw_data(), data_, SizeBytes());
    return t;
  }

 private:
  DType dtype_ = DType::kF32;
  const Shape* shape_ = nullptr;
  void* data_ = nullptr;
};

class ConstTensorView {
 public:
  ConstTensorView() = default;
  ConstTensorView(DType dtype, const Shape* shape, const void* data) : dtype_(dtype), shape_(shape), data_(data) {}
  ConstTensorView(const TensorView& v)  // NOLINT: a mutable view is usable wherever a const one is
      : dtype_(v.dtype()), shape_(&v.shape()), data_(v.raw_data()) {}
  explicit ConstTensorView(const Tensor& t) : dtype_(t.dtype()), shape_(&t.shape()), data_(t.raw_data()) {}

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return *shape_; }
  int rank() const { return shape_->rank(); }
  int64_t dim(int i) const { return shape_->dim(i); }
  int64_t NumElements() const { return shape_->NumElements(); }
  size_t SizeBytes() const { return static_cast<size_t>(NumElements()) * DTypeSize(dtype_); }
  const void* raw_data() const { return data_; }
  template <typename T>
  const T* data() const {
    OCTET_DCHECK(dtype_ == DTypeOf<T>::value);
    return static_cast<const T*>(data_);
  }

  Result<Tensor> ToTensor() const {
    OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(dtype_, *shape_));
    if (SizeBytes() > 0) std::memcpy(t.raw_data(), data_, SizeBytes());
    return t;
  }

 private:
  DType dtype_ = DType::kF32;
  const Shape* shape_ = nullptr;
  const void* data_ = nullptr;
};

}  // namespace octet

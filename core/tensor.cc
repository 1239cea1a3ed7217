// Tensor allocation and copies.
#include "core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace octet {

Result<Tensor> Tensor::Create(DType dtype, Shape shape) {
  OCTET_ASSIGN_OR_RETURN(Shape checked, Shape::Create(shape.dims()));
  const size_t bytes = static_cast<size_t>(checked.NumElements()) * DTypeSize(dtype) + kTensorPaddingBytes;
  const size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  // Tensors of 2 MiB or more start on a 2 MiB boundary and ask Linux for transparent huge pages (where THP is in
  // "madvise" mode): a stream over 4 KiB pages misses the TLB every 1024 floats, and under a hypervisor each miss
  // is a two-level page walk (observers/histogram: twice the time of the same pass over huge pages).
  constexpr size_t kHugePage = size_t{2} << 20;
  void* p = nullptr;
  if (rounded >= kHugePage) {
    if (posix_memalign(&p, kHugePage, rounded) != 0) p = nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p != nullptr) madvise(p, rounded / kHugePage * kHugePage, MADV_HUGEPAGE);  // advice only: errors ignored
#endif
  } else {
    p = std::aligned_alloc(kTensorAlignment, rounded);
  }
  if (p == nullptr) {
    return OutOfRange("failed to allocate tensor of shape {} ({}): {} bytes not available", checked, dtype, rounded);
  }
  std::memset(p, 0, rounded);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(checked);
  t.data_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
  return t;
}

Tensor Tensor::Borrow(DType dtype, Shape shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  // The aliasing constructor with an empty owner: a pointer that frees nothing.
  t.data_ = std::shared_ptr<std::byte>(std::shared_ptr<std::byte>(), static_cast<std::byte*>(data));
  return t;
}

Result<Tensor> Tensor::Clone() const {
  OCTET_ASSIGN_OR_RETURN(Tensor t, Create(dtype_, shape_));
  if (SizeBytes() > 0) std::memcpy(t.raw_data(), raw_data(), SizeBytes());
  return t;
}

Result<Tensor> Tensor::Reshaped(Shape shape) const {
  OCTET_ASSIGN_OR_RETURN(Shape checked, Shape::Create(shape.dims()));
  if (checked.NumElements() != NumElements()) {
    return InvalidArgument("failed to reshape tensor of shape {} to {}: element counts differ ({} vs {})", shape_,
                           checked, NumElements(), checked.NumElements());
  }
  Tensor t = *this;
  t.shape_ = std::move(checked);
  return t;
}

}  // namespace octet

// DType: the element types of octet tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace octet {

// f32 for float tensors; u8 / s8 / s32 for quantized values and accumulators. Room is left for s16, packed 4-bit
// and f16/bf16; code that switches over DType must handle every enumerator.
enum class DType : uint8_t { kF32, kU8, kS8, kS32 };

inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kU8, DType::kS8, DType::kS32};

size_t DTypeSize(DType dtype);
// "f32", "u8", "s8", "s32".
const char* DTypeName(DType dtype);
// Accepts the names above and PyTorch's quantized names: "quint8" (u8), "qint8" (s8), "qint32" (s32).
Result<DType> ParseDType(std::string_view name);
bool IsIntegerDType(DType dtype);
// Numeric limits of an integer dtype (for u8: 0 and 255).
int64_t DTypeMin(DType dtype);
int64_t DTypeMax(DType dtype);

template <typename T>
struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kF32; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kU8; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kS8; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kS32; };

}  // namespace octet

template <>
struct fmt::formatter<octet::DType> : fmt::formatter<std::string_view> {
  auto format(octet::DType d, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(octet::DTypeName(d), ctx);
  }
};

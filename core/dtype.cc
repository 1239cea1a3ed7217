// DType names, sizes and limits.
#include "core/dtype.h"

#include <limits>

namespace octet {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kU8: return 1;
    case DType::kS8: return 1;
    case DType::kS32: return 4;
  }
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kU8: return "u8";
    case DType::kS8: return "s8";
    case DType::kS32: return "s32";
  }
  return "?";
}

Result<DType> ParseDType(std::string_view name) {
  if (name == "f32" || name == "float32") return DType::kF32;
  if (name == "u8" || name == "quint8" || name == "uint8") return DType::kU8;
  if (name == "s8" || name == "qint8" || name == "int8") return DType::kS8;
  if (name == "s32" || name == "qint32" || name == "int32") return DType::kS32;
  return InvalidArgument("failed to parse dtype '{}': expected one of f32, u8 (quint8), s8 (qint8), s32 (qint32)",
                         name);
}

bool IsIntegerDType(DType dtype) { return dtype != DType::kF32; }

int64_t DTypeMin(DType dtype) {
  switch (dtype) {
    case DType::kU8: return 0;
    case DType::kS8: return std::numeric_limits<int8_t>::min();
    case DType::kS32: return std::numeric_limits<int32_t>::min();
    case DType::kF32: break;
  }
  CheckFailed(__FILE__, __LINE__, "DTypeMin of a float dtype");
}

int64_t DTypeMax(DType dtype) {
  switch (dtype) {
    case DType::kU8: return std::numeric_limits<uint8_t>::max();
    case DType::kS8: return std::numeric_limits<int8_t>::max();
    case DType::kS32: return std::numeric_limits<int32_t>::max();
    case DType::kF32: break;
  }
  CheckFailed(__FILE__, __LINE__, "DTypeMax of a float dtype");
}

}  // namespace octet

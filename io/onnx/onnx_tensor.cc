// TensorProto -> Tensor.
#include "io/onnx/onnx_tensor.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include <sys/stat.h>

#include <fmt/ranges.h>

#include "ops/float/half_float.h"

namespace octet::onnx_import {
namespace {

using onnx::TensorProto;

// Bytes per element as stored in the file (INT64 is 8 even though octet keeps 4).
size_t StoredSize(int32_t t) {
  switch (t) {
    case TensorProto::FLOAT: return 4;
    case TensorProto::UINT8: return 1;
    case TensorProto::INT8: return 1;
    case TensorProto::INT32: return 4;
    case TensorProto::INT64: return 8;
    case TensorProto::BOOL: return 1;
    case TensorProto::DOUBLE: return 8;
    case TensorProto::FLOAT16: return 2;
    case TensorProto::BFLOAT16: return 2;
    case TensorProto::INT16: return 2;
    case TensorProto::UINT16: return 2;
    case TensorProto::UINT32: return 4;
    case TensorProto::UINT64: return 8;
    default: return 0;
  }
}

int32_t SaturateToInt32(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
}

// Copies `count` stored elements (little-endian bytes) into the tensor.
void CopyStored(int32_t t, const char* src, int64_t count, Tensor& out) {
  // DOUBLE, FLOAT16 and BFLOAT16 are held as f32 (converted at the boundary).
  if (t == TensorProto::DOUBLE) {
    float* dst = out.data<float>();
    for (int64_t i = 0; i < count; ++i) {
      double v;
      std::memcpy(&v, src + i * 8, 8);
      dst[i] = static_cast<float>(v);
    }
    return;
  }
  if (t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16) {
    float* dst = out.data<float>();
    for (int64_t i = 0; i < count; ++i) {
      uint16_t h;
      std::memcpy(&h, src + i * 2, 2);
      dst[i] = t == TensorProto::FLOAT16 ? HalfBitsToFloat(h) : Bfloat16BitsToFloat(h);
    }
    return;
  }
  // The other integer types are held as s32 (like INT64; UINT32 and UINT64 saturate).
  if (t == TensorProto::INT16 || t == TensorProto::UINT16 || t == TensorProto::UINT32 || t == TensorProto::UINT64) {
    int32_t* dst = out.data<int32_t>();
    for (int64_t i = 0; i < count; ++i) {
      if (t == TensorProto::INT16) {
        int16_t v;
        std::memcpy(&v, src + i * 2, 2);
        dst[i] = v;
      } else if (t == TensorProto::UINT16) {
        uint16_t v;
        std::memcpy(&v, src + i * 2, 2);
        dst[i] = v;
      } else if (t == TensorProto::UINT32) {
        uint32_t v;
        std::memcpy(&v, src + i * 4, 4);
        dst[i] = static_cast<int32_t>(std::min<uint32_t>(v, INT32_MAX));
      } else {
        uint64_t v;
        std::memcpy(&v, src + i * 8, 8);
        dst[i] = static_cast<int32_t>(std::min<uint64_t>(v, INT32_MAX));
      }
    }
    return;
  }
  if (t == TensorProto::INT64) {
    int32_t* dst = out.data<int32_t>();
    for (int64_t i = 0; i < count; ++i) {
      int64_t v;
      std::memcpy(&v, src + i * 8, 8);
      dst[i] = SaturateToInt32(v);
    }
    return;
  }
  if (count > 0) std::memcpy(out.raw_data(), src, static_cast<size_t>(count) * StoredSize(t));
}

// `location` resolved inside `model_dir`, or an error: absolute paths, ".." components and paths whose real
// location (after symbolic links) leaves the folder are refused.
Result<std::string> ConfinedPath(const std::string& model_dir, const std::string& location) {
  if (location.empty()) return InvalidArgument("its external data location is empty");
  if (location.find('\0') != std::string::npos) return InvalidArgument("its external data location has a NUL byte");
  if (location.front() == '/' || location.front() == '\\') {
    return InvalidArgument("external data location '{}' is absolute; it must be relative to the model's folder",
                           location);
  }
  size_t begin = 0;
  while (begin <= location.size()) {
    size_t end = location.find_first_of("/\\", begin);
    if (end == std::string::npos) end = location.size();
    if (location.compare(begin, end - begin, "..") == 0) {
      return InvalidArgument("external data location '{}' leaves the model's folder", location);
    }
    begin = end + 1;
  }
  if (model_dir.empty()) {
    return InvalidArgument("external data '{}' cannot be read: the model was not loaded from a file", location);
  }
  std::unique_ptr<char, decltype(&std::free)> dir(realpath(model_dir.c_str(), nullptr), &std::free);
  if (!dir) return NotFound("the model's folder '{}' cannot be resolved: {}", model_dir, std::strerror(errno));
  const std::string full = model_dir + "/" + location;
  std::unique_ptr<char, decltype(&std::free)> real(realpath(full.c_str(), nullptr), &std::free);
  if (!real) return NotFound("external data file '{}' cannot be opened: {}", location, std::strerror(errno));
  const std::string prefix = std::string(dir.get()) + "/";
  if (std::string(real.get()).rfind(prefix, 0) != 0) {
    return InvalidArgument("external data location '{}' resolves outside the model's folder", location);
  }
  return std::string(real.get());
}

Result<std::string> ReadExternal(const TensorProto& p, const std::string& model_dir, int64_t needed) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    const std::string& k = kv.key();
    auto parse = [&](int64_t& dst) -> Status {
      const std::string& v = kv.value();
      if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) {
        return InvalidArgument("external data '{}' must be a non-negative integer, got '{}'", k, v);
      }
      dst = std::stoll(v);
      return OkStatus();
    };
    if (k == "location") {
      location = kv.value();
    } else if (k == "offset") {
      OCTET_RETURN_IF_ERROR(parse(offset));
    } else if (k == "length") {
      OCTET_RETURN_IF_ERROR(parse(length));
    } else if (k != "checksum") {
      return InvalidArgument("unknown external data key '{}'", k);
    }
  }
  OCTET_ASSIGN_OR_RETURN(std::string path, ConfinedPath(model_dir, location));
  if (length >= 0 && length != needed) {
    return InvalidArgument("external data length {} does not match the {} bytes its dims need", length, needed);
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgument("external data file '{}' is not a regular file", location);
  }
  if (offset > st.st_size || needed > st.st_size - offset) {
    return DataLoss("external data file '{}' has {} bytes, the tensor needs {} at offset {}", location,
                    static_cast<int64_t>(st.st_size), needed, offset);
  }
  std::unique_ptr<FILE, decltype(&std::fclose)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return IoError("external data file '{}' cannot be opened: {}", location, std::strerror(errno));
  std::string bytes(static_cast<size_t>(needed), '\0');
  if (fseeko(f.get(), static_cast<off_t>(offset), SEEK_SET) != 0 ||
      (needed > 0 && std::fread(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())) {
    return IoError("external data file '{}' cannot be read", location);
  }
  return bytes;
}

int64_t TypedCount(const TensorProto& p) {
  return p.float_data_size() + p.int32_data_size() + p.int64_data_size() + p.double_data_size() +
         p.uint64_data_size() + p.string_data_size();
}

// The typed field that holds `p`'s elements has exactly `count` values (checked before anything is allocated).
Status CheckTypedCount(const TensorProto& p, int64_t count) {
  const char* field = "int32_data";
  int64_t n = p.int32_data_size();
  if (p.data_type() == TensorProto::FLOAT) {
    field = "float_data";
    n = p.float_data_size();
  } else if (p.data_type() == TensorProto::INT64) {
    field = "int64_data";
    n = p.int64_data_size();
  } else if (p.data_type() == TensorProto::DOUBLE) {
    field = "double_data";
    n = p.double_data_size();
  } else if (p.data_type() == TensorProto::UINT32 || p.data_type() == TensorProto::UINT64) {
    field = "uint64_data";
    n = p.uint64_data_size();
  }
  if (n != count || TypedCount(p) != count) {
    return InvalidArgument("{} has {} values, dims [{}] need {}", field, n, fmt::join(p.dims(), ", "), count);
  }
  return OkStatus();
}

Status FillFromTyped(const TensorProto& p, int64_t count, Tensor& out) {
  const int32_t t = p.data_type();
  auto mismatch = [&](const char* field, int64_t n) {
    return InvalidArgument("{} has {} values, dims [{}] need {}", field, n, fmt::join(p.dims(), ", "), count);
  };
  switch (t) {
    case TensorProto::FLOAT:
      if (p.float_data_size() != count) return mismatch("float_data", p.float_data_size());
      if (count > 0) std::memcpy(out.raw_data(), p.float_data().data(), static_cast<size_t>(count) * 4);
      return OkStatus();
    case TensorProto::INT64: {
      if (p.int64_data_size() != count) return mismatch("int64_data", p.int64_data_size());
      int32_t* dst = out.data<int32_t>();
      for (int64_t i = 0; i < count; ++i) dst[i] = SaturateToInt32(p.int64_data(static_cast<int>(i)));
      return OkStatus();
    }
    case TensorProto::DOUBLE: {
      if (p.double_data_size() != count) return mismatch("double_data", p.double_data_size());
      float* dst = out.data<float>();
      for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(p.double_data(static_cast<int>(i)));
      return OkStatus();
    }
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: {  // the 16 bits, one per int32_data value
      if (p.int32_data_size() != count) return mismatch("int32_data", p.int32_data_size());
      float* dst = out.data<float>();
      for (int64_t i = 0; i < count; ++i) {
        const int32_t v = p.int32_data(static_cast<int>(i));
        if (v < 0 || v > 0xffff) return OutOfRange("int32_data[{}] = {} is not {} bits", i, v, OnnxTypeName(t));
        const auto bits = static_cast<uint16_t>(v);
        dst[i] = t == TensorProto::FLOAT16 ? HalfBitsToFloat(bits) : Bfloat16BitsToFloat(bits);
      }
      return OkStatus();
    }
    case TensorProto::UINT32:
    case TensorProto::UINT64: {
      if (p.uint64_data_size() != count) return mismatch("uint64_data", p.uint64_data_size());
      int32_t* dst = out.data<int32_t>();
      for (int64_t i = 0; i < count; ++i) {
        dst[i] = static_cast<int32_t>(std::min<uint64_t>(p.uint64_data(static_cast<int>(i)), INT32_MAX));
      }
      return OkStatus();
    }
    case TensorProto::INT16:
    case TensorProto::UINT16:
    case TensorProto::INT32:
    case TensorProto::UINT8:
    case TensorProto::INT8:
    case TensorProto::BOOL: {
      if (p.int32_data_size() != count) return mismatch("int32_data", p.int32_data_size());
      const int64_t lo = t == TensorProto::INT32   ? INT32_MIN
                         : t == TensorProto::INT16 ? -32768
                         : t == TensorProto::INT8  ? -128
                                                   : 0;
      const int64_t hi = t == TensorProto::INT32    ? INT32_MAX
                         : t == TensorProto::INT16  ? 32767
                         : t == TensorProto::UINT16 ? 65535
                         : t == TensorProto::INT8   ? 127
                         : t == TensorProto::BOOL   ? 1
                                                    : 255;
      for (int64_t i = 0; i < count; ++i) {
        const int32_t v = p.int32_data(static_cast<int>(i));
        if (v < lo || v > hi) {
          return OutOfRange("int32_data[{}] = {} is outside the range of {}", i, v, OnnxTypeName(t));
        }
        switch (out.dtype()) {
          case DType::kS32: out.data<int32_t>()[i] = v; break;
          case DType::kU8: out.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
          case DType::kS8: out.data<int8_t>()[i] = static_cast<int8_t>(v); break;
          case DType::kF32: break;
        }
      }
      return OkStatus();
    }
    default: return Internal("unexpected element type");
  }
}

}  // namespace

std::string OnnxTypeName(int32_t elem_type) {
  if (TensorProto::DataType_IsValid(elem_type)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type));
  }
  return fmt::format("type {}", elem_type);
}

Result<DType> DTypeFromOnnx(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT: return DType::kF32;
    case TensorProto::UINT8: return DType::kU8;
    case TensorProto::INT8: return DType::kS8;
    case TensorProto::INT32: return DType::kS32;
    case TensorProto::INT64: return DType::kS32;
    case TensorProto::BOOL: return DType::kU8;
    case TensorProto::INT16: return DType::kS32;  // the other integers are held as s32, like INT64
    case TensorProto::UINT16: return DType::kS32;
    case TensorProto::UINT32: return DType::kS32;  // values above INT32_MAX saturate
    case TensorProto::UINT64: return DType::kS32;
    case TensorProto::DOUBLE: return DType::kF32;   // converted at the boundary
    case TensorProto::FLOAT16: return DType::kF32;   // likewise (exact)
    case TensorProto::BFLOAT16: return DType::kF32;  // likewise (exact)
    default:
      return Unimplemented("element type {} is not supported (octet reads FLOAT, UINT8, INT8, INT32, INT64, BOOL, "
                           "INT16, UINT16, UINT32 and UINT64 as int32, and DOUBLE, FLOAT16 and BFLOAT16 as f32)",
                           OnnxTypeName(elem_type));
  }
}

Result<Tensor> TensorFromOnnx(const TensorProto& p, const std::string& model_dir) {
  const std::string what = fmt::format("tensor '{}'", p.name());
  auto fail = [&](const Status& s) { return s.WithContext(what); };
  auto dtype = DTypeFromOnnx(p.data_type());
  if (!dtype.ok()) return fail(dtype.status());
  if (p.has_segment()) return fail(Unimplemented("segmented tensors are not supported"));
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  if (dims.size() > 64) return fail(InvalidArgument("rank {} exceeds 64", dims.size()));
  auto shape = Shape::Create(dims);
  if (!shape.ok()) return fail(shape.status());
  const int64_t count = shape->NumElements();
  const int64_t stored = count * static_cast<int64_t>(StoredSize(p.data_type()));
  const bool external = p.data_location() == TensorProto::EXTERNAL;
  const int sources = (p.has_raw_data() ? 1 : 0) + (TypedCount(p) > 0 ? 1 : 0) + (external ? 1 : 0);
  if (sources > 1) return fail(InvalidArgument("more than one of raw_data, typed data and external data is set"));
  if (sources == 0 && count > 0) return fail(InvalidArgument("no data for dims [{}]", fmt::join(dims, ", ")));
  const bool unsigned_wide = p.data_type() == TensorProto::UINT32 || p.data_type() == TensorProto::UINT64;
  if (TypedCount(p) > 0 && p.string_data_size() + (unsigned_wide ? 0 : p.uint64_data_size()) +
                                (p.data_type() == TensorProto::DOUBLE ? 0 : p.double_data_size()) >
                            0) {
    return fail(InvalidArgument("holds string, double or uint64 data for element type {}", OnnxTypeName(p.data_type())));
  }
  // The data must be all there before the tensor is allocated: otherwise a few bytes of model declaring huge dims
  // make the importer allocate gigabytes (the importer fuzzer's first finding).
  std::string external_bytes;
  if (external) {
    auto bytes = ReadExternal(p, model_dir, stored);  // checks the file holds `stored` bytes first
    if (!bytes.ok()) return fail(bytes.status());
    external_bytes = std::move(*bytes);
  } else if (p.has_raw_data()) {
    if (static_cast<int64_t>(p.raw_data().size()) != stored) {
      return fail(InvalidArgument("raw_data has {} bytes, dims [{}] of {} need {}", p.raw_data().size(),
                                  fmt::join(dims, ", "), OnnxTypeName(p.data_type()), stored));
    }
  } else if (TypedCount(p) > 0) {
    Status st = CheckTypedCount(p, count);
    if (!st.ok()) return fail(st);
  }
  auto t = Tensor::Create(*dtype, *shape);
  if (!t.ok()) return fail(t.status());
  if (external) {
    CopyStored(p.data_type(), external_bytes.data(), count, *t);
  } else if (p.has_raw_data()) {
    if (p.data_type() == TensorProto::BOOL) {
      for (char c : p.raw_data()) {
        if (c != 0 && c != 1) return fail(InvalidArgument("BOOL raw_data holds a byte other than 0 or 1"));
      }
    }
    CopyStored(p.data_type(), p.raw_data().data(), count, *t);
  } else if (TypedCount(p) > 0) {
    Status st = FillFromTyped(p, count, *t);
    if (!st.ok()) return fail(st);
  }
  return std::move(*t);
}

}  // namespace octet::onnx_import

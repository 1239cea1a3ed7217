// .npy reading and writing: the preamble, the header's Python dict literal, dtype descriptors and the data.
#include "io/npy.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include <fmt/ranges.h>

#include "io/file_util.h"

namespace octet {
namespace {

// The preamble: magic string, major and minor version, then the header length (uint16 in 1.0, uint32 in 2.0 and
// 3.0), all little-endian.
constexpr unsigned char kNpyMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kNpyMagicSize = sizeof(kNpyMagic);
constexpr size_t kVersionEnd = kNpyMagicSize + 2;
// NumPy aligns the start of the data to this many bytes (numpy.lib.format.ARRAY_ALIGN).
constexpr size_t kDataAlignment = 64;
// NumPy leaves room after the dict for the first dimension to grow to this many digits (GROWTH_AXIS_MAX_DIGITS).
constexpr size_t kGrowthAxisMaxDigits = 21;
// Deeper nesting than this is no NumPy header; the bound keeps the recursive parser's stack small.
constexpr int kMaxNesting = 16;

template <typename... Args>
Status NpyError(StatusCode code, std::string_view name, fmt::format_string<Args...> f, Args&&... args) {
  return Status(code, fmt::format("failed to read .npy file '{}': {}", name,
                                  fmt::format(f, std::forward<Args>(args)...)));
}

// `text` quoted for an error message: non-printable bytes as \xNN, long text cut short.
std::string Quote(std::string_view text, size_t max_chars = 40) {
  std::string out = "'";
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == max_chars) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  out += "'";
  return out;
}

uint32_t LoadLittleU32(const std::byte* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

uint64_t LoadLittleU64(const std::byte* p) {
  return static_cast<uint64_t>(LoadLittleU32(p)) | static_cast<uint64_t>(LoadLittleU32(p + 4)) << 32;
}

// ---------------------------------------------------------------------------------------------------------------
// The header: a Python literal, parsed as ast.literal_eval would for the subset NumPy headers use.

struct PyValue {
  enum class Kind { kString, kInt, kBool, kNone, kTuple, kList };
  Kind kind = Kind::kNone;
  std::string text;  // kString
  int64_t number = 0;  // kInt, kBool (0 or 1)
  std::vector<PyValue> items;  // kTuple, kList
};

const char* KindName(PyValue::Kind kind) {
  switch (kind) {
    case PyValue::Kind::kString: return "a string";
    case PyValue::Kind::kInt: return "an integer";
    case PyValue::Kind::kBool: return "a bool";
    case PyValue::Kind::kNone: return "None";
    case PyValue::Kind::kTuple: return "a tuple";
    case PyValue::Kind::kList: return "a list";
  }
  return "?";
}

using HeaderDict = std::vector<std::pair<std::string, PyValue>>;

// Recursive descent over: dict of string keys at the top; values are strings ('...' or "..."), integers (optionally
// signed, with Python 2's L suffix), True, False, None, tuples and lists. Errors say what was expected and where.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  Result<HeaderDict> ParseDict() {
    SkipSpace();
    if (!Consume('{')) return Error("the header must be a dict starting with '{'");
    HeaderDict dict;
    std::set<std::string> keys;  // a header can hold ~10^5 keys: keep the duplicate check O(n log n)
    for (;;) {
      SkipSpace();
      if (Consume('}')) break;
      if (Peek() != '\'' && Peek() != '"') return Error("expected a string key or '}'");
      const size_t key_start = pos_;
      OCTET_ASSIGN_OR_RETURN(std::string key, ParseString());
      if (!keys.insert(key).second) {
        pos_ = key_start;
        return Error(fmt::format("duplicate key {}", Quote(key)));
      }
      SkipSpace();
      if (!Consume(':')) return Error("expected ':' after a key");
      SkipSpace();
      OCTET_ASSIGN_OR_RETURN(PyValue value, ParseValue(1));
      dict.emplace_back(std::move(key), std::move(value));
      SkipSpace();
      if (Consume('}')) break;
      if (!Consume(',')) return Error("expected ',' or '}' after a value");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("expected only padding after the dict");
    return dict;
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  bool Consume(char c) {
    if (AtEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (!AtEnd()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') break;
      ++pos_;
    }
  }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  static bool IsNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || IsDigit(c);
  }

  Status Error(const std::string& what) const {
    std::string found = "the end of the header";
    if (!AtEnd()) {
      found = fmt::format("{}", Quote(text_.substr(pos_, 1)));
    }
    return NpyError(StatusCode::kDataLoss, name_, "malformed header: {} at byte {} of the header dict, got {}", what,
                    pos_, found);
  }

  Result<PyValue> ParseValue(int depth) {
    if (depth > kMaxNesting) return Error(fmt::format("nesting deeper than {} levels", kMaxNesting));
    const char c = Peek();
    if (c == '\'' || c == '"') {
      PyValue v;
      v.kind = PyValue::Kind::kString;
      OCTET_ASSIGN_OR_RETURN(v.text, ParseString());
      return v;
    }
    if (c == '(' || c == '[') return ParseSequence(depth);
    if (IsDigit(c) || c == '-' || c == '+') return ParseInt();
    if (IsNameChar(c)) {
      const size_t start = pos_;
      while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
      const std::string_view word = text_.substr(start, pos_ - start);
      PyValue v;
      if (word == "True" || word == "False") {
        v.kind = PyValue::Kind::kBool;
        v.number = word == "True" ? 1 : 0;
        return v;
      }
      if (word == "None") return v;
      pos_ = start;
      return Error(fmt::format("unknown name {} (expected a string, integer, True, False, None, tuple or list)",
                               Quote(word)));
    }
    return Error("expected a value (a string, integer, True, False, None, tuple or list)");
  }

  // A quoted string without escape sequences (NumPy never writes one in a header).
  Result<std::string> ParseString() {
    const char quote = text_[pos_++];
    const size_t start = pos_;
    while (!AtEnd() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return Error("escape sequences in strings are not supported");
      if (text_[pos_] == '\n' || text_[pos_] == '\r') return Error("unterminated string");
      ++pos_;
    }
    if (AtEnd()) return Error("unterminated string");
    std::string s(text_.substr(start, pos_ - start));
    ++pos_;
    return s;
  }

  // Decimal integers as Python writes them: no leading zeros except for 0 itself; Python 2's 'L' suffix is
  // accepted because NumPy on Python 2 wrote shapes like (3L, 4L).
  Result<PyValue> ParseInt() {
    bool negative = false;
    while (Peek() == '-' || Peek() == '+') {  // Python folds any run of unary signs
      negative ^= Peek() == '-';
      ++pos_;
      SkipSpace();
    }
    if (!IsDigit(Peek())) return Error("expected digits");
    const size_t start = pos_;
    while (!AtEnd() && IsDigit(text_[pos_])) ++pos_;
    const std::string_view digits = text_.substr(start, pos_ - start);
    if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string_view::npos) {
      pos_ = start;
      return Error("leading zeros in a decimal integer");
    }
    // Magnitudes up to 2^63 so that INT64_MIN can be written.
    constexpr uint64_t kLimit = uint64_t{1} << 63;
    uint64_t magnitude = 0;
    for (char d : digits) {
      const auto digit = static_cast<uint64_t>(d - '0');
      if (magnitude > (kLimit - digit) / 10) {
        pos_ = start;
        return Error(fmt::format("integer {} does not fit in 64 bits", Quote(digits, 30)));
      }
      magnitude = magnitude * 10 + digit;
    }
    if (!negative && magnitude == kLimit) {
      pos_ = start;
      return Error(fmt::format("integer {} does not fit in 64 bits", Quote(digits, 30)));
    }
    if (Peek() == 'L' || Peek() == 'l') ++pos_;
    if (!AtEnd() && IsNameChar(text_[pos_])) return Error("unexpected character after an integer");
    PyValue v;
    v.kind = PyValue::Kind::kInt;
    v.number = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    return v;
  }

  // Tuples "()", "(a,)", "(a, b)" and lists "[a, b]", trailing comma allowed. "(a)" is just a, as in Python.
  Result<PyValue> ParseSequence(int depth) {
    const char open = text_[pos_++];
    const char close = open == '(' ? ')' : ']';
    PyValue v;
    v.kind = open == '(' ? PyValue::Kind::kTuple : PyValue::Kind::kList;
    bool saw_comma = false;
    for (;;) {
      SkipSpace();
      if (Consume(close)) break;
      OCTET_ASSIGN_OR_RETURN(PyValue item, ParseValue(depth + 1));
      v.items.push_back(std::move(item));
      SkipSpace();
      if (Consume(close)) break;
      if (!Consume(',')) {
        return Error(fmt::format("expected ',' or '{}' in a {}", close, open == '(' ? "tuple" : "list"));
      }
      saw_comma = true;
    }
    if (open == '(' && v.items.size() == 1 && !saw_comma) return std::move(v.items[0]);
    return v;
  }

  std::string_view text_;
  std::string_view name_;
  size_t pos_ = 0;
};

// True if `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t extra;
    uint32_t min_code;
    uint32_t code;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      extra = 1, min_code = 0x80, code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      extra = 2, min_code = 0x800, code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      extra = 3, min_code = 0x10000, code = c & 0x07;
    } else {
      return false;
    }
    if (text.size() - i <= extra) return false;
    for (size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      code = code << 6 | (cc & 0x3f);
    }
    if (code < min_code || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += extra + 1;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// dtype descriptors.

struct FileType {
  DType dtype;        // what the tensor holds
  size_t item_bytes;  // bytes per element in the file
  bool narrow_s64;    // the file holds int64 values that must each fit in int32
};

Result<FileType> ParseDescr(std::string_view descr, std::string_view name) {
  const auto unsupported = [&](std::string_view why) {
    return NpyError(StatusCode::kUnimplemented, name,
                    "dtype {} is not supported ({}); supported are '<f4', '|u1', '|i1', '<i4' and '<i8' (read as "
                    "int32)",
                    Quote(descr), why);
  };
  if (descr.empty()) return NpyError(StatusCode::kDataLoss, name, "'descr' must name a dtype, got ''");
  char order = '\0';
  std::string_view body = descr;
  if (body[0] == '<' || body[0] == '>' || body[0] == '|' || body[0] == '=') {
    order = body[0];
    body.remove_prefix(1);
  }
  if (body.empty()) return unsupported("no type code");

  FileType type{DType::kF32, 0, false};
  if (body == "f4") {
    type = {DType::kF32, 4, false};
  } else if (body == "u1") {
    type = {DType::kU8, 1, false};
  } else if (body == "i1") {
    type = {DType::kS8, 1, false};
  } else if (body == "i4") {
    type = {DType::kS32, 4, false};
  } else if (body == "i8") {
    type = {DType::kS32, 8, true};
  } else {
    switch (body[0]) {
      case 'O': return unsupported("Python objects, which need pickle");
      case 'S': case 'a': case 'U': return unsupported("strings");
      case 'V': return unsupported("raw or structured records");
      case 'M': case 'm': return unsupported("dates and times");
      case 'b': case '?': return unsupported("bool; save it as uint8");
      case 'c': return unsupported("complex numbers");
      case 'f':
        if (body == "f8") return unsupported("float64; save it as float32");
        if (body == "f2") return unsupported("float16; save it as float32");
        return unsupported("only 4-byte floats are read");
      case 'e': return unsupported("float16; save it as float32");
      case 'd': case 'g': return unsupported("float64 or wider; save it as float32");
      default: return unsupported("an integer or float width octet does not read");
    }
  }
  if (type.item_bytes > 1) {
    if (order == '>') {
      return NpyError(StatusCode::kUnimplemented, name,
                      "big-endian data is not supported, got dtype {} (save it with arr.astype('<{}'))", Quote(descr),
                      body);
    }
    if (order != '<') {
      return NpyError(StatusCode::kDataLoss, name,
                      "a {}-byte dtype must state its byte order as '<', got dtype {}", type.item_bytes,
                      Quote(descr));
    }
  }
  return type;
}

const char* DescrOf(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "<f4";
    case DType::kU8: return "|u1";
    case DType::kS8: return "|i1";
    case DType::kS32: return "<i4";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------------------------
// The parsed header.

struct Header {
  FileType type;
  Shape shape;
};

const PyValue* Find(const HeaderDict& dict, std::string_view key) {
  for (const auto& [k, v] : dict) {
    if (k == key) return &v;
  }
  return nullptr;
}

Result<Header> InterpretHeader(const HeaderDict& dict, std::string_view name) {
  for (const auto& [key, value] : dict) {
    if (key != "descr" && key != "fortran_order" && key != "shape") {
      return NpyError(StatusCode::kDataLoss, name,
                      "header keys must be exactly 'descr', 'fortran_order' and 'shape', got an extra key {}",
                      Quote(key));
    }
  }
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    if (Find(dict, key) == nullptr) {
      return NpyError(StatusCode::kDataLoss, name,
                      "header keys must be exactly 'descr', 'fortran_order' and 'shape', got no '{}'", key);
    }
  }

  const PyValue& descr = *Find(dict, "descr");
  if (descr.kind == PyValue::Kind::kList) {
    return NpyError(StatusCode::kUnimplemented, name, "structured dtypes are not supported, got a list of fields");
  }
  if (descr.kind != PyValue::Kind::kString) {
    return NpyError(StatusCode::kDataLoss, name, "'descr' must be a string, got {}", KindName(descr.kind));
  }
  OCTET_ASSIGN_OR_RETURN(FileType type, ParseDescr(descr.text, name));

  const PyValue& fortran = *Find(dict, "fortran_order");
  if (fortran.kind != PyValue::Kind::kBool) {
    return NpyError(StatusCode::kDataLoss, name, "'fortran_order' must be True or False, got {}",
                    KindName(fortran.kind));
  }
  if (fortran.number != 0) {
    return NpyError(StatusCode::kUnimplemented, name,
                    "Fortran-order (column-major) data is not supported, got fortran_order True (save "
                    "np.ascontiguousarray(arr) instead)");
  }

  const PyValue& shape_value = *Find(dict, "shape");
  if (shape_value.kind != PyValue::Kind::kTuple) {
    return NpyError(StatusCode::kDataLoss, name, "'shape' must be a tuple of integers, got {}",
                    KindName(shape_value.kind));
  }
  if (shape_value.items.size() > static_cast<size_t>(kMaxNpyRank)) {
    return NpyError(StatusCode::kUnimplemented, name, "the shape must have at most {} dimensions, got {}",
                    kMaxNpyRank, shape_value.items.size());
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < shape_value.items.size(); ++i) {
    const PyValue& d = shape_value.items[i];
    if (d.kind != PyValue::Kind::kInt) {
      return NpyError(StatusCode::kDataLoss, name, "shape dimension {} must be an integer, got {}", i,
                      KindName(d.kind));
    }
    if (d.number < 0) {
      return NpyError(StatusCode::kDataLoss, name, "shape dimension {} must be >= 0, got {}", i, d.number);
    }
    dims.push_back(d.number);
  }
  // The dimensions are non-negative, so Create can only fail on the element count.
  Result<Shape> shape = Shape::Create(dims);
  if (!shape.ok()) {
    return NpyError(StatusCode::kDataLoss, name, "the shape must have at most 2^48 elements, got ({})",
                    fmt::join(dims, ", "));
  }
  return Header{type, std::move(shape).value()};
}

// "[1, 2]" for flat element `flat` of `shape`: the index an error message can point at.
std::string IndexOf(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(static_cast<size_t>(shape.rank()));
  for (int d = shape.rank() - 1; d >= 0; --d) {
    index[static_cast<size_t>(d)] = flat % shape.dim(d);
    flat /= shape.dim(d);
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

Result<Tensor> DecodeData(const Header& header, std::span<const std::byte> data, std::string_view name) {
  const int64_t count = header.shape.NumElements();
  // count <= 2^48 and item_bytes <= 8, so this cannot overflow.
  const uint64_t needed = static_cast<uint64_t>(count) * header.type.item_bytes;
  if (data.size() < needed) {
    return NpyError(StatusCode::kDataLoss, name,
                    "the data is truncated: shape {} of {}-byte elements needs {} bytes, got {}", header.shape,
                    header.type.item_bytes, needed, data.size());
  }
  if (data.size() > needed) {
    return NpyError(StatusCode::kDataLoss, name,
                    "the data is longer than the shape says: shape {} of {}-byte elements needs {} bytes, got {}",
                    header.shape, header.type.item_bytes, needed, data.size());
  }
  OCTET_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Create(header.type.dtype, header.shape));
  if (count == 0) return tensor;
  if (header.type.narrow_s64) {
    int32_t* out = tensor.data<int32_t>();
    for (int64_t i = 0; i < count; ++i) {
      const auto v = static_cast<int64_t>(LoadLittleU64(data.data() + i * 8));
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        return NpyError(StatusCode::kOutOfRange, name,
                        "int64 data is read as int32, so every value must fit in int32, got {} at element {} "
                        "(index {})",
                        v, i, IndexOf(header.shape, i));
      }
      out[i] = static_cast<int32_t>(v);
    }
    return tensor;
  }
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(tensor.raw_data(), data.data(), static_cast<size_t>(needed));
  } else {
    if (header.type.item_bytes == 1) {
      std::memcpy(tensor.raw_data(), data.data(), static_cast<size_t>(needed));
    } else {
      auto* out = static_cast<std::byte*>(tensor.raw_data());
      for (int64_t i = 0; i < count; ++i) {
        const uint32_t v = LoadLittleU32(data.data() + i * 4);
        std::memcpy(out + i * 4, &v, 4);
      }
    }
  }
  return tensor;
}

void AppendLittle(std::string& out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

Result<NpyLayout> ParseNpyHeader(std::span<const std::byte> bytes, std::string_view name) {
  const auto as_text = [&](size_t begin, size_t size) {
    return std::string_view(reinterpret_cast<const char*>(bytes.data()) + begin, size);
  };
  if (bytes.empty()) return NpyError(StatusCode::kDataLoss, name, "the file is empty");
  const size_t magic_checked = std::min(bytes.size(), kNpyMagicSize);
  if (std::memcmp(bytes.data(), kNpyMagic, magic_checked) != 0) {
    return NpyError(StatusCode::kInvalidArgument, name, "not a .npy file: it must start with '\\x93NUMPY', got {}",
                    Quote(as_text(0, std::min<size_t>(bytes.size(), 8))));
  }
  if (bytes.size() < kVersionEnd) {
    return NpyError(StatusCode::kDataLoss, name, "the file is truncated: the preamble needs at least {} bytes, got {}",
                    kVersionEnd + 2, bytes.size());
  }
  const auto major = static_cast<unsigned>(bytes[kNpyMagicSize]);
  const auto minor = static_cast<unsigned>(bytes[kNpyMagicSize + 1]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return NpyError(StatusCode::kUnimplemented, name, "the format version must be 1.0, 2.0 or 3.0, got {}.{}", major,
                    minor);
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t header_begin = kVersionEnd + length_bytes;
  if (bytes.size() < header_begin) {
    return NpyError(StatusCode::kDataLoss, name,
                    "the file is truncated: a version {}.0 preamble needs {} bytes, got {}", major, header_begin,
                    bytes.size());
  }
  const uint64_t header_length = major == 1 ? (static_cast<uint64_t>(bytes[kVersionEnd]) |
                                               static_cast<uint64_t>(bytes[kVersionEnd + 1]) << 8)
                                            : LoadLittleU32(bytes.data() + kVersionEnd);
  if (header_length > kMaxNpyHeaderBytes) {
    return NpyError(StatusCode::kDataLoss, name, "the header length must be at most {} bytes, got {}",
                    kMaxNpyHeaderBytes, header_length);
  }
  if (header_length > bytes.size() - header_begin) {
    return NpyError(StatusCode::kDataLoss, name,
                    "the file is truncated: the header length is {} bytes but only {} bytes follow the preamble",
                    header_length, bytes.size() - header_begin);
  }
  const std::string_view header_text = as_text(header_begin, static_cast<size_t>(header_length));
  if (major == 3 && !IsValidUtf8(header_text)) {
    return NpyError(StatusCode::kDataLoss, name, "a version 3.0 header must be UTF-8, got invalid bytes");
  }
  OCTET_ASSIGN_OR_RETURN(HeaderDict dict, HeaderParser(header_text, name).ParseDict());
  OCTET_ASSIGN_OR_RETURN(Header header, InterpretHeader(dict, name));
  return NpyLayout{header.type.dtype, header.type.item_bytes, header.type.narrow_s64, std::move(header.shape),
                   header_begin + static_cast<size_t>(header_length)};
}

Result<Tensor> ParseNpy(std::span<const std::byte> bytes, std::string_view name) {
  OCTET_ASSIGN_OR_RETURN(NpyLayout layout, ParseNpyHeader(bytes, name));
  const Header header{FileType{layout.dtype, layout.item_bytes, layout.narrow_s64}, std::move(layout.shape)};
  return DecodeData(header, bytes.subspan(layout.data_offset), name);
}

Result<Tensor> ReadNpy(const std::string& path) {
  OCTET_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  return ParseNpy(std::as_bytes(std::span<const char>(contents)), path);
}

std::string SerializeNpy(const Tensor& tensor) {
  const Shape& shape = tensor.shape();
  std::string shape_text;
  if (shape.rank() == 1) {
    shape_text = fmt::format("({},)", shape.dim(0));
  } else {
    shape_text = fmt::format("({})", fmt::join(shape.dims(), ", "));
  }
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", DescrOf(tensor.dtype()),
                                 shape_text);
  if (shape.rank() > 0) {
    const size_t digits = fmt::formatted_size("{}", shape.dim(0));
    dict.append(kGrowthAxisMaxDigits - std::min(digits, kGrowthAxisMaxDigits), ' ');
  }
  // NumPy's rule: pad so the preamble, the dict and the final newline end on a 64-byte boundary, always adding at
  // least one space. Version 1.0 unless its 16-bit length field cannot hold the header.
  int major = 1;
  size_t length_bytes = 2;
  const size_t dict_and_newline = dict.size() + 1;
  size_t padding = kDataAlignment - (kVersionEnd + length_bytes + dict_and_newline) % kDataAlignment;
  if (dict_and_newline + padding > std::numeric_limits<uint16_t>::max()) {
    major = 2;
    length_bytes = 4;
    padding = kDataAlignment - (kVersionEnd + length_bytes + dict_and_newline) % kDataAlignment;
  }
  const size_t header_length = dict_and_newline + padding;

  std::string out;
  out.reserve(kVersionEnd + length_bytes + header_length + tensor.SizeBytes());
  out.append(reinterpret_cast<const char*>(kNpyMagic), kNpyMagicSize);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  AppendLittle(out, header_length, length_bytes);
  out += dict;
  out.append(padding, ' ');
  out.push_back('\n');
  if (tensor.SizeBytes() == 0) return out;
  const auto* data = static_cast<const char*>(tensor.raw_data());
  if (std::endian::native == std::endian::little || DTypeSize(tensor.dtype()) == 1) {
    out.append(data, tensor.SizeBytes());
  } else {
    uint32_t v;
    for (size_t i = 0; i < tensor.SizeBytes(); i += 4) {
      std::memcpy(&v, data + i, 4);
      AppendLittle(out, v, 4);
    }
  }
  return out;
}

Status WriteNpy(const std::string& path, const Tensor& tensor) {
  return WriteFileAtomically(path, SerializeNpy(tensor));
}

}  // namespace octet

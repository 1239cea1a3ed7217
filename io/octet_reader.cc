// Reading .octet files: header, section table and checksums first, then the records (layout in octet_writer.cc),
// every size, count and offset checked against the bytes present before it is used, and finally VerifyGraph.
#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <vector>

#include <fmt/ranges.h>

#include "core/verifier.h"
#include "io/crc32.h"
#include "io/file_util.h"
#include "io/octet_codes.h"
#include "io/octet_file.h"
#include "io/octet_format.h"

namespace octet {
namespace {

using namespace octet_format;  // NOLINT: the format's constants, in this one file

static_assert(std::endian::native == std::endian::little, ".octet files are little-endian, as is every target");

template <typename T>
T Load(std::span<const std::byte> bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

// Reads the records of one section. `where` names the record being read, for the error messages.
class Cursor {
 public:
  Cursor(std::span<const std::byte> bytes, const std::string& prefix) : bytes_(bytes), prefix_(prefix) {}

  void set_where(std::string where) { where_ = std::move(where); }
  const std::string& where() const { return where_; }
  size_t left() const { return bytes_.size() - pos_; }

  // A DataLoss error "<prefix>: <where>: <message>" (the file's structure is broken).
  Status Corrupt(const std::string& message) const {
    return DataLoss("{}: {}: {}", prefix_, where_, message);
  }
  // An InvalidArgument error (well-formed records that describe something invalid).
  Status Invalid(const std::string& message) const {
    return InvalidArgument("{}: {}: {}", prefix_, where_, message);
  }
  Status Wrap(const Status& s) const { return s.WithContext(fmt::format("{}: {}", prefix_, where_)); }

  template <typename T>
  Result<T> Read(std::string_view what) {
    if (left() < sizeof(T)) {
      return Corrupt(fmt::format("{} needs {} bytes, {} left in the section", what, sizeof(T), left()));
    }
    const T v = Load<T>(bytes_, pos_);
    pos_ += sizeof(T);
    return v;
  }
  // A count of items that each take at least `min_item_bytes`: rejected before anything is allocated for it when
  // the rest of the section cannot hold that many.
  Result<uint32_t> Count(std::string_view what, size_t min_item_bytes) {
    OCTET_ASSIGN_OR_RETURN(const uint32_t n, Read<uint32_t>(what));
    if (uint64_t{n} * min_item_bytes > left()) {
      return Corrupt(fmt::format("{} {} needs at least {} bytes, {} left in the section", what, n,
                                 uint64_t{n} * min_item_bytes, left()));
    }
    return n;
  }
  // `n` raw bytes.
  Result<std::span<const std::byte>> Bytes(uint64_t n, std::string_view what) {
    if (n > left()) {
      return Corrupt(fmt::format("{} of {} bytes overruns the section ({} bytes left)", what, n, left()));
    }
    const auto s = bytes_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  Result<std::string> String(std::string_view what) {
    OCTET_ASSIGN_OR_RETURN(const uint32_t n, Read<uint32_t>(fmt::format("{} length", what)));
    if (n > left()) {
      return Corrupt(fmt::format("{} of {} bytes overruns the section ({} bytes left)", what, n, left()));
    }
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  // A name: non-empty unless allowed, no control characters.
  Result<std::string> Name(std::string_view what, bool allow_empty = false) {
    OCTET_ASSIGN_OR_RETURN(std::string s, String(what));
    if (!allow_empty && s.empty()) return Invalid(fmt::format("{} is empty", what));
    if (HasControlCharacters(s)) return Invalid(fmt::format("{} {:?} contains control characters", what, s));
    return s;
  }
  Status ExpectEnd() const {
    if (left() != 0) return Corrupt(fmt::format("{} bytes left over after the last record", left()));
    return OkStatus();
  }

 private:
  std::span<const std::byte> bytes_;
  size_t pos_ = 0;
  const std::string& prefix_;
  std::string where_;
};

struct Span {
  size_t offset = 0;
  size_t size = 0;
};

class Parser {
 public:
  Parser(std::span<const std::byte> bytes, std::string_view name)
      : bytes_(bytes), prefix_(fmt::format("failed to read .octet file '{}'", name)) {}
  // A subgraph's file inside a node record, `depth` levels down; `where` names the file, node and subgraph.
  Parser(std::span<const std::byte> bytes, std::string where, int depth)
      : bytes_(bytes), prefix_(std::move(where)), depth_(depth) {}

  Result<OctetModel> Run();

 private:
  template <typename... Args>
  Status Corrupt(fmt::format_string<Args...> f, Args&&... args) const {
    return DataLoss("{}: {}", prefix_, fmt::format(f, std::forward<Args>(args)...));
  }
  Status ReadHeaderAndTable();
  Cursor SectionCursor(size_t s) const {
    Cursor c(bytes_.subspan(sections_[s].offset, sections_[s].size), prefix_);
    c.set_where(fmt::format("section '{}'", kSectionNames[s]));
    return c;
  }
  Status ReadMetadata(OctetMetadata& metadata);
  Result<Shape> ReadDims(Cursor& c, bool allow_unknown);
  Result<Tensor> ReadData(Cursor& c, DType dtype, const Shape& shape);
  Result<QParams> ReadQParams(Cursor& c);
  Status ReadValues(Graph& graph);
  Result<Attribute> ReadAttribute(Cursor& c, AttrType type);
  Result<std::vector<ValueId>> ReadIds(Cursor& c, std::string_view what, int num_values, bool allow_none);
  Status ReadNodes(Graph& graph);

  std::span<const std::byte> bytes_;
  const std::string prefix_;
  Span sections_[kSectionNames.size()];
  uint32_t version_ = 0;
  uint64_t data_end_ = 0;  // end of the last tensor read, from the start of the data section
  int depth_ = 0;          // subgraph nesting (kMaxSubgraphDepth)
};

size_t SectionIndex(std::string_view name) {
  return static_cast<size_t>(std::find(kSectionNames.begin(), kSectionNames.end(), name) - kSectionNames.begin());
}

Status Parser::ReadHeaderAndTable() {
  const size_t size = bytes_.size();
  // The magic first, so that any other file is called what it is, however short.
  if (size > 0 && std::memcmp(bytes_.data(), kMagic.data(), std::min(size, kMagic.size())) != 0) {
    return Corrupt("not an .octet file (bad magic bytes)");
  }
  if (size < kHeaderBytes) {
    return Corrupt("the file has {} bytes, fewer than the {}-byte header (truncated?)", size, kHeaderBytes);
  }
  version_ = Load<uint32_t>(bytes_, kVersionOffset);
  if (version_ > kOctetFormatVersion) {
    return Unimplemented("{}: format version {} is newer than this build of octet reads (up to {}); use a newer "
                         "octet",
                         prefix_, version_, kOctetFormatVersion);
  }
  if (version_ == 0) return Corrupt("unknown format version 0");
  const uint32_t count = Load<uint32_t>(bytes_, kSectionCountOffset);
  if (count != kSectionNames.size()) {
    return Corrupt("the header lists {} sections, format version {} has {}", count, version_,
                   kSectionNames.size());
  }
  const size_t table_end = kHeaderBytes + count * kSectionEntryBytes;
  if (size < table_end) {
    return Corrupt("the file has {} bytes, fewer than the header and section table ({} bytes; truncated?)", size,
                   table_end);
  }
  const uint32_t stored_crc = Load<uint32_t>(bytes_, kHeaderCrcOffset);
  const uint32_t crc =
      Crc32(bytes_.subspan(kHeaderBytes, table_end - kHeaderBytes), Crc32(bytes_.first(kHeaderCrcOffset)));
  if (crc != stored_crc) {
    return Corrupt("header checksum mismatch: stored {:#010x}, computed {:#010x} (the file is corrupt)", stored_crc,
                   crc);
  }
  if (Load<uint32_t>(bytes_, kReservedOffset) != 0) return Corrupt("reserved header field is not 0");
  const uint64_t file_size = Load<uint64_t>(bytes_, kFileSizeOffset);
  if (file_size != size) {
    if (file_size > size) return Corrupt("the file is truncated: the header says {} bytes, it has {}", file_size, size);
    return Corrupt("the file has {} bytes, the header says {} (trailing bytes)", size, file_size);
  }

  size_t expected = table_end;
  for (size_t s = 0; s < count; ++s) {
    const size_t entry = kHeaderBytes + s * kSectionEntryBytes;
    const auto raw = bytes_.subspan(entry, kSectionNameBytes);
    const auto name_end = std::find(raw.begin(), raw.end(), std::byte{0});
    const std::string name(reinterpret_cast<const char*>(raw.data()),
                           static_cast<size_t>(name_end - raw.begin()));
    if (std::any_of(name_end, raw.end(), [](std::byte b) { return b != std::byte{0}; }) ||
        HasControlCharacters(name)) {
      return Corrupt("section table entry {}: the name is not NUL-padded text", s);
    }
    if (name != kSectionNames[s]) {
      if (SectionIndex(name) == kSectionNames.size()) {
        return Corrupt("section table entry {}: unknown section '{}' (format version {} has {})", s, name, version_,
                       fmt::join(kSectionNames, ", "));
      }
      return Corrupt("section table entry {} is '{}', expected '{}'", s, name, kSectionNames[s]);
    }
    const uint64_t offset = Load<uint64_t>(bytes_, entry + kSectionOffsetOffset);
    const uint64_t length = Load<uint64_t>(bytes_, entry + kSectionSizeOffset);
    const size_t padding_begin = expected;
    if (name == "data") expected = (expected + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
    if (offset != expected) {
      return Corrupt("section '{}' starts at offset {}, expected {}{}", name, offset, expected,
                     s == 0 ? " (right after the section table)"
                            : fmt::format(" (right after section '{}')", kSectionNames[s - 1]));
    }
    if (offset > size || length > size - offset) {
      return Corrupt("section '{}' of {} bytes at offset {} overruns the file ({} bytes left)", name, length,
                     offset, size - std::min<uint64_t>(offset, size));
    }
    for (size_t k = padding_begin; k < offset; ++k) {
      if (bytes_[k] != std::byte{0}) return Corrupt("padding byte at offset {} before section '{}' is not 0", k, name);
    }
    const uint32_t stored = Load<uint32_t>(bytes_, entry + kSectionCrcOffset);
    const uint32_t computed = Crc32(bytes_.subspan(offset, length));
    if (stored != computed) {
      return Corrupt("section '{}' checksum mismatch: stored {:#010x}, computed {:#010x} (the file is corrupt)", name,
                     stored, computed);
    }
    sections_[s] = {static_cast<size_t>(offset), static_cast<size_t>(length)};
    expected = offset + length;
  }
  if (expected != size) return Corrupt("{} bytes after the last section", size - expected);
  return OkStatus();
}

Status Parser::ReadMetadata(OctetMetadata& metadata) {
  Cursor c = SectionCursor(SectionIndex("metadata"));
  OCTET_ASSIGN_OR_RETURN(const uint32_t n, c.Count("entry count", 8));
  for (uint32_t k = 0; k < n; ++k) {
    c.set_where(fmt::format("section 'metadata' entry {}", k));
    OCTET_ASSIGN_OR_RETURN(std::string key, c.Name("key"));
    c.set_where(fmt::format("section 'metadata' entry {} ('{}')", k, key));
    OCTET_ASSIGN_OR_RETURN(std::string value, c.String("value"));
    if (!metadata.emplace(std::move(key), std::move(value)).second) return c.Invalid("the key appears twice");
  }
  c.set_where("section 'metadata'");
  return c.ExpectEnd();
}

Result<Shape> Parser::ReadDims(Cursor& c, bool allow_unknown) {
  OCTET_ASSIGN_OR_RETURN(const uint32_t rank, c.Count("rank", 8));
  if (rank > kMaxRank) return c.Invalid(fmt::format("rank {} exceeds the limit of {}", rank, kMaxRank));
  std::vector<int64_t> dims(rank);
  std::vector<int64_t> known(rank);
  for (uint32_t d = 0; d < rank; ++d) {
    OCTET_ASSIGN_OR_RETURN(dims[d], c.Read<int64_t>("dimension"));
    if (dims[d] < 0 && !(allow_unknown && dims[d] == kUnknownDim)) {
      return c.Invalid(fmt::format("dimension {} is {}, must be >= 0{}", d, dims[d],
                                   allow_unknown ? " or -1 (unknown)" : ""));
    }
    known[d] = dims[d] < 0 ? 1 : dims[d];
  }
  // The element count of the known dims must be representable (Shape::Create bounds it).
  if (Result<Shape> s = Shape::Create(known); !s.ok()) return c.Wrap(s.status());
  return Shape(std::move(dims));
}

Result<Tensor> Parser::ReadData(Cursor& c, DType dtype, const Shape& shape) {
  OCTET_ASSIGN_OR_RETURN(const uint64_t offset, c.Read<uint64_t>("data offset"));
  OCTET_ASSIGN_OR_RETURN(const uint64_t size, c.Read<uint64_t>("data size"));
  const Span data = sections_[SectionIndex("data")];
  if (offset % kDataAlignment != 0) {
    return c.Corrupt(fmt::format("data offset {} is not a multiple of {}", offset, kDataAlignment));
  }
  if (offset > data.size || size > data.size - offset) {
    return c.Corrupt(fmt::format("data of {} bytes at offset {} overruns the data section ({} bytes left)", size,
                                 offset, data.size - std::min<uint64_t>(offset, data.size)));
  }
  // Each tensor's bytes follow the previous tensor's, so all of them together fit the data section and a file
  // cannot make the loader allocate more than it holds by pointing many tensors at the same bytes.
  if (offset < data_end_) {
    return c.Corrupt(fmt::format("data at offset {} overlaps the previous tensor's, which ends at offset {}", offset,
                                 data_end_));
  }
  data_end_ = offset + size;
  const uint64_t needed = static_cast<uint64_t>(shape.NumElements()) * DTypeSize(dtype);
  if (size != needed) {
    return c.Corrupt(fmt::format("data is {} bytes, {} {} needs {}", size, dtype, shape, needed));
  }
  OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(dtype, shape));
  if (size > 0) std::memcpy(t.raw_data(), bytes_.data() + data.offset + offset, size);
  return t;
}

Result<QParams> Parser::ReadQParams(Cursor& c) {
  OCTET_ASSIGN_OR_RETURN(const uint8_t scheme_code, c.Read<uint8_t>("qparams scheme"));
  OCTET_ASSIGN_OR_RETURN(const uint8_t dtype_code, c.Read<uint8_t>("qparams dtype"));
  OCTET_ASSIGN_OR_RETURN(const int32_t quant_min, c.Read<int32_t>("quant_min"));
  OCTET_ASSIGN_OR_RETURN(const int32_t quant_max, c.Read<int32_t>("quant_max"));
  OCTET_ASSIGN_OR_RETURN(const int32_t axis, c.Read<int32_t>("qparams axis"));
  OCTET_ASSIGN_OR_RETURN(const uint32_t channels, c.Count("qparams channel count", 8));
  QScheme scheme;
  if (!ParseQSchemeCode(scheme_code, scheme)) {
    return c.Invalid(fmt::format("qparams scheme {} is not one of {}", scheme_code, QSchemeCodeList()));
  }
  DType dtype;
  if (!ParseDTypeCode(dtype_code, dtype)) {
    return c.Invalid(fmt::format("qparams dtype {} is not one of {}", dtype_code, DTypeCodeList()));
  }
  std::vector<float> scales(channels);
  std::vector<int32_t> zero_points(channels);
  for (float& s : scales) {
    OCTET_ASSIGN_OR_RETURN(s, c.Read<float>("scale"));
  }
  for (int32_t& z : zero_points) {
    OCTET_ASSIGN_OR_RETURN(z, c.Read<int32_t>("zero point"));
  }
  Result<QParams> q = QParams::Create(scheme, dtype, quant_min, quant_max, std::move(scales), std::move(zero_points),
                                      axis);
  if (!q.ok()) return c.Wrap(q.status());
  return q;
}

Status Parser::ReadValues(Graph& graph) {
  Cursor c = SectionCursor(SectionIndex("values"));
  // A value record is at least a name length and three bytes.
  OCTET_ASSIGN_OR_RETURN(const uint32_t n, c.Count("value count", 7));
  for (uint32_t k = 0; k < n; ++k) {
    c.set_where(fmt::format("section 'values' entry {}", k));
    OCTET_ASSIGN_OR_RETURN(std::string name, c.Name("name"));
    c.set_where(fmt::format("section 'values' entry {} ('{}')", k, name));
    OCTET_ASSIGN_OR_RETURN(const uint8_t kind_code, c.Read<uint8_t>("kind"));
    OCTET_ASSIGN_OR_RETURN(const uint8_t dtype_code, c.Read<uint8_t>("dtype"));
    OCTET_ASSIGN_OR_RETURN(const uint8_t flags, c.Read<uint8_t>("flags"));
    ValueKind kind;
    if (!ParseValueKindCode(kind_code, kind)) {
      return c.Invalid(fmt::format("kind {} is not one of {}", kind_code, ValueKindCodeList()));
    }
    DType dtype;
    if (!ParseDTypeCode(dtype_code, dtype)) {
      return c.Invalid(fmt::format("dtype {} is not one of {}", dtype_code, DTypeCodeList()));
    }
    if ((flags & ~(kValueHasShape | kValueHasQParams)) != 0) {
      return c.Invalid(fmt::format("flags {:#04x} has unknown bits", flags));
    }
    std::optional<Shape> shape;
    if (flags & kValueHasShape) {
      OCTET_ASSIGN_OR_RETURN(shape, ReadDims(c, kind != ValueKind::kConstant));
    }
    std::optional<QParams> qparams;
    if (flags & kValueHasQParams) {
      OCTET_ASSIGN_OR_RETURN(qparams, ReadQParams(c));
    }

    if (kind != ValueKind::kNode && !shape) {
      return c.Invalid(fmt::format("{} '{}' needs a shape", ValueKindName(kind), name));
    }
    Tensor data;
    if (kind == ValueKind::kConstant) {
      OCTET_ASSIGN_OR_RETURN(data, ReadData(c, dtype, *shape));
    }
    Result<ValueId> id = kind == ValueKind::kInput      ? graph.AddInput(name, dtype, *shape)
                         : kind == ValueKind::kConstant ? graph.AddConstant(name, std::move(data))
                                                        : graph.AddNodeValue(name, dtype);
    if (id.ok() && kind == ValueKind::kNode) graph.mutable_value(*id).shape = shape;
    if (!id.ok()) return c.Wrap(id.status());
    graph.mutable_value(*id).qparams = std::move(qparams);
  }
  c.set_where("section 'values'");
  return c.ExpectEnd();
}

Result<std::vector<ValueId>> Parser::ReadIds(Cursor& c, std::string_view what, int num_values, bool allow_none) {
  OCTET_ASSIGN_OR_RETURN(const uint32_t n, c.Count(fmt::format("{} count", what), 4));
  std::vector<ValueId> ids(n);
  for (uint32_t k = 0; k < n; ++k) {
    OCTET_ASSIGN_OR_RETURN(ids[k], c.Read<int32_t>(what));
    if (ids[k] == kNoValue && allow_none) continue;
    if (ids[k] < 0 || ids[k] >= num_values) {
      return c.Invalid(fmt::format("{} {} is value #{}, out of range [0, {})", what, k, ids[k], num_values));
    }
  }
  return ids;
}

Result<Attribute> Parser::ReadAttribute(Cursor& c, AttrType type) {
  switch (type) {
    case AttrType::kInt: {
      OCTET_ASSIGN_OR_RETURN(const int64_t v, c.Read<int64_t>("value"));
      return Attribute(v);
    }
    case AttrType::kFloat: {
      OCTET_ASSIGN_OR_RETURN(const float v, c.Read<float>("value"));
      return Attribute(v);
    }
    case AttrType::kString: {
      OCTET_ASSIGN_OR_RETURN(std::string v, c.String("value"));
      return Attribute(std::move(v));
    }
    case AttrType::kTensor: {
      OCTET_ASSIGN_OR_RETURN(const uint8_t dtype_code, c.Read<uint8_t>("tensor dtype"));
      DType dtype;
      if (!ParseDTypeCode(dtype_code, dtype)) {
        return c.Invalid(fmt::format("tensor dtype {} is not one of {}", dtype_code, DTypeCodeList()));
      }
      OCTET_ASSIGN_OR_RETURN(const Shape shape, ReadDims(c, false));
      OCTET_ASSIGN_OR_RETURN(Tensor t, ReadData(c, dtype, shape));
      return Attribute(std::move(t));
    }
    case AttrType::kInts: {
      OCTET_ASSIGN_OR_RETURN(const uint32_t n, c.Count("list length", 8));
      std::vector<int64_t> v(n);
      for (int64_t& x : v) {
        OCTET_ASSIGN_OR_RETURN(x, c.Read<int64_t>("list item"));
      }
      return Attribute(std::move(v));
    }
    case AttrType::kFloats: {
      OCTET_ASSIGN_OR_RETURN(const uint32_t n, c.Count("list length", 4));
      std::vector<float> v(n);
      for (float& x : v) {
        OCTET_ASSIGN_OR_RETURN(x, c.Read<float>("list item"));
      }
      return Attribute(std::move(v));
    }
    case AttrType::kStrings: {
      OCTET_ASSIGN_OR_RETURN(const uint32_t n, c.Count("list length", 4));
      std::vector<std::string> v(n);
      for (std::string& x : v) {
        OCTET_ASSIGN_OR_RETURN(x, c.String("list item"));
      }
      return Attribute(std::move(v));
    }
  }
  return c.Invalid("unknown attribute type");
}

Status Parser::ReadNodes(Graph& graph) {
  Cursor c = SectionCursor(SectionIndex("nodes"));
  // A node record is at least three string lengths and three counts.
  OCTET_ASSIGN_OR_RETURN(const uint32_t n, c.Count("node count", 24));
  for (uint32_t k = 0; k < n; ++k) {
    c.set_where(fmt::format("section 'nodes' entry {}", k));
    Node node;
    OCTET_ASSIGN_OR_RETURN(node.name, c.Name("name"));
    c.set_where(fmt::format("section 'nodes' entry {} ('{}')", k, node.name));
    OCTET_ASSIGN_OR_RETURN(node.op_type, c.Name("op type"));
    OCTET_ASSIGN_OR_RETURN(node.domain, c.Name("domain", /*allow_empty=*/true));
    OCTET_ASSIGN_OR_RETURN(const uint32_t num_attrs, c.Count("attribute count", 5));
    const std::string node_where = c.where();
    for (uint32_t a = 0; a < num_attrs; ++a) {
      c.set_where(fmt::format("{} attribute {}", node_where, a));
      OCTET_ASSIGN_OR_RETURN(std::string name, c.Name("name"));
      c.set_where(fmt::format("{} attribute '{}'", node_where, name));
      OCTET_ASSIGN_OR_RETURN(const uint8_t type_code, c.Read<uint8_t>("type"));
      if (type_code == kAttrGraph) {
        if (node.attributes.Has(name) || node.subgraphs.count(name) != 0) {
          return c.Invalid("the attribute appears twice");
        }
        if (depth_ >= kMaxSubgraphDepth) {
          return c.Invalid(fmt::format("subgraphs nest deeper than {} levels", kMaxSubgraphDepth));
        }
        OCTET_ASSIGN_OR_RETURN(const uint64_t size, c.Read<uint64_t>("subgraph size"));
        OCTET_ASSIGN_OR_RETURN(const auto bytes, c.Bytes(size, "subgraph"));
        Parser nested(bytes, fmt::format("{}: {}", prefix_, c.where()), depth_ + 1);
        OCTET_ASSIGN_OR_RETURN(OctetModel sub, nested.Run());
        node.subgraphs[name] = std::make_shared<const Graph>(std::move(sub.graph));
        continue;
      }
      AttrType type;
      if (!ParseAttrTypeCode(type_code, type)) {
        return c.Invalid(fmt::format("type {} is not one of {}", type_code, AttrTypeCodeList()));
      }
      if (node.attributes.Has(name) || node.subgraphs.count(name) != 0) {
        return c.Invalid("the attribute appears twice");
      }
      OCTET_ASSIGN_OR_RETURN(Attribute value, ReadAttribute(c, type));
      node.attributes.Set(name, std::move(value));
    }
    c.set_where(node_where);
    OCTET_ASSIGN_OR_RETURN(node.inputs, ReadIds(c, "input", graph.num_values(), true));
    OCTET_ASSIGN_OR_RETURN(node.outputs, ReadIds(c, "output", graph.num_values(), true));
    if (Result<int> added = graph.AddNode(std::move(node)); !added.ok()) return c.Wrap(added.status());
  }
  c.set_where("section 'nodes'");
  return c.ExpectEnd();
}

Result<OctetModel> Parser::Run() {
  OCTET_RETURN_IF_ERROR(ReadHeaderAndTable());
  OctetModel model;
  model.format_version = version_;
  OCTET_RETURN_IF_ERROR(ReadMetadata(model.metadata));

  Cursor g = SectionCursor(SectionIndex("graph"));
  OCTET_ASSIGN_OR_RETURN(std::string graph_name, g.Name("graph name", /*allow_empty=*/true));
  // Ids are checked once the values are known; read them as plain lists here.
  OCTET_ASSIGN_OR_RETURN(std::vector<ValueId> inputs, ReadIds(g, "input", INT32_MAX, false));
  OCTET_ASSIGN_OR_RETURN(std::vector<ValueId> outputs, ReadIds(g, "output", INT32_MAX, false));
  OCTET_RETURN_IF_ERROR(g.ExpectEnd());

  Graph& graph = model.graph;
  graph.set_name(std::move(graph_name));
  OCTET_RETURN_IF_ERROR(ReadValues(graph));
  if (inputs != graph.inputs()) {
    return g.Invalid(fmt::format("the graph inputs are values [{}], but the input values are [{}] (they must come "
                                 "first, in input order)",
                                 fmt::join(inputs, ", "), fmt::join(graph.inputs(), ", ")));
  }
  OCTET_RETURN_IF_ERROR(ReadNodes(graph));
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (outputs[k] >= graph.num_values()) {
      return g.Invalid(fmt::format("output {} is value #{}, out of range [0, {})", k, outputs[k], graph.num_values()));
    }
    if (Status s = graph.AddOutput(outputs[k]); !s.ok()) return g.Wrap(s);
  }
  if (Status s = VerifyGraph(graph); !s.ok()) return s.WithContext(prefix_);
  return model;
}

}  // namespace

bool HasOctetMagic(std::span<const std::byte> bytes) {
  return bytes.size() >= kMagic.size() && std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) == 0;
}

bool IsOctetFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[kMagic.size()] = {};
  if (!in.read(head, sizeof(head))) return false;
  return HasOctetMagic(std::as_bytes(std::span<const char>(head)));
}

Result<OctetModel> ParseOctet(std::span<const std::byte> bytes, std::string_view name) {
  return Parser(bytes, name).Run();
}

Result<OctetModel> ReadOctetFile(const std::string& path) {
  OCTET_ASSIGN_OR_RETURN(const std::string bytes, ReadFile(path));
  return ParseOctet(std::as_bytes(std::span<const char>(bytes)), path);
}

}  // namespace octet

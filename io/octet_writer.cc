// Writing .octet files: the graph's records into their sections, constant data 64-byte aligned, checksums, and an
// atomic write (io/file_util.h).
//
// Records (little-endian; str = u32 length + bytes; ids are i32 value ids, -1 for an omitted input or output):
//   metadata: u32 count, then per entry: str key, str value (keys in byte order, unique).
//   graph:    str name, u32 count + ids of the graph inputs, u32 count + ids of the graph outputs.
//   values:   u32 count, then per value: str name, u8 kind, u8 dtype, u8 flags (octet_format.h);
//             if it has a shape: u32 rank, i64 dims (-1 for an unknown dim);
//             if it has qparams: u8 scheme, u8 dtype, i32 quant_min, i32 quant_max, i32 axis, u32 channels,
//             f32 scales[channels], i32 zero_points[channels];
//             if it is a constant: u64 offset of its bytes from the start of the data section, u64 size.
//   nodes:    u32 count, then per node: str name, str op_type, str domain, u32 attribute count, per attribute:
//             str name, u8 type, then the payload: i64 | f32 | str | tensor | u32 n + i64s | u32 n + f32s |
//             u32 n + strs, where tensor = u8 dtype, u32 rank, i64 dims, u64 data offset, u64 size; or, for a
//             subgraph (type kAttrGraph, after the node's other attributes): u64 size + a complete .octet file
//             holding it; then u32 count + input ids, u32 count + output ids.
#include <bit>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

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

class ByteWriter {
 public:
  template <typename T>
  void Put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out_.append(b, sizeof(T));
  }
  void PutU8(uint8_t v) { Put(v); }
  void PutU32(uint32_t v) { Put(v); }
  void PutI32(int32_t v) { Put(v); }
  void PutU64(uint64_t v) { Put(v); }
  void PutI64(int64_t v) { Put(v); }
  void PutF32(float v) { Put(v); }
  void PutString(const std::string& s) {
    PutU32(static_cast<uint32_t>(s.size()));  // sizes were checked by the caller (CheckCount)
    out_.append(s);
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

// The whole serialisation: checks as it goes, so every error names what it was writing.
class Serializer {
 public:
  Serializer(const Graph& graph, std::string_view name)
      : graph_(graph), where_(fmt::format("failed to write .octet file '{}'", name)) {}
  // A subgraph's file, written inside its node's record; `where` names the file, node and subgraph.
  struct Nested {};
  Serializer(const Graph& graph, std::string where, Nested) : graph_(graph), where_(std::move(where)) {}

  Result<std::string> Run(const OctetMetadata& metadata);

 private:
  Status CheckCount(size_t n, std::string_view what) const {
    if (n > std::numeric_limits<uint32_t>::max()) {
      return OutOfRange("{}: {} has {} entries, the format holds at most 2^32 - 1", where_, what, n);
    }
    return OkStatus();
  }
  Status CheckName(const std::string& s, std::string_view what, bool allow_empty) const {
    if (!allow_empty && s.empty()) return InvalidArgument("{}: {} is empty", where_, what);
    if (HasControlCharacters(s)) return InvalidArgument("{}: {} {:?} contains control characters", where_, what, s);
    return CheckCount(s.size(), what);
  }
  Status PutIds(ByteWriter& w, const std::vector<ValueId>& ids, std::string_view what) {
    OCTET_RETURN_IF_ERROR(CheckCount(ids.size(), what));
    w.PutU32(static_cast<uint32_t>(ids.size()));
    for (ValueId id : ids) w.PutI32(id == kNoValue ? kNoValue : new_id_[static_cast<size_t>(id)]);
    return OkStatus();
  }
  void PutDims(ByteWriter& w, const Shape& shape) {
    w.PutU32(static_cast<uint32_t>(shape.rank()));
    for (int64_t d : shape.dims()) w.PutI64(d);
  }
  // Appends the tensor's bytes to the data section at the next aligned offset and writes the reference.
  void PutData(ByteWriter& w, const Tensor& t) {
    std::string& data = data_.bytes();
    data.resize((data.size() + kDataAlignment - 1) / kDataAlignment * kDataAlignment, '\0');
    w.PutU64(data.size());
    w.PutU64(t.SizeBytes());
    if (t.SizeBytes() > 0) data.append(static_cast<const char*>(t.raw_data()), t.SizeBytes());
  }
  Status PutAttribute(ByteWriter& w, const std::string& node, const std::string& name, const Attribute& a);
  Status PutValue(ByteWriter& w, const Value& v);

  const Graph& graph_;
  const std::string where_;
  std::vector<ValueId> order_;   // file position -> value id
  std::vector<ValueId> new_id_;  // value id -> file position
  ByteWriter data_;
};

Status Serializer::PutAttribute(ByteWriter& w, const std::string& node, const std::string& name,
                                const Attribute& a) {
  const std::string what = fmt::format("node '{}' attribute '{}'", node, name);
  OCTET_RETURN_IF_ERROR(CheckName(name, fmt::format("node '{}' attribute name", node), false));
  w.PutString(name);
  w.PutU8(AttrTypeCode(a.type()));
  switch (a.type()) {
    case AttrType::kInt: w.PutI64(a.i()); break;
    case AttrType::kFloat: w.PutF32(a.f()); break;
    case AttrType::kString:
      OCTET_RETURN_IF_ERROR(CheckCount(a.s().size(), what));
      w.PutString(a.s());
      break;
    case AttrType::kTensor: {
      const Tensor& t = a.t();
      if (t.shape().rank() > kMaxRank) {
        return OutOfRange("{}: {} has rank {}, the format allows {}", where_, what, t.shape().rank(), kMaxRank);
      }
      w.PutU8(DTypeCode(t.dtype()));
      PutDims(w, t.shape());
      PutData(w, t);
      break;
    }
    case AttrType::kInts:
      OCTET_RETURN_IF_ERROR(CheckCount(a.ints().size(), what));
      w.PutU32(static_cast<uint32_t>(a.ints().size()));
      for (int64_t v : a.ints()) w.PutI64(v);
      break;
    case AttrType::kFloats:
      OCTET_RETURN_IF_ERROR(CheckCount(a.floats().size(), what));
      w.PutU32(static_cast<uint32_t>(a.floats().size()));
      for (float v : a.floats()) w.PutF32(v);
      break;
    case AttrType::kStrings:
      OCTET_RETURN_IF_ERROR(CheckCount(a.strings().size(), what));
      w.PutU32(static_cast<uint32_t>(a.strings().size()));
      for (const std::string& s : a.strings()) {
        OCTET_RETURN_IF_ERROR(CheckCount(s.size(), what));
        w.PutString(s);
      }
      break;
  }
  return OkStatus();
}

Status Serializer::PutValue(ByteWriter& w, const Value& v) {
  const bool constant = v.kind == ValueKind::kConstant;
  // A constant's shape is its data's (VerifyGraph checked they agree).
  const std::optional<Shape>& shape = v.shape;
  if (shape && shape->rank() > kMaxRank) {
    return OutOfRange("{}: value '{}' has rank {}, the format allows {}", where_, v.name, shape->rank(), kMaxRank);
  }
  w.PutString(v.name);
  w.PutU8(ValueKindCode(v.kind));
  w.PutU8(DTypeCode(v.dtype));
  w.PutU8(static_cast<uint8_t>((shape ? kValueHasShape : 0) | (v.qparams ? kValueHasQParams : 0)));
  if (shape) PutDims(w, *shape);
  if (v.qparams) {
    const QParams& q = *v.qparams;
    w.PutU8(QSchemeCode(q.scheme()));
    w.PutU8(DTypeCode(q.dtype()));
    w.PutI32(q.quant_min());
    w.PutI32(q.quant_max());
    w.PutI32(q.axis());
    w.PutU32(static_cast<uint32_t>(q.num_channels()));
    for (float s : q.scales()) w.PutF32(s);
    for (int32_t z : q.zero_points()) w.PutI32(z);
  }
  if (constant) PutData(w, v.data);
  return OkStatus();
}

Result<std::string> Serializer::Run(const OctetMetadata& metadata) {
  if (Status s = VerifyGraph(graph_); !s.ok()) return s.WithContext(where_);
  OCTET_RETURN_IF_ERROR(CheckName(graph_.name(), "the graph name", true));

  // Graph inputs first, so a reader rebuilding the graph with Graph::AddInput gets the same input order.
  new_id_.assign(static_cast<size_t>(graph_.num_values()), kNoValue);
  for (ValueId id : graph_.inputs()) order_.push_back(id);
  for (ValueId id = 0; id < graph_.num_values(); ++id) {
    if (graph_.value(id).kind != ValueKind::kInput) order_.push_back(id);
  }
  for (size_t k = 0; k < order_.size(); ++k) new_id_[static_cast<size_t>(order_[k])] = static_cast<ValueId>(k);

  ByteWriter meta;
  meta.PutU32(static_cast<uint32_t>(metadata.size()));
  for (const auto& [key, value] : metadata) {
    OCTET_RETURN_IF_ERROR(CheckName(key, "metadata key", false));
    OCTET_RETURN_IF_ERROR(CheckCount(value.size(), fmt::format("metadata '{}'", key)));
    meta.PutString(key);
    meta.PutString(value);
  }

  ByteWriter g;
  g.PutString(graph_.name());
  OCTET_RETURN_IF_ERROR(PutIds(g, graph_.inputs(), "the graph inputs"));
  OCTET_RETURN_IF_ERROR(PutIds(g, graph_.outputs(), "the graph outputs"));

  ByteWriter values;
  values.PutU32(static_cast<uint32_t>(order_.size()));
  for (ValueId id : order_) OCTET_RETURN_IF_ERROR(PutValue(values, graph_.value(id)));

  ByteWriter nodes;
  OCTET_RETURN_IF_ERROR(CheckCount(graph_.nodes().size(), "the node list"));
  nodes.PutU32(static_cast<uint32_t>(graph_.num_nodes()));
  for (const Node& node : graph_.nodes()) {
    OCTET_RETURN_IF_ERROR(CheckName(node.op_type, fmt::format("node '{}' op type", node.name), false));
    OCTET_RETURN_IF_ERROR(CheckName(node.domain, fmt::format("node '{}' domain", node.name), true));
    nodes.PutString(node.name);
    nodes.PutString(node.op_type);
    nodes.PutString(node.domain);
    OCTET_RETURN_IF_ERROR(CheckCount(node.attributes.items().size() + node.subgraphs.size(),
                                     fmt::format("node '{}' attributes", node.name)));
    nodes.PutU32(static_cast<uint32_t>(node.attributes.items().size() + node.subgraphs.size()));
    for (const auto& [name, a] : node.attributes.items()) {
      OCTET_RETURN_IF_ERROR(PutAttribute(nodes, node.name, name, a));
    }
    for (const auto& [name, sub] : node.subgraphs) {
      OCTET_RETURN_IF_ERROR(CheckName(name, fmt::format("node '{}' subgraph name", node.name), false));
      if (node.attributes.Has(name) || sub == nullptr) {
        return InvalidArgument("{}: node '{}' subgraph '{}' is null or also an attribute", where_, node.name, name);
      }
      OCTET_ASSIGN_OR_RETURN(std::string bytes,
                             Serializer(*sub, fmt::format("{}: node '{}' subgraph '{}'", where_, node.name, name),
                                        Nested{})
                                 .Run({}));
      nodes.PutString(name);
      nodes.PutU8(kAttrGraph);
      nodes.PutU64(bytes.size());
      nodes.bytes() += bytes;
    }
    OCTET_RETURN_IF_ERROR(PutIds(nodes, node.inputs, fmt::format("node '{}' inputs", node.name)));
    OCTET_RETURN_IF_ERROR(PutIds(nodes, node.outputs, fmt::format("node '{}' outputs", node.name)));
  }

  // Layout: header, table, then the sections back to back, the data section at the next aligned offset.
  const std::string* bodies[] = {&meta.bytes(), &g.bytes(), &values.bytes(), &nodes.bytes(), &data_.bytes()};
  constexpr size_t kNumSections = kSectionNames.size();
  size_t offsets[kNumSections];
  size_t end = kHeaderBytes + kNumSections * kSectionEntryBytes;
  for (size_t s = 0; s < kNumSections; ++s) {
    if (kSectionNames[s] == "data") end = (end + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
    offsets[s] = end;
    end += bodies[s]->size();
  }

  ByteWriter file;
  for (unsigned char c : kMagic) file.PutU8(c);
  file.PutU32(kOctetFormatVersion);
  file.PutU32(static_cast<uint32_t>(kNumSections));
  file.PutU64(end);
  file.PutU32(0);  // reserved
  file.PutU32(0);  // header CRC, filled in below
  for (size_t s = 0; s < kNumSections; ++s) {
    char name[kSectionNameBytes] = {};
    std::memcpy(name, kSectionNames[s].data(), kSectionNames[s].size());
    file.bytes().append(name, kSectionNameBytes);
    file.PutU32(Crc32(std::as_bytes(std::span<const char>(*bodies[s]))));
    file.PutU64(offsets[s]);
    file.PutU64(bodies[s]->size());
  }
  std::string& out = file.bytes();
  const auto header = std::as_bytes(std::span<const char>(out));
  const uint32_t header_crc = Crc32(header.subspan(kHeaderBytes), Crc32(header.first(kHeaderCrcOffset)));
  std::memcpy(out.data() + kHeaderCrcOffset, &header_crc, sizeof(header_crc));
  for (size_t s = 0; s < kNumSections; ++s) {
    out.resize(offsets[s], '\0');
    out += *bodies[s];
  }
  OCTET_CHECK_EQ(out.size(), end);
  return std::move(out);
}

}  // namespace

Result<std::string> SerializeOctet(const Graph& graph, const OctetMetadata& metadata, std::string_view name) {
  return Serializer(graph, name).Run(metadata);
}

Status WriteOctetFile(const std::string& path, const Graph& graph, const OctetMetadata& metadata) {
  OCTET_ASSIGN_OR_RETURN(std::string bytes, SerializeOctet(graph, metadata, path));
  return WriteFileAtomically(path, bytes);
}

}  // namespace octet

// Helpers for the .octet tests: a graph comparison that checks every field bit for bit, and a small independent
// encoder that assembles .octet files from hand-written section bytes (for malformed-file tests).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/graph.h"
#include "io/crc32.h"
#include "io/octet_format.h"

namespace octet::testing {

// Little-endian bytes, written the way octet_writer.cc documents its records.
class Bytes {
 public:
  template <typename T>
  Bytes& Put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    s_.append(b, sizeof(T));
    return *this;
  }
  Bytes& U8(uint8_t v) { return Put(v); }
  Bytes& U32(uint32_t v) { return Put(v); }
  Bytes& I32(int32_t v) { return Put(v); }
  Bytes& U64(uint64_t v) { return Put(v); }
  Bytes& I64(int64_t v) { return Put(v); }
  Bytes& F32(float v) { return Put(v); }
  Bytes& Str(const std::string& v) {
    U32(static_cast<uint32_t>(v.size()));
    s_ += v;
    return *this;
  }
  Bytes& Raw(const std::string& v) {
    s_ += v;
    return *this;
  }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

inline uint32_t Crc(const std::string& s) { return Crc32(std::as_bytes(std::span<const char>(s))); }

// The five sections of format version 1.
struct OctetSections {
  std::string metadata, graph, values, nodes, data;
};

// Recomputes the header checksum after a test edited the header or the section table.
inline void ResealHeader(std::string& file) {
  using namespace octet_format;  // NOLINT
  const size_t table_end = kHeaderBytes + 5 * kSectionEntryBytes;
  const uint32_t crc = Crc32(std::as_bytes(std::span<const char>(file.data() + kHeaderBytes, table_end - kHeaderBytes)),
                             Crc32(std::as_bytes(std::span<const char>(file.data(), kHeaderCrcOffset))));
  std::memcpy(file.data() + kHeaderCrcOffset, &crc, 4);
}

// A file laid out as the writer lays it out (io/octet_file.h), checksums included.
inline std::string AssembleOctet(const OctetSections& s, uint32_t version = 1) {
  using namespace octet_format;  // NOLINT
  const std::string* bodies[] = {&s.metadata, &s.graph, &s.values, &s.nodes, &s.data};
  size_t offsets[5];
  size_t end = kHeaderBytes + 5 * kSectionEntryBytes;
  for (size_t k = 0; k < 5; ++k) {
    if (k == 4) end = (end + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
    offsets[k] = end;
    end += bodies[k]->size();
  }
  Bytes f;
  for (unsigned char c : kMagic) f.U8(c);
  f.U32(version).U32(5).U64(end).U32(0).U32(0);
  for (size_t k = 0; k < 5; ++k) {
    std::string name(kSectionNames[k]);
    name.resize(kSectionNameBytes, '\0');
    f.Raw(name).U32(Crc(*bodies[k])).U64(offsets[k]).U64(bodies[k]->size());
  }
  std::string out = f.str();
  for (size_t k = 0; k < 5; ++k) {
    out.resize(offsets[k], '\0');
    out += *bodies[k];
  }
  ResealHeader(out);
  return out;
}

inline void ExpectSameTensor(const Tensor& a, const Tensor& b, const std::string& what) {
  INFO(what);
  CHECK(a.dtype() == b.dtype());
  CHECK(a.shape() == b.shape());
  if (a.dtype() == b.dtype() && a.shape() == b.shape() && a.SizeBytes() > 0) {
    CHECK(std::memcmp(a.raw_data(), b.raw_data(), a.SizeBytes()) == 0);
  }
}

inline bool SameFloatBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

inline void ExpectSameAttribute(const Attribute& a, const Attribute& b, const std::string& what) {
  INFO(what);
  REQUIRE(a.type() == b.type());
  switch (a.type()) {
    case AttrType::kInt: CHECK(a.i() == b.i()); break;
    case AttrType::kFloat: CHECK(SameFloatBits(a.f(), b.f())); break;
    case AttrType::kString: CHECK(a.s() == b.s()); break;
    case AttrType::kTensor: ExpectSameTensor(a.t(), b.t(), what); break;
    case AttrType::kInts: CHECK(a.ints() == b.ints()); break;
    case AttrType::kFloats:
      REQUIRE(a.floats().size() == b.floats().size());
      for (size_t k = 0; k < a.floats().size(); ++k) CHECK(SameFloatBits(a.floats()[k], b.floats()[k]));
      break;
    case AttrType::kStrings: CHECK(a.strings() == b.strings()); break;
  }
}

// Same graph, compared by names (ids may differ: the file stores the inputs first): every value's kind, dtype,
// shape, qparams and data; every node's fields and attributes; the inputs and outputs in order.
inline void ExpectSameGraph(const Graph& a, const Graph& b) {
  CHECK(a.name() == b.name());
  REQUIRE(a.num_values() == b.num_values());
  for (const Value& va : a.values()) {
    INFO("value '" << va.name << "'");
    const ValueId id = b.FindValue(va.name);
    REQUIRE(id != kNoValue);
    const Value& vb = b.value(id);
    CHECK(va.kind == vb.kind);
    CHECK(va.dtype == vb.dtype);
    CHECK(va.shape.has_value() == vb.shape.has_value());
    if (va.shape && vb.shape) CHECK(*va.shape == *vb.shape);
    if (va.kind == ValueKind::kConstant) ExpectSameTensor(va.data, vb.data, va.name);
    REQUIRE(va.qparams.has_value() == vb.qparams.has_value());
    if (va.qparams) {
      const QParams& qa = *va.qparams;
      const QParams& qb = *vb.qparams;
      CHECK(qa.scheme() == qb.scheme());
      CHECK(qa.dtype() == qb.dtype());
      CHECK(qa.quant_min() == qb.quant_min());
      CHECK(qa.quant_max() == qb.quant_max());
      CHECK(qa.axis() == qb.axis());
      CHECK(qa.zero_points() == qb.zero_points());
      REQUIRE(qa.scales().size() == qb.scales().size());
      for (size_t c = 0; c < qa.scales().size(); ++c) CHECK(SameFloatBits(qa.scales()[c], qb.scales()[c]));
    }
  }
  auto names = [](const Graph& g, const std::vector<ValueId>& ids) {
    std::vector<std::string> n;
    for (ValueId id : ids) n.push_back(id == kNoValue ? std::string("(none)") : g.value(id).name);
    return n;
  };
  CHECK(names(a, a.inputs()) == names(b, b.inputs()));
  CHECK(names(a, a.outputs()) == names(b, b.outputs()));
  REQUIRE(a.num_nodes() == b.num_nodes());
  for (int n = 0; n < a.num_nodes(); ++n) {
    const Node& na = a.node(n);
    const Node& nb = b.node(n);
    INFO("node '" << na.name << "'");
    CHECK(na.name == nb.name);
    CHECK(na.op_type == nb.op_type);
    CHECK(na.domain == nb.domain);
    CHECK(names(a, na.inputs) == names(b, nb.inputs));
    CHECK(names(a, na.outputs) == names(b, nb.outputs));
    REQUIRE(na.attributes.items().size() == nb.attributes.items().size());
    for (const auto& [key, attr] : na.attributes.items()) {
      const Attribute* other = nb.attributes.Find(key);
      REQUIRE(other != nullptr);
      ExpectSameAttribute(attr, *other, key);
    }
  }
}

}  // namespace octet::testing

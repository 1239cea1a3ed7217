// The fixed enum codes of .octet files.
#include "io/octet_codes.h"

#include <fmt/format.h>

namespace octet::octet_format {
namespace {

// One table per enum: the code is the index. Appending is the only allowed change (older files keep their meaning).
constexpr DType kDTypes[] = {DType::kF32, DType::kU8, DType::kS8, DType::kS32};
constexpr ValueKind kValueKinds[] = {ValueKind::kInput, ValueKind::kConstant, ValueKind::kNode};
constexpr QScheme kQSchemes[] = {QScheme::kPerTensorAffine, QScheme::kPerTensorSymmetric, QScheme::kPerChannelAffine,
                                 QScheme::kPerChannelSymmetric};
constexpr AttrType kAttrTypes[] = {AttrType::kInt,  AttrType::kFloat,  AttrType::kString, AttrType::kTensor,
                                   AttrType::kInts, AttrType::kFloats, AttrType::kStrings};

template <typename T, size_t N>
uint8_t CodeOf(const T (&table)[N], T v) {
  for (size_t i = 0; i < N; ++i) {
    if (table[i] == v) return static_cast<uint8_t>(i);
  }
  OCTET_CHECK(false);  // every enumerator has a code: a missing one is a bug in this file
  return 0;
}

template <typename T, size_t N>
bool Parse(const T (&table)[N], uint8_t code, T& out) {
  if (code >= N) return false;
  out = table[code];
  return true;
}

template <typename T, size_t N, typename NameFn>
std::string CodeList(const T (&table)[N], NameFn name) {
  std::string s;
  for (size_t i = 0; i < N; ++i) s += fmt::format("{}{} ({})", i == 0 ? "" : ", ", name(table[i]), i);
  return s;
}

}  // namespace

uint8_t DTypeCode(DType dtype) { return CodeOf(kDTypes, dtype); }
bool ParseDTypeCode(uint8_t code, DType& dtype) { return Parse(kDTypes, code, dtype); }
uint8_t ValueKindCode(ValueKind kind) { return CodeOf(kValueKinds, kind); }
bool ParseValueKindCode(uint8_t code, ValueKind& kind) { return Parse(kValueKinds, code, kind); }
uint8_t QSchemeCode(QScheme scheme) { return CodeOf(kQSchemes, scheme); }
bool ParseQSchemeCode(uint8_t code, QScheme& scheme) { return Parse(kQSchemes, code, scheme); }
uint8_t AttrTypeCode(AttrType type) { return CodeOf(kAttrTypes, type); }
bool ParseAttrTypeCode(uint8_t code, AttrType& type) { return Parse(kAttrTypes, code, type); }

std::string DTypeCodeList() { return CodeList(kDTypes, DTypeName); }
std::string ValueKindCodeList() { return CodeList(kValueKinds, ValueKindName); }
std::string QSchemeCodeList() { return CodeList(kQSchemes, QSchemeName); }
std::string AttrTypeCodeList() { return CodeList(kAttrTypes, AttrTypeName); }

bool HasControlCharacters(const std::string& s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

}  // namespace octet::octet_format

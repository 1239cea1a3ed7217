// Attribute text forms and typed lookups.
#include "core/graph_attribute.h"

#include <fmt/ranges.h>

namespace octet {

const char* AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kString: return "string";
    case AttrType::kTensor: return "tensor";
    case AttrType::kInts: return "ints";
    case AttrType::kFloats: return "floats";
    case AttrType::kStrings: return "strings";
  }
  return "?";
}

std::string Attribute::ToString() const {
  switch (type()) {
    case AttrType::kInt: return fmt::format("{}", i());
    case AttrType::kFloat: return fmt::format("{}", f());
    case AttrType::kString: return fmt::format("\"{}\"", s());
    case AttrType::kTensor: return fmt::format("tensor {} {}", t().dtype(), t().shape());
    case AttrType::kInts: return fmt::format("[{}]", fmt::join(ints(), ", "));
    case AttrType::kFloats: return fmt::format("[{}]", fmt::join(floats(), ", "));
    case AttrType::kStrings: return fmt::format("[\"{}\"]", fmt::join(strings(), "\", \""));
  }
  return "?";
}

const Attribute* AttributeMap::Find(const std::string& name) const {
  auto it = items_.find(name);
  return it == items_.end() ? nullptr : &it->second;
}

Result<const Attribute*> AttributeMap::Typed(const std::string& name, AttrType type) const {
  const Attribute* a = Find(name);
  if (a == nullptr) return InvalidArgument("required attribute '{}' is missing", name);
  if (a->type() != type) {
    return InvalidArgument("attribute '{}' must be {}, got {}", name, AttrTypeName(type), AttrTypeName(a->type()));
  }
  return a;
}

// Each getter pair: the required form, and the form with a default used when the attribute is absent (a present
// attribute of the wrong type is still an error).
#define OCTET_ATTR_GETTERS(Name, T, kind, accessor)                                           \
  Result<T> AttributeMap::Get##Name(const std::string& name) const {                         \
    OCTET_ASSIGN_OR_RETURN(const Attribute* a, Typed(name, AttrType::kind));                 \
    return T(a->accessor());                                                                 \
  }                                                                                          \
  Result<T> AttributeMap::Get##Name(const std::string& name, T default_value) const {        \
    if (!Has(name)) return default_value;                                                    \
    return Get##Name(name);                                                                  \
  }

OCTET_ATTR_GETTERS(Int, int64_t, kInt, i)
OCTET_ATTR_GETTERS(Float, float, kFloat, f)
OCTET_ATTR_GETTERS(String, std::string, kString, s)
OCTET_ATTR_GETTERS(Ints, std::vector<int64_t>, kInts, ints)
OCTET_ATTR_GETTERS(Floats, std::vector<float>, kFloats, floats)
OCTET_ATTR_GETTERS(Strings, std::vector<std::string>, kStrings, strings)
#undef OCTET_ATTR_GETTERS

Result<Tensor> AttributeMap::GetTensor(const std::string& name) const {
  OCTET_ASSIGN_OR_RETURN(const Attribute* a, Typed(name, AttrType::kTensor));
  return a->t();
}

}  // namespace octet

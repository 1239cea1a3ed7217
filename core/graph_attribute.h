// Typed node attributes (ONNX's AttributeProto kinds: int, float, string, tensor and their lists) and the map a node
// keeps them in, with getters that fail with a clear error on a missing attribute or a wrong type.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace octet {

enum class AttrType { kInt, kFloat, kString, kTensor, kInts, kFloats, kStrings };

// "int", "float", "string", "tensor", "ints", "floats", "strings".
const char* AttrTypeName(AttrType type);

// One attribute value. Integers are int64 and floats float32, as in ONNX.
class Attribute {
 public:
  Attribute() = default;
  Attribute(int64_t v) : value_(v) {}  // NOLINT: implicit, so maps can be written as {{"axis", 1}}
  Attribute(int v) : value_(int64_t{v}) {}  // NOLINT
  Attribute(float v) : value_(v) {}  // NOLINT
  Attribute(std::string v) : value_(std::move(v)) {}  // NOLINT
  Attribute(const char* v) : value_(std::string(v)) {}  // NOLINT
  Attribute(Tensor v) : value_(std::move(v)) {}  // NOLINT
  Attribute(std::vector<int64_t> v) : value_(std::move(v)) {}  // NOLINT
  Attribute(std::vector<float> v) : value_(std::move(v)) {}  // NOLINT
  Attribute(std::vector<std::string> v) : value_(std::move(v)) {}  // NOLINT

  AttrType type() const { return static_cast<AttrType>(value_.index()); }
  // Precondition: type() matches (checked).
  int64_t i() const { return Get<int64_t>(); }
  float f() const { return Get<float>(); }
  const std::string& s() const { return Get<std::string>(); }
  const Tensor& t() const { return Get<Tensor>(); }
  const std::vector<int64_t>& ints() const { return Get<std::vector<int64_t>>(); }
  const std::vector<float>& floats() const { return Get<std::vector<float>>(); }
  const std::vector<std::string>& strings() const { return Get<std::vector<std::string>>(); }

  // A short text form for graph dumps: "3", "1.5", "\"NOTSET\"", "[1, 1]", "tensor f32 [3]".
  std::string ToString() const;

 private:
  template <typename T>
  const T& Get() const {
    OCTET_CHECK(std::holds_alternative<T>(value_));
    return std::get<T>(value_);
  }
  // The order matches AttrType.
  std::variant<int64_t, float, std::string, Tensor, std::vector<int64_t>, std::vector<float>, std::vector<std::string>>
      value_;
};

// A node's attributes by name, in name order. Getters fail with
// "attribute '<name>' must be <type>, got <type>" or "required attribute '<name>' is missing".
class AttributeMap {
 public:
  AttributeMap() = default;
  AttributeMap(std::initializer_list<std::pair<const std::string, Attribute>> items) : items_(items) {}

  void Set(const std::string& name, Attribute value) { items_[name] = std::move(value); }
  bool Has(const std::string& name) const { return items_.count(name) != 0; }
  void Erase(const std::string& name) { items_.erase(name); }
  const Attribute* Find(const std::string& name) const;
  const std::map<std::string, Attribute>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

  Result<int64_t> GetInt(const std::string& name) const;
  Result<int64_t> GetInt(const std::string& name, int64_t default_value) const;
  Result<float> GetFloat(const std::string& name) const;
  Result<float> GetFloat(const std::string& name, float default_value) const;
  Result<std::string> GetString(const std::string& name) const;
  Result<std::string> GetString(const std::string& name, std::string default_value) const;
  Result<Tensor> GetTensor(const std::string& name) const;
  Result<std::vector<int64_t>> GetInts(const std::string& name) const;
  Result<std::vector<int64_t>> GetInts(const std::string& name, std::vector<int64_t> default_value) const;
  Result<std::vector<float>> GetFloats(const std::string& name) const;
  Result<std::vector<float>> GetFloats(const std::string& name, std::vector<float> default_value) const;
  Result<std::vector<std::string>> GetStrings(const std::string& name) const;
  Result<std::vector<std::string>> GetStrings(const std::string& name, std::vector<std::string> default_value) const;

 private:
  Result<const Attribute*> Typed(const std::string& name, AttrType type) const;
  std::map<std::string, Attribute> items_;
};

}  // namespace octet

// The operator registry.
#include "core/op_registry.h"

namespace octet {
namespace {

std::string CanonicalDomain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string() : std::string(domain);
}

}  // namespace

Result<const Tensor*> InputData(const ValueInfo& info) {
  if (info.constant != nullptr) return info.constant;
  if (!info.present) return InvalidArgument("input '{}' is omitted", info.name);
  if (!info.run_time_data) return Unimplemented("input '{}' must be known at compile time", info.name);
  return info.run_time_data();
}

Status OpRegistry::Register(std::string_view domain, std::string_view op_type, OpPrepareFn prepare) {
  if (op_type.empty() || !prepare) return InvalidArgument("failed to register operator: empty op type or function");
  auto key = std::make_pair(CanonicalDomain(domain), std::string(op_type));
  if (ops_.count(key) != 0) {
    return InvalidArgument("failed to register operator '{}' in domain '{}': already registered", op_type, domain);
  }
  ops_.emplace(std::move(key), std::move(prepare));
  return OkStatus();
}

const OpPrepareFn* OpRegistry::Find(std::string_view domain, std::string_view op_type) const {
  auto it = ops_.find(std::make_pair(CanonicalDomain(domain), std::string(op_type)));
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::OpTypes() const {
  std::vector<std::string> names;
  for (const auto& [key, fn] : ops_) names.push_back(key.first.empty() ? key.second : key.first + "." + key.second);
  return names;
}

}  // namespace octet

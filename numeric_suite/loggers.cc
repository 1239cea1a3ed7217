// Loggers of the numeric suite (see loggers.h).
#include "numeric_suite/loggers.h"

namespace octet {

Status StoringLogger::OnValue(const std::string& name, const Tensor& float_value, const Tensor& quantized_value) {
  if (float_value.shape() != quantized_value.shape()) {
    return InvalidArgument("failed to log '{}': float value has shape {}, quantized value {}", name,
                           float_value.shape(), quantized_value.shape());
  }
  auto [it, inserted] = stats_.try_emplace(name);
  if (inserted) names_.push_back(name);
  OCTET_ASSIGN_OR_RETURN(Tensor f, float_value.Clone());
  OCTET_ASSIGN_OR_RETURN(Tensor q, quantized_value.Clone());
  it->second.float_values.push_back(std::move(f));
  it->second.quantized_values.push_back(std::move(q));
  return OkStatus();
}

Result<const StoringLogger::Stats*> StoringLogger::stats(const std::string& name) const {
  auto it = stats_.find(name);
  if (it == stats_.end()) return NotFound("no value '{}' was logged", name);
  return &it->second;
}

Status RunningSqnrLogger::OnValue(const std::string& name, const Tensor& float_value,
                                  const Tensor& quantized_value) {
  auto [it, inserted] = sums_.try_emplace(name);
  if (inserted) names_.push_back(name);
  Status s = it->second.Accumulate(float_value, quantized_value);
  if (!s.ok()) return s.WithContext(fmt::format("failed to log '{}'", name));
  return OkStatus();
}

Result<ErrorSums> RunningSqnrLogger::sums(const std::string& name) const {
  auto it = sums_.find(name);
  if (it == sums_.end()) return NotFound("no value '{}' was logged", name);
  return it->second;
}

Result<double> RunningSqnrLogger::Sqnr(const std::string& name) const {
  OCTET_ASSIGN_OR_RETURN(ErrorSums s, sums(name));
  return s.Sqnr();
}

}  // namespace octet

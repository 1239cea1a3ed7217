// Loggers of the numeric suite (torch.ao.ns._numeric_suite's Logger, OutputLogger, ShadowLogger): what
// CompareModelOutputs and CompareModelStub hand each matched value to, one call per value and batch.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "numeric_suite/metrics.h"

namespace octet {

// The base class for user loggers. OnValue receives, for one batch, the float model's value and the int8 model's
// value dequantized to f32 (same shape). `name` is the node name, with ":<k>" appended for output slot k > 0
// (an LSTM's Y_h is "lstm:1"). The tensors are only valid during the call; Clone() what you keep. An error stops
// the comparison with that error.
class Logger {
 public:
  virtual ~Logger() = default;
  virtual Status OnValue(const std::string& name, const Tensor& float_value, const Tensor& quantized_value) = 0;
};

// Keeps every batch of every value: stats(name).float_values[b] and .quantized_values[b] (copies).
class StoringLogger : public Logger {
 public:
  struct Stats {
    std::vector<Tensor> float_values;
    std::vector<Tensor> quantized_values;
  };
  Status OnValue(const std::string& name, const Tensor& float_value, const Tensor& quantized_value) override;
  // Names in the order they were first logged.
  const std::vector<std::string>& names() const { return names_; }
  // Fails with NotFound naming `name` when it was never logged.
  Result<const Stats*> stats(const std::string& name) const;

 private:
  std::vector<std::string> names_;
  std::map<std::string, Stats> stats_;
};

// CompareModelOutputs' default: the activations of the float and the int8 model, every batch.
class OutputLogger : public StoringLogger {};

// CompareModelStub's default. Unlike PyTorch 1.13's ShadowLogger, which keeps only the first sample of a batched
// tensor (numerics.md §2.18), it keeps the whole batch.
class ShadowLogger : public StoringLogger {};

// A user logger that keeps no tensors: running sums per name (ErrorSums), so the metrics cover any number of
// batches in constant memory (like PyTorch's MeanShadowLogger in _correct_bias.py).
class RunningSqnrLogger : public Logger {
 public:
  Status OnValue(const std::string& name, const Tensor& float_value, const Tensor& quantized_value) override;
  const std::vector<std::string>& names() const { return names_; }
  // Fails with NotFound naming `name` when it was never logged.
  Result<ErrorSums> sums(const std::string& name) const;
  Result<double> Sqnr(const std::string& name) const;

 private:
  std::vector<std::string> names_;
  std::map<std::string, ErrorSums> sums_;
};

}  // namespace octet

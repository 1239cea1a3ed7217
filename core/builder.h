// GraphBuilder: builds a Graph in C++ the way torch.nn composes a model. Each module call adds the ONNX-style
// node(s) and parameters for one torch.nn layer under a hierarchical name: inside Scope("layer1") and
// Scope("0"), Conv2d("conv1", ...) adds node "layer1.0.conv1" with parameters "layer1.0.conv1.weight" and
// "layer1.0.conv1.bias" (PyTorch's state_dict names). A node's first output value has the node's name, output k>0
// is "<node>:<k>".
//
// Parameters start as PyTorch's defaults from the builder's seeded generator: Conv/Linear weights and biases
// uniform in ±1/sqrt(fan_in) (kaiming_uniform with a = sqrt(5)), LSTM/GRU weights uniform in ±1/sqrt(hidden),
// Embedding N(0, 1), BatchNorm and LayerNorm weight 1 and bias 0, running mean 0 and variance 1. The stream is
// octet's own (mt19937_64 and 24-bit uniforms), identical on every platform.
//
// Errors are sticky: a failing call (a duplicate name, an input from a failed call) returns kNoValue, later calls
// on it do nothing, and Build() returns the first error.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet {

struct Conv2dOptions {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  std::array<int64_t, 2> kernel_size = {3, 3};
  std::array<int64_t, 2> stride = {1, 1};
  std::array<int64_t, 2> padding = {0, 0};  // symmetric, as torch.nn.Conv2d
  std::array<int64_t, 2> dilation = {1, 1};
  int64_t groups = 1;
  bool bias = true;
};

struct Pool2dOptions {
  std::array<int64_t, 2> kernel_size = {2, 2};
  std::array<int64_t, 2> stride = {0, 0};  // {0, 0}: the kernel size, as torch
  std::array<int64_t, 2> padding = {0, 0};
  bool ceil_mode = false;
  bool count_include_pad = true;  // AvgPool2d only
};

struct RnnOptions {
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 1;
  bool bidirectional = false;
  bool bias = true;
};

// Outputs of LSTM / GRU, in torch.nn's layout (sequence first): output [seq, batch, dirs*hidden],
// h_n and c_n [layers*dirs, batch, hidden] (c_n is kNoValue for GRU).
struct RnnOutputs {
  ValueId output = kNoValue;
  ValueId h_n = kNoValue;
  ValueId c_n = kNoValue;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string graph_name = "model", uint64_t seed = 0);

  // Names created while the returned guard lives are prefixed with "<name>."; scopes nest.
  class ScopeGuard {
   public:
    ~ScopeGuard();
    ScopeGuard(const ScopeGuard&) = delete;
    ScopeGuard& operator=(const ScopeGuard&) = delete;

   private:
    friend class GraphBuilder;
    explicit ScopeGuard(GraphBuilder* b) : builder_(b) {}
    GraphBuilder* builder_;
  };
  [[nodiscard]] ScopeGuard Scope(const std::string& name);
  // The full name `name` gets in the current scope.
  std::string FullName(const std::string& name) const;

  ValueId Input(const std::string& name, DType dtype, Shape shape);
  void Output(ValueId value);
  // A named constant (scoped like a parameter).
  ValueId Constant(const std::string& name, Tensor data);

  // One node of any op type; returns its output values (num_outputs of them).
  std::vector<ValueId> Op(const std::string& op_type, const std::string& name, std::vector<ValueId> inputs,
                          AttributeMap attributes = {}, int num_outputs = 1);
  ValueId Op1(const std::string& op_type, const std::string& name, std::vector<ValueId> inputs,
              AttributeMap attributes = {});

  // torch.nn modules (ONNX op in brackets).
  ValueId Conv2d(const std::string& name, ValueId x, const Conv2dOptions& o);                // Conv
  ValueId Linear(const std::string& name, ValueId x, int64_t in_features, int64_t out_features,
                 bool bias = true);                                                           // Gemm (2-D x)
  ValueId BatchNorm2d(const std::string& name, ValueId x, int64_t channels, float eps = 1e-5f);  // BatchNormalization
  ValueId LayerNorm(const std::string& name, ValueId x, int64_t normalized_size,
                    float eps = 1e-5f);                                                       // LayerNormalization
  ValueId ReLU(const std::string& name, ValueId x);                                           // Relu
  ValueId ReLU6(const std::string& name, ValueId x);                                          // Clip(0, 6)
  ValueId LeakyReLU(const std::string& name, ValueId x, float negative_slope = 0.01f);        // LeakyRelu
  ValueId Sigmoid(const std::string& name, ValueId x);
  ValueId Tanh(const std::string& name, ValueId x);
  ValueId GELU(const std::string& name, ValueId x, bool tanh_approximation = false);          // Gelu
  ValueId Hardswish(const std::string& name, ValueId x);                                      // HardSwish
  ValueId Hardsigmoid(const std::string& name, ValueId x);  // HardSigmoid(alpha 1/6, beta 0.5)
  ValueId Softmax(const std::string& name, ValueId x, int64_t dim = -1);
  ValueId MaxPool2d(const std::string& name, ValueId x, const Pool2dOptions& o);
  ValueId AvgPool2d(const std::string& name, ValueId x, const Pool2dOptions& o);              // AveragePool
  ValueId AdaptiveAvgPool2d1(const std::string& name, ValueId x);  // AdaptiveAvgPool2d(1): GlobalAveragePool
  ValueId Flatten(const std::string& name, ValueId x, int64_t start_dim = 1);
  ValueId Dropout(const std::string& name, ValueId x);  // inference: identity
  ValueId Embedding(const std::string& name, ValueId indices, int64_t num_embeddings,
                    int64_t embedding_dim);  // Gather(weight, indices)
  RnnOutputs LSTM(const std::string& name, ValueId x, const RnnOptions& o, ValueId h0 = kNoValue,
                  ValueId c0 = kNoValue);
  RnnOutputs GRU(const std::string& name, ValueId x, const RnnOptions& o, ValueId h0 = kNoValue);

  // Tensor functions.
  ValueId Add(const std::string& name, ValueId a, ValueId b);
  ValueId Sub(const std::string& name, ValueId a, ValueId b);
  ValueId Mul(const std::string& name, ValueId a, ValueId b);
  ValueId Div(const std::string& name, ValueId a, ValueId b);
  ValueId MatMul(const std::string& name, ValueId a, ValueId b);
  ValueId Concat(const std::string& name, std::vector<ValueId> xs, int64_t axis);
  ValueId Reshape(const std::string& name, ValueId x, std::vector<int64_t> shape);
  ValueId Transpose(const std::string& name, ValueId x, std::vector<int64_t> perm);

  // The first error, if any.
  const Status& status() const { return status_; }
  // Verifies and returns the graph (or the first error). The builder is spent.
  Result<Graph> Build() &&;

  // The builder's generator, for callers that want more parameters from the same stream.
  Tensor UniformTensor(Shape shape, float bound);
  // A tensor filled with `value` (no random numbers drawn).
  Tensor Filled(Shape shape, float value);

 private:
  RnnOutputs Rnn(bool lstm, const std::string& name, ValueId x, const RnnOptions& o, ValueId h0, ValueId c0);
  ValueId Parameter(const std::string& node_name, const std::string& param, Tensor data);
  ValueId ConstInts(const std::string& name, std::vector<int64_t> values);
  bool Usable(std::initializer_list<ValueId> ids) const;
  void Fail(Status status);
  float Uniform01();

  Graph graph_;
  std::vector<std::string> scopes_;
  std::mt19937_64 rng_;
  Status status_;
};

}  // namespace octet

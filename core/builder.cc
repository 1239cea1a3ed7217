// GraphBuilder: torch.nn-style modules lowered to ONNX-style nodes with hierarchical names.
#include "core/builder.h"

#include <cmath>

#include "core/float_op_table.h"
#include "core/verifier.h"

namespace octet {
namespace {

// The op type of float operator `op` (the builder's nodes name their operators through the table).
std::string OpType(FloatOp op) { return std::string(FloatOpName(op)); }

}  // namespace

GraphBuilder::GraphBuilder(std::string graph_name, uint64_t seed) : graph_(std::move(graph_name)), rng_(seed) {}

GraphBuilder::ScopeGuard::~ScopeGuard() { builder_->scopes_.pop_back(); }

GraphBuilder::ScopeGuard GraphBuilder::Scope(const std::string& name) {
  scopes_.push_back(name);
  return ScopeGuard(this);
}

std::string GraphBuilder::FullName(const std::string& name) const {
  std::string full;
  for (const std::string& s : scopes_) {
    full += s;
    full += '.';
  }
  return full + name;
}

void GraphBuilder::Fail(Status status) {
  if (status_.ok()) status_ = std::move(status);
}

bool GraphBuilder::Usable(std::initializer_list<ValueId> ids) const {
  if (!status_.ok()) return false;
  for (ValueId id : ids) {
    if (id == kNoValue) return false;
  }
  return true;
}

float GraphBuilder::Uniform01() {
  // 24 random bits: every value is exact in float32 and the stream is the same on every platform.
  return static_cast<float>(rng_() >> 40) * (1.0f / 16777216.0f);
}

Tensor GraphBuilder::UniformTensor(Shape shape, float bound) {
  auto t = Tensor::Create(DType::kF32, std::move(shape));
  if (!t.ok()) {
    Fail(t.status());
    return Tensor();
  }
  for (float& v : t->values<float>()) v = (2.0f * Uniform01() - 1.0f) * bound;
  return std::move(*t);
}

Tensor GraphBuilder::Filled(Shape shape, float value) {
  auto t = Tensor::Create(DType::kF32, std::move(shape));
  if (!t.ok()) {
    Fail(t.status());
    return Tensor();
  }
  for (float& v : t->values<float>()) v = value;
  return std::move(*t);
}

ValueId GraphBuilder::Input(const std::string& name, DType dtype, Shape shape) {
  if (!status_.ok()) return kNoValue;
  auto id = graph_.AddInput(FullName(name), dtype, std::move(shape));
  if (!id.ok()) {
    Fail(id.status());
    return kNoValue;
  }
  return *id;
}

void GraphBuilder::Output(ValueId value) {
  if (!Usable({value})) return;
  Status st = graph_.AddOutput(value);
  if (!st.ok()) Fail(st);
}

ValueId GraphBuilder::Constant(const std::string& name, Tensor data) {
  if (!status_.ok()) return kNoValue;
  auto id = graph_.AddConstant(FullName(name), std::move(data));
  if (!id.ok()) {
    Fail(id.status());
    return kNoValue;
  }
  return *id;
}

ValueId GraphBuilder::Parameter(const std::string& node_name, const std::string& param, Tensor data) {
  if (!status_.ok()) return kNoValue;
  auto id = graph_.AddConstant(node_name + "." + param, std::move(data));
  if (!id.ok()) {
    Fail(id.status());
    return kNoValue;
  }
  return *id;
}

ValueId GraphBuilder::ConstInts(const std::string& name, std::vector<int64_t> values) {
  std::vector<int32_t> narrow(values.begin(), values.end());
  auto t = Tensor::FromValues<int32_t>(Shape{static_cast<int64_t>(narrow.size())}, narrow);
  if (!t.ok()) {
    Fail(t.status());
    return kNoValue;
  }
  if (!status_.ok()) return kNoValue;
  auto id = graph_.AddConstant(name, std::move(*t));
  if (!id.ok()) {
    Fail(id.status());
    return kNoValue;
  }
  return *id;
}

std::vector<ValueId> GraphBuilder::Op(const std::string& op_type, const std::string& name,
                                      std::vector<ValueId> inputs, AttributeMap attributes, int num_outputs) {
  std::vector<ValueId> none(static_cast<size_t>(num_outputs), kNoValue);
  if (!status_.ok()) return none;
  Node node;
  node.name = FullName(name);
  node.op_type = op_type;
  node.attributes = std::move(attributes);
  node.inputs = std::move(inputs);
  for (int k = 0; k < num_outputs; ++k) {
    auto id = graph_.AddNodeValue(k == 0 ? node.name : fmt::format("{}:{}", node.name, k));
    if (!id.ok()) {
      Fail(id.status());
      return none;
    }
    node.outputs.push_back(*id);
  }
  std::vector<ValueId> outputs = node.outputs;
  auto index = graph_.AddNode(std::move(node));
  if (!index.ok()) {
    Fail(index.status());
    return none;
  }
  return outputs;
}

ValueId GraphBuilder::Op1(const std::string& op_type, const std::string& name, std::vector<ValueId> inputs,
                          AttributeMap attributes) {
  for (ValueId id : inputs) {
    if (id == kNoValue && status_.ok()) {
      Fail(InvalidArgument("failed to build node '{}' ({}): an input is missing", FullName(name), op_type));
    }
  }
  return Op(op_type, name, std::move(inputs), std::move(attributes), 1)[0];
}

ValueId GraphBuilder::Conv2d(const std::string& name, ValueId x, const Conv2dOptions& o) {
  if (!Usable({x})) return kNoValue;
  if (o.in_channels <= 0 || o.out_channels <= 0 || o.groups <= 0 || o.in_channels % o.groups != 0 ||
      o.out_channels % o.groups != 0) {
    Fail(InvalidArgument("failed to build Conv2d '{}': channels {} -> {} must be positive multiples of groups {}",
                         FullName(name), o.in_channels, o.out_channels, o.groups));
    return kNoValue;
  }
  const std::string full = FullName(name);
  const int64_t fan_in = o.in_channels / o.groups * o.kernel_size[0] * o.kernel_size[1];
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::vector<ValueId> inputs = {
      x, Parameter(full, "weight",
                   UniformTensor(Shape{o.out_channels, o.in_channels / o.groups, o.kernel_size[0], o.kernel_size[1]},
                                 bound))};
  if (o.bias) inputs.push_back(Parameter(full, "bias", UniformTensor(Shape{o.out_channels}, bound)));
  return Op1(OpType(FloatOp::kConv), name, std::move(inputs),
             {{"kernel_shape", std::vector<int64_t>{o.kernel_size[0], o.kernel_size[1]}},
              {"strides", std::vector<int64_t>{o.stride[0], o.stride[1]}},
              {"pads", std::vector<int64_t>{o.padding[0], o.padding[1], o.padding[0], o.padding[1]}},
              {"dilations", std::vector<int64_t>{o.dilation[0], o.dilation[1]}},
              {"group", o.groups}});
}

ValueId GraphBuilder::Linear(const std::string& name, ValueId x, int64_t in_features, int64_t out_features,
                             bool bias) {
  if (!Usable({x})) return kNoValue;
  const std::string full = FullName(name);
  const float bound = 1.0f / std::sqrt(static_cast<float>(std::max<int64_t>(in_features, 1)));
  std::vector<ValueId> inputs = {x, Parameter(full, "weight", UniformTensor(Shape{out_features, in_features}, bound))};
  if (bias) inputs.push_back(Parameter(full, "bias", UniformTensor(Shape{out_features}, bound)));
  return Op1(OpType(FloatOp::kGemm), name, std::move(inputs), {{"transB", 1}});
}

ValueId GraphBuilder::BatchNorm2d(const std::string& name, ValueId x, int64_t channels, float eps) {
  if (!Usable({x})) return kNoValue;
  const std::string full = FullName(name);
  auto filled = [&](float v) { return Filled(Shape{channels}, v); };
  return Op1(OpType(FloatOp::kBatchNormalization), name,
             {x, Parameter(full, "weight", filled(1.0f)), Parameter(full, "bias", filled(0.0f)),
              Parameter(full, "running_mean", filled(0.0f)), Parameter(full, "running_var", filled(1.0f))},
             {{"epsilon", eps}});
}

ValueId GraphBuilder::LayerNorm(const std::string& name, ValueId x, int64_t normalized_size, float eps) {
  if (!Usable({x})) return kNoValue;
  const std::string full = FullName(name);
  return Op1(OpType(FloatOp::kLayerNormalization), name,
             {x, Parameter(full, "weight", Filled(Shape{normalized_size}, 1.0f)),
              Parameter(full, "bias", Filled(Shape{normalized_size}, 0.0f))},
             {{"axis", -1}, {"epsilon", eps}});
}

ValueId GraphBuilder::ReLU(const std::string& name, ValueId x) { return Op1(OpType(FloatOp::kRelu), name, {x}); }

ValueId GraphBuilder::ReLU6(const std::string& name, ValueId x) {
  if (!Usable({x})) return kNoValue;
  const std::string full = FullName(name);
  return Op1(OpType(FloatOp::kClip), name,
             {x, Parameter(full, "min", Filled(Shape{}, 0.0f)), Parameter(full, "max", Filled(Shape{}, 6.0f))});
}

ValueId GraphBuilder::LeakyReLU(const std::string& name, ValueId x, float negative_slope) {
  return Op1(OpType(FloatOp::kLeakyRelu), name, {x}, {{"alpha", negative_slope}});
}
ValueId GraphBuilder::Sigmoid(const std::string& name, ValueId x) { return Op1(OpType(FloatOp::kSigmoid), name, {x}); }
ValueId GraphBuilder::Tanh(const std::string& name, ValueId x) { return Op1(OpType(FloatOp::kTanh), name, {x}); }
ValueId GraphBuilder::GELU(const std::string& name, ValueId x, bool tanh_approximation) {
  return Op1(OpType(FloatOp::kGelu), name, {x}, {{"approximate", tanh_approximation ? "tanh" : "none"}});
}
ValueId GraphBuilder::Hardswish(const std::string& name, ValueId x) {
  return Op1(OpType(FloatOp::kHardSwish), name, {x});
}
ValueId GraphBuilder::Hardsigmoid(const std::string& name, ValueId x) {
  return Op1(OpType(FloatOp::kHardSigmoid), name, {x}, {{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}});
}
ValueId GraphBuilder::Softmax(const std::string& name, ValueId x, int64_t dim) {
  return Op1(OpType(FloatOp::kSoftmax), name, {x}, {{"axis", dim}});
}

namespace {

AttributeMap PoolAttributes(const Pool2dOptions& o) {
  const int64_t sh = o.stride[0] > 0 ? o.stride[0] : o.kernel_size[0];
  const int64_t sw = o.stride[1] > 0 ? o.stride[1] : o.kernel_size[1];
  return {{"kernel_shape", std::vector<int64_t>{o.kernel_size[0], o.kernel_size[1]}},
          {"strides", std::vector<int64_t>{sh, sw}},
          {"pads", std::vector<int64_t>{o.padding[0], o.padding[1], o.padding[0], o.padding[1]}},
          {"ceil_mode", o.ceil_mode ? 1 : 0}};
}

}  // namespace

ValueId GraphBuilder::MaxPool2d(const std::string& name, ValueId x, const Pool2dOptions& o) {
  return Op1(OpType(FloatOp::kMaxPool), name, {x}, PoolAttributes(o));
}
ValueId GraphBuilder::AvgPool2d(const std::string& name, ValueId x, const Pool2dOptions& o) {
  AttributeMap a = PoolAttributes(o);
  a.Set("count_include_pad", o.count_include_pad ? 1 : 0);
  return Op1(OpType(FloatOp::kAveragePool), name, {x}, std::move(a));
}
ValueId GraphBuilder::AdaptiveAvgPool2d1(const std::string& name, ValueId x) {
  return Op1(OpType(FloatOp::kGlobalAveragePool), name, {x});
}
ValueId GraphBuilder::Flatten(const std::string& name, ValueId x, int64_t start_dim) {
  return Op1(OpType(FloatOp::kFlatten), name, {x}, {{"axis", start_dim}});
}
ValueId GraphBuilder::Dropout(const std::string& name, ValueId x) { return Op1(OpType(FloatOp::kDropout), name, {x}); }

ValueId GraphBuilder::Embedding(const std::string& name, ValueId indices, int64_t num_embeddings,
                                int64_t embedding_dim) {
  if (!Usable({indices})) return kNoValue;
  Tensor w = Filled(Shape{num_embeddings, embedding_dim}, 0.0f);
  if (w.raw_data() != nullptr) {
    // N(0, 1) by Box-Muller on the builder's own uniforms.
    for (float& e : w.values<float>()) {
      const float u1 = std::max(Uniform01(), 1e-7f);
      const float u2 = Uniform01();
      e = std::sqrt(-2.0f * std::log(u1)) * std::cos(6.2831853f * u2);
    }
  }
  return Op1(OpType(FloatOp::kGather), name, {Parameter(FullName(name), "weight", w), indices}, {{"axis", 0}});
}

RnnOutputs GraphBuilder::LSTM(const std::string& name, ValueId x, const RnnOptions& o, ValueId h0, ValueId c0) {
  return Rnn(true, name, x, o, h0, c0);
}
RnnOutputs GraphBuilder::GRU(const std::string& name, ValueId x, const RnnOptions& o, ValueId h0) {
  return Rnn(false, name, x, o, h0, kNoValue);
}

RnnOutputs GraphBuilder::Rnn(bool lstm, const std::string& name, ValueId x, const RnnOptions& o, ValueId h0,
                             ValueId c0) {
  RnnOutputs result;
  if (!Usable({x})) return result;
  if (o.input_size <= 0 || o.hidden_size <= 0 || o.num_layers <= 0) {
    Fail(InvalidArgument("failed to build {} '{}': sizes must be positive",
                         FloatOpName(lstm ? FloatOp::kLSTM : FloatOp::kGRU), FullName(name)));
    return result;
  }
  const int64_t dirs = o.bidirectional ? 2 : 1;
  const int64_t gates = lstm ? 4 : 3;
  const int64_t h = o.hidden_size;
  const float bound = 1.0f / std::sqrt(static_cast<float>(h));
  auto scope = Scope(name);
  std::vector<ValueId> hs, cs;
  ValueId layer_input = x;
  int64_t in = o.input_size;
  for (int64_t l = 0; l < o.num_layers; ++l) {
    const std::string layer = fmt::format("l{}", l);
    const std::string node = FullName(layer);
    auto slice = [&](ValueId state, const std::string& what) {
      if (state == kNoValue || o.num_layers == 1) return state;
      return Op1(
          OpType(FloatOp::kSlice), layer + "." + what,
          {state, ConstInts(node + "." + what + ".starts", {l * dirs}),
           ConstInts(node + "." + what + ".ends", {(l + 1) * dirs}), ConstInts(node + "." + what + ".axes", {0})});
    };
    std::vector<ValueId> inputs = {layer_input, Parameter(node, "W", UniformTensor(Shape{dirs, gates * h, in}, bound)),
                                   Parameter(node, "R", UniformTensor(Shape{dirs, gates * h, h}, bound))};
    inputs.push_back(o.bias ? Parameter(node, "B", UniformTensor(Shape{dirs, 2 * gates * h}, bound)) : kNoValue);
    inputs.push_back(kNoValue);  // sequence_lens
    inputs.push_back(slice(h0, "initial_h"));
    if (lstm) inputs.push_back(slice(c0, "initial_c"));
    while (!inputs.empty() && inputs.back() == kNoValue) inputs.pop_back();
    AttributeMap attrs{{"hidden_size", h}, {"direction", o.bidirectional ? "bidirectional" : "forward"}};
    if (!lstm) attrs.Set("linear_before_reset", 1);
    std::vector<ValueId> outs =
        Op(OpType(lstm ? FloatOp::kLSTM : FloatOp::kGRU), layer, inputs, std::move(attrs), lstm ? 3 : 2);
    // Y [seq, dirs, batch, h] -> [seq, batch, dirs * h], torch's layout and the next layer's input.
    ValueId y = Transpose(layer + ".transpose", outs[0], {0, 2, 1, 3});
    layer_input = Reshape(layer + ".reshape", y, {0, 0, -1});
    hs.push_back(outs[1]);
    if (lstm) cs.push_back(outs[2]);
    in = dirs * h;
  }
  result.output = layer_input;
  result.h_n = hs.size() == 1 ? hs[0] : Concat("h_n", hs, 0);
  if (lstm) result.c_n = cs.size() == 1 ? cs[0] : Concat("c_n", cs, 0);
  return result;
}

ValueId GraphBuilder::Add(const std::string& name, ValueId a, ValueId b) {
  return Op1(OpType(FloatOp::kAdd), name, {a, b});
}
ValueId GraphBuilder::Sub(const std::string& name, ValueId a, ValueId b) {
  return Op1(OpType(FloatOp::kSub), name, {a, b});
}
ValueId GraphBuilder::Mul(const std::string& name, ValueId a, ValueId b) {
  return Op1(OpType(FloatOp::kMul), name, {a, b});
}
ValueId GraphBuilder::Div(const std::string& name, ValueId a, ValueId b) {
  return Op1(OpType(FloatOp::kDiv), name, {a, b});
}
ValueId GraphBuilder::MatMul(const std::string& name, ValueId a, ValueId b) {
  return Op1(OpType(FloatOp::kMatMul), name, {a, b});
}
ValueId GraphBuilder::Concat(const std::string& name, std::vector<ValueId> xs, int64_t axis) {
  return Op1(OpType(FloatOp::kConcat), name, std::move(xs), {{"axis", axis}});
}
ValueId GraphBuilder::Reshape(const std::string& name, ValueId x, std::vector<int64_t> shape) {
  if (!Usable({x})) return kNoValue;
  return Op1(OpType(FloatOp::kReshape), name, {x, ConstInts(FullName(name) + ".shape", std::move(shape))});
}
ValueId GraphBuilder::Transpose(const std::string& name, ValueId x, std::vector<int64_t> perm) {
  return Op1(OpType(FloatOp::kTranspose), name, {x}, {{"perm", std::move(perm)}});
}

Result<Graph> GraphBuilder::Build() && {
  OCTET_RETURN_IF_ERROR(status_);
  OCTET_RETURN_IF_ERROR(VerifyGraph(graph_));
  return std::move(graph_);
}

}  // namespace octet

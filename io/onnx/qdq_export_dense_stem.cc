// The QDQ export's dense-stem pass: one-input-channel int8 Conv groups as one Gemm (see qdq_export_dense_stem.h).
#include "io/onnx/qdq_export_dense_stem.h"

#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <exception>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/float_op_table.h"
#include "io/onnx/dense_stem.h"

namespace octet {
// A named namespace around the helpers: the unity build compiles this file together with the exporter's and the
// importer's, whose anonymous namespaces have helpers of the same names.
namespace dense_stem_export {
namespace {

using onnx::AttributeProto;
using onnx::NodeProto;
using onnx::TensorProto;

bool Is(const NodeProto& n, FloatOp op) { return n.domain().empty() && n.op_type() == FloatOpName(op); }

const AttributeProto* FindAttribute(const NodeProto& n, std::string_view name) {
  for (const AttributeProto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t IntAttribute(const NodeProto& n, std::string_view name, int64_t fallback) {
  const AttributeProto* a = FindAttribute(n, name);
  return a != nullptr && a->type() == AttributeProto::INT ? a->i() : fallback;
}

// An INTS attribute, `fallback` when absent; empty when it is there with another type.
std::vector<int64_t> IntsAttribute(const NodeProto& n, std::string_view name, std::vector<int64_t> fallback) {
  const AttributeProto* a = FindAttribute(n, name);
  if (a == nullptr) return fallback;
  if (a->type() != AttributeProto::INTS) return {};
  return {a->ints().begin(), a->ints().end()};
}

int64_t NumElements(const TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

size_t ElementSize(int32_t type) {
  switch (type) {
    case TensorProto::FLOAT:
    case TensorProto::INT32:
      return 4;
    case TensorProto::UINT8:
    case TensorProto::INT8:
      return 1;
    default:
      return 0;
  }
}

// Whether `t` holds its elements as raw data of a type octet writes (octet's export always does).
bool HasRawData(const TensorProto& t) {
  const size_t size = ElementSize(t.data_type());
  return size != 0 && t.has_raw_data() && t.raw_data().size() == static_cast<size_t>(NumElements(t)) * size;
}

bool AllZero(const TensorProto& t) {
  for (char c : t.raw_data()) {
    if (c != 0) return false;
  }
  return true;
}

// A 1-D tensor's raw elements repeated `times` times; a scalar stays as it is (one value for every row).
void Tile(TensorProto& t, int64_t times) {
  if (t.dims_size() != 1) return;
  const std::string one = t.raw_data();
  std::string all;
  all.reserve(one.size() * static_cast<size_t>(times));
  for (int64_t k = 0; k < times; ++k) all += one;
  t.set_dims(0, t.dims(0) * times);
  t.set_raw_data(std::move(all));
}

TensorProto Int64s(const std::string& name, const std::vector<int64_t>& values) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  std::string bytes(values.size() * 8, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  t.set_raw_data(std::move(bytes));
  return t;
}

NodeProto MakeNode(FloatOp op, const std::string& name, const std::vector<std::string>& inputs,
                   const std::string& output) {
  NodeProto n;
  n.set_op_type(std::string(FloatOpName(op)));
  n.set_name(name);
  for (const std::string& in : inputs) n.add_input(in);
  n.add_output(output);
  return n;
}

// The static dims of every value ONNX's shape inference can tell (-1 for an unknown dim); empty when it fails.
std::map<std::string, std::vector<int64_t>> InferredShapes(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  try {
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception&) {
    return {};
  }
  std::map<std::string, std::vector<int64_t>> shapes;
  auto add = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.type().tensor_type().has_shape()) return;
    std::vector<int64_t>& dims = shapes[vi.name()];
    for (const auto& d : vi.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  };
  for (const auto& vi : copy.graph().input()) add(vi);
  for (const auto& vi : copy.graph().value_info()) add(vi);
  return shapes;
}

class DenseStemWriter {
 public:
  explicit DenseStemWriter(onnx::ModelProto& model) : model_(model), g_(*model.mutable_graph()) {}

  int Run() {
    shapes_ = InferredShapes(model_);
    Index();
    int rewritten = 0;
    for (int i = 0; i < g_.node_size() && !shapes_.empty(); ++i) {
      if (Is(g_.node(i), FloatOp::kConv) && TryRewrite(i)) ++rewritten;
    }
    // The other groups' Clips on codes that only a MaxPool reads (the x86 / fbgemm presets' second Conv) likewise.
    int moved = 0;
    for (int k = 0; k < g_.node_size(); ++k) {
      const NodeProto& clip = g_.node(k);
      if (!Is(clip, FloatOp::kClip) || removed_.count(k) != 0 || clip.input_size() == 0) continue;
      auto q = producer_.find(clip.input(0));
      if (q == producer_.end() || !Is(g_.node(q->second), FloatOp::kQuantizeLinear) || SoleReader(clip.input(0)) != k) {
        continue;
      }
      if (MoveClipPastMaxPool(q->second, k, clip.output(0))) ++moved;
    }
    if (rewritten == 0 && moved == 0) return 0;
    // The new nodes in place (ONNX wants producers first); a DequantizeLinear nobody reads any more dropped.
    std::map<std::string, int> readers;
    for (int i = 0; i < g_.node_size(); ++i) {
      for (const std::string& in : g_.node(i).input()) ++readers[in];
    }
    for (const auto& [at, nodes] : after_) {
      for (const NodeProto& n : nodes) {
        for (const std::string& in : n.input()) ++readers[in];
      }
    }
    for (const auto& [at, nodes] : before_) {
      for (const NodeProto& n : nodes) {
        for (const std::string& in : n.input()) ++readers[in];
      }
    }
    std::set<std::string> graph_outputs;
    for (const auto& o : g_.output()) graph_outputs.insert(o.name());
    std::vector<NodeProto> nodes;
    for (int i = 0; i < g_.node_size(); ++i) {
      if (auto it = before_.find(i); it != before_.end())
        nodes.insert(nodes.end(), it->second.begin(), it->second.end());
      const NodeProto& n = g_.node(i);
      const bool unread =
          Is(n, FloatOp::kDequantizeLinear) && readers[n.output(0)] == 0 && graph_outputs.count(n.output(0)) == 0;
      if (!unread && removed_.count(i) == 0) nodes.push_back(n);
      if (auto it = after_.find(i); it != after_.end()) nodes.insert(nodes.end(), it->second.begin(), it->second.end());
    }
    g_.clear_node();
    for (NodeProto& n : nodes) *g_.add_node() = std::move(n);
    return rewritten;
  }

 private:
  void Index() {
    for (int i = 0; i < g_.initializer_size(); ++i) {
      inits_[g_.initializer(i).name()] = g_.mutable_initializer(i);
      names_.insert(g_.initializer(i).name());
    }
    for (const auto& vi : g_.input()) names_.insert(vi.name());
    for (const auto& vi : g_.output()) {
      names_.insert(vi.name());
      graph_outputs_.insert(vi.name());
    }
    for (int i = 0; i < g_.node_size(); ++i) {
      const NodeProto& n = g_.node(i);
      names_.insert(n.name());
      for (const std::string& o : n.output()) {
        producer_[o] = i;
        names_.insert(o);
      }
      for (const std::string& in : n.input()) readers_[in].push_back(i);
    }
  }

  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; names_.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  const NodeProto* Producer(const std::string& value, FloatOp op) const {
    auto it = producer_.find(value);
    if (it == producer_.end() || !Is(g_.node(it->second), op)) return nullptr;
    return &g_.node(it->second);
  }

  // The value's only reader, or -1 (none, several, or a graph output).
  int SoleReader(const std::string& value) const {
    auto it = readers_.find(value);
    if (it == readers_.end() || it->second.size() != 1 || graph_outputs_.count(value) != 0) return -1;
    return it->second[0];
  }

  // The initializer input `slot` of DequantizeLinear `dq` when only dq reads it, else nullptr.
  TensorProto* OwnInitializer(const NodeProto& dq, int slot) {
    if (dq.input_size() <= slot) return nullptr;
    auto it = inits_.find(dq.input(slot));
    if (it == inits_.end() || !HasRawData(*it->second) || readers_[dq.input(slot)].size() != 1) return nullptr;
    return it->second;
  }

  // Scales and zero points of a weight or bias with `channels` output channels: per tensor, or per axis 0.
  bool ChannelQParams(const NodeProto& dq, const TensorProto& scale, const TensorProto* zp, int64_t channels) const {
    const bool per_axis = scale.dims_size() == 1;
    if (scale.dims_size() > 1 || (per_axis && (scale.dims(0) != channels || IntAttribute(dq, "axis", 1) != 0))) {
      return false;
    }
    if (scale.data_type() != TensorProto::FLOAT) return false;
    return zp == nullptr || (zp->dims_size() == scale.dims_size() && AllZero(*zp));
  }

  bool TryRewrite(int ci) {
    NodeProto& conv = *g_.mutable_node(ci);
    if (conv.input_size() < 2 || conv.output_size() != 1) return false;
    if (IntAttribute(conv, "group", 1) != 1) return false;
    if (const AttributeProto* a = FindAttribute(conv, "auto_pad"); a != nullptr && a->s() != "NOTSET") return false;
    for (int64_t d : IntsAttribute(conv, "dilations", {1, 1})) {
      if (d != 1) return false;
    }
    // The input: per-tensor codes of a known [N, 1, H, W] shape.
    const NodeProto* dq_x = Producer(conv.input(0), FloatOp::kDequantizeLinear);
    if (dq_x == nullptr || dq_x->input_size() < 2 || inits_.count(dq_x->input(1)) == 0 ||
        NumElements(*inits_[dq_x->input(1)]) != 1) {
      return false;
    }
    auto shape = shapes_.find(dq_x->input(0));
    if (shape == shapes_.end() || shape->second.size() != 4 || shape->second[1] != 1 || shape->second[2] < 1 ||
        shape->second[3] < 1) {
      return false;
    }
    // The weight: INT8 [O, 1, KH, KW], zero points 0, read by this Conv only.
    const NodeProto* dq_w = Producer(conv.input(1), FloatOp::kDequantizeLinear);
    if (dq_w == nullptr || dq_w->input_size() < 3 || SoleReader(conv.input(1)) != ci) return false;
    TensorProto* w = OwnInitializer(*dq_w, 0);
    TensorProto* w_scale = OwnInitializer(*dq_w, 1);
    TensorProto* w_zp = OwnInitializer(*dq_w, 2);
    if (w == nullptr || w_scale == nullptr || w_zp == nullptr || w->data_type() != TensorProto::INT8 ||
        w->dims_size() != 4 || w->dims(1) != 1) {
      return false;
    }
    const int64_t channels = w->dims(0);
    if (!ChannelQParams(*dq_w, *w_scale, w_zp, channels)) return false;
    DenseStem s;
    s.height = shape->second[2], s.width = shape->second[3], s.kernel_h = w->dims(2), s.kernel_w = w->dims(3);
    const std::vector<int64_t> kernel = IntsAttribute(conv, "kernel_shape", {s.kernel_h, s.kernel_w});
    const std::vector<int64_t> strides = IntsAttribute(conv, "strides", {1, 1});
    const std::vector<int64_t> pads = IntsAttribute(conv, "pads", {0, 0, 0, 0});
    if (kernel != std::vector<int64_t>{s.kernel_h, s.kernel_w} || strides.size() != 2 || pads.size() != 4) return false;
    s.stride_h = strides[0], s.stride_w = strides[1];
    s.pad_top = pads[0], s.pad_left = pads[1], s.pad_bottom = pads[2], s.pad_right = pads[3];
    if (!s.Valid() || s.Pixels() * channels * s.Cols() > kDenseStemMaxBytes) return false;
    // The bias, when there is one: INT32 [O] with zero points 0, read by this Conv only.
    const bool has_bias = conv.input_size() > 2 && !conv.input(2).empty();
    TensorProto *b = nullptr, *b_scale = nullptr, *b_zp = nullptr;
    if (has_bias) {
      const NodeProto* dq_b = Producer(conv.input(2), FloatOp::kDequantizeLinear);
      if (dq_b == nullptr || SoleReader(conv.input(2)) != ci) return false;
      b = OwnInitializer(*dq_b, 0);
      b_scale = OwnInitializer(*dq_b, 1);
      b_zp = dq_b->input_size() > 2 ? OwnInitializer(*dq_b, 2) : nullptr;
      if (b == nullptr || b_scale == nullptr || (dq_b->input_size() > 2 && b_zp == nullptr) ||
          b->data_type() != TensorProto::INT32 || b->dims_size() != 1 || b->dims(0) != channels ||
          !ChannelQParams(*dq_b, *b_scale, b_zp, channels)) {
        return false;
      }
    }
    // The output: one QuantizeLinear (per tensor), then at most a Clip on its codes.
    const int qi = SoleReader(conv.output(0));
    if (qi < 0 || !Is(g_.node(qi), FloatOp::kQuantizeLinear) || g_.node(qi).input_size() < 2 ||
        inits_.count(g_.node(qi).input(1)) == 0 || NumElements(*inits_[g_.node(qi).input(1)]) != 1) {
      return false;
    }
    int last = qi;
    if (const int ki = SoleReader(g_.node(qi).output(0)); ki >= 0 && Is(g_.node(ki), FloatOp::kClip)) last = ki;

    // The dense weight, its scales and zero points per row, the bias per row.
    const int64_t rows = s.Pixels() * channels, cols = s.Cols();
    const std::string taps = w->raw_data();
    std::string dense(static_cast<size_t>(rows * cols), '\0');
    ForEachDenseStemTap(s, channels, [&](int64_t row, int64_t col, int64_t ky, int64_t kx) {
      for (int64_t o = 0; o < channels; ++o) {
        dense[static_cast<size_t>((row + o) * cols + col)] =
            taps[static_cast<size_t>((o * s.kernel_h + ky) * s.kernel_w + kx)];
      }
    });
    w->clear_dims();
    w->add_dims(rows);
    w->add_dims(cols);
    w->set_raw_data(std::move(dense));
    Tile(*w_scale, s.Pixels());
    Tile(*w_zp, s.Pixels());
    if (has_bias) {
      Tile(*b, s.Pixels());
      Tile(*b_scale, s.Pixels());
      if (b_zp != nullptr) Tile(*b_zp, s.Pixels());
    }

    // The image's rows, dequantized by a DequantizeLinear of their own (x's may have other readers).
    const std::string x = dq_x->input(0);
    const std::string rows_name = Fresh(x + ".rows");
    const std::string flat = Fresh(x + ".rows_shape");
    *g_.add_initializer() = Int64s(flat, {-1, cols});
    const std::string rows_dq = Fresh(rows_name + ".dequantized");
    std::vector<std::string> dq_inputs = {rows_name};
    for (int k = 1; k < dq_x->input_size(); ++k) dq_inputs.push_back(dq_x->input(k));
    before_[ci].push_back(MakeNode(FloatOp::kReshape, Fresh(rows_name + ".Reshape"), {x, flat}, rows_name));
    before_[ci].push_back(
        MakeNode(FloatOp::kDequantizeLinear, Fresh(rows_dq + ".DequantizeLinear"), dq_inputs, rows_dq));

    // The Conv becomes the Gemm, marked with its geometry for the import.
    conv.set_op_type(std::string(FloatOpName(FloatOp::kGemm)));
    conv.set_name(DenseStemName(conv.name(), s));
    names_.insert(conv.name());
    conv.clear_attribute();
    AttributeProto* trans_b = conv.add_attribute();
    trans_b->set_name("transB");
    trans_b->set_type(AttributeProto::INT);
    trans_b->set_i(1);
    conv.set_input(0, rows_dq);

    // The codes back in the Conv's NCHW layout under their name.
    NodeProto& tail = *g_.mutable_node(last);
    const std::string out = tail.output(0);
    const std::string gemm_rows = Fresh(out + ".gemm_rows");
    tail.set_output(0, gemm_rows);
    const std::string nhwc_shape = Fresh(out + ".nhwc_shape");
    *g_.add_initializer() = Int64s(nhwc_shape, {-1, s.OutH(), s.OutW(), channels});
    const std::string nhwc = Fresh(out + ".nhwc");
    after_[last].push_back(MakeNode(FloatOp::kReshape, Fresh(nhwc + ".Reshape"), {gemm_rows, nhwc_shape}, nhwc));
    NodeProto transpose = MakeNode(FloatOp::kTranspose, Fresh(out + ".Transpose"), {nhwc}, out);
    AttributeProto* perm = transpose.add_attribute();
    perm->set_name("perm");
    perm->set_type(AttributeProto::INTS);
    for (int64_t p : {0, 3, 1, 2}) perm->add_ints(p);
    after_[last].push_back(std::move(transpose));
    if (last != qi) MoveClipPastMaxPool(qi, last, out);
    return true;
  }

  // Whether QuantizeLinear / DequantizeLinear nodes a and b have scale and zero-point initializers of equal contents.
  bool SameQParams(const NodeProto& a, const NodeProto& b) const {
    if (a.input_size() != b.input_size() || a.input_size() < 3) return false;
    for (int slot : {1, 2}) {
      auto x = inits_.find(a.input(slot)), y = inits_.find(b.input(slot));
      if (x == inits_.end() || y == inits_.end() || x->second->data_type() != y->second->data_type() ||
          x->second->raw_data() != y->second->raw_data() || !HasRawData(*x->second)) {
        return false;
      }
    }
    return true;
  }

  // The Clip on a group's codes (the x86 / fbgemm presets' 7-bit range) moved after the MaxPool that alone reads
  // them (`out`: the codes' name, after the dense stem's Reshape and Transpose where there are): ONNX Runtime then
  // runs the int8 kernel, (Reshape, Transpose) and its NHWC MaxPool with no Clip between them. Exact:
  // an integer clamp and max commute (clamp is monotone; MaxPool's pads take no part in any max), and
  // DequantizeLinear -> MaxPool -> QuantizeLinear with equal qparams moves codes unchanged. The import moves the
  // range back (NarrowCodesBeforeMaxPools).
  bool MoveClipPastMaxPool(int qi, int ki, const std::string& out) {
    const int di = SoleReader(out);
    if (di < 0 || !Is(g_.node(di), FloatOp::kDequantizeLinear) || !SameQParams(g_.node(di), g_.node(qi))) {
      return false;
    }
    const int mi = SoleReader(g_.node(di).output(0));
    if (mi < 0 || !Is(g_.node(mi), FloatOp::kMaxPool) || g_.node(mi).output_size() != 1) return false;
    const int pi = SoleReader(g_.node(mi).output(0));
    if (pi < 0 || !Is(g_.node(pi), FloatOp::kQuantizeLinear) || !SameQParams(g_.node(pi), g_.node(qi))) return false;
    for (int r : readers_[g_.node(pi).output(0)]) {
      if (Is(g_.node(r), FloatOp::kClip)) return false;
    }
    NodeProto clip = g_.node(ki);
    g_.mutable_node(qi)->set_output(0, clip.output(0));  // the Gemm's codes, unclipped
    removed_.insert(ki);
    NodeProto& pool_q = *g_.mutable_node(pi);
    const std::string pooled = pool_q.output(0);
    const std::string unclipped = Fresh(pooled + ".unclipped");
    pool_q.set_output(0, unclipped);
    clip.set_name(Fresh(pooled + ".Clip"));
    clip.set_input(0, unclipped);
    clip.set_output(0, pooled);
    after_[pi].push_back(std::move(clip));
    return true;
  }

  onnx::ModelProto& model_;
  onnx::GraphProto& g_;
  std::map<std::string, std::vector<int64_t>> shapes_;
  std::map<std::string, TensorProto*> inits_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> readers_;
  std::set<std::string> names_, graph_outputs_;
  std::map<int, std::vector<NodeProto>> before_, after_;  // new nodes by the index of the node they go around
  std::set<int> removed_;                                 // Clips moved after a MaxPool
};

}  // namespace
}  // namespace dense_stem_export

int WriteDenseStems(onnx::ModelProto& model) { return dense_stem_export::DenseStemWriter(model).Run(); }

}  // namespace octet

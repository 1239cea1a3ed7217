// The dense-stem import rule: octet's one-Gemm form of a one-input-channel Conv back into a QConv (see
// qdq_import_dense_stem.h).
#include "io/onnx/qdq_import_dense_stem.h"

#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/float_op_table.h"
#include "core/op_table.h"
#include "core/verifier.h"
#include "io/onnx/dense_stem.h"

namespace octet {
namespace {

class DenseStemFolder {
 public:
  explicit DenseStemFolder(Graph& g) : g_(g) {}

  Result<int> Run() {
    producer_ = g_.Producers();
    readers_.assign(static_cast<size_t>(g_.num_values()), 0);
    for (const Node& n : g_.nodes()) {
      for (ValueId v : n.inputs) {
        if (v != kNoValue) ++readers_[static_cast<size_t>(v)];
      }
    }
    for (ValueId v : g_.outputs()) ++readers_[static_cast<size_t>(v)];  // a graph output is never folded away
    dead_.assign(static_cast<size_t>(g_.num_nodes()), false);
    int folded = 0;
    for (int i = 0; i < g_.num_nodes(); ++i) {
      if (IsInt8Op(g_.node(i), Int8Op::kQGemm) && TryFold(i)) ++folded;
    }
    if (folded == 0) return 0;
    std::vector<Node> kept;
    for (int i = 0; i < g_.num_nodes(); ++i) {
      if (!dead_[static_cast<size_t>(i)]) kept.push_back(std::move(g_.mutable_node(i)));
    }
    g_.mutable_nodes() = std::move(kept);
    g_ = g_.WithoutUnusedConstants();
    OCTET_RETURN_IF_ERROR(g_.SortTopologically());
    OCTET_RETURN_IF_ERROR(VerifyGraph(g_));
    return folded;
  }

 private:
  // The node producing `v` if it is ONNX operator `op`, read by nothing but its next node, else -1.
  int SoleProducer(ValueId v, FloatOp op) const {
    if (v == kNoValue || readers_[static_cast<size_t>(v)] != 1) return -1;
    const int p = producer_[static_cast<size_t>(v)];
    return p >= 0 && !dead_[static_cast<size_t>(p)] && IsFloatOp(g_.node(p), op) ? p : -1;
  }

  // The node reading `v` if it is its only reader and ONNX operator `op`, else -1.
  int SoleReader(ValueId v, FloatOp op) const {
    if (v == kNoValue || readers_[static_cast<size_t>(v)] != 1) return -1;
    for (int i = 0; i < g_.num_nodes(); ++i) {
      const Node& n = g_.node(i);
      if (dead_[static_cast<size_t>(i)] || n.inputs.empty() || n.inputs[0] != v) continue;
      return IsFloatOp(n, op) ? i : -1;
    }
    return -1;
  }

  // Whether `v` is a constant whose values are `want` (ONNX's INT64 shapes are held as s32).
  bool ConstantInts(ValueId v, const std::vector<int64_t>& want) const {
    if (v == kNoValue) return false;
    const Value& c = g_.value(v);
    if (c.kind != ValueKind::kConstant || c.data.dtype() != DType::kS32 ||
        c.data.NumElements() != static_cast<int64_t>(want.size())) {
      return false;
    }
    for (size_t k = 0; k < want.size(); ++k) {
      if (c.data.data<int32_t>()[k] != want[k]) return false;
    }
    return true;
  }

  bool OwnConstant(ValueId v) const {
    return v != kNoValue && g_.value(v).kind == ValueKind::kConstant && readers_[static_cast<size_t>(v)] == 1;
  }

  // The first `channels` of per-row qparams that repeat them for every pixel; per-tensor ones as they are.
  static std::optional<QParams> Untiled(const QParams& q, int64_t channels, int64_t pixels) {
    if (!q.per_channel()) return q;
    if (q.axis() != 0 || q.num_channels() != channels * pixels) return std::nullopt;
    for (int64_t k = 0; k < q.num_channels(); ++k) {
      const size_t at = static_cast<size_t>(k), base = static_cast<size_t>(k % channels);
      if (q.scales()[at] != q.scales()[base] || q.zero_points()[at] != q.zero_points()[base]) return std::nullopt;
    }
    const size_t n = static_cast<size_t>(channels);
    Result<QParams> out =
        QParams::Create(q.scheme(), q.dtype(), q.quant_min(), q.quant_max(),
                        std::vector<float>(q.scales().begin(), q.scales().begin() + n),
                        std::vector<int32_t>(q.zero_points().begin(), q.zero_points().begin() + n), 0);
    if (!out.ok()) return std::nullopt;
    return *std::move(out);
  }

  // The Conv weight [O, 1, KH, KW] whose dense form is `dense`, or nullopt when `dense` is not one.
  static std::optional<Tensor> Kernel(const DenseStem& s, int64_t channels, const Tensor& dense) {
    const int64_t cols = s.Cols();
    const int8_t* t = dense.data<int8_t>();
    Tensor kernel = Tensor::Create(DType::kS8, Shape{channels, 1, s.kernel_h, s.kernel_w}).value();
    int8_t* k = kernel.data<int8_t>();
    std::memset(k, 0, static_cast<size_t>(kernel.NumElements()));
    std::vector<char> seen(static_cast<size_t>(s.kernel_h * s.kernel_w), 0);
    ForEachDenseStemTap(s, channels, [&](int64_t row, int64_t col, int64_t ky, int64_t kx) {
      const size_t tap = static_cast<size_t>(ky * s.kernel_w + kx);
      if (seen[tap] != 0) return;
      seen[tap] = 1;
      for (int64_t o = 0; o < channels; ++o) k[o * s.kernel_h * s.kernel_w + tap] = t[(row + o) * cols + col];
    });
    // The dense form of that kernel must be `dense` itself, zeros included.
    std::vector<int8_t> again(static_cast<size_t>(dense.NumElements()), 0);
    ForEachDenseStemTap(s, channels, [&](int64_t row, int64_t col, int64_t ky, int64_t kx) {
      for (int64_t o = 0; o < channels; ++o) {
        again[static_cast<size_t>((row + o) * cols + col)] = k[(o * s.kernel_h + ky) * s.kernel_w + kx];
      }
    });
    if (std::memcmp(again.data(), t, again.size()) != 0) return std::nullopt;
    return kernel;
  }

  // The bias [O] that `bias` [OH*OW*O] repeats per pixel, or nullopt.
  static std::optional<Tensor> UntiledBias(const Tensor& bias, int64_t channels, int64_t pixels) {
    if (bias.shape().rank() != 1 || bias.NumElements() != channels * pixels) return std::nullopt;
    const size_t size = DTypeSize(bias.dtype());
    const auto* bytes = static_cast<const char*>(bias.raw_data());
    const size_t block = size * static_cast<size_t>(channels);
    for (int64_t p = 1; p < pixels; ++p) {
      if (std::memcmp(bytes, bytes + static_cast<size_t>(p) * block, block) != 0) return std::nullopt;
    }
    Tensor out = Tensor::Create(bias.dtype(), Shape{channels}).value();
    std::memcpy(out.raw_data(), bytes, block);
    return out;
  }

  bool TryFold(int gi) {
    const Node& gemm = g_.node(gi);
    std::string conv_name;
    const std::optional<DenseStem> s = ParseDenseStemName(gemm.name, &conv_name);
    if (!s || gemm.inputs.size() < 2 || gemm.outputs.size() != 1) return false;
    const Result<int64_t> trans_b = gemm.attributes.GetInt("transB", 0);
    if (!trans_b.ok() || *trans_b != 1) return false;
    // x -> Reshape [-1, H*W] -> the Gemm.
    const int rx = SoleProducer(gemm.inputs[0], FloatOp::kReshape);
    if (rx < 0 || g_.node(rx).inputs.size() != 2 || !ConstantInts(g_.node(rx).inputs[1], {-1, s->Cols()})) {
      return false;
    }
    // The Gemm -> Reshape [-1, OH, OW, O] -> Transpose (0, 3, 1, 2) -> y.
    const ValueId w = gemm.inputs[1];
    if (!OwnConstant(w) || g_.value(w).data.dtype() != DType::kS8 || !g_.value(w).qparams) return false;
    const Tensor& dense = g_.value(w).data;
    if (dense.shape().rank() != 2 || dense.shape().dim(1) != s->Cols() || dense.shape().dim(0) % s->Pixels() != 0) {
      return false;
    }
    const int64_t channels = dense.shape().dim(0) / s->Pixels();
    const int ry = SoleReader(gemm.outputs[0], FloatOp::kReshape);
    if (ry < 0 || g_.node(ry).inputs.size() != 2 ||
        !ConstantInts(g_.node(ry).inputs[1], {-1, s->OutH(), s->OutW(), channels})) {
      return false;
    }
    const int tr = SoleReader(g_.node(ry).outputs[0], FloatOp::kTranspose);
    if (tr < 0) return false;
    const Result<std::vector<int64_t>> perm = g_.node(tr).attributes.GetInts("perm");
    if (!perm.ok() || *perm != std::vector<int64_t>{0, 3, 1, 2}) return false;
    // The weight and its qparams: a Conv's, tiled per pixel, zero points 0 (so that the dense zeros are zeros).
    const std::optional<QParams> wq = Untiled(*g_.value(w).qparams, channels, s->Pixels());
    if (!wq) return false;
    for (int32_t zp : wq->zero_points()) {
      if (zp != 0) return false;
    }
    std::optional<Tensor> kernel = Kernel(*s, channels, dense);
    if (!kernel) return false;
    // The bias: tiled per pixel too, with its qparams.
    const ValueId b = gemm.inputs.size() > 2 ? gemm.inputs[2] : kNoValue;
    std::optional<Tensor> bias;
    std::optional<QParams> bq;
    if (b != kNoValue) {
      if (!OwnConstant(b)) return false;
      bias = UntiledBias(g_.value(b).data, channels, s->Pixels());
      if (!bias) return false;
      if (g_.value(b).qparams) {
        bq = Untiled(*g_.value(b).qparams, channels, s->Pixels());
        if (!bq) return false;
      }
    }
    const ValueId x = g_.node(rx).inputs[0], y = g_.node(tr).outputs[0];
    if (!g_.value(gemm.outputs[0]).qparams) return false;

    // The fold: the constants keep their names, the QGemm becomes the QConv.
    Value& wv = g_.mutable_value(w);
    wv.shape = kernel->shape();
    wv.data = *std::move(kernel);
    wv.qparams = *wq;
    if (b != kNoValue) {
      Value& bv = g_.mutable_value(b);
      bv.shape = bias->shape();
      bv.data = *std::move(bias);
      if (bq) bv.qparams = *bq;
    }
    g_.mutable_value(y).qparams = g_.value(gemm.outputs[0]).qparams;
    Node& conv = g_.mutable_node(gi);
    conv.name = conv_name;
    conv.op_type = std::string(Int8OpName(Int8Op::kQConv));
    conv.inputs[0] = x;
    conv.outputs = {y};
    for (const char* gemm_only : {"transA", "transB", "alpha", "beta"}) conv.attributes.Erase(gemm_only);
    conv.attributes.Set("kernel_shape", std::vector<int64_t>{s->kernel_h, s->kernel_w});
    conv.attributes.Set("strides", std::vector<int64_t>{s->stride_h, s->stride_w});
    conv.attributes.Set("pads", std::vector<int64_t>{s->pad_top, s->pad_left, s->pad_bottom, s->pad_right});
    conv.attributes.Set("dilations", std::vector<int64_t>{1, 1});
    conv.attributes.Set("group", int64_t{1});
    for (int k : {rx, ry, tr}) dead_[static_cast<size_t>(k)] = true;
    return true;
  }

  Graph& g_;
  std::vector<int> producer_;
  std::vector<int> readers_;  // per value: its reading nodes, +1 for a graph output
  std::vector<bool> dead_;
};

}  // namespace

Result<int> FoldDenseStems(Graph& graph) { return DenseStemFolder(graph).Run(); }

void NarrowCodesBeforeMaxPools(Graph& g) {
  const std::vector<int> producer = g.Producers();
  std::vector<int> readers(static_cast<size_t>(g.num_values()), 0);
  for (const Node& n : g.nodes()) {
    for (ValueId v : n.inputs) {
      if (v != kNoValue) ++readers[static_cast<size_t>(v)];
    }
  }
  for (ValueId v : g.outputs()) ++readers[static_cast<size_t>(v)];
  // The node producing `v` when `v` has one reader, else -1.
  auto sole_producer = [&](ValueId v) {
    if (v == kNoValue || readers[static_cast<size_t>(v)] != 1) return -1;
    const int p = producer[static_cast<size_t>(v)];
    return p >= 0 && !g.node(p).inputs.empty() ? p : -1;
  };
  auto shape_only = [](const Node& n) {
    return IsFloatOp(n, FloatOp::kReshape) || IsFloatOp(n, FloatOp::kTranspose) || IsFloatOp(n, FloatOp::kFlatten);
  };
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& pool = g.node(i);
    if (!IsFloatOp(pool, FloatOp::kMaxPool) || pool.inputs.size() != 1 || pool.outputs.size() != 1) continue;
    // Quantize [-> shape-only ops] -> Dequantize -> MaxPool -> Quantize (the pooled codes, range narrowed).
    const ValueId pooled_float = pool.outputs[0];
    if (readers[static_cast<size_t>(pooled_float)] != 1) continue;
    const Node* pool_q = nullptr;
    for (const Node& n : g.nodes()) {
      if (IsInt8Op(n, Int8Op::kQuantize) && !n.inputs.empty() && n.inputs[0] == pooled_float) pool_q = &n;
    }
    const int dq = sole_producer(pool.inputs[0]);
    if (pool_q == nullptr || dq < 0 || !IsInt8Op(g.node(dq), Int8Op::kDequantize)) continue;
    std::vector<ValueId> codes = {g.node(dq).inputs[0]};
    int p = sole_producer(codes.back());
    for (int step = 0; step < 4 && p >= 0 && shape_only(g.node(p)); ++step) {
      codes.push_back(g.node(p).inputs[0]);
      p = sole_producer(codes.back());
    }
    if (p < 0 || !IsInt8Op(g.node(p), Int8Op::kQuantize)) continue;
    const std::optional<QParams>& narrow = g.value(pool_q->outputs[0]).qparams;
    bool wider = narrow.has_value() && !narrow->per_channel();
    for (ValueId v : codes) {
      const std::optional<QParams>& c = g.value(v).qparams;
      wider = wider && c && !c->per_channel() && c->dtype() == narrow->dtype() && c->scale() == narrow->scale() &&
              c->zero_point() == narrow->zero_point() && c->quant_min() <= narrow->quant_min() &&
              narrow->quant_max() <= c->quant_max();
    }
    if (!wider) continue;
    for (ValueId v : codes) g.mutable_value(v).qparams = narrow;
  }
}

}  // namespace octet

// DynamicQLSTM and DynamicQGRU: the float recurrence with dynamic int8 projections (DynamicGemm per direction and
// weight block, prepacked at Prepare).
#include "ops/int8/dynamic_rnn_op.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "ops/float/op_util.h"
#include "ops/float/rnn_recurrence.h"
#include "ops/int8/dynamic_gemm_op.h"
#include "ops/int8/int8_ops.h"

namespace octet {
namespace {

using float_ops::RnnParams;

// The row blocks the recurrence asks for (rnn_recurrence.h), prepacked: per direction, W whole and R whole, or
// for GRU without linear_before_reset R's rows [0, 2H) and [2H, 3H).
struct DynamicRnnWeights {
  RnnParams p;
  std::vector<DynamicGemm> w;         // per direction
  std::vector<DynamicGemm> r;         // per direction: R whole, or rows [0, 2H)
  std::vector<DynamicGemm> r_hidden;  // GRU without linear_before_reset: rows [2H, 3H)
  size_t float_scratch_bytes = 0;     // RunRnn's floats, rounded up to 64 bytes
};

class DynamicProjections final : public float_ops::RnnProjections {
 public:
  DynamicProjections(const DynamicRnnWeights& weights, const Context& context, std::byte* scratch)
      : weights_(weights), context_(context), scratch_(scratch) {}

  Status Project(int64_t d, bool recurrent, int64_t row0, [[maybe_unused]] int64_t n, const float* a, int64_t m,
                 float* c, int64_t ldc) const override {
    const auto dd = static_cast<size_t>(d);
    const DynamicGemm* g = &weights_.w[dd];
    const char* what = "X";
    if (recurrent) {
      g = row0 == 0 ? &weights_.r[dd] : &weights_.r_hidden[dd];
      what = row0 == 0 ? "the hidden state" : "r . h";
    }
    OCTET_DCHECK(g->n() == n);
    return g->Run(context_, a, m, scratch_, c, static_cast<size_t>(ldc), what).status();
  }

 private:
  const DynamicRnnWeights& weights_;
  const Context& context_;
  std::byte* scratch_;
};

// Rows [row0, row0 + n) of direction d of a [dirs, G*H, k] s8 constant as a [n, k] QTensor, with its scales.
Result<QTensor> WeightBlock(const ValueInfo& info, int64_t d, int64_t row0, int64_t n) {
  const Shape& s = info.shape;
  const int64_t rows = s.dim(1), k = s.dim(2);
  OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(DType::kS8, Shape{n, k}));
  const int8_t* src = info.constant->data<int8_t>() + (d * rows + row0) * k;
  std::copy(src, src + n * k, t.data<int8_t>());
  const QParams& q = *info.qparams;
  if (!q.per_channel()) return QTensor::Create(std::move(t), q);
  std::vector<float> scales(q.scales().begin() + row0, q.scales().begin() + row0 + n);
  std::vector<int32_t> zps(static_cast<size_t>(n), 0);
  OCTET_ASSIGN_OR_RETURN(QParams qn, QParams::Create(q.scheme(), q.dtype(), q.quant_min(), q.quant_max(),
                                                     std::move(scales), std::move(zps), 0));
  return QTensor::Create(std::move(t), std::move(qn));
}

Result<PreparedOp> PrepareDynamicRnn(const OpPrepareArgs& args, bool lstm) {
  std::vector<OutputInfo> outs;
  OCTET_ASSIGN_OR_RETURN(RnnParams p, float_ops::PrepareRnnParams(args, lstm, DType::kS8, &outs));
  // W and R are [dirs, G * hidden, K]: their output channels (gate rows) run along axis 1.
  OCTET_RETURN_IF_ERROR(CheckDynamicWeight(args.inputs[1], 1, "W (input 1)"));
  OCTET_RETURN_IF_ERROR(CheckDynamicWeight(args.inputs[2], 1, "R (input 2)"));
  OCTET_ASSIGN_OR_RETURN(int64_t rr, args.node.attributes.GetInt("reduce_range", 0));
  if (rr != 0 && rr != 1) return InvalidArgument("reduce_range must be 0 or 1, got {}", rr);
  const bool reduce_range = rr != 0;
  auto weights = std::make_shared<DynamicRnnWeights>();
  weights->p = p;
  const int64_t H = p.hidden, GH = p.gates * H;
  const bool split_r = !lstm && !p.linear_before_reset;
  std::string quantize_name;
  for (int64_t d = 0; d < p.dirs; ++d) {
    OCTET_ASSIGN_OR_RETURN(QTensor w, WeightBlock(args.inputs[1], d, 0, GH));
    OCTET_ASSIGN_OR_RETURN(DynamicGemm gw, DynamicGemm::Create(args.context, w, {}, reduce_range, "W (input 1)"));
    OCTET_ASSIGN_OR_RETURN(QTensor r, WeightBlock(args.inputs[2], d, 0, split_r ? 2 * H : GH));
    OCTET_ASSIGN_OR_RETURN(DynamicGemm gr, DynamicGemm::Create(args.context, r, {}, reduce_range, "R (input 2)"));
    quantize_name = gw.kernel_name();
    weights->w.push_back(std::move(gw));
    weights->r.push_back(std::move(gr));
    if (split_r) {
      OCTET_ASSIGN_OR_RETURN(QTensor rh, WeightBlock(args.inputs[2], d, 2 * H, H));
      OCTET_ASSIGN_OR_RETURN(DynamicGemm grh,
                             DynamicGemm::Create(args.context, rh, {}, reduce_range, "R (input 2)"));
      weights->r_hidden.push_back(std::move(grh));
    }
  }
  // Scratch: RunRnn's floats, then the quantized rows of the largest projection input.
  weights->float_scratch_bytes = (float_ops::RnnScratchFloats(p) * sizeof(float) + 63) / 64 * 64;
  OCTET_ASSIGN_OR_RETURN(int64_t x_rows, float_ops::CheckedProduct(std::vector<int64_t>{p.seq, p.batch, p.input}));
  const auto quant_bytes = static_cast<size_t>(std::max(x_rows, p.batch * H));
  auto kernel = MakeKernel([weights](const OpRunArgs& r) -> Status {
    std::byte* quant_scratch = r.scratch.data() + weights->float_scratch_bytes;
    return float_ops::RunRnn(weights->p, r, reinterpret_cast<float*>(r.scratch.data()),
                             DynamicProjections(*weights, r.context, quant_scratch));
  });
  return float_ops::MakePrepared(std::move(outs), std::move(kernel),
                                 fmt::format("dynamic_{}+{}", lstm ? "lstm" : "gru", quantize_name),
                                 weights->float_scratch_bytes + quant_bytes);
}

}  // namespace

Status RegisterDynamicRnnOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kDynamicQLSTM,
                                       [](const OpPrepareArgs& a) { return PrepareDynamicRnn(a, true); }));
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kDynamicQGRU,
                                       [](const OpPrepareArgs& a) { return PrepareDynamicRnn(a, false); }));
  return OkStatus();
}

}  // namespace octet

// LSTM and GRU on f32: the shared recurrence (rnn_recurrence.h) with Sgemm projections.
#include "ops/float/rnn.h"

#include <memory>
#include <vector>

#include "ops/float/op_util.h"
#include "ops/float/registry.h"
#include "ops/float/rnn_recurrence.h"
#include "ops/float/sgemm.h"

namespace octet::float_ops {
namespace {

// W and R of every direction in the sgemm kernel's packed-B layout (PackSgemmB of W_d' and R_d'), made once at
// Prepare when they are constant: the recurrent product runs once per step on a batch of a few rows, where packing
// R on every step cost more than the product (the LSTM LM was 7x behind ONNX Runtime).
struct PackedRnnWeights {
  std::vector<std::vector<float>> w, r;  // [direction]
};

// Projections read W and R from the packed copies where there are some, else straight from the node's inputs 1
// and 2.
class SgemmProjections final : public RnnProjections {
 public:
  SgemmProjections(const RnnParams& p, const OpRunArgs& r, SgemmBlockFn sgemm, const PackedRnnWeights* packed)
      : p_(p), r_(r), sgemm_(sgemm), packed_(packed) {}

  Status Project(int64_t d, bool recurrent, int64_t row0, int64_t n, const float* a, int64_t m, float* c,
                 int64_t ldc) const override {
    const int64_t k = recurrent ? p_.hidden : p_.input;
    const float* matrix = r_.inputs[recurrent ? 2 : 1].data<float>() + d * p_.gates * p_.hidden * k;
    SgemmArgs g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.trans_b = true;
    g.a = a;
    g.lda = k;
    g.b = matrix + row0 * k;
    g.ldb = k;
    g.c = c;
    g.ldc = ldc;
    const int64_t nr = SgemmPanelCols(sgemm_);
    // Packed panels start at multiples of NR columns (GRU's rows [2H, 3H) may not).
    if (packed_ != nullptr && nr > 0 && row0 % nr == 0) {
      const std::vector<float>& w = (recurrent ? packed_->r : packed_->w)[static_cast<size_t>(d)];
      g.packed_b = w.data() + row0 / nr * k * nr;
    }
    Sgemm(r_.context, sgemm_, g);
    return OkStatus();
  }

 private:
  const RnnParams& p_;
  const OpRunArgs& r_;
  SgemmBlockFn sgemm_;
  const PackedRnnWeights* packed_;
};

Result<PreparedOp> PrepareRnn(const OpPrepareArgs& args, bool lstm) {
  std::vector<OutputInfo> outs;
  OCTET_ASSIGN_OR_RETURN(RnnParams p, PrepareRnnParams(args, lstm, DType::kF32, &outs));
  // The LSTM cell with vector exp and tanh (the scalar gates were about a tenth of the LM's LSTM time at batch 1).
  const auto& gates = SelectUkernel(args.context, LstmGatesUkernels());
  if (lstm) p.lstm_gates = gates.fn;
  const auto& sgemm = SelectSgemm(args.context);
  const SgemmBlockFn fn = sgemm.fn;
  std::shared_ptr<PackedRnnWeights> packed;
  if (SgemmPanelCols(fn) > 0 && args.inputs[1].constant != nullptr && args.inputs[2].constant != nullptr) {
    packed = std::make_shared<PackedRnnWeights>();
    const int64_t gh = p.gates * p.hidden;
    const float* w = args.inputs[1].constant->data<float>();
    const float* rw = args.inputs[2].constant->data<float>();
    for (int64_t d = 0; d < p.dirs; ++d) {
      packed->w.push_back(PackSgemmB(fn, p.input, gh, true, w + d * gh * p.input, p.input));
      packed->r.push_back(PackSgemmB(fn, p.hidden, gh, true, rw + d * gh * p.hidden, p.hidden));
    }
  }
  auto kernel = MakeKernel([p, fn, packed](const OpRunArgs& r) {
    return RunRnn(p, r, reinterpret_cast<float*>(r.scratch.data()), SgemmProjections(p, r, fn, packed.get()));
  });
  return MakePrepared(
      std::move(outs), std::move(kernel),
      lstm ? fmt::format("lstm_f32+{}+{}", sgemm.name, gates.name) : fmt::format("gru_f32+{}", sgemm.name),
      RnnScratchFloats(p) * sizeof(float));
}

}  // namespace

Status RegisterRnnOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(
      RegisterFloatOp(registry, FloatOp::kLSTM, [](const OpPrepareArgs& a) { return PrepareRnn(a, true); }));
  OCTET_RETURN_IF_ERROR(
      RegisterFloatOp(registry, FloatOp::kGRU, [](const OpPrepareArgs& a) { return PrepareRnn(a, false); }));
  return OkStatus();
}

}  // namespace octet::float_ops

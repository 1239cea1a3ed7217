// LSTM and GRU on f32: the shared recurrence (rnn_recurrence.h) with Sgemm projections.
#include "ops/float/rnn.h"

#include "ops/float/op_util.h"
#include "ops/float/rnn_recurrence.h"
#include "ops/float/sgemm.h"

namespace octet::float_ops {
namespace {

// Projections read W and R straight from the node's inputs 1 and 2.
class SgemmProjections final : public RnnProjections {
 public:
  SgemmProjections(const RnnParams& p, const OpRunArgs& r, SgemmBlockFn sgemm) : p_(p), r_(r), sgemm_(sgemm) {}

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
    Sgemm(r_.context, sgemm_, g);
    return OkStatus();
  }

 private:
  const RnnParams& p_;
  const OpRunArgs& r_;
  SgemmBlockFn sgemm_;
};

Result<PreparedOp> PrepareRnn(const OpPrepareArgs& args, bool lstm) {
  std::vector<OutputInfo> outs;
  OCTET_ASSIGN_OR_RETURN(RnnParams p, PrepareRnnParams(args, lstm, DType::kF32, &outs));
  const auto& sgemm = SelectSgemm(args.context);
  const SgemmBlockFn fn = sgemm.fn;
  auto kernel = MakeKernel([p, fn](const OpRunArgs& r) {
    return RunRnn(p, r, reinterpret_cast<float*>(r.scratch.data()), SgemmProjections(p, r, fn));
  });
  return MakePrepared(std::move(outs), std::move(kernel), fmt::format("{}_f32+{}", lstm ? "lstm" : "gru", sgemm.name),
                      RnnScratchFloats(p) * sizeof(float));
}

}  // namespace

Status RegisterRnnOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(registry.Register("", "LSTM", [](const OpPrepareArgs& a) { return PrepareRnn(a, true); }));
  OCTET_RETURN_IF_ERROR(registry.Register("", "GRU", [](const OpPrepareArgs& a) { return PrepareRnn(a, false); }));
  return OkStatus();
}

}  // namespace octet::float_ops

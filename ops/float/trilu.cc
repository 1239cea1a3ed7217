// Trilu over the bytes of each element, so one loop serves every dtype.
#include "ops/float/trilu.h"

#include <cstring>
#include <vector>

#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

Result<PreparedOp> PrepareTrilu(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 2));
  OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, 0));
  const Shape& x = args.inputs[0].shape;
  if (x.rank() < 2) return InvalidArgument("input 0 must have rank 2 or more, got {}", x);
  OCTET_ASSIGN_OR_RETURN(int64_t upper, args.node.attributes.GetInt("upper", 1));
  int64_t k = 0;
  if (Present(args, 1)) {
    OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> ks, ConstantInts(args, 1, "k"));
    if (ks.size() != 1) return InvalidArgument("input 1 (k) must be one value, got {}", ks.size());
    k = ks[0];
  }
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  const size_t item = DTypeSize(args.inputs[0].dtype);
  auto kernel = MakeKernel([rows, cols, item, k, upper](const OpRunArgs& r) -> Status {
    const auto* src = static_cast<const std::byte*>(r.inputs[0].raw_data());
    auto* dst = static_cast<std::byte*>(r.outputs[0].raw_data());
    const int64_t total = r.outputs[0].NumElements();
    for (int64_t e = 0; e < total; ++e) {
      const int64_t i = (e / cols) % rows, j = e % cols;
      const bool keep = upper != 0 ? j - i >= k : j - i <= k;
      if (keep) {
        std::memcpy(dst + static_cast<size_t>(e) * item, src + static_cast<size_t>(e) * item, item);
      } else {
        std::memset(dst + static_cast<size_t>(e) * item, 0, item);
      }
    }
    return OkStatus();
  });
  return MakePrepared({{args.inputs[0].dtype, x}}, std::move(kernel),
                      fmt::format("trilu_{}", DTypeName(args.inputs[0].dtype)));
}

}  // namespace

Status RegisterTriluOps(OpRegistry& registry) { return RegisterFloatOp(registry, FloatOp::kTrilu, PrepareTrilu); }

}  // namespace octet::float_ops

// The QBatchMatMul packing family's candidate list, built from qbmm_pack.inc, and its selection by layout.
#include <vector>

#include "ops/ukernels/qbmm_pack.h"

namespace octet {

std::span<const QBmmPackUkernelEntry> QBmmPackUkernels() {
  static const std::vector<QBmmPackUkernelEntry> list = [] {
    std::vector<QBmmPackUkernelEntry> v;
#define OCTET_QBMM_PACK_UKERNEL(isa, layout, fn) v.push_back({Isa::isa, #fn, &fn, layout});
#include "ops/ukernels/qbmm_pack.inc"
#undef OCTET_QBMM_PACK_UKERNEL
    return v;
  }();
  return list;
}

const QBmmPackUkernelEntry& SelectQBmmPackUkernel(const Context& context, const QGemmLayout& layout) {
  for (const auto& e : QBmmPackUkernels()) {
    if (context.IsEnabled(e.isa) && (e.layout == kQGemmLayoutAny || e.layout == layout)) return e;
  }
  OCTET_CHECK(!"the qbmm_pack list must end with a scalar kernel");
  return QBmmPackUkernels().back();
}

}  // namespace octet

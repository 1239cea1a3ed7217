// The qigemm candidate list, built from qigemm.inc.
#include <vector>

#include "ops/ukernels/qigemm.h"

namespace octet {

std::span<const QIgemmUkernelEntry> QIgemmUkernels() {
  static const std::vector<QIgemmUkernelEntry> list = {
#define OCTET_QIGEMM_UKERNEL(isa, a_dtype, stage, mr, nr, layout, requirement, c_multiple, fn) \
  QIgemmUkernelEntry{Isa::isa,                                                                 \
                     #fn,                                                                      \
                     &fn,                                                                      \
                     DType::a_dtype,                                                           \
                     QGemmStage::stage,                                                        \
                     mr,                                                                       \
                     nr,                                                                       \
                     layout,                                                                   \
                     QGemmRequirement::requirement,                                            \
                     c_multiple},
#include "ops/ukernels/qigemm.inc"
#undef OCTET_QIGEMM_UKERNEL
  };
  return list;
}

}  // namespace octet

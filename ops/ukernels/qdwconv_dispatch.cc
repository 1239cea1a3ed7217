// The qdwconv candidate list, built from qdwconv.inc, and the one rule that picks from it: the first candidate of
// the call's activation dtype and stage whose ISA the context enables. The scalar kernels always qualify.
#include <fmt/format.h>

#include "ops/ukernels/qdwconv.h"

namespace octet {

std::span<const QDwConvUkernelEntry> QDwConvUkernels() {
  static const std::vector<QDwConvUkernelEntry> list = {
#define OCTET_QDWCONV_UKERNEL(isa, a_dtype, stage, ct, fn) \
  QDwConvUkernelEntry{Isa::isa, #fn, &fn, DType::a_dtype, QGemmStage::stage, ct},
#include "ops/ukernels/qdwconv.inc"
#undef OCTET_QDWCONV_UKERNEL
  };
  return list;
}

const QDwConvUkernelEntry& SelectQDwConvUkernel(const Context& context, DType a_dtype, QGemmStage stage) {
  for (const auto& e : QDwConvUkernels()) {
    if (e.a_dtype == a_dtype && e.stage == stage && context.IsEnabled(e.isa)) return e;
  }
  OCTET_CHECK(!"the qdwconv list must end with scalar kernels for every activation dtype and stage");
  return QDwConvUkernels().back();
}

std::vector<std::string> ExplainQDwConvSelection(const Context& context, DType a_dtype, QGemmStage stage) {
  std::vector<std::string> lines;
  bool chosen = false;
  for (const auto& e : QDwConvUkernels()) {
    if (e.a_dtype != a_dtype || e.stage != stage) continue;
    if (chosen) {
      lines.push_back(fmt::format("{}: not considered, an earlier candidate was chosen", e.name));
    } else if (context.IsEnabled(e.isa)) {
      lines.push_back(fmt::format("{}: chosen", e.name));
      chosen = true;
    } else {
      lines.push_back(fmt::format("{}: skipped, ISA {} is not enabled ({})", e.name, IsaName(e.isa),
                                  context.enabled_isas().ToString()));
    }
  }
  return lines;
}

}  // namespace octet

// The qgemm candidate list, built from qgemm.inc, and the one rule that picks from it: the first candidate of the
// call's activation dtype and stage whose ISA the context enables, whose layout is the packed one (or any), whose
// requirement holds and whose minimum M is met. The scalar kernels always qualify.
#include <fmt/format.h>

#include <algorithm>

#include "ops/ukernels/qgemm.h"

namespace octet {

std::string QGemmLayoutName(const QGemmLayout& layout) {
  if (layout.nr == 0) return "any";
  return fmt::format("n{}k{}a{}{}", layout.nr, layout.kr, layout.k_align, layout.w_bytes == 2 ? "s16" : "");
}

std::span<const QGemmUkernelEntry> QGemmUkernels() {
  static const std::vector<QGemmUkernelEntry> list = {
#define OCTET_QGEMM_UKERNEL(isa, a_dtype, stage, mr, nr, layout, requirement, min_m, fn)                         \
  QGemmUkernelEntry{Isa::isa,           #fn, &fn, DType::a_dtype, QGemmStage::stage, mr, nr, layout, \
                    QGemmRequirement::requirement, min_m},
#include "ops/ukernels/qgemm.inc"
#undef OCTET_QGEMM_UKERNEL
  };
  return list;
}

namespace {

// vpmaddubsw's int16 pair sums a0*w0 + a1*w1 cannot saturate: with the kernel's view of A in [0, a_max] (s8 + 128
// for s8 activations), 2 * a_max * w_max <= 32767 and 2 * a_max * -w_min <= 32768.
bool PairSumsFitInt16(const QGemmQuery& q, std::string* why) {
  const int32_t a_max = q.a_range ? q.a_range().second : static_cast<int32_t>(DTypeMax(q.a_dtype));
  const int64_t shift = q.a_dtype == DType::kS8 ? 128 : 0;
  const int64_t hi = int64_t{a_max} + shift;
  const int64_t pos = 2 * hi * std::max<int64_t>(0, q.w_max);
  const int64_t neg = 2 * hi * std::max<int64_t>(0, -int64_t{q.w_min});
  if (pos <= 32767 && neg <= 32768) return true;
  if (why != nullptr) {
    *why = fmt::format("vpmaddubsw could saturate int16: activations reach {} (as u8), weights span [{}, {}]", hi,
                       q.w_min, q.w_max);
  }
  return false;
}

}  // namespace

bool QGemmUkernelSupports(const Context& context, const QGemmUkernelEntry& e, const QGemmQuery& q,
                          std::string* why) {
  // Reasons are formatted only when asked for: selection runs on every call.
  if (e.a_dtype != q.a_dtype || e.stage != q.stage) {
    if (why != nullptr) *why = "another activation dtype or stage";
    return false;
  }
  if (!context.IsEnabled(e.isa)) {
    if (why != nullptr) {
      *why = fmt::format("ISA {} is not enabled ({})", IsaName(e.isa), context.enabled_isas().ToString());
    }
    return false;
  }
  if (!(e.layout == kQGemmLayoutAny) && !(e.layout == q.layout) &&
      !(q.alt_layout.nr != 0 && e.layout == q.alt_layout)) {
    if (why != nullptr) {
      *why = fmt::format("weights are packed as {}{}, the kernel reads {}", QGemmLayoutName(q.layout),
                         q.alt_layout.nr != 0 ? " and " + QGemmLayoutName(q.alt_layout) : std::string(),
                         QGemmLayoutName(e.layout));
    }
    return false;
  }
  if (q.m < e.min_m) {
    if (why != nullptr) *why = fmt::format("M = {} is below the kernel's minimum {}", q.m, e.min_m);
    return false;
  }
  if (e.requirement == QGemmRequirement::kPairSumsFitInt16 && !PairSumsFitInt16(q, why)) return false;
  return true;
}

const QGemmUkernelEntry& SelectQGemmUkernel(const Context& context, const QGemmQuery& query) {
  for (const auto& e : QGemmUkernels()) {
    if (QGemmUkernelSupports(context, e, query)) return e;
  }
  OCTET_CHECK(!"the qgemm list must end with scalar kernels for every activation dtype and stage");
  return QGemmUkernels().back();
}

std::vector<std::string> ExplainQGemmSelection(const Context& context, const QGemmQuery& query) {
  std::vector<std::string> lines;
  bool chosen = false;
  for (const auto& e : QGemmUkernels()) {
    if (e.a_dtype != query.a_dtype || e.stage != query.stage) continue;
    std::string why;
    if (chosen) {
      lines.push_back(fmt::format("{}: not considered, an earlier candidate was chosen", e.name));
    } else if (QGemmUkernelSupports(context, e, query, &why)) {
      lines.push_back(fmt::format("{}: chosen", e.name));
      chosen = true;
    } else {
      lines.push_back(fmt::format("{}: skipped, {}", e.name, why));
    }
  }
  return lines;
}

QGemmLayout SelectQGemmLayout(const Context& context, DType a_dtype) {
  for (const auto& e : QGemmUkernels()) {
    if (e.a_dtype == a_dtype && !(e.layout == kQGemmLayoutAny) && context.IsEnabled(e.isa)) return e.layout;
  }
  return kQGemmDefaultLayout;
}

std::vector<QGemmLayout> SelectQGemmLayouts(const Context& context, DType a_dtype, int32_t w_min, int32_t w_max) {
  std::vector<QGemmLayout> layouts = {SelectQGemmLayout(context, a_dtype)};
  // Whether a candidate could be passed over on some call: any activations of the dtype, these weights.
  QGemmQuery worst;
  worst.a_dtype = a_dtype;
  worst.w_min = w_min;
  worst.w_max = w_max;
  for (const auto& e : QGemmUkernels()) {
    if (e.a_dtype != a_dtype || e.layout == kQGemmLayoutAny || !context.IsEnabled(e.isa)) continue;
    if (std::find(layouts.begin(), layouts.end(), e.layout) == layouts.end()) layouts.push_back(e.layout);
    const bool conditional =
        e.min_m > 1 || (e.requirement == QGemmRequirement::kPairSumsFitInt16 && !PairSumsFitInt16(worst, nullptr));
    if (!conditional) break;
  }
  OCTET_CHECK(layouts.size() <= 2);
  return layouts;
}

}  // namespace octet

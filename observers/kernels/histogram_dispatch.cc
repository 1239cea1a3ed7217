// The histogram family's candidate lists, built from histogram.inc, and their selection.
#include <vector>

#include "observers/kernels/histogram.h"

namespace octet {

std::span<const UkernelEntry<LinearHistogramUkernelFn>> LinearHistogramUkernels() {
  static const std::vector<UkernelEntry<LinearHistogramUkernelFn>> list = [] {
    std::vector<UkernelEntry<LinearHistogramUkernelFn>> v;
#define OCTET_LINEAR_HISTOGRAM_UKERNEL(isa, fn) v.push_back({Isa::isa, #fn, &fn});
#define OCTET_LINEAR_MINMAX_HISTOGRAM_UKERNEL(isa, fn)
#define OCTET_SIGNED_HISTOGRAM_UKERNEL(isa, fn)
#include "observers/kernels/histogram.inc"
#undef OCTET_LINEAR_HISTOGRAM_UKERNEL
#undef OCTET_LINEAR_MINMAX_HISTOGRAM_UKERNEL
#undef OCTET_SIGNED_HISTOGRAM_UKERNEL
    return v;
  }();
  return list;
}

std::span<const UkernelEntry<LinearMinMaxHistogramUkernelFn>> LinearMinMaxHistogramUkernels() {
  static const std::vector<UkernelEntry<LinearMinMaxHistogramUkernelFn>> list = [] {
    std::vector<UkernelEntry<LinearMinMaxHistogramUkernelFn>> v;
#define OCTET_LINEAR_HISTOGRAM_UKERNEL(isa, fn)
#define OCTET_LINEAR_MINMAX_HISTOGRAM_UKERNEL(isa, fn) v.push_back({Isa::isa, #fn, &fn});
#define OCTET_SIGNED_HISTOGRAM_UKERNEL(isa, fn)
#include "observers/kernels/histogram.inc"
#undef OCTET_LINEAR_HISTOGRAM_UKERNEL
#undef OCTET_LINEAR_MINMAX_HISTOGRAM_UKERNEL
#undef OCTET_SIGNED_HISTOGRAM_UKERNEL
    return v;
  }();
  return list;
}

std::span<const UkernelEntry<SignedHistogramUkernelFn>> SignedHistogramUkernels() {
  static const std::vector<UkernelEntry<SignedHistogramUkernelFn>> list = [] {
    std::vector<UkernelEntry<SignedHistogramUkernelFn>> v;
#define OCTET_LINEAR_HISTOGRAM_UKERNEL(isa, fn)
#define OCTET_LINEAR_MINMAX_HISTOGRAM_UKERNEL(isa, fn)
#define OCTET_SIGNED_HISTOGRAM_UKERNEL(isa, fn) v.push_back({Isa::isa, #fn, &fn});
#include "observers/kernels/histogram.inc"
#undef OCTET_LINEAR_HISTOGRAM_UKERNEL
#undef OCTET_LINEAR_MINMAX_HISTOGRAM_UKERNEL
#undef OCTET_SIGNED_HISTOGRAM_UKERNEL
    return v;
  }();
  return list;
}

namespace {
// The families' record slots, looked up once (Context::RecordKernel then takes no lock).
const KernelFamily kLinearFamily("histogram_f32_linear");
const KernelFamily kLinearMinMaxFamily("histogram_f32_linear_minmax");
const KernelFamily kSignedFamily("histogram_f32_signed");
}  // namespace

const UkernelEntry<LinearHistogramUkernelFn>& SelectLinearHistogramUkernel(const Context& context) {
  const auto& entry = SelectUkernel(context, LinearHistogramUkernels());
  context.RecordKernel(kLinearFamily, entry.name);
  return entry;
}

const UkernelEntry<LinearMinMaxHistogramUkernelFn>& SelectLinearMinMaxHistogramUkernel(const Context& context) {
  const auto& entry = SelectUkernel(context, LinearMinMaxHistogramUkernels());
  context.RecordKernel(kLinearMinMaxFamily, entry.name);
  return entry;
}

const UkernelEntry<SignedHistogramUkernelFn>& SelectSignedHistogramUkernel(const Context& context) {
  const auto& entry = SelectUkernel(context, SignedHistogramUkernels());
  context.RecordKernel(kSignedFamily, entry.name);
  return entry;
}

}  // namespace octet

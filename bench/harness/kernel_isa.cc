// The kernel a convolution ran, and the ISA of a kernel from its name.
#include "bench/harness/kernel_isa.h"

#include <utility>

#include "core/isa.h"

namespace octet::bench {

ConvKernelRan LastConvKernel(const Context& context) {
  std::string path = context.LastKernel("qconv2d");
  const char* family = path == "depthwise" ? "qdwconv" : path == "indirect" ? "qigemm" : "qgemm";
  return {std::move(path), context.LastKernel(family)};
}

const char* KernelIsa(std::string_view kernel, const char* unknown) {
  const size_t at = kernel.rfind("__");
  if (at == std::string_view::npos) return unknown;
  Result<Isa> isa = ParseIsa(kernel.substr(at + 2));
  return isa.ok() ? IsaName(*isa) : unknown;
}

}  // namespace octet::bench

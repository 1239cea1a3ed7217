// The ISA of a kernel, from its name.
#include "bench/harness/kernel_isa.h"

#include "core/isa.h"

namespace octet::bench {

const char* KernelIsa(std::string_view kernel, const char* unknown) {
  const size_t at = kernel.rfind("__");
  if (at == std::string_view::npos) return unknown;
  Result<Isa> isa = ParseIsa(kernel.substr(at + 2));
  return isa.ok() ? IsaName(*isa) : unknown;
}

}  // namespace octet::bench

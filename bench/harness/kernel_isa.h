// The ISA of a kernel that ran, read from its name: every ukernel name ends in "__<isa>" (STYLE.md's grammar), so
// benchmark output can report the ISA of whatever Context::LastKernel recorded.
#pragma once

#include <string_view>

namespace octet::bench {

// The ISA's name (core/isa.h's vocabulary) from the "__<isa>" suffix, else `unknown`.
const char* KernelIsa(std::string_view kernel, const char* unknown);

}  // namespace octet::bench

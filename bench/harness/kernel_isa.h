// The kernel that ran and its ISA, for benchmark output: the ukernel a convolution call ran (from what
// Context::LastKernel recorded), and the ISA read from a ukernel's name (every name ends in "__<isa>", STYLE.md's
// grammar).
#pragma once

#include <string>
#include <string_view>

#include "core/context.h"

namespace octet::bench {

// The path a 2-D convolution call took (Context::LastKernel("qconv2d"); an im2col plan may run the indirect
// kernels) and the ukernel it ran: qdwconv's for "depthwise", qigemm's for "indirect", qgemm's otherwise.
struct ConvKernelRan {
  std::string path;
  std::string kernel;
};
ConvKernelRan LastConvKernel(const Context& context);

// The ISA's name (core/isa.h's vocabulary) from the "__<isa>" suffix, else `unknown`.
const char* KernelIsa(std::string_view kernel, const char* unknown);

}  // namespace octet::bench

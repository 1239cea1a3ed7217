// A kernel family's candidate list and the one rule that picks from it: the first candidate whose ISA the context
// enables wins; lists are ordered best first and end with an always-valid scalar kernel.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/context.h"
#include "core/isa.h"

namespace octet {

template <typename Fn>
struct UkernelEntry {
  Isa isa;
  const char* name;  // the kernel's symbol, e.g. "quantize_f32_u8_ukernel__avx2"
  Fn fn;
};

template <typename Fn>
const UkernelEntry<Fn>& SelectUkernel(const Context& context, std::span<const UkernelEntry<Fn>> candidates) {
  for (const auto& c : candidates) {
    if (context.IsEnabled(c.isa)) return c;
  }
  OCTET_CHECK(!"a kernel list must end with a scalar kernel");
  return candidates.back();
}

// Why each candidate was taken or skipped, in order (oneDNN verbose style), for `octet --version -v` and tests.
template <typename Fn>
std::vector<std::string> ExplainUkernelSelection(const Context& context,
                                                 std::span<const UkernelEntry<Fn>> candidates) {
  std::vector<std::string> lines;
  bool chosen = false;
  for (const auto& c : candidates) {
    if (chosen) {
      lines.push_back(fmt::format("{}: not considered, an earlier candidate was chosen", c.name));
    } else if (context.IsEnabled(c.isa)) {
      lines.push_back(fmt::format("{}: chosen", c.name));
      chosen = true;
    } else {
      lines.push_back(fmt::format("{}: skipped, ISA {} is not enabled ({})", c.name, IsaName(c.isa),
                                  context.enabled_isas().ToString()));
    }
  }
  return lines;
}

}  // namespace octet

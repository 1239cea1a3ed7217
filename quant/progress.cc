// Terminal progress line (see progress.h).
#include "quant/progress.h"

#include <cstdio>

#include <unistd.h>

namespace octet {

ProgressFn TerminalProgress(std::string label) {
  if (isatty(fileno(stderr)) == 0) return {};
  return [label = std::move(label)](int64_t done, int64_t total) {
    std::fprintf(stderr, "\r%s: %lld/%lld", label.c_str(), static_cast<long long>(done),
                 static_cast<long long>(total));
    if (done >= total) std::fputc('\n', stderr);
    std::fflush(stderr);
  };
}

}  // namespace octet

// The --isa and --threads options shared by the commands that compute, and the Context they describe.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/context.h"
#include "core/status.h"

namespace octet::cli {

struct ContextFlags {
  std::string isa;  // a cap for IsaSet::ParseCap ("avx2", "scalar", "avx2,neon"); empty = no cap
  int threads = 1;  // 0 = every hardware thread

  // Registers --isa and --threads on `app`, with `default_threads` as the --threads default.
  void AddTo(CLI::App* app, int default_threads);
  // Usage errors (exit 2): a malformed --isa.
  Status CheckUsage() const;
  // The context: detected ISAs ∩ --isa ∩ OCTET_ISA, with the thread count. Fails (exit 1) on a malformed OCTET_ISA.
  Result<Context> Create() const;
};

}  // namespace octet::cli

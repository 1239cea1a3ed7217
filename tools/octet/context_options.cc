// The --isa and --threads options and the Context they build.
#include "tools/octet/context_options.h"

#include "core/isa.h"

namespace octet::cli {

void ContextFlags::AddTo(CLI::App* app, int default_threads) {
  threads = default_threads;
  app->add_option("--isa", isa,
                  "Highest ISA tier to use (scalar, avx2, avxvnni, avx512vnni, amx, neon, neondot, i8mm); a cap, "
                  "combined with the detected ISAs and OCTET_ISA")
      ->type_name("TIER");
  app->add_option("--threads", threads, "Worker threads (0 = every hardware thread)")
      ->check(CLI::Range(0, 4096))
      ->type_name("T")
      ->capture_default_str();
}

Status ContextFlags::CheckUsage() const {
  if (isa.empty()) return OkStatus();
  Result<IsaSet> cap = IsaSet::ParseCap(isa);
  if (!cap.ok()) return cap.status().WithContext("--isa");
  return OkStatus();
}

Result<Context> ContextFlags::Create() const {
  ContextOptions options;
  options.threads = threads;
  if (!isa.empty()) {
    OCTET_ASSIGN_OR_RETURN(options.isa_cap, IsaSet::ParseCap(isa));
  }
  return Context::Create(options);
}

}  // namespace octet::cli

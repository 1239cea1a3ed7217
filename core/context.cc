// Context creation and the kernel record; the thread arena of the chosen backend.
#include "core/context.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "core/cpu_features.h"

#if OCTET_WITH_TBB
#include <tbb/task_arena.h>
#endif

namespace octet {

struct Context::Impl {
  IsaSet enabled;
  int threads = 1;
  mutable std::mutex mutex;
  mutable std::map<std::string, std::string, std::less<>> last_kernel;
#if OCTET_WITH_TBB
  std::unique_ptr<tbb::task_arena> arena;
#endif
};

Context::Context() : impl_(std::make_unique<Impl>()) {}
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;
Context::~Context() = default;

const char* ThreadingBackendName() { return OCTET_WITH_TBB ? "tbb" : "serial"; }

int HardwareConcurrency() { return std::max(1u, std::thread::hardware_concurrency()); }

Result<Context> Context::Create(const ContextOptions& options) {
  IsaSet enabled = DetectedIsas();
  if (options.isa_cap) enabled = enabled.Intersect(*options.isa_cap);
  if (options.use_environment) {
    if (const char* env = std::getenv("OCTET_ISA"); env != nullptr && *env != '\0') {
      auto cap = IsaSet::ParseCap(env);
      if (!cap.ok()) return cap.status().WithContext("failed to read environment variable OCTET_ISA");
      enabled = enabled.Intersect(*cap);
    }
  }
  if (options.threads < 0 || options.threads > 4096) {
    return InvalidArgument("failed to create context: threads must be in [0, 4096], got {}", options.threads);
  }
  const int threads = options.threads == 0 ? HardwareConcurrency() : options.threads;
  return ForIsas(enabled, threads);
}

Context Context::ForIsas(IsaSet enabled, int threads) {
  Context c;
  c.impl_->enabled = enabled.Intersect(CompiledIsas()).Intersect(IsaSet::All());
  c.impl_->enabled.Add(Isa::kScalar);
#if OCTET_WITH_TBB
  c.impl_->threads = std::max(1, threads);
  if (c.impl_->threads > 1) c.impl_->arena = std::make_unique<tbb::task_arena>(c.impl_->threads);
#else
  (void)threads;
  c.impl_->threads = 1;
#endif
  return c;
}

// Used by core/threading.cc only; void* keeps TBB out of the header.
void* internal_ContextArena(const Context& context) {
#if OCTET_WITH_TBB
  return context.impl_->arena.get();
#else
  (void)context;
  return nullptr;
#endif
}

IsaSet Context::enabled_isas() const { return impl_->enabled; }
int Context::threads() const { return impl_->threads; }

void Context::RecordKernel(std::string_view family, std::string_view kernel) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->last_kernel.find(family);
  if (it == impl_->last_kernel.end()) {
    impl_->last_kernel.emplace(std::string(family), std::string(kernel));
  } else if (it->second != kernel) {
    it->second.assign(kernel);
  }
}

std::string Context::LastKernel(std::string_view family) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->last_kernel.find(family);
  return it == impl_->last_kernel.end() ? std::string() : it->second;
}

}  // namespace octet

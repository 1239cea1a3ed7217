// Context creation and the kernel record; the thread arena of the chosen backend.
#include "core/context.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/cpu_features.h"

#if OCTET_WITH_TBB
#include <tbb/task_arena.h>
#endif

namespace octet {

namespace {

// Family names -> slot ids, and the kernel names recorded by name (copied once, never freed: a slot holds a
// pointer that any context may keep).
struct KernelNames {
  std::mutex mutex;
  std::map<std::string, uint32_t, std::less<>> families;
  std::set<std::string, std::less<>> kernels;
};

KernelNames& Names() {
  static KernelNames* names = new KernelNames;  // never destroyed: contexts may outlive static destruction
  return *names;
}

constexpr uint32_t kNoFamily = KernelFamily::kMaxKernelFamilies;

uint32_t FamilyId(std::string_view name, bool create) {
  KernelNames& n = Names();
  std::lock_guard<std::mutex> lock(n.mutex);
  if (auto it = n.families.find(name); it != n.families.end()) return it->second;
  if (!create || n.families.size() >= KernelFamily::kMaxKernelFamilies) return kNoFamily;
  const auto id = static_cast<uint32_t>(n.families.size());
  n.families.emplace(std::string(name), id);
  return id;
}

const char* InternKernelName(std::string_view kernel) {
  KernelNames& n = Names();
  std::lock_guard<std::mutex> lock(n.mutex);
  auto it = n.kernels.find(kernel);
  if (it == n.kernels.end()) it = n.kernels.emplace(kernel).first;
  return it->c_str();
}

}  // namespace

KernelFamily::KernelFamily(std::string_view name) : id_(FamilyId(name, true)) {}

struct Context::Impl {
  IsaSet enabled;
  int threads = 1;
  // The last kernel per family id (nullptr: none yet).
  std::unique_ptr<std::atomic<const char*>[]> last_kernel{
      new std::atomic<const char*>[KernelFamily::kMaxKernelFamilies] {}};
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
  const uint32_t id = FamilyId(family, true);
  if (id != kNoFamily) impl_->last_kernel[id].store(InternKernelName(kernel), std::memory_order_relaxed);
}

void Context::RecordKernel(const KernelFamily& family, const char* kernel) const {
  if (family.id() != kNoFamily) impl_->last_kernel[family.id()].store(kernel, std::memory_order_relaxed);
}

std::string Context::LastKernel(std::string_view family) const {
  const uint32_t id = FamilyId(family, false);
  const char* kernel = id == kNoFamily ? nullptr : impl_->last_kernel[id].load(std::memory_order_relaxed);
  return kernel == nullptr ? std::string() : std::string(kernel);
}

}  // namespace octet

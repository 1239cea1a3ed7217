// Context: the enabled ISAs, the thread count and arena, and the record of which kernel ran. All mutable state of
// a computation lives here rather than in globals, so tests can force any ISA (or scalar) through it. The one
// process-wide table is the names of kernel families (KernelFamily), which only maps names to record slots.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/isa.h"
#include "core/status.h"

namespace octet {

struct ContextOptions {
  // Upper bound on the ISAs to use (IsaSet::UpTo or ParseCap); unset = everything detected.
  std::optional<IsaSet> isa_cap;
  // Worker threads; 0 = the hardware concurrency. Always 1 with the serial backend.
  int threads = 1;
  // Apply the OCTET_ISA environment cap (same syntax as ParseCap). Tests that must see every ISA turn it off.
  bool use_environment = true;
};

// A kernel family's slot in every Context's kernel record ("qgemm", "quantize_f32_u8"). Constructing one looks the
// name up once (under a lock); recording through it is then one relaxed atomic store, so kernels record on every
// call without a lock. Keep one per call site as a static. Past kMaxKernelFamilies names, records are dropped.
class KernelFamily {
 public:
  static constexpr uint32_t kMaxKernelFamilies = 512;
  explicit KernelFamily(std::string_view name);
  uint32_t id() const { return id_; }

 private:
  uint32_t id_;
};

class Context {
 public:
  // enabled = detected ∩ options.isa_cap ∩ OCTET_ISA. Fails on a malformed OCTET_ISA or thread count.
  static Result<Context> Create(const ContextOptions& options = {});
  // A context for a specific ISA set (already intersected with the detected one by the caller), for tests.
  static Context ForIsas(IsaSet enabled, int threads = 1);

  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  ~Context();

  IsaSet enabled_isas() const;
  bool IsEnabled(Isa isa) const { return enabled_isas().Contains(isa); }
  int threads() const;

  // Notes that `kernel` ran for `family` (e.g. "quantize_f32_u8", "quantize_f32_u8__avx512vnni"). Thread-safe; takes
  // locks (names are looked up and copied), so for set-up time: graph preparation, tests.
  void RecordKernel(std::string_view family, std::string_view kernel) const;
  // The same without a lock, for the hot path. `kernel` must outlive the context (a kernel list entry's name).
  void RecordKernel(const KernelFamily& family, const char* kernel) const;
  // The kernel last recorded for `family`, or "" if none ran.
  std::string LastKernel(std::string_view family) const;

  struct Impl;  // the backend's state: a tbb::task_arena with the TBB backend

 private:
  friend void* internal_ContextArena(const Context& context);
  Context();
  std::unique_ptr<Impl> impl_;
};

// "tbb" or "serial".
const char* ThreadingBackendName();
// Threads the machine offers.
int HardwareConcurrency();

}  // namespace octet

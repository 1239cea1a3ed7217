// CPU feature detection. This file and ops/ukernels are the only places that know about instruction sets.
#include "core/cpu_features.h"

#include <fmt/format.h>

#if defined(__x86_64__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace octet {
namespace {

#if defined(__x86_64__)
uint64_t ReadXcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

bool Bit(uint32_t reg, int bit) { return (reg >> bit) & 1u; }

// Linux keeps AMX tile data off until a process asks (since 5.16); without the grant, the first tile instruction
// faults. Returns an empty string on success, else the reason.
std::string RequestAmxPermission() {
#if defined(__linux__)
  constexpr int kArchGetXcompPerm = 0x1022;
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) {
    return "the kernel refused arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) (Linux < 5.16 or AMX disabled)";
  }
  unsigned long bitmask = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &bitmask) != 0 || !((bitmask >> kXfeatureXtiledata) & 1u)) {
    return "arch_prctl(ARCH_GET_XCOMP_PERM) does not report XTILEDATA permission";
  }
  return "";
#else
  return "AMX permission can only be requested on Linux";
#endif
}

CpuFeatures DetectX86() {
  CpuFeatures f;
  uint32_t eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return f;
  const uint32_t max_leaf = eax;
  if (max_leaf < 7) return f;
  __cpuid_count(1, 0, eax, ebx, ecx, edx);
  const bool osxsave = Bit(ecx, 27);
  const bool fma = Bit(ecx, 12);
  if (!osxsave) return f;
  const uint64_t xcr0 = ReadXcr0();
  const bool os_avx = (xcr0 & 0x6) == 0x6;             // XMM and YMM state
  const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;      // XTILECFG and XTILEDATA
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const uint32_t ebx7 = ebx, ecx7 = ecx, edx7 = edx;
  __cpuid_count(7, 1, eax, ebx, ecx, edx);
  const uint32_t eax71 = eax;

  f.fma = os_avx && fma;
  f.avx2 = os_avx && Bit(ebx7, 5);
  f.avx512f = os_avx512 && Bit(ebx7, 16);
  f.avx512dq = os_avx512 && Bit(ebx7, 17);
  f.avx512cd = os_avx512 && Bit(ebx7, 28);
  f.avx512bw = os_avx512 && Bit(ebx7, 30);
  f.avx512vl = os_avx512 && Bit(ebx7, 31);
  f.avx512_vnni = os_avx512 && Bit(ecx7, 11);
  f.avx_vnni = os_avx && Bit(eax71, 4);
  const bool cpu_amx = Bit(edx7, 24) && Bit(edx7, 25);  // AMX-TILE, AMX-INT8
  if (cpu_amx) {
    if (!os_amx) {
      f.amx_unavailable_reason = "the OS does not enable AMX tile state (XCR0)";
    } else {
      f.amx_unavailable_reason = RequestAmxPermission();
    }
    f.amx_tile = f.amx_int8 = f.amx_unavailable_reason.empty();
  }
  return f;
}
#endif

CpuFeatures Detect() {
#if defined(__x86_64__)
  return DetectX86();
#elif defined(__aarch64__) && defined(__linux__)
  CpuFeatures f;
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  f.asimd = hwcap & HWCAP_ASIMD;
  f.asimddp = hwcap & HWCAP_ASIMDDP;
#ifdef HWCAP2_I8MM
  f.i8mm = hwcap2 & HWCAP2_I8MM;
#else
  f.i8mm = hwcap2 & (1ul << 13);
#endif
  return f;
#else
  return CpuFeatures{};
#endif
}

}  // namespace

std::string CpuFeatures::ToString() const {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(avx2, "avx2");
  add(fma, "fma");
  add(avx512f, "avx512f");
  add(avx512cd, "avx512cd");
  add(avx512bw, "avx512bw");
  add(avx512dq, "avx512dq");
  add(avx512vl, "avx512vl");
  add(avx512_vnni, "avx512_vnni");
  add(avx_vnni, "avx_vnni");
  add(amx_tile, "amx_tile");
  add(amx_int8, "amx_int8");
  add(asimd, "asimd");
  add(asimddp, "asimddp");
  add(i8mm, "i8mm");
  if (!amx_unavailable_reason.empty()) s += fmt::format(" (amx unavailable: {})", amx_unavailable_reason);
  return s.empty() ? "none" : s;
}

const CpuFeatures& GetCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

IsaSet DetectedIsas() {
  const CpuFeatures& f = GetCpuFeatures();
  IsaSet s = IsaSet::Of({Isa::kScalar});
  const bool avx512 = f.avx512f && f.avx512cd && f.avx512bw && f.avx512dq && f.avx512vl;
  if (f.avx2 && f.fma) s.Add(Isa::kAvx2);
  if (f.avx2 && f.fma && f.avx_vnni) s.Add(Isa::kAvxVnni);
  if (avx512 && f.avx512_vnni) s.Add(Isa::kAvx512Vnni);
  if (avx512 && f.avx512_vnni && f.amx_tile && f.amx_int8) s.Add(Isa::kAmx);
  if (f.asimd) s.Add(Isa::kNeon);
  if (f.asimd && f.asimddp) s.Add(Isa::kNeonDot);
  if (f.asimd && f.asimddp && f.i8mm) s.Add(Isa::kI8mm);
  return s.Intersect(CompiledIsas());
}

}  // namespace octet

// CPU feature detection: x86 cpuid + xgetbv (with the Linux AMX permission request) and aarch64 HWCAP.
#pragma once

#include <string>

#include "core/isa.h"

namespace octet {

struct CpuFeatures {
  // x86 (all false elsewhere). Each is true only when the OS also saves the registers involved (xgetbv).
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512cd = false;
  bool avx512_vnni = false;
  bool avx_vnni = false;
  bool amx_tile = false;  // the CPU has AMX tiles, the OS enables tile state and granted this process permission
  bool amx_int8 = false;
  // Why AMX is unusable although the CPU has it (empty when usable or absent), e.g. the kernel refused
  // arch_prctl(ARCH_REQ_XCOMP_PERM).
  std::string amx_unavailable_reason;
  // aarch64 (all false elsewhere).
  bool asimd = false;
  bool asimddp = false;
  bool i8mm = false;

  std::string ToString() const;
};

// Detected once per process (thread-safe); the AMX permission request is made at that time.
const CpuFeatures& GetCpuFeatures();

// The ISA tiers this CPU (and OS) can run: each tier needs all of its features, e.g. avx512vnni needs AVX-512
// F/CD/BW/DQ/VL and VNNI; amx needs avx512vnni plus AMX-TILE, AMX-INT8 and the OS permission.
IsaSet DetectedIsas();

}  // namespace octet

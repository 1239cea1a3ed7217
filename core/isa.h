// The closed ISA vocabulary: the only names kernels, tests, benchmarks and the command line use for SIMD levels.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace octet {

// Tiers, in order within each architecture. A cap (the --isa option, OCTET_ISA) enables every tier at or below it.
//   x86:     scalar < avx2 (AVX2+FMA) < avxvnni (AVX-VNNI, VEX) < avx512vnni (AVX-512 F/CD/BW/DQ/VL + VNNI)
//            < amx (AMX-TILE + AMX-INT8, on top of avx512vnni)
//   aarch64: scalar < neon (ASIMD) < neondot (SDOT/UDOT) < i8mm (SMMLA)
// A CPU need not have every lower tier (an AVX-512 part without AVX-VNNI): enabled = detected ∩ capped.
enum class Isa : uint8_t { kScalar, kAvx2, kAvxVnni, kAvx512Vnni, kAmx, kNeon, kNeonDot, kI8mm };

inline constexpr Isa kAllIsas[] = {Isa::kScalar, Isa::kAvx2,    Isa::kAvxVnni, Isa::kAvx512Vnni,
                                   Isa::kAmx,    Isa::kNeon,    Isa::kNeonDot, Isa::kI8mm};

// "scalar", "avx2", "avxvnni", "avx512vnni", "amx", "neon", "neondot", "i8mm".
const char* IsaName(Isa isa);
Result<Isa> ParseIsa(std::string_view name);

// A set of ISAs as a bit mask.
class IsaSet {
 public:
  constexpr IsaSet() = default;
  static IsaSet Of(std::initializer_list<Isa> isas);
  static IsaSet All();
  // `cap` and every tier below it on the same architecture, plus scalar.
  static IsaSet UpTo(Isa cap);
  // Parses "avx2" (a cap), "scalar", or a comma-separated list of caps ("avx2,neon" for a cross-platform setting).
  static Result<IsaSet> ParseCap(std::string_view text);

  bool Contains(Isa isa) const { return (bits_ >> static_cast<unsigned>(isa)) & 1u; }
  IsaSet& Add(Isa isa) {
    bits_ |= 1u << static_cast<unsigned>(isa);
    return *this;
  }
  IsaSet Intersect(IsaSet other) const { return IsaSet(bits_ & other.bits_); }
  bool operator==(const IsaSet&) const = default;
  std::vector<Isa> ToVector() const;
  // The highest tier in the set (scalar if none).
  Isa Best() const;
  // "scalar,avx2,avx512vnni".
  std::string ToString() const;

 private:
  constexpr explicit IsaSet(uint32_t bits) : bits_(bits) {}
  uint32_t bits_ = 0;
};

// The ISAs this build has kernels for (scalar plus the object libraries of the target architecture).
IsaSet CompiledIsas();

}  // namespace octet

// ISA names, tier caps and the set of ISAs compiled into this build.
#include "core/isa.h"

#include <fmt/ranges.h>

namespace octet {

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvxVnni: return "avxvnni";
    case Isa::kAvx512Vnni: return "avx512vnni";
    case Isa::kAmx: return "amx";
    case Isa::kNeon: return "neon";
    case Isa::kNeonDot: return "neondot";
    case Isa::kI8mm: return "i8mm";
  }
  return "?";
}

Result<Isa> ParseIsa(std::string_view name) {
  for (Isa isa : kAllIsas) {
    if (name == IsaName(isa)) return isa;
  }
  return InvalidArgument(
      "failed to parse ISA '{}': expected one of scalar, avx2, avxvnni, avx512vnni, amx, neon, neondot, i8mm", name);
}

IsaSet IsaSet::Of(std::initializer_list<Isa> isas) {
  IsaSet s;
  for (Isa isa : isas) s.Add(isa);
  return s;
}

IsaSet IsaSet::All() {
  IsaSet s;
  for (Isa isa : kAllIsas) s.Add(isa);
  return s;
}

IsaSet IsaSet::UpTo(Isa cap) {
  static constexpr Isa kX86[] = {Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512Vnni, Isa::kAmx};
  static constexpr Isa kArm[] = {Isa::kNeon, Isa::kNeonDot, Isa::kI8mm};
  IsaSet s = Of({Isa::kScalar});
  for (const auto& tiers : {std::span<const Isa>(kX86), std::span<const Isa>(kArm)}) {
    bool found = false;
    for (Isa t : tiers) found = found || t == cap;
    if (!found) continue;
    for (Isa t : tiers) {
      s.Add(t);
      if (t == cap) break;
    }
  }
  return s;
}

Result<IsaSet> IsaSet::ParseCap(std::string_view text) {
  IsaSet s;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    OCTET_ASSIGN_OR_RETURN(Isa isa, ParseIsa(item));
    s = IsaSet(s.bits_ | UpTo(isa).bits_);
    start = comma + 1;
  }
  return s;
}

std::vector<Isa> IsaSet::ToVector() const {
  std::vector<Isa> v;
  for (Isa isa : kAllIsas) {
    if (Contains(isa)) v.push_back(isa);
  }
  return v;
}

Isa IsaSet::Best() const {
  Isa best = Isa::kScalar;
  for (Isa isa : kAllIsas) {
    if (Contains(isa)) best = isa;
  }
  return best;
}

std::string IsaSet::ToString() const {
  std::vector<std::string_view> names;
  for (Isa isa : ToVector()) names.push_back(IsaName(isa));
  return fmt::format("{}", fmt::join(names, ","));
}

IsaSet CompiledIsas() {
#if defined(__x86_64__) || defined(_M_X64)
  return IsaSet::Of({Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512Vnni, Isa::kAmx});
#elif defined(__aarch64__)
  return IsaSet::Of({Isa::kScalar, Isa::kNeon, Isa::kNeonDot, Isa::kI8mm});
#else
  return IsaSet::Of({Isa::kScalar});
#endif
}

}  // namespace octet

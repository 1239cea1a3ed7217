// The table of numerics profiles (see numerics_profile.h for where each choice comes from).
#include "quant/numerics_profile.h"

#include <fmt/format.h>

namespace octet {

namespace {

struct ProfileRow {
  NumericsProfile profile;
  const char* name;
};

constexpr ProfileRow kProfiles[] = {
    {NumericsProfile::kReference, "reference"},
    {NumericsProfile::kTflite, "tflite"},
    {NumericsProfile::kPytorchFbgemm, "pytorch-fbgemm"},
    {NumericsProfile::kPytorchQnnpack, "pytorch-qnnpack"},
};

}  // namespace

const char* NumericsProfileName(NumericsProfile profile) {
  for (const ProfileRow& r : kProfiles) {
    if (r.profile == profile) return r.name;
  }
  return "unknown";
}

std::vector<std::string_view> NumericsProfileNames() {
  std::vector<std::string_view> names;
  for (const ProfileRow& r : kProfiles) names.emplace_back(r.name);
  return names;
}

Result<NumericsProfile> ParseNumericsProfile(std::string_view name) {
  for (const ProfileRow& r : kProfiles) {
    if (name == r.name) return r.profile;
  }
  return InvalidArgument("unknown numerics profile '{}': expected one of {}", name,
                         fmt::join(NumericsProfileNames(), ", "));
}

NumericsSpec GetNumericsSpec(NumericsProfile profile) {
  using reference::QGemmStage;
  NumericsSpec s;
  s.profile = profile;
  switch (profile) {
    case NumericsProfile::kReference:
      break;
    case NumericsProfile::kTflite:
      s.requantization = QGemmStage::kQ31;
      s.quantize_rounding = QuantizeRounding::kHalfAwayDivide;
      s.symmetric_weight_quant_min = -127;
      break;
    case NumericsProfile::kPytorchFbgemm:
      s.requantization = QGemmStage::kFbgemm;
      s.float_bias = true;
      s.non_finite = NonFiniteQuantize::kQuantMin;
      break;
    case NumericsProfile::kPytorchQnnpack:
      s.non_finite = NonFiniteQuantize::kQuantMin;
      break;
  }
  return s;
}

}  // namespace octet

// Target specs: a declarative description of what a hardware target's int8 supports, from which static quantization
// takes its decisions instead of PyTorch's presets (PT2E's Quantizer idea, for hardware teams). A spec is JSON:
//   {
//     "name": "pow2-int8",
//     "activation": {"dtype": "int8", "symmetric": true, "bits": 8, "observer": "minmax"},
//     "weight": {"dtype": "int8", "symmetric": true, "per_channel": false, "bits": 8},
//     "power_of_two_scales": true,
//     "bias_bits": 32,
//     "keep_float": ["Softmax"]
//   }
// activation: dtype "int8" | "uint8", symmetric (default false), bits 2..8 (the low end of the dtype's range, as
//   --activation-bits), observer (an activation observer name, default "minmax");
// weight: dtype "int8" (the int8 kernels take s8 weights), symmetric (default true), per_channel (default false),
//   bits 2..8 ([-2^(b-1), 2^(b-1) - 1]), observer (default minmax / per_channel_minmax);
// power_of_two_scales: every scale is rounded up to 2^n (the observers choose the range, n = ceil(log2(scale))), so
//   requantization is a shift; zero points stay;
// bias_bits: 32 (the only accumulator octet's kernels have; other values are refused);
// keep_float: op types left float.
// Unknown keys, wrong types and impossible combinations fail naming the key ("target 'f.json': weight.dtype: ...").
// The PyTorch presets are built-in targets too ("x86", "fbgemm", "qnnpack", "onednn", "symmetric"), with the
// QConfigs of GetDefaultQConfig; "pow2-int8" is the one above.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "quant/qconfig_mapping.h"

namespace octet {

struct TargetSpec {
  std::string name;
  QConfig qconfig;
  bool power_of_two_scales = false;
  std::vector<std::string> keep_float;  // op types

  // The mapping Prepare takes: qconfig globally, keep_float op types none.
  QConfigMapping Mapping() const;
};

// The built-in targets' names.
std::vector<std::string> BuiltinTargetNames();
// Parses and validates a spec; `source` names it in errors (a file name or "built-in").
Result<TargetSpec> ParseTargetSpec(const nlohmann::json& spec, std::string_view source);
// A built-in name, or else a path to a JSON file.
Result<TargetSpec> LoadTargetSpec(const std::string& name_or_path);

// For power-of-two targets: after calibration, fixes every slot's qparams to its observer's with each scale rounded
// up to a power of two (ObserverSlot::fixed_qparams, which Convert uses).
Status RoundScalesToPowerOfTwo(PreparedGraph& prepared);
// `q` with each scale rounded up to 2^ceil(log2(scale)), zero points kept.
Result<QParams> RoundScaleToPowerOfTwo(const QParams& q);

}  // namespace octet

// Numerics profiles: named bundles of the integer-arithmetic choices on which stacks differ (DESIGN.md §4,
// reference/numerics.md §2.12-2.14), so a converted graph reproduces one stack's integers on purpose.
//
//   profile          requantization (ops/reference/qgemm_reference.h)   bias            quantize rounding
//   reference        fp32: rne(f32(acc + bias_q) * m[c])                int32           half-even, x * (1/s)
//   tflite           q31: SaturatingRoundingDoublingHighMul + RDBPOT    int32           half away, x / s
//   pytorch-fbgemm   fbgemm: rne((f32(acc) + b/(sa*sw)) * m[c])         float           half-even, x * (1/s)
//   pytorch-qnnpack  fp32 (QNNPACK's fp32 requantization)               int32           half-even, x * (1/s)
//
// Symmetric int8 weights use [-127, 127] in tflite (its spec) and [-128, 127] in the PyTorch profiles and reference
// (PyTorch's qint8 observers). Non-finite activations: error (reference, tflite) or PyTorch's quant_min (pytorch-*).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ops/reference/qgemm_reference.h"

namespace octet {

enum class NumericsProfile : uint8_t { kReference, kTflite, kPytorchFbgemm, kPytorchQnnpack };

enum class QuantizeRounding : uint8_t {
  kHalfEvenMulReciprocal,  // PyTorch ATen, ONNX, MLAS: zp + nearbyint(x * (1.0f / s))
  kHalfAwayDivide,         // TFLite reference Quantize: TfLiteRound(x / s) + zp
};

enum class NonFiniteQuantize : uint8_t {
  kError,     // NaN fails naming the tensor; ±Inf saturate (octet's strict default)
  kQuantMin,  // PyTorch: NaN and ±Inf become quant_min
};

struct NumericsSpec {
  NumericsProfile profile = NumericsProfile::kReference;
  reference::QGemmStage requantization = reference::QGemmStage::kFp32;
  bool float_bias = false;  // the bias stays float and is added before the multiply (fbgemm)
  QuantizeRounding quantize_rounding = QuantizeRounding::kHalfEvenMulReciprocal;
  int32_t symmetric_weight_quant_min = -128;  // -127 keeps int8 weights sign-symmetric (TFLite)
  NonFiniteQuantize non_finite = NonFiniteQuantize::kError;
};

// "reference", "tflite", "pytorch-fbgemm", "pytorch-qnnpack".
const char* NumericsProfileName(NumericsProfile profile);
std::vector<std::string_view> NumericsProfileNames();
Result<NumericsProfile> ParseNumericsProfile(std::string_view name);
NumericsSpec GetNumericsSpec(NumericsProfile profile);

}  // namespace octet

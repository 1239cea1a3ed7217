// Observer names and options: what a caller sets, the PyTorch defaults that fill the rest, and the validation that
// rejects what PyTorch rejects (and a few things PyTorch accepts silently but that cannot give valid qparams).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/dtype.h"
#include "core/qparams.h"
#include "core/status.h"
#include "observers/qparams_math.h"

namespace octet {

enum class ObserverKind : uint8_t {
  kMinMax,                         // MinMaxObserver
  kMovingAverageMinMax,            // MovingAverageMinMaxObserver
  kPerChannelMinMax,               // PerChannelMinMaxObserver
  kMovingAveragePerChannelMinMax,  // MovingAveragePerChannelMinMaxObserver
  kHistogram,                      // HistogramObserver (variants upstream and legacy_1_13)
  kPercentile,                     // PercentileObserver (octet)
  kEntropy,                        // EntropyObserver: TensorRT-style KL calibration (octet)
  kMse,                            // MseObserver: range that minimises the quantization MSE (octet)
  kPlaceholder,                    // PlaceholderObserver: dynamic quantization, qparams computed per call
  kPow2Histogram,                  // Pow2HistogramObserver: L2 search over an exact power-of-two grid (octet)
};

inline constexpr ObserverKind kAllObserverKinds[] = {
    ObserverKind::kMinMax,     ObserverKind::kMovingAverageMinMax, ObserverKind::kPerChannelMinMax,
    ObserverKind::kMovingAveragePerChannelMinMax, ObserverKind::kHistogram, ObserverKind::kPercentile,
    ObserverKind::kEntropy,    ObserverKind::kMse,                 ObserverKind::kPlaceholder,
    ObserverKind::kPow2Histogram};

// The command-line names: "minmax", "moving_average_minmax", "per_channel_minmax",
// "moving_average_per_channel_minmax", "histogram", "percentile", "entropy", "mse", "placeholder", "pow2_histogram".
const char* ObserverKindName(ObserverKind kind);
// The class names: "MinMaxObserver", ..., "PlaceholderObserver".
const char* ObserverClassName(ObserverKind kind);
// Accepts either name.
Result<ObserverKind> ParseObserverKind(std::string_view name);
bool IsPerChannelKind(ObserverKind kind);

enum class HistogramVariant : uint8_t {
  kUpstream,   // current PyTorch: exact float histogram ranges, upsample rate 16, ±Inf filtered
  kLegacy113,  // PyTorch 1.13 exactly, including its int()-truncated histc ranges
};
// "upstream", "legacy_1_13".
const char* HistogramVariantName(HistogramVariant variant);
Result<HistogramVariant> ParseHistogramVariant(std::string_view name);

// What a caller sets. Unset options take the observer's default; an option set for an observer it does not apply
// to is an error (PyTorch raises TypeError for an unexpected keyword).
struct ObserverOptions {
  DType dtype = DType::kU8;             // quint8 (u8), qint8 (s8), qint32 (s32)
  std::optional<QScheme> qscheme;       // per_tensor_affine, or per_channel_affine for per-channel observers
  bool reduce_range = false;            // one bit less (numerics.md §2.2)
  std::optional<int64_t> quant_min;     // a customized range: both or neither
  std::optional<int64_t> quant_max;
  std::optional<double> eps;            // smallest scale; default float32 epsilon 2^-23 (stored as float32)
  std::optional<double> averaging_constant;  // moving-average observers: 0.01, in (0, 1]
  std::optional<int> ch_axis;           // per-channel observers: 0; negative counts from the last dimension
  std::optional<int64_t> bins;          // histogram 2048; percentile, entropy, mse, pow2_histogram 2048 (grid of 2048..4096 bins)
  std::optional<int64_t> upsample_rate; // histogram: 16 (upstream) or 128 (legacy_1_13)
  std::optional<HistogramVariant> histogram_variant;  // histogram: upstream
  std::optional<double> percentile;     // percentile: 99.99, in [50, 100]
  bool skip_non_finite = false;         // skip and count NaN / ±Inf instead of failing
};

// Options with every default filled in, validated for one kind. Two observers can merge only when these are equal.
struct ResolvedObserverOptions {
  ObserverKind kind = ObserverKind::kMinMax;
  DType dtype = DType::kU8;
  QScheme qscheme = QScheme::kPerTensorAffine;
  bool reduce_range = false;
  std::optional<int64_t> quant_min;  // as given (before reduce_range)
  std::optional<int64_t> quant_max;
  QuantRange range;                  // effective [quant_min, quant_max]
  float eps = 1.1920928955078125e-07f;
  float averaging_constant = 0.01f;  // float32, as PyTorch multiplies the float32 buffers by it
  int ch_axis = 0;
  int64_t bins = 2048;
  int64_t upsample_rate = 16;
  HistogramVariant histogram_variant = HistogramVariant::kUpstream;
  double percentile = 99.99;
  bool skip_non_finite = false;

  bool operator==(const ResolvedObserverOptions&) const = default;
  // The inputs of _calculate_qparams; `axis` is the (non-negative) channel axis of per-channel schemes.
  QParamsSpec Spec(int axis = 0) const;
};

Result<ResolvedObserverOptions> ResolveObserverOptions(ObserverKind kind, const ObserverOptions& options);

// The options that apply to the observer, as JSON ({"dtype": "quint8", "qscheme": ..., ...}; quant_min/quant_max
// only when given), and back. OptionsFromJson rejects unknown keys and wrong types.
nlohmann::json OptionsToJson(const ResolvedObserverOptions& options);
Result<ObserverOptions> OptionsFromJson(const nlohmann::json& json);

// "quint8", "qint8", "qint32": PyTorch's names for the observer dtypes.
const char* ObserverDTypeName(DType dtype);

}  // namespace octet

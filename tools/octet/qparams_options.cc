// The qparam options of the tensor commands and the QParams they describe.
#include "tools/octet/qparams_options.h"

#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tools/octet/command.h"

namespace octet::cli {
namespace {

bool Given(const CLI::Option* opt) { return opt != nullptr && opt->count() > 0; }

bool FitsInt32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

// A 1-D per-channel file: scales must be float32, zero points any integer dtype (int64 files arrive as s32).
Result<std::vector<float>> ReadScales(const std::string& path) {
  OCTET_ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(path));
  if (t.dtype() != DType::kF32 || t.shape().rank() != 1 || t.NumElements() == 0) {
    return InvalidArgument("failed to read scales '{}': expected a non-empty 1-D float32 array, got {} of shape {}",
                           path, t.dtype(), t.shape());
  }
  const auto v = t.values<float>();
  return std::vector<float>(v.begin(), v.end());
}

Result<std::vector<int32_t>> ReadZeroPoints(const std::string& path) {
  OCTET_ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(path));
  if (!IsIntegerDType(t.dtype()) || t.shape().rank() != 1 || t.NumElements() == 0) {
    return InvalidArgument(
        "failed to read zero points '{}': expected a non-empty 1-D integer array (int32, int64, int8 or uint8), "
        "got {} of shape {}",
        path, t.dtype(), t.shape());
  }
  std::vector<int32_t> zps;
  zps.reserve(static_cast<size_t>(t.NumElements()));
  switch (t.dtype()) {
    case DType::kU8:
      for (uint8_t v : t.values<uint8_t>()) zps.push_back(v);
      break;
    case DType::kS8:
      for (int8_t v : t.values<int8_t>()) zps.push_back(v);
      break;
    case DType::kS32:
      for (int32_t v : t.values<int32_t>()) zps.push_back(v);
      break;
    case DType::kF32:
      break;
  }
  return zps;
}

}  // namespace

void QParamsFlags::AddTo(CLI::App* app) {
  scale_opt_ = app->add_option("--scale", scale_, "Per-tensor scale (> 0)")->type_name("S");
  CLI::Option* zp = app->add_option("--zero-point", zero_point_, "Per-tensor zero point")->type_name("Z");
  scale_opt_->needs(zp);
  zp->needs(scale_opt_);

  const char* dtype_help = command_ == QParamsCommand::kQuantize
                               ? "Quantized dtype: quint8, qint8 or qint32"
                               : (command_ == QParamsCommand::kDequantize
                                      ? "Quantized dtype: quint8, qint8 or qint32 (default: the input's; when "
                                        "given, the input must have it)"
                                      : "Dtype bounding the range: quint8, qint8 or qint32 (default: the smallest "
                                        "holding [quant-min, quant-max])");
  dtype_opt_ = app->add_option("--dtype", dtype_, dtype_help)->type_name("DTYPE");
  if (command_ == QParamsCommand::kQuantize) dtype_opt_->required();

  const bool range_required = command_ == QParamsCommand::kFakeQuantize;
  quant_min_opt_ = app->add_option("--quant-min", quant_min_,
                                   range_required ? "Lowest quantized value" : "Lowest quantized value "
                                                                               "(default: the dtype's)")
                       ->type_name("A");
  quant_max_opt_ = app->add_option("--quant-max", quant_max_,
                                   range_required ? "Highest quantized value" : "Highest quantized value "
                                                                                "(default: the dtype's)")
                       ->type_name("B");
  if (range_required) {
    quant_min_opt_->required();
    quant_max_opt_->required();
  }

  CLI::Option* axis = app->add_option("--axis", axis_, "Per-channel: the channel axis (negative counts from the end)")
                          ->type_name("A");
  scales_opt_ = app->add_option("--scales", scales_path_, "Per-channel: scales, a 1-D float32 .npy file")
                    ->type_name("S.npy");
  CLI::Option* zps = app->add_option("--zero-points", zero_points_path_,
                                     "Per-channel: zero points, a 1-D int32 (or int64) .npy file")
                         ->type_name("Z.npy");
  scales_opt_->needs(zps)->needs(axis);
  zps->needs(scales_opt_);
  axis->needs(scales_opt_);
  scales_opt_->excludes(scale_opt_);
}

bool QParamsFlags::per_channel() const { return Given(scales_opt_); }

Result<std::optional<DType>> QParamsFlags::FlagDType() const {
  if (Given(dtype_opt_)) {
    Result<DType> d = ParseDType(dtype_);
    if (!d.ok() || !IsIntegerDType(*d)) {
      return InvalidArgument("--dtype must be quint8, qint8 or qint32, got '{}'", dtype_);
    }
    return std::optional<DType>(*d);
  }
  if (command_ == QParamsCommand::kFakeQuantize) {
    for (DType d : {DType::kU8, DType::kS8, DType::kS32}) {
      if (quant_min_ >= DTypeMin(d) && quant_max_ <= DTypeMax(d)) return std::optional<DType>(d);
    }
    return InvalidArgument("--quant-min {} and --quant-max {} do not fit in qint32", quant_min_, quant_max_);
  }
  return std::optional<DType>();
}

int64_t QParamsFlags::QuantMin(DType dtype) const { return Given(quant_min_opt_) ? quant_min_ : DTypeMin(dtype); }
int64_t QParamsFlags::QuantMax(DType dtype) const { return Given(quant_max_opt_) ? quant_max_ : DTypeMax(dtype); }

Result<QParams> QParamsFlags::BuildPerTensor(DType dtype) const {
  if (!FitsInt32(zero_point_)) return InvalidArgument("--zero-point {} does not fit in int32", zero_point_);
  return QParams::PerTensor(dtype, static_cast<float>(scale_), static_cast<int32_t>(zero_point_),
                            QuantMin(dtype), QuantMax(dtype));
}

Status QParamsFlags::CheckUsage(std::optional<DType> dtype) const {
  if (!Given(scale_opt_) && !Given(scales_opt_)) {
    return InvalidArgument("qparams missing: give --scale and --zero-point (per-tensor) or --axis, --scales and "
                           "--zero-points (per-channel)");
  }
  if (!dtype) return OkStatus();
  const int64_t lo = QuantMin(*dtype);
  const int64_t hi = QuantMax(*dtype);
  if (lo < DTypeMin(*dtype) || hi > DTypeMax(*dtype) || lo >= hi) {
    return InvalidArgument("need {} <= --quant-min < --quant-max <= {} for {}, got {} and {}", DTypeMin(*dtype),
                           DTypeMax(*dtype), DTypeName(*dtype), lo, hi);
  }
  if (!per_channel()) {
    Result<QParams> q = BuildPerTensor(*dtype);
    if (!q.ok()) return q.status();
  }
  return OkStatus();
}

Result<QParams> QParamsFlags::Build(DType dtype, const Tensor& input, std::string_view input_path) const {
  if (!per_channel()) return BuildPerTensor(dtype);

  OCTET_ASSIGN_OR_RETURN(std::vector<float> scales, ReadScales(scales_path_));
  OCTET_ASSIGN_OR_RETURN(std::vector<int32_t> zero_points, ReadZeroPoints(zero_points_path_));
  if (scales.size() != zero_points.size()) {
    return InvalidArgument("per-channel qparams: '{}' holds {} scales but '{}' holds {} zero points", scales_path_,
                           scales.size(), zero_points_path_, zero_points.size());
  }
  const int rank = input.shape().rank();
  const int axis = axis_ < 0 ? axis_ + rank : axis_;
  if (axis < 0 || axis >= rank) {
    return InvalidArgument("failed to use --axis {} with '{}': the tensor has rank {} (shape {})", axis_, input_path,
                           rank, input.shape());
  }
  Result<QParams> q =
      QParams::PerChannel(dtype, std::move(scales), std::move(zero_points), axis, QuantMin(dtype), QuantMax(dtype));
  if (!q.ok()) {
    return q.status().WithContext(
        fmt::format("invalid per-channel qparams in '{}' and '{}'", scales_path_, zero_points_path_));
  }
  OCTET_RETURN_IF_ERROR(q->ValidateFor(input.shape(), input_path));
  return q;
}

}  // namespace octet::cli

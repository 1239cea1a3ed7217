// The qparam options shared by `octet tensor quantize|dequantize|fake-quantize`: per-tensor (--scale,
// --zero-point) or per-channel (--axis, --scales S.npy, --zero-points Z.npy), --dtype and the quant range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "core/dtype.h"
#include "core/qparams.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::cli {

// Which command the options belong to; it decides which options are required:
//   quantize:      --dtype required, the range defaults to the dtype's;
//   dequantize:    --dtype optional (the input's dtype; when given it must match), range as quantize;
//   fake-quantize: --quant-min and --quant-max required, --dtype optional (the smallest of quint8, qint8, qint32
//                  holding the range).
enum class QParamsCommand { kQuantize, kDequantize, kFakeQuantize };

class QParamsFlags {
 public:
  explicit QParamsFlags(QParamsCommand command) : command_(command) {}

  void AddTo(CLI::App* app);

  // The dtype named by --dtype or, for fake-quantize, inferred from the range; nullopt when neither applies.
  // Errors are usage errors.
  Result<std::optional<DType>> FlagDType() const;

  // Usage errors (exit 2), from the command line alone: neither or both of --scale and --scales, a bad --dtype,
  // and, when `dtype` is known, a quant range outside it or invalid per-tensor qparams.
  Status CheckUsage(std::optional<DType> dtype) const;

  bool per_channel() const;

  // The qparams for `input` (read from `input_path`) with dtype `dtype`, reading the per-channel files. Errors
  // (exit 1) name the file at fault: unreadable or malformed scale/zero-point files, invalid values in them, an
  // axis outside the input's rank or a channel count that differs from the input's.
  Result<QParams> Build(DType dtype, const Tensor& input, std::string_view input_path) const;

 private:
  int64_t QuantMin(DType dtype) const;
  int64_t QuantMax(DType dtype) const;
  Result<QParams> BuildPerTensor(DType dtype) const;

  QParamsCommand command_;
  double scale_ = 0.0;
  int64_t zero_point_ = 0;
  std::string dtype_;
  int64_t quant_min_ = 0;
  int64_t quant_max_ = 0;
  int axis_ = 0;
  std::string scales_path_;
  std::string zero_points_path_;

  CLI::Option* scale_opt_ = nullptr;
  CLI::Option* dtype_opt_ = nullptr;
  CLI::Option* quant_min_opt_ = nullptr;
  CLI::Option* quant_max_opt_ = nullptr;
  CLI::Option* scales_opt_ = nullptr;
};

}  // namespace octet::cli

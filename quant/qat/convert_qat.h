// ConvertQat: a trained QatModel to the static int8 graph (torch.ao.quantization.convert_fx after QAT). The trained
// float graph (QatModel::TrainedFloatGraph: BatchNormalization with its running statistics) goes through the PTQ
// path: Prepare fuses it (each ConvBn unit folds with the eval formula of quant/fold_batch_norm.h) and places one
// observer slot per fake-quant site; each slot takes its fake-quant module's qparams as fixed qparams
// (ObserverSlot::fixed_qparams) instead of calibration; Convert (quant/convert.h) builds the int8 graph.
//
// Which qparams: by default those the fake-quant forward used (FakeQuantizeModule::FakeQuantQParams), so the
// int8 model computes what training simulated. PyTorch's convert takes calculate_qparams() instead, which for
// FusedMovingAvgObsFakeQuantize (the v1 default) is the observer's formula, not the fused op's
// ChooseQuantizationParams (numerics.md §2.9: symmetric int8 max(|min|/128, max/127) in training vs
// max(|min|, max)/127.5 at convert); at 8 bits this moves a logit by an LSB or two, at 3-4 bits it costs accuracy
// (digits CNN, 3-bit per-tensor weights: 92.2% simulated, 80.8% after PyTorch's convert). kCalculateQParams
// reproduces PyTorch. Symmetric configs keep a symmetric scheme (the fused forward reports affine with zero
// point 0).
//
// Weights follow PyTorch's from_float: the weight module is run once more on the folded weight (observing it when
// its observer is still enabled) before its qparams are taken, so the scales match the weights being quantized.
#pragma once

#include "core/graph.h"
#include "core/status.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "quant/qat/prepare_qat.h"

namespace octet::qat {

enum class QatQParamsSource {
  kForward,           // FakeQuantizeModule::FakeQuantQParams(): what training simulated (default)
  kCalculateQParams,  // FakeQuantizeModule::CalculateQParams(): PyTorch's convert
};

struct QatConvertOptions {
  ConvertOptions convert;
  QatQParamsSource qparams = QatQParamsSource::kForward;
};

// The PreparedGraph of the trained float model with every slot's qparams fixed from the model's fake-quant modules
// (what ConvertQat converts; also a way to inspect them). Fails naming a slot without a module.
Result<PreparedGraph> PrepareForConvert(QatModel& model, QatQParamsSource source = QatQParamsSource::kForward);

// The int8 graph (run it with QuantizedGraphRegistry()).
Result<Graph> ConvertQat(QatModel& model, const QatConvertOptions& options = {}, ConvertReport* report = nullptr);

}  // namespace octet::qat

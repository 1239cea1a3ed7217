// ConvertQat: a trained QatModel to the static int8 graph (torch.ao.quantization.convert_fx after QAT). The trained
// float graph (QatModel::TrainedFloatGraph: BatchNormalization with its running statistics) goes through the PTQ
// path: Prepare fuses it (each ConvBn unit folds with the eval formula of quant/fold_batch_norm.h) and places one
// observer slot per fake-quant site; each slot takes its fake-quant module's CalculateQParams() as fixed qparams
// (ObserverSlot::fixed_qparams) instead of calibration; Convert (quant/convert.h) builds the int8 graph.
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

// The PreparedGraph of the trained float model with every slot's qparams fixed from the model's fake-quant modules
// (what ConvertQat converts; also a way to inspect them). Fails naming a slot without a module.
Result<PreparedGraph> PrepareForConvert(QatModel& model);

// The int8 graph (run it with QuantizedGraphRegistry()).
Result<Graph> ConvertQat(QatModel& model, const ConvertOptions& options = {}, ConvertReport* report = nullptr);

}  // namespace octet::qat

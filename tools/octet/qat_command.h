// `octet qat`: quantization-aware training of a float classifier model (quant/qat) on .npy data, then conversion to
// the static int8 model.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet qat MODEL.onnx --data X.npy --labels Y.npy -o OUT.octet [--onnx OUT.onnx] [--epochs N] [--lr LR]
//             [--batch B] [--momentum M] [--weight-decay W] [--backend x86|fbgemm|qnnpack|onednn]
//             [--qconfig-version 0|1] [--learnable]
//             [--freeze-bn-after N] [--freeze-observers-after N] [--weight-bits 4|8 | --weight-quant-range MIN,MAX]
//             [--skip NODE...] [--profile P] [--convert-qparams forward|calculate] [--seed S]
//             [--test-data X.npy --test-labels Y.npy] [--isa] [--threads]
//     PrepareQat with get_default_qat_qconfig(backend, version) (1: fused moving-average fake-quant, 0: FakeQuantize
//     with a MovingAverageMinMax observer; --learnable: LSQ scale and zero point, learned from
//     --freeze-observers-after on, default after the first epoch), SGD on softmax cross-entropy of the first output,
//     observers and BatchNorm statistics frozen after the given epochs (PyTorch's disable_observer /
//     freeze_bn_stats), ConvertQat (quant/qat/convert_qat.h says which qparams). One line per epoch on stdout (with
//     the fake-quant model's test accuracy when test data is given), progress on a terminal's stderr; at the end the
//     int8 model's test accuracy. The outputs are written atomically, only when everything succeeded.
void AddQatCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli

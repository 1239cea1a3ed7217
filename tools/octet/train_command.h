// `octet train`: float training of a classifier model on .npy data (quant/training), written as an ONNX float model
// (io/onnx/qdq_export.h writes a float graph as plain ONNX) or a weights checkpoint (io/weights_checkpoint.h).
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet train MODEL.onnx --data X.npy --labels Y.npy -o TRAINED.onnx|OUT_DIR [--checkpoint DIR] [--epochs N]
//               [--lr LR] [--batch B]
//               [--momentum M] [--weight-decay WD] [--schedule constant|step|cosine] [--step-size S] [--gamma G]
//               [--seed S] [--reset-parameters] [--test-data X.npy --test-labels Y.npy] [--isa TIER] [--threads T]
//     trains the model's first output as logits [N, C] with softmax cross-entropy and torch.optim.SGD semantics;
//     X is f32 [N, ...] (reshaped to the model input when its per-sample dims are known and the sizes agree), Y is
//     integer [N]. --reset-parameters starts from PyTorch's default initialisation (seeded by --seed) instead of
//     the model's weights. Prints one line per epoch (loss, training accuracy, test accuracy when given) on
//     stdout, progress on a terminal's stderr, and rewrites the output atomically after every epoch: an -o ending
//     in .onnx is the trained model in ONNX (the input model with its weights and BatchNorm statistics replaced),
//     anything else a checkpoint folder (as --checkpoint DIR, which adds one beside an .onnx output).
void AddTrainCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli

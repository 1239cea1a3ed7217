// `octet train`: float training of a classifier model on .npy data (quant/training), written as a weights
// checkpoint (io/weights_checkpoint.h) until the .octet format and an ONNX writer exist.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet train MODEL.onnx --data X.npy --labels Y.npy -o OUT_DIR [--epochs N] [--lr LR] [--batch B]
//               [--momentum M] [--weight-decay WD] [--schedule constant|step|cosine] [--step-size S] [--gamma G]
//               [--seed S] [--reset-parameters] [--test-data X.npy --test-labels Y.npy] [--isa TIER] [--threads T]
//     trains the model's first output as logits [N, C] with softmax cross-entropy and torch.optim.SGD semantics;
//     X is f32 [N, ...] (reshaped to the model input when its per-sample dims are known and the sizes agree), Y is
//     integer [N]. --reset-parameters starts from PyTorch's default initialisation (seeded by --seed) instead of
//     the model's weights. Prints one line per epoch (loss, training accuracy, test accuracy when given) on
//     stdout, progress on a terminal's stderr, and rewrites OUT_DIR atomically after every epoch.
void AddTrainCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli

// `octet tensor quantize|dequantize|fake-quantize`: ops/quantize.h applied to .npy files.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds the `tensor` command and its three subcommands to `app`:
//   octet tensor quantize IN.npy --dtype quint8|qint8|qint32 QPARAMS [--nan error|zero-point] -o OUT.npy
//   octet tensor dequantize IN.npy [--dtype ...] QPARAMS -o OUT.npy
//   octet tensor fake-quantize IN.npy QPARAMS --quant-min A --quant-max B [--nan ...] -o OUT.npy [--mask MASK.npy]
// where QPARAMS is --scale S --zero-point Z, or --axis A --scales S.npy --zero-points Z.npy, plus optional
// --quant-min/--quant-max (see qparams_options.h), and every subcommand takes --isa and --threads.
void AddTensorCommands(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli

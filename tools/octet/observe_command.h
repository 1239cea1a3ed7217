// `octet observe`: run an observer over .npy batches and print its qparams and range as JSON (DESIGN.md §8).
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds `octet observe --observer NAME [options] BATCH.npy...` to `app`. Options: --dtype, --qscheme,
// --reduce-range, --quant-min/--quant-max, --eps, --averaging-constant, --ch-axis, --bins, --upsample-rate,
// --histogram-variant, --percentile, --skip-non-finite (observers/observer_options.h), --state (also print the
// saved observer state), --isa and --threads. The batches are observed in order; stdout gets one JSON object
// {"observer", "dtype", "qscheme", "quant_min", "quant_max", "scale", "zero_point", "min_val", "max_val"} (lists of
// one entry per tensor or per channel; PlaceholderObserver has no scale or zero point: empty lists). Exit 2 for bad
// usage, including option combinations the observer rejects; 1 for unreadable or invalid batches (non-float32, NaN
// or ±Inf without --skip-non-finite), naming the file.
void AddObserveCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli

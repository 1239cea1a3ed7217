// `octet demo`: the main job on the bundled digits data (DESIGN.md §8, README's first command).
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet demo [--out DIR] [--data digits.csv.gz] [--seed S] [--threads T]
//     trains the float digits CNN and MLP in octet (quant/training/digits_models.h), quantizes the CNN statically
//     with MinMax, Histogram and Entropy activation observers, the MLP dynamically, runs QAT on the CNN, evaluates
//     every variant on the 360 held-out images, runs the numeric suite and the sensitivity analysis on the MinMax
//     model, prints one table (accuracy, model size, latency, output SQNR per variant) and writes the models,
//     results.json, report.json and report.html to DIR (default octet-demo).
void AddDemoCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli

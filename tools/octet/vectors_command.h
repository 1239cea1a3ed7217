// `octet vectors`: per-layer test vectors of an int8 model for hardware bring-up, and their replay through the
// reference kernels (io/vectors/vectors.h, docs/test_vectors.md).
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet vectors QUANT.octet --input NAME=FILE.npy... --out DIR [--nodes NAME,...] [--force] [--isa T] [--threads N]
//     runs the model once and writes DIR (manifest.json and nodes/<index>_<name>/*.npy), then prints one line per
//     recorded node. DIR appears complete or not at all; an existing non-empty DIR is refused without --force.
//   octet vectors --replay DIR
//     recomputes every node of DIR with the scalar reference kernels and compares with ==; prints a summary, or
//     fails (exit 1) naming the first node, tensor and element that differ.
// Exit 1 on runtime errors (unreadable files, unknown or missing inputs, wrong shapes, unknown nodes, a mismatch),
// 2 on bad usage (neither or both of MODEL and --replay, a missing --out or --input).
void AddVectorsCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli

// `octet calibrate`: calibration as a file (issue 19). Runs Prepare and the observers over the model's calibration
// data, or one shard of it, and writes every observer's state (quant/calibration_state.h); `octet merge` adds shard
// states together and `octet quantize --state` converts from one without seeing the data again.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/status.h"
#include "quant/prepare.h"
#include "tools/octet/command.h"

namespace octet::cli {

// Adds to `app`:
//   octet calibrate MODEL.onnx --calib NAME=PATH[,PATH...] ... [--calib-batch N] [--shard I/N | --mpi]
//     [--backend B] [--activation-observer NAME] [--activation-bits B] [--weight-observer NAME]
//     [--per-channel|--per-tensor] [--skip NODE ...] -o STATE.json [--isa TIER] [--threads T]
// PATH is a .npy file (samples along axis 0) or a folder of them; files are memory-mapped and read one batch at a
// time. The data's batches are split into N contiguous runs; shard I calibrates run I. --mpi: each rank of the MPI
// job is one shard, rank 0 gathers and merges the states and writes STATE.json (builds with MPI only).
// The quantization flags mean what they mean for `octet quantize --mode static`; give the same ones to quantize.
void AddCalibrateCommand(CLI::App& app, CommandRegistry& registry);

// For `octet quantize --state STATE.json`: loads the state file into `prepared` (prepared from `model`), refusing a
// state of another model, a partial one, or one made with other quantization flags.
Status LoadCalibrationStateFile(PreparedGraph& prepared, const std::string& state_path, const std::string& model);

}  // namespace octet::cli

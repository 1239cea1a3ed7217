// `octet merge STATE.json... -o STATE.json`: merges calibration states of disjoint shards (octet calibrate --shard)
// exactly, in any order and grouping (quant/calibration_state.h).
#pragma once

#include <CLI/CLI.hpp>

#include "tools/octet/command.h"

namespace octet::cli {

void AddMergeCommand(CLI::App& app, CommandRegistry& registry);

}  // namespace octet::cli

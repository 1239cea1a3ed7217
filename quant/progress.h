// Progress for long work (calibration, sensitivity, training). The library draws nothing unless asked: an option
// struct's ProgressFn is empty by default, so an application that embeds octet gets no terminal output. The `octet`
// command asks for TerminalProgress when stderr is a terminal and --quiet is not given (DESIGN.md §8).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace octet {

// Called after each unit of work with (done, total).
using ProgressFn = std::function<void(int64_t done, int64_t total)>;

// A ProgressFn that draws "<label>: done/total" on stderr when it is a terminal, ending the line when done ==
// total; an empty function (no output) otherwise.
ProgressFn TerminalProgress(std::string label);

}  // namespace octet

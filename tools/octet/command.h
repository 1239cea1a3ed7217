// How a command plugs into `octet`: its CLI11 sub-app, the function that runs it after parsing, exit statuses and
// the error and file helpers every command shares.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/status.h"
#include "core/tensor.h"
#include "quant/progress.h"

namespace octet::cli {

// The exit statuses of DESIGN.md §8.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // a runtime error: unreadable or invalid file, NaN input, failed check
inline constexpr int kExitUsage = 2;    // bad usage: parse errors, missing or conflicting options, bad option values

// The leaf commands and what runs each once the command line has parsed.
class CommandRegistry {
 public:
  void Add(CLI::App* app, std::function<int()> run);
  // Runs the command whose sub-app was parsed; returns its exit status, or -1 when none was.
  int RunParsed() const;

 private:
  struct Entry {
    CLI::App* app;
    std::function<int()> run;
  };
  std::vector<Entry> entries_;
};

// Progress lines for the command's long steps: TerminalProgress(label) (drawn only when stderr is a terminal), or
// nothing after `octet --quiet`. The library itself never draws progress unless given a ProgressFn.
void SetQuiet(bool quiet);
ProgressFn CommandProgress(std::string label);

// Prints "octet: <message>" to stderr and returns kExitFailure.
int ReportFailure(const std::string& message);
int ReportFailure(const Status& status);
// Prints "octet: <message>" and a pointer to --help to stderr and returns kExitUsage.
int ReportUsage(const std::string& message);

// `status` with its message naming `path`: kept as is when it already quotes it, otherwise prefixed with
// "failed to <verb> '<path>'", e.g. "failed to read 'x.npy': file is truncated".
Status NameFile(const Status& status, std::string_view verb, std::string_view path);

// Reads a .npy file; errors name the file.
Result<Tensor> ReadTensorFile(const std::string& path);
// Writes a .npy file atomically (temporary file + rename); errors name the file.
Status WriteTensorFile(const std::string& path, const Tensor& tensor);

}  // namespace octet::cli

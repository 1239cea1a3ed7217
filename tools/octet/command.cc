// The command registry, error reporting and file helpers shared by the octet commands.
#include "tools/octet/command.h"

#include <cstdio>

#include <fmt/format.h>

#include "io/npy.h"

namespace octet::cli {

void CommandRegistry::Add(CLI::App* app, std::function<int()> run) { entries_.push_back({app, std::move(run)}); }

int CommandRegistry::RunParsed() const {
  for (const Entry& e : entries_) {
    if (e.app->parsed()) return e.run();
  }
  return -1;
}

namespace {
bool g_quiet = false;  // set once by main() after parsing, before any command runs
}  // namespace

void SetQuiet(bool quiet) { g_quiet = quiet; }

ProgressFn CommandProgress(std::string label) {
  if (g_quiet) return {};
  return TerminalProgress(std::move(label));
}

int ReportFailure(const std::string& message) {
  fmt::print(stderr, "octet: {}\n", message);
  return kExitFailure;
}

int ReportFailure(const Status& status) { return ReportFailure(status.message()); }

int ReportUsage(const std::string& message) {
  fmt::print(stderr, "octet: {}\nRun with --help for more information.\n", message);
  return kExitUsage;
}

Status NameFile(const Status& status, std::string_view verb, std::string_view path) {
  if (status.ok()) return status;
  if (status.message().find(fmt::format("'{}'", path)) != std::string::npos) return status;
  return status.WithContext(fmt::format("failed to {} '{}'", verb, path));
}

Result<Tensor> ReadTensorFile(const std::string& path) {
  Result<Tensor> t = ReadNpy(path);
  if (!t.ok()) return NameFile(t.status(), "read", path);
  return t;
}

Status WriteTensorFile(const std::string& path, const Tensor& tensor) {
  return NameFile(WriteNpy(path, tensor), "write", path);
}

}  // namespace octet::cli

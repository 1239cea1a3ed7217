// octet-runner MODEL.octet OUTPUT_DIR NAME=FILE.npy...: loads a .octet model with the minimal runtime
// (io/runtime), runs it on the given inputs and writes OUTPUT_DIR/<output name>.npy for every graph output (names
// made safe for the file system as `octet run` does). Exit status 0 on success, 1 on a failure (message on stderr
// naming the file and the cause), 2 on bad usage.
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "io/file_name.h"
#include "io/npy.h"
#include "io/runtime/octet_runtime.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int Fail(const octet::Status& status) {
  fmt::print(stderr, "octet-runner: {}\n", status.message());
  return kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: octet-runner MODEL.octet OUTPUT_DIR NAME=FILE.npy...\n");
    return kExitUsage;
  }
  const std::string model_path = argv[1];
  const std::filesystem::path output_dir = argv[2];
  std::vector<std::pair<std::string, octet::Tensor>> inputs;
  octet::CompileOptions options;
  for (int k = 3; k < argc; ++k) {
    const std::string arg = argv[k];
    const size_t eq = arg.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) {
      fmt::print(stderr, "octet-runner: inputs must be NAME=FILE.npy, got '{}'\n", arg);
      return kExitUsage;
    }
    octet::Result<octet::Tensor> t = octet::ReadNpy(arg.substr(eq + 1));
    if (!t.ok()) return Fail(t.status());
    options.input_shapes.emplace_back(arg.substr(0, eq), t->shape());
    inputs.emplace_back(arg.substr(0, eq), std::move(*t));
  }

  octet::Result<octet::Context> context = octet::Context::Create();
  if (!context.ok()) return Fail(context.status());
  octet::Result<octet::OctetRuntime> runtime = octet::OctetRuntime::Load(model_path, *context, options);
  if (!runtime.ok()) return Fail(runtime.status());
  octet::Result<std::vector<octet::Tensor>> outputs = runtime->Run(inputs);
  if (!outputs.ok()) return Fail(outputs.status().WithContext(fmt::format("failed to run '{}'", model_path)));

  std::error_code ec;
  std::filesystem::create_directories(output_dir, ec);
  if (ec) return Fail(octet::IoError("failed to create '{}': {}", output_dir.string(), ec.message()));
  const octet::Graph& graph = runtime->graph();
  std::vector<std::string> names;
  for (octet::ValueId id : graph.outputs()) names.push_back(graph.value(id).name);
  const std::vector<std::string> files = octet::SafeFileNames(names);
  for (size_t k = 0; k < outputs->size(); ++k) {
    const std::string& name = names[k];
    const std::string path = (output_dir / (files[k] + ".npy")).string();
    if (octet::Status s = octet::WriteNpy(path, (*outputs)[k]); !s.ok()) return Fail(s);
    fmt::print("{}: {} {} -> {}\n", name, (*outputs)[k].dtype(), (*outputs)[k].shape(), path);
  }
  return kExitOk;
}

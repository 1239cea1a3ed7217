// Weights checkpoints: .npy files plus a manifest, swapped in atomically.
#include "io/weights_checkpoint.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/file_util.h"
#include "io/npy.h"

namespace octet {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "octet-weights-checkpoint";

Status CheckpointError(const std::string& dir, const std::string& what) {
  return IoError("failed to write checkpoint '{}': {}", dir, what);
}

// Puts `staged` at `dir`: a plain rename when `dir` does not exist, otherwise an atomic exchange of the two
// directories followed by removal of the old one (now at `staged`).
Status SwapIn(const fs::path& staged, const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (::rename(staged.c_str(), dir.c_str()) != 0) return CheckpointError(dir, std::strerror(errno));
  } else {
    if (!fs::is_directory(dir, ec)) return CheckpointError(dir, "it exists and is not a directory");
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
      return CheckpointError(dir, fmt::format("cannot swap in the new directory: {}", std::strerror(errno)));
    }
    fs::remove_all(staged, ec);  // the old checkpoint; leftovers are harmless
  }
  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
  return OkStatus();
}

}  // namespace

Status WriteWeightsCheckpoint(const Graph& graph, const std::string& dir_name,
                              const std::map<std::string, std::string>& metadata) {
  if (dir_name.empty()) return InvalidArgument("failed to write checkpoint: empty directory name");
  fs::path dir(dir_name);
  while (!dir.empty() && !dir.has_filename()) dir = dir.parent_path();  // "out/" -> "out"
  static std::atomic<uint64_t> counter{0};
  const fs::path staged = dir.string() + fmt::format(".tmp-{}-{}", ::getpid(), counter++);
  std::error_code ec;
  if (!fs::create_directory(staged, ec)) return CheckpointError(dir, fmt::format("cannot create {}: {}", staged.string(), ec.message()));
  auto fail = [&](Status s) {
    fs::remove_all(staged, ec);
    return s;
  };
  nlohmann::json manifest;
  manifest["format"] = kFormat;
  manifest["version"] = 1;
  manifest["graph"] = graph.name();
  manifest["tensors"] = nlohmann::json::array();
  int index = 0;
  for (const Value& v : graph.values()) {
    if (v.kind != ValueKind::kConstant) continue;
    const std::string file = fmt::format("t{:04d}.npy", index++);
    const Status s = WriteNpy((staged / file).string(), v.data);
    if (!s.ok()) return fail(s.WithContext(fmt::format("failed to write checkpoint '{}' (tensor '{}')", dir.string(), v.name)));
    manifest["tensors"].push_back(
        {{"name", v.name}, {"file", file}, {"dtype", DTypeName(v.data.dtype())}, {"shape", v.data.shape().dims()}});
  }
  manifest["metadata"] = metadata;
  const Status s = WriteFileAtomically((staged / "manifest.json").string(), manifest.dump(1) + "\n");
  if (!s.ok()) return fail(s);
  const Status swapped = SwapIn(staged, dir);
  if (!swapped.ok()) return fail(swapped);
  return OkStatus();
}

Result<int> LoadWeightsCheckpoint(const std::string& dir, Graph& graph) {
  auto fail = [&](const std::string& what) { return InvalidArgument("failed to load checkpoint '{}': {}", dir, what); };
  OCTET_ASSIGN_OR_RETURN(std::string text, ReadFile((fs::path(dir) / "manifest.json").string()));
  nlohmann::json manifest = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.is_object()) return fail("manifest.json is not a JSON object");
  if (manifest.value("format", "") != kFormat || manifest.value("version", 0) != 1) {
    return fail(fmt::format("manifest.json is not format '{}' version 1", kFormat));
  }
  const nlohmann::json& tensors = manifest["tensors"];
  if (!tensors.is_array()) return fail("manifest.json has no 'tensors' list");
  // Read and check everything before changing the graph.
  std::vector<std::pair<ValueId, Tensor>> loaded;
  for (const nlohmann::json& t : tensors) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || !t.contains("file") || !t["file"].is_string()) {
      return fail("a 'tensors' entry lacks a string 'name' or 'file'");
    }
    const std::string name = t["name"].get<std::string>(), file = t["file"].get<std::string>();
    if (file.find('/') != std::string::npos || file.find("..") != std::string::npos) {
      return fail(fmt::format("tensor '{}' names file '{}' outside the checkpoint", name, file));
    }
    const ValueId id = graph.FindValue(name);
    if (id == kNoValue || graph.value(id).kind != ValueKind::kConstant) {
      return fail(fmt::format("tensor '{}' is not a constant of graph '{}'", name, graph.name()));
    }
    OCTET_ASSIGN_OR_RETURN(Tensor data, ReadNpy((fs::path(dir) / file).string()));
    const Tensor& current = graph.value(id).data;
    if (data.dtype() != current.dtype() || data.shape() != current.shape()) {
      return fail(fmt::format("tensor '{}' is {} {} in the checkpoint, {} {} in the graph", name,
                              DTypeName(data.dtype()), data.shape(), DTypeName(current.dtype()), current.shape()));
    }
    loaded.emplace_back(id, std::move(data));
  }
  for (auto& [id, data] : loaded) graph.mutable_value(id).data = std::move(data);
  return static_cast<int>(loaded.size());
}

}  // namespace octet

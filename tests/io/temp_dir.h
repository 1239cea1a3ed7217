// TempDir: a fresh folder under the system's temporary directory for a file test, removed with everything in it at
// scope exit.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

namespace octet::testing {

class TempDir {
 public:
  // The folder is named PREFIX_<pid>_<counter>_<random>, unique across processes and threads.
  explicit TempDir(const std::string& prefix) {
    static std::atomic<int> counter{0};
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("{}_{}_{}_{:08x}", prefix, ::getpid(), counter.fetch_add(1), rd());
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& leaf) const { return (path_ / leaf).string(); }
  // The names of everything in the folder, sorted.
  std::vector<std::string> List() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace octet::testing

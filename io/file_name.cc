// Safe file names for named outputs.
#include "io/file_name.h"

#include <set>

#include <fmt/format.h>

namespace octet {

std::string SafeFileName(const std::string& name) {
  std::string s;
  for (char c : name) {
    const bool safe =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    s += safe ? c : '_';
  }
  if (s.empty()) s = "output";
  if (s.front() == '.') s.front() = '_';
  if (s.size() > kMaxSafeFileNameLength) s.resize(kMaxSafeFileNameLength);
  return s;
}

std::vector<std::string> SafeFileNames(const std::vector<std::string>& names) {
  std::vector<std::string> files;
  std::set<std::string> taken;
  for (const std::string& name : names) {
    const std::string base = SafeFileName(name);
    std::string file = base;
    for (int j = 1; !taken.insert(file).second; ++j) file = fmt::format("{}_{}", base, j);
    files.push_back(std::move(file));
  }
  return files;
}

}  // namespace octet

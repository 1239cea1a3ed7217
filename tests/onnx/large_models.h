// Where the tests find ResNet-18 and MobileNetV2 (seeded random weights, 46 and 14 MB): not committed, and torch is
// no test dependency, so tests/data/models/generate.py --large DIR writes them. Tests that use them check them when
// they are in $OCTET_LARGE_MODELS (default /tmp/octet_large_models) and report a skip otherwise.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace octet::testing {

inline std::filesystem::path LargeModelDir() {
  const char* env = std::getenv("OCTET_LARGE_MODELS");
  return env != nullptr && *env != '\0' ? std::filesystem::path(env)
                                          : std::filesystem::temp_directory_path() / "octet_large_models";
}

// True when `dir` holds NAME.onnx, NAME.input0.npy and NAME.output0.npy for ResNet-18 and MobileNetV2.
inline bool HaveLargeModels(const std::filesystem::path& dir) {
  for (const char* name : {"resnet18", "mobilenet_v2"}) {
    for (const char* suffix : {".onnx", ".input0.npy", ".output0.npy"}) {
      if (!std::filesystem::exists(dir / (std::string(name) + suffix))) return false;
    }
  }
  return true;
}

}  // namespace octet::testing

// Turning a tensor or value name (any string a model carries) into a file name that is safe to create in an output
// folder: `octet run` and octet-runner write each output as <name>.npy through it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace octet {

// The longest name SafeFileName returns: with a suffix such as ".npy" it stays far below NAME_MAX (255 bytes).
inline constexpr size_t kMaxSafeFileNameLength = 200;

// ASCII letters, digits, '.', '-' and '_' stay; every other byte becomes '_', and so does a leading '.' (no hidden
// files, never "." or ".."). An empty name becomes "output". Longer names are cut to kMaxSafeFileNameLength.
std::string SafeFileName(const std::string& name);

// SafeFileName of each name, made distinct: a name that comes out as an earlier one gets "_1", "_2", ... appended.
std::vector<std::string> SafeFileNames(const std::vector<std::string>& names);

}  // namespace octet

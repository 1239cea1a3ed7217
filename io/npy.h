// .npy tensor files (NumPy format versions 1.0, 2.0 and 3.0): read f32, u8, s8, s32 (and s64 into s32 when every
// value fits), write f32, u8, s8, s32 in version 1.0 (2.0 when the header needs it). C order, little-endian.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/tensor.h"

namespace octet {

// Parses a whole .npy file held in memory. `name` (usually the path) names the file in error messages. Rejects,
// with a message naming the problem: a bad magic string or version, a truncated or oversized header, a header
// that is not the dict NumPy writes, Fortran order, big-endian or unsupported dtypes (objects, strings, float64,
// ...), a shape with negative dimensions or an overflowing element count, and data shorter or longer than the
// shape says.
Result<Tensor> ParseNpy(std::span<const std::byte> bytes, std::string_view name);

// Reads `path` (ParseNpy on its contents).
Result<Tensor> ReadNpy(const std::string& path);

// The bytes of `tensor` as a .npy file.
std::string SerializeNpy(const Tensor& tensor);

// Writes `tensor` to `path` through a temporary file in the same folder and a rename, so `path` is either the old
// file or the complete new one, never half written.
Status WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace octet

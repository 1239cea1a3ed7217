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

// The largest header ParseNpy accepts. NumPy's own headers are a few hundred bytes; the bound keeps a corrupt length
// field from asking for gigabytes.
inline constexpr size_t kMaxNpyHeaderBytes = size_t{1} << 20;
// The most dimensions ParseNpy accepts: NumPy 2's limit (NumPy 1 allows 32), so every array NumPy can save is read.
inline constexpr int kMaxNpyRank = 64;

// Parses a whole .npy file held in memory. `name` (usually the path) names the file in error messages. Rejects,
// with a message naming the problem: a bad magic string or version, a truncated or oversized header, a header
// that is not the dict NumPy writes, Fortran order, big-endian or unsupported dtypes (objects, strings, float64,
// ...), a shape with negative dimensions or an overflowing element count, and data shorter or longer than the
// shape says. Errors read "failed to read .npy file '<name>': <problem>". The header is the Python dict literal
// NumPy writes, parsed as Python would (any key order, either quote, any whitespace, trailing commas); its keys must
// be exactly 'descr', 'fortran_order' and 'shape'. Accepted descr: '<f4', '<i4', '<i8' (stored as s32 when every
// value fits in int32; otherwise an OutOfRange error names the first element that does not), and for the one-byte
// types 'u1' and 'i1' any byte-order mark ('|', '<', '>', '=') or none. Multi-byte types need an explicit '<'.
Result<Tensor> ParseNpy(std::span<const std::byte> bytes, std::string_view name);

// What a .npy header says: the tensor's dtype and shape, and where the data starts. `bytes` needs the header only
// (the data may be absent): for reading a large file in pieces (memory-mapped calibration data). item_bytes is the
// size of one element in the file (8 for '<i8', read as s32 when narrow_s64).
struct NpyLayout {
  DType dtype;
  size_t item_bytes;
  bool narrow_s64;
  Shape shape;
  size_t data_offset;
};
Result<NpyLayout> ParseNpyHeader(std::span<const std::byte> bytes, std::string_view name);

// Reads `path` (ParseNpy on its contents).
Result<Tensor> ReadNpy(const std::string& path);

// The bytes of `tensor` as a .npy file, identical to what NumPy 1.24 writes for the same array: descr '<f4', '|u1',
// '|i1' or '<i4'; the header padded with spaces (plus NumPy's 21-digit growth room for the first dimension) and a
// newline so the data starts at a multiple of 64 bytes; version 1.0, or 2.0 when the header exceeds 65535 bytes
// (only a rank far above kMaxNpyRank needs that, and such a file is not readable by ParseNpy or NumPy).
std::string SerializeNpy(const Tensor& tensor);

// Writes `tensor` to `path` through a temporary file in the same folder and a rename, so `path` is either the old
// file or the complete new one, never half written.
Status WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace octet

// Whole-file reads and atomic whole-file writes, shared by every octet file format (.npy, .octet, reports).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace octet {

// Files larger than this are refused by ReadFile: no octet file is near it, and a bound keeps a wrong path (a disk
// image, /dev/zero) from exhausting memory.
inline constexpr uint64_t kMaxReadFileBytes = uint64_t{16} << 30;  // 16 GiB

// The whole contents of `path`. Errors name the path: NotFound when it does not exist, InvalidArgument when it is
// a directory or larger than kMaxReadFileBytes, IoError (with the system's reason) when it cannot be opened or read.
// Streams (pipes, /dev/stdin) are read to their end under the same bound.
Result<std::string> ReadFile(const std::string& path);

// Replaces `path` with exactly `bytes`: writes a new file with a unique name in the same folder, fsyncs it, renames
// it over `path` and fsyncs the folder. Readers see either the old file or the complete new one. On any failure the
// temporary file is removed, `path` is left as it was, and the error names `path` and the system's reason. A
// symbolic link at `path` is replaced by a regular file (the link target is not written).
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace octet

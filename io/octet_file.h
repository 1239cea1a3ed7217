// .octet model files (DESIGN.md §8, §10): a whole Graph (values with dtypes, shapes, qparams and constant data;
// nodes with typed attributes; graph inputs and outputs) plus a small metadata map, versioned and checksummed.
//
// Layout of format version 1 (all integers little-endian; io/octet_format.h has the constants):
//   header (32 bytes): magic "\x89OCT\r\n\x1a\n", u32 format version, u32 section count, u64 file size,
//                      u32 reserved (0), u32 CRC-32 of header bytes [0, 28) followed by the section table;
//   section table:     per section 32 bytes: name (12 bytes, NUL-padded), u32 CRC-32 of its bytes, u64 offset,
//                      u64 size;
//   sections, in this order, each starting where the previous ends (the data section at the next multiple of 64,
//   zero padding in between): "metadata", "graph", "values", "nodes", "data". The records of the first four are
//   described in octet_writer.cc; "data" holds constant and tensor-attribute bytes, in record order without
//   overlap, each at a multiple of 64 from the start of the file, so a loader could map them in place.
// The graph's values are stored with the graph inputs first (in input order), then the others in id order; value
// ids of a loaded graph follow that order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "core/graph.h"
#include "core/status.h"

namespace octet {

// The newest format version this build reads and the one it writes.
inline constexpr uint32_t kOctetFormatVersion = 1;

// Free-form key/value strings stored with the graph, e.g. "producer", "mode", "profile", "octet_version". Keys are
// non-empty and free of control characters; values are any bytes.
using OctetMetadata = std::map<std::string, std::string>;

struct OctetModel {
  Graph graph;
  OctetMetadata metadata;
  uint32_t format_version = kOctetFormatVersion;
};

// The bytes of an .octet file holding `graph` and `metadata`. Fails (naming `name`, normally the destination path)
// when the graph does not pass VerifyGraph, a node, attribute or metadata name is empty where it must not be or
// contains control characters, or a count does not fit the format's 32-bit fields.
Result<std::string> SerializeOctet(const Graph& graph, const OctetMetadata& metadata, std::string_view name);

// Writes `graph` and `metadata` to `path` through a temporary file and a rename (io/file_util.h): `path` is either
// left as it was or replaced by the complete file, and nothing else is left behind.
Status WriteOctetFile(const std::string& path, const Graph& graph, const OctetMetadata& metadata = {});

// Parses a whole .octet file held in memory; `name` (usually the path) names it in errors, which read
// "failed to read .octet file '<name>': <where>: <problem>" (where = "section 'values' entry 12 ('conv1.weight')"
// and the like). Every size, count and offset is checked against the bytes present before it is used, so no
// allocation exceeds what the file can back; checksums, enum codes, dtypes, names (no control characters), qparams
// (QParams::Create) and finally the graph (VerifyGraph) are validated. A newer or unknown format version is refused.
Result<OctetModel> ParseOctet(std::span<const std::byte> bytes, std::string_view name);

// Reads `path` (ParseOctet on its contents).
Result<OctetModel> ReadOctetFile(const std::string& path);

// True when `bytes` start with the .octet magic (whatever the version).
bool HasOctetMagic(std::span<const std::byte> bytes);
// True when the file at `path` can be opened and starts with the .octet magic.
bool IsOctetFile(const std::string& path);

}  // namespace octet

// The fixed layout of .octet files (see io/octet_file.h): magic, header and section-table geometry, section names
// and the codes that stand for enums in the file. Shared by the reader, the writer and the malformed-file tests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace octet::octet_format {

inline constexpr std::array<unsigned char, 8> kMagic = {0x89, 'O', 'C', 'T', '\r', '\n', 0x1a, '\n'};

// Header fields (byte offsets).
inline constexpr size_t kVersionOffset = 8;
inline constexpr size_t kSectionCountOffset = 12;
inline constexpr size_t kFileSizeOffset = 16;
inline constexpr size_t kReservedOffset = 24;
inline constexpr size_t kHeaderCrcOffset = 28;
inline constexpr size_t kHeaderBytes = 32;

// Section table entries: name (NUL-padded), CRC-32, offset, size.
inline constexpr size_t kSectionNameBytes = 12;
inline constexpr size_t kSectionCrcOffset = 12;
inline constexpr size_t kSectionOffsetOffset = 16;
inline constexpr size_t kSectionSizeOffset = 24;
inline constexpr size_t kSectionEntryBytes = 32;

// Constant data starts at multiples of this from the start of the file.
inline constexpr size_t kDataAlignment = 64;

// The sections of format version 1, in file order.
inline constexpr std::array<std::string_view, 5> kSectionNames = {"metadata", "graph", "values", "nodes", "data"};

// Bounds that no real model reaches and that keep corrupt counts cheap to reject.
inline constexpr int kMaxRank = 64;

// Enum codes in the file: fixed numbers, independent of the C++ enumerators' values.
// DType: f32 0, u8 1, s8 2, s32 3. ValueKind: input 0, constant 1, node 2. QScheme: per_tensor_affine 0,
// per_tensor_symmetric 1, per_channel_affine 2, per_channel_symmetric 3. AttrType: int 0, float 1, string 2,
// tensor 3, ints 4, floats 5, strings 6, and kAttrGraph for a subgraph (below).
// Value flags: bit 0 the value has a shape, bit 1 it has qparams; other bits must be 0.
inline constexpr uint8_t kValueHasShape = 1;
inline constexpr uint8_t kValueHasQParams = 2;

// A node's subgraph (If's then_branch / else_branch, Loop's body; Node::subgraphs), stored as an attribute record of
// this type: u64 size, then a complete .octet file holding the subgraph. Builds that predate it reject the file
// naming the unknown attribute type, and files without subgraphs are unchanged.
inline constexpr uint8_t kAttrGraph = 7;

// Nesting of subgraphs beyond any real model (an If in a Loop in an If ...): bounds the reader's recursion.
inline constexpr int kMaxSubgraphDepth = 32;

}  // namespace octet::octet_format

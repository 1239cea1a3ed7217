// Mapping between octet's enums and their fixed codes in .octet files (io/octet_format.h), shared by the writer
// and the reader. Parse* return false for a code that names nothing.
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "core/graph.h"
#include "core/graph_attribute.h"
#include "core/qparams.h"

namespace octet::octet_format {

uint8_t DTypeCode(DType dtype);
bool ParseDTypeCode(uint8_t code, DType& dtype);
uint8_t ValueKindCode(ValueKind kind);
bool ParseValueKindCode(uint8_t code, ValueKind& kind);
uint8_t QSchemeCode(QScheme scheme);
bool ParseQSchemeCode(uint8_t code, QScheme& scheme);
uint8_t AttrTypeCode(AttrType type);
bool ParseAttrTypeCode(uint8_t code, AttrType& type);

// "f32 (0), u8 (1), s8 (2), s32 (3)": the valid codes of each enum, for error messages.
std::string DTypeCodeList();
std::string ValueKindCodeList();
std::string QSchemeCodeList();
std::string AttrTypeCodeList();

// True when `s` has a byte below 0x20 or 0x7f (names must not: they end up in messages, file names and reports).
bool HasControlCharacters(const std::string& s);

}  // namespace octet::octet_format

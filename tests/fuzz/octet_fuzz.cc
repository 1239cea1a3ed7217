// libFuzzer target for the .octet reader: ParseOctet must never crash, hang or allocate beyond what the input can
// back, every error must name the file, and any model it accepts must serialise to a file that loads back to the
// same bytes (SerializeOctet(ParseOctet(SerializeOctet(m))) == SerializeOctet(m)).
//
// Checksums would stop nearly every mutation at the header, so each input is parsed twice: as it is (the checks
// of the header, table and checksums), and with its checksums recomputed (the record parsers behind them). The
// library itself has no fuzzing mode.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "io/crc32.h"
#include "io/octet_file.h"
#include "io/octet_format.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "octet_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

template <typename T>
T Load(const std::string& s, size_t at) {
  T v;
  std::memcpy(&v, s.data() + at, sizeof(T));
  return v;
}

// `bytes` with its file size field set to its size, every section checksum whose section lies inside the file
// recomputed, then the header's.
std::string Reseal(std::string bytes) {
  namespace f = octet::octet_format;
  const size_t table_end = f::kHeaderBytes + f::kSectionNames.size() * f::kSectionEntryBytes;
  if (bytes.size() < table_end) return bytes;
  const uint64_t file_size = bytes.size();
  std::memcpy(bytes.data() + f::kFileSizeOffset, &file_size, sizeof(file_size));
  auto span = [&](size_t at, size_t n) { return std::as_bytes(std::span<const char>(bytes.data() + at, n)); };
  for (size_t s = 0; s < f::kSectionNames.size(); ++s) {
    const size_t entry = f::kHeaderBytes + s * f::kSectionEntryBytes;
    const auto offset = Load<uint64_t>(bytes, entry + f::kSectionOffsetOffset);
    const auto size = Load<uint64_t>(bytes, entry + f::kSectionSizeOffset);
    if (offset > bytes.size() || size > bytes.size() - offset) continue;
    const uint32_t crc = octet::Crc32(span(offset, size));
    std::memcpy(bytes.data() + entry + f::kSectionCrcOffset, &crc, sizeof(crc));
  }
  const uint32_t crc =
      octet::Crc32(span(f::kHeaderBytes, table_end - f::kHeaderBytes), octet::Crc32(span(0, f::kHeaderCrcOffset)));
  std::memcpy(bytes.data() + f::kHeaderCrcOffset, &crc, sizeof(crc));
  return bytes;
}

void Check(std::span<const std::byte> bytes) {
  const auto first = octet::ParseOctet(bytes, "fuzz.octet");
  if (!first.ok()) {
    if (first.status().message().find("'fuzz.octet'") == std::string::npos) {
      Fail("an error does not name the file", first.status().ToString());
    }
    return;
  }
  const auto serialized = octet::SerializeOctet(first->graph, first->metadata, "round trip");
  if (!serialized.ok()) Fail("SerializeOctet refused a model ParseOctet accepted", serialized.status().ToString());
  const auto second = octet::ParseOctet(std::as_bytes(std::span<const char>(*serialized)), "round trip");
  if (!second.ok()) Fail("SerializeOctet wrote a file ParseOctet rejects", second.status().ToString());
  const auto again = octet::SerializeOctet(second->graph, second->metadata, "round trip");
  if (!again.ok() || *again != *serialized) Fail("the round trip changed the model", second->graph.ToString());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Check(std::as_bytes(std::span<const uint8_t>(data, size)));
  const std::string resealed = Reseal(std::string(reinterpret_cast<const char*>(data), size));
  Check(std::as_bytes(std::span<const char>(resealed)));
  return 0;
}

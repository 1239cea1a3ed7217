// libFuzzer target for the .npy reader: ParseNpy must never crash, hang or fail without naming the file, and any
// tensor it accepts must come back unchanged through SerializeNpy and ParseNpy.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "io/npy.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "npy_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

bool SameTensor(const octet::Tensor& a, const octet::Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.SizeBytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.SizeBytes()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto first = octet::ParseNpy(std::as_bytes(std::span<const uint8_t>(data, size)), "fuzz.npy");
  if (!first.ok()) {
    if (first.status().message().find("'fuzz.npy'") == std::string::npos) {
      Fail("an error does not name the file", first.status().ToString());
    }
    return 0;
  }
  const std::string serialized = octet::SerializeNpy(*first);
  const auto second = octet::ParseNpy(std::as_bytes(std::span<const char>(serialized)), "round trip");
  if (!second.ok()) Fail("SerializeNpy wrote a file ParseNpy rejects", second.status().ToString());
  if (!SameTensor(*first, *second)) {
    Fail("the round trip changed the tensor",
         fmt::format("{} {} became {} {}", first->dtype(), first->shape(), second->dtype(), second->shape()));
  }
  if (octet::SerializeNpy(*second) != serialized) Fail("SerializeNpy is not deterministic", "");
  return 0;
}

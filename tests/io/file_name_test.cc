// SafeFileName / SafeFileNames (io/file_name.h): the output file names of `octet run` and octet-runner.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "io/file_name.h"

namespace octet {
namespace {

TEST_CASE("SafeFileName keeps safe characters and replaces the rest", "[npy]") {
  CHECK(SafeFileName("logits") == "logits");
  CHECK(SafeFileName("Conv_1.out-2") == "Conv_1.out-2");
  CHECK(SafeFileName("a/b\\c d:e") == "a_b_c_d_e");
  CHECK(SafeFileName("../etc/passwd") == "_._etc_passwd");
  CHECK(SafeFileName(".") == "_");
  CHECK(SafeFileName("..") == "_.");
  CHECK(SafeFileName("") == "output");
  CHECK(SafeFileName("h\xc3\xa9") == "h__");  // each byte of a UTF-8 character
}

TEST_CASE("SafeFileName cuts long names so that NAME.npy fits a file system's name limit", "[npy]") {
  const std::string long_name(300, 'x');
  const std::string safe = SafeFileName(long_name);
  CHECK(safe.size() == kMaxSafeFileNameLength);
  CHECK(safe == std::string(kMaxSafeFileNameLength, 'x'));
  CHECK(SafeFileName(std::string(kMaxSafeFileNameLength, 'y')).size() == kMaxSafeFileNameLength);
}

TEST_CASE("SafeFileNames gives names that sanitise alike distinct suffixes", "[npy]") {
  const std::vector<std::string> files = SafeFileNames({"a/b", "a:b", "a_b", "c", "a_b_1"});
  CHECK(files == std::vector<std::string>{"a_b", "a_b_1", "a_b_2", "c", "a_b_1_1"});
  const std::string long_name(250, 'z');
  const std::vector<std::string> cut = SafeFileNames({long_name, long_name + "!"});
  CHECK(cut[0].size() == kMaxSafeFileNameLength);
  CHECK(cut[1] == cut[0] + "_1");
}

}  // namespace
}  // namespace octet

// The bundled digits data (data/digits.csv.gz) and its reader: the real file parses to 1797 images with pixels in
// [0, 1] and every class present; malformed text fails naming the line and field.
#include <catch2/catch.hpp>

#include <array>
#include <string>

#include "io/digits_csv.h"

namespace octet {
namespace {

std::string Row(int pixel, int label) {
  std::string s;
  for (int i = 0; i < 64; ++i) s += std::to_string(pixel) + ",";
  return s + std::to_string(label) + "\n";
}

TEST_CASE("The bundled digits data reads as 1797 images of 64 pixels", "[digits]") {
  auto data = ReadDigitsCsv(std::string(OCTET_TEST_DATA_DIR) + "/../../data/digits.csv.gz");
  if (!DigitsCsvReadsGzip()) {
    REQUIRE_FALSE(data.ok());
    CHECK(data.status().message().find("zlib") != std::string::npos);
    return;
  }
  INFO(data.status().message());
  REQUIRE(data.ok());
  CHECK(data->images.shape() == Shape{1797, 64});
  REQUIRE(data->labels.size() == 1797);
  std::array<int, 10> per_class{};
  for (int64_t label : data->labels) ++per_class[static_cast<size_t>(label)];
  for (int count : per_class) CHECK(count > 150);
  float lo = 1.0f, hi = 0.0f;
  for (float v : data->images.values<float>()) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  CHECK(lo == 0.0f);
  CHECK(hi == 1.0f);
  // The first image, as the file's first line gives it (0,0,5,13,9,1,0,0,...; label 0).
  CHECK(data->images.data<float>()[2] == 5.0f / 16.0f);
  CHECK(data->images.data<float>()[3] == 13.0f / 16.0f);
  CHECK(data->labels[0] == 0);
  auto test = DigitsRows(*data, 1437, 1797);
  REQUIRE(test.ok());
  CHECK(test->images.shape() == Shape{360, 64});
  CHECK(test->labels.front() == data->labels[1437]);
}

TEST_CASE("Malformed digits CSV fails naming line and field", "[digits]") {
  auto parsed = ParseDigitsCsv(Row(3, 7) + Row(16, 0), "two.csv");
  REQUIRE(parsed.ok());
  CHECK(parsed->images.shape() == Shape{2, 64});
  CHECK(parsed->images.data<float>()[0] == 3.0f / 16.0f);
  CHECK(parsed->labels == std::vector<int64_t>{7, 0});

  struct Case {
    std::string text, expect;
  };
  std::string short_row = Row(1, 1);
  short_row.erase(0, 2);  // 63 pixels
  std::string bad_token = Row(1, 1);
  bad_token[2] = 'x';
  for (const Case& c : {Case{Row(1, 1) + Row(17, 1), "line 2 field 1: pixel 17 is outside 0..16"},
                        Case{Row(1, 10), "line 1: label 10 is outside 0..9"},
                        Case{short_row, "line 1: 64 fields, expected 65"},
                        Case{bad_token, "line 1 field 2: 'x' is not an integer"},
                        Case{Row(-1, 1), "pixel -1 is outside"},
                        Case{"\n\n", "no images"}}) {
    auto r = ParseDigitsCsv(c.text, "bad.csv");
    REQUIRE_FALSE(r.ok());
    INFO(r.status().message());
    CHECK(r.status().message().find(c.expect) != std::string::npos);
    CHECK(r.status().message().find("bad.csv") != std::string::npos);
  }
  CHECK_FALSE(ReadDigitsCsv("/nonexistent/digits.csv").ok());
  CHECK_FALSE(DigitsRows(*parsed, 1, 5).ok());
}

}  // namespace
}  // namespace octet

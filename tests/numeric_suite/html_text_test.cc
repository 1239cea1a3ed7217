// Tests of the report's escaping and number formats (numeric_suite/html_text.h).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "numeric_suite/html_text.h"

namespace octet {
namespace {

TEST_CASE("EscapeHtml escapes markup characters and quotes", "[report_html]") {
  CHECK(EscapeHtml("conv1") == "conv1");
  CHECK(EscapeHtml("<script>alert(\"x\")</script>") == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
  CHECK(EscapeHtml("a & b's") == "a &amp; b&#39;s");
  CHECK(EscapeHtml("&amp;") == "&amp;amp;");  // already-escaped text is escaped again: names are data, not markup
  CHECK(EscapeHtml("") == "");
}

TEST_CASE("EscapeHtml keeps UTF-8 and whitespace, replaces control characters", "[report_html]") {
  CHECK(EscapeHtml("caf\xC3\xA9 \xE2\x86\x92 x") == "caf\xC3\xA9 \xE2\x86\x92 x");
  CHECK(EscapeHtml("a\tb\nc\rd") == "a\tb\nc\rd");
  CHECK(EscapeHtml(std::string("a\x01" "b\x7f", 4)) == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  CHECK(EscapeHtml(std::string("x\0y", 3)) == "x\xEF\xBF\xBDy");
}

TEST_CASE("FormatFixed prints exactly the decimals asked for", "[report_html]") {
  CHECK(FormatFixed(45.97, 1) == "46.0");
  CHECK(FormatFixed(19.4, 1) == "19.4");
  CHECK(FormatFixed(-3.25, 2) == "-3.25");
  CHECK(FormatFixed(-0.01, 1) == "0.0");  // no negative zero
  CHECK(FormatFixed(-0.0, 0) == "0");
  CHECK(FormatFixed(7.0, 0) == "7");
  CHECK(FormatFixed(std::numeric_limits<double>::infinity(), 1) == "inf");
  CHECK(FormatFixed(-std::numeric_limits<double>::infinity(), 1) == "-inf");
  CHECK(FormatFixed(std::nan(""), 1) == "nan");
}

TEST_CASE("FormatDecimal drops trailing zeros", "[report_html]") {
  CHECK(FormatDecimal(3.0, 2) == "3");
  CHECK(FormatDecimal(0.5, 2) == "0.5");
  CHECK(FormatDecimal(0.99427, 6) == "0.99427");
  CHECK(FormatDecimal(10.65, 1) == "10.7");  // 10.65 is 10.6500000000000003552713678800500929355621337890625
  CHECK(FormatDecimal(120.0, 0) == "120");   // zeros before the point stay
  CHECK(FormatDecimal(-0.0001, 2) == "0");
  CHECK(FormatDecimal(1e6, 1) == "1000000");
}

TEST_CASE("FormatSignificant and FormatPercent", "[report_html]") {
  CHECK(FormatSignificant(0.0070001, 3) == "0.007");
  CHECK(FormatSignificant(0.1187, 4) == "0.1187");
  CHECK(FormatSignificant(1.5e-6, 3) == "1.5e-06");
  CHECK(FormatSignificant(134.0, 4) == "134");
  CHECK(FormatSignificant(-0.0, 3) == "0");
  CHECK(FormatPercent(0.0012, 2) == "0.12%");
  CHECK(FormatPercent(0.0125, 3) == "1.25%");
  CHECK(FormatPercent(1.0, 1) == "100%");
  CHECK(FormatPercent(std::numeric_limits<double>::quiet_NaN(), 1) == "nan");
}

TEST_CASE("TruncateLabel cuts on code points and marks the cut", "[report_html]") {
  CHECK(TruncateLabel("conv1.weight", 30) == "conv1.weight");
  CHECK(TruncateLabel("abcdef", 6) == "abcdef");
  CHECK(TruncateLabel("abcdefg", 6) == "abcde\xE2\x80\xA6");
  // Five two-byte code points cut to three: two kept whole, then the ellipsis.
  CHECK(TruncateLabel("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9\xC3\xA9\xE2\x80\xA6");
  CHECK(TruncateLabel("abc", 0) == "");
}

}  // namespace
}  // namespace octet

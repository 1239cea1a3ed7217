// Text for the HTML report: escaping of names for HTML and SVG, and the number formats the report prints.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace octet {

// `text` safe inside HTML/SVG element content and quoted attribute values: & < > " ' become character references,
// and control characters other than tab, newline and carriage return (which HTML and XML forbid) become U+FFFD.
std::string EscapeHtml(std::string_view text);

// `value` with exactly `decimals` decimals: FormatFixed(45.97, 1) == "46.0", FormatFixed(-0.01, 1) == "0.0" (never a
// negative zero). Non-finite values print as "inf", "-inf" or "nan".
std::string FormatFixed(double value, int decimals);

// `value` in fixed notation with at most `max_decimals` decimals, trailing zeros and a trailing point dropped:
// FormatDecimal(43.25, 1) == "43.2" (round half to even on the binary value, like printf), FormatDecimal(3.0, 2)
// == "3", FormatDecimal(-0.0001, 2) == "0" (never "-0"). Non-finite values print as "inf", "-inf" or "nan".
std::string FormatDecimal(double value, int max_decimals);

// `value` with `digits` significant digits in the shorter of fixed and scientific notation (printf's %g):
// FormatSignificant(0.0070001, 3) == "0.007", FormatSignificant(1.5e-6, 3) == "1.5e-06".
std::string FormatSignificant(double value, int digits);

// `fraction` as a percentage: FormatPercent(0.0012, 2) == "0.12%".
std::string FormatPercent(double fraction, int max_decimals);

// `text` cut to at most `max_chars` code points, ending in "…" when cut; cuts between UTF-8 sequences only.
std::string TruncateLabel(std::string_view text, size_t max_chars);

}  // namespace octet

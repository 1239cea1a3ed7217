// Escaping and number formats of the HTML report (numeric_suite/html_text.h).
#include "numeric_suite/html_text.h"

#include <cmath>

#include <fmt/format.h>

namespace octet {
namespace {

std::string NonFinite(double value) {
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

bool IsUtf8Continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Drops the sign of a zero that rounding produced ("-0", "-0.00").
void DropNegativeZero(std::string& text) {
  if (text.size() > 1 && text[0] == '-' && text.find_first_not_of("0.", 1) == std::string::npos) text.erase(0, 1);
}

// `text`, the formatted `value`, with the sign of a rounded zero dropped; the name of `value` when it is not finite.
std::string FinishNumber(double value, std::string text) {
  if (!std::isfinite(value)) return NonFinite(value);
  DropNegativeZero(text);
  return text;
}

}  // namespace

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == '\x7f') {
          out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string FormatFixed(double value, int decimals) {
  return FinishNumber(value, fmt::format("{:.{}f}", value, decimals < 0 ? 0 : decimals));
}

std::string FormatDecimal(double value, int max_decimals) {
  std::string text = FormatFixed(value, max_decimals);  // a rounded zero already unsigned: "0.000" strips to "0"
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

std::string FormatSignificant(double value, int digits) {
  return FinishNumber(value, fmt::format("{:.{}g}", value, digits < 1 ? 1 : digits));
}

std::string FormatPercent(double fraction, int max_decimals) {
  if (!std::isfinite(fraction)) return NonFinite(fraction);
  return FormatDecimal(fraction * 100.0, max_decimals) + "%";
}

std::string TruncateLabel(std::string_view text, size_t max_chars) {
  size_t chars = 0;
  size_t cut = std::string_view::npos;  // byte offset where code point number max_chars - 1 starts
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsUtf8Continuation(text[i])) continue;
    if (max_chars > 0 && chars == max_chars - 1) cut = i;
    ++chars;
  }
  if (chars <= max_chars) return std::string(text);
  if (max_chars == 0) return "";
  return std::string(text.substr(0, cut)) + "\xE2\x80\xA6";  // U+2026 HORIZONTAL ELLIPSIS
}

}  // namespace octet

// Shape files and shape arguments of the benchmarks.
#include "bench/harness/shapes.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <fstream>
#include <utility>

namespace octet::bench {
namespace {

constexpr std::string_view kBlank = " \t\r";

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(kBlank);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kBlank) - b + 1);
}

// A run of decimal digits at the front of `s` (consumed), at most 18 of them.
bool TakeNumber(std::string_view& s, int64_t& value) {
  size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  if (n == 0 || n > 18) return false;
  std::from_chars(s.data(), s.data() + n, value);
  s.remove_prefix(n);
  return true;
}

// Whitespace-separated numbers, exactly `count` of them.
bool TakeNumbers(std::string_view s, std::vector<int64_t>& out, size_t count) {
  out.clear();
  for (s = Trim(s); !s.empty(); s = Trim(s)) {
    int64_t v = 0;
    if (!TakeNumber(s, v) || (!s.empty() && kBlank.find(s.front()) == std::string_view::npos)) return false;
    out.push_back(v);
  }
  return out.size() == count;
}

template <typename T, typename Parse>
Result<std::vector<T>> ReadAll(const std::string& path, Parse parse) {
  OCTET_ASSIGN_OR_RETURN(std::vector<ShapeLine> lines, ReadShapeLines(path));
  std::vector<T> values;
  for (const ShapeLine& line : lines) {
    Result<T> v = parse(line.text);
    if (!v.ok()) return InvalidArgument("'{}' line {}: {}", path, line.number, v.status().message());
    values.push_back(*std::move(v));
  }
  return values;
}

}  // namespace

Result<int64_t> ParseElementCount(std::string_view text) {
  int64_t multiplier = 1;
  std::string_view digits = text;
  for (const auto& [suffix, m] : {std::pair<std::string_view, int64_t>{"Ki", int64_t{1} << 10},
                                  {"Mi", int64_t{1} << 20},
                                  {"Gi", int64_t{1} << 30}}) {
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      multiplier = m;
      digits = text.substr(0, text.size() - suffix.size());
    }
  }
  int64_t value = 0;
  std::string_view rest = digits;
  if (digits.size() > 12 || !TakeNumber(rest, value) || !rest.empty() || value < 1 ||
      value > kMaxElementCount / multiplier) {
    return InvalidArgument("an element count must be in [1, {}] such as 16777216 or 16Mi, got '{}'", kMaxElementCount,
                           text);
  }
  return value * multiplier;
}

Result<GemmShape> ParseGemmShape(std::string_view text) {
  GemmShape s;
  std::string_view rest = Trim(text);
  bool ok = TakeNumber(rest, s.m) && rest.starts_with('x');
  if (ok) rest.remove_prefix(1);
  ok = ok && TakeNumber(rest, s.n) && rest.starts_with('x');
  if (ok) rest.remove_prefix(1);
  ok = ok && TakeNumber(rest, s.k) && Trim(rest).empty();
  if (!ok || s.m < 1 || s.n < 1 || s.k < 1) return InvalidArgument("bad GEMM shape '{}' (want MxNxK, each >= 1)", text);
  return s;
}

Result<ConvShape> ParseConvShape(std::string_view text) {
  std::vector<int64_t> v;
  ConvShape s;
  if (TakeNumbers(text, v, 9)) s = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
  if (v.size() != 9 || s.c_in < 1 || s.c_out < 1 || s.h < 1 || s.w < 1 || s.kh < 1 || s.kw < 1 || s.stride < 1 ||
      s.groups < 1 || s.c_in % s.groups != 0 || s.c_out % s.groups != 0) {
    return InvalidArgument(
        "bad conv layer '{}' (want c_in c_out h w kh kw stride pad groups, groups dividing both channel counts)", text);
  }
  return s;
}

Result<ConvLayer> ParseConvDescriptor(std::string_view text) {
  ConvLayer l;
  std::string_view d = text;
  if (const size_t q = text.find("n\""); q != std::string_view::npos) {
    const size_t end = text.find('"', q + 2);
    if (end == std::string_view::npos) return InvalidArgument("unterminated layer name in '{}'", text);
    l.name = std::string(text.substr(q + 2, end - q - 2));
    d = text.substr(0, q);
  }
  d = Trim(d);
  ConvShape& s = l.shape;
  s.w = s.kw = -1;  // unset: iw defaults to ih, kw to kh
  const std::pair<std::string_view, int64_t ConvShape::*> keys[] = {
      {"g", &ConvShape::groups}, {"ic", &ConvShape::c_in},   {"oc", &ConvShape::c_out},
      {"ih", &ConvShape::h},     {"iw", &ConvShape::w},      {"kh", &ConvShape::kh},
      {"kw", &ConvShape::kw},    {"sh", &ConvShape::stride}, {"ph", &ConvShape::pad}};
  while (!d.empty()) {
    size_t j = 0;
    while (j < d.size() && d[j] >= 'a' && d[j] <= 'z') ++j;
    const std::string_view key = d.substr(0, j);
    d.remove_prefix(j);
    int64_t v = 0;
    if (key.empty() || !TakeNumber(d, v)) return InvalidArgument("bad conv descriptor '{}'", text);
    const auto* k = std::find_if(std::begin(keys), std::end(keys), [&](const auto& e) { return e.first == key; });
    if (k == std::end(keys)) {
      return InvalidArgument("unknown key '{}' in conv descriptor '{}' (want g ic oc ih iw kh kw sh ph)", key, text);
    }
    s.*(k->second) = v;
  }
  if (s.w < 0) s.w = s.h;
  if (s.kw < 0) s.kw = s.kh;
  if (s.c_in < 1 || s.c_out < 1 || s.h < 1 || s.kh < 1 || s.stride < 1 || s.groups < 1 || s.c_in % s.groups != 0 ||
      s.c_out % s.groups != 0) {
    return InvalidArgument("conv descriptor '{}' needs ic, oc, ih, kh >= 1 and g dividing ic and oc", text);
  }
  return l;
}

Result<std::vector<ShapeLine>> ReadShapeLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read shapes file '{}'", path);
  std::vector<ShapeLine> lines;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string_view text = Trim(std::string_view(line).substr(0, line.find('#')));
    if (!text.empty()) lines.push_back({number, std::string(text)});
  }
  if (in.bad()) return IoError("cannot read shapes file '{}'", path);
  return lines;
}

Result<std::vector<int64_t>> ReadElementCounts(const std::string& path) {
  return ReadAll<int64_t>(path, ParseElementCount);
}

Result<std::vector<GemmShape>> ReadGemmShapes(const std::string& path) {
  return ReadAll<GemmShape>(path, ParseGemmShape);
}

Result<std::vector<ConvShape>> ReadConvShapes(const std::string& path) {
  return ReadAll<ConvShape>(path, ParseConvShape);
}

Result<std::vector<ConvLayer>> ReadConvLayers(const std::string& path) {
  return ReadAll<ConvLayer>(path, ParseConvDescriptor);
}

}  // namespace octet::bench

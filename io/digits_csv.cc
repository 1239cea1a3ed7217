// Reading the bundled digits CSV, plain or gzip-compressed.
#include "io/digits_csv.h"

#include <charconv>
#include <cstring>

#include "io/file_util.h"

#if defined(OCTET_WITH_ZLIB)
#include <zlib.h>
#endif

namespace octet {
namespace {

constexpr int kPixels = 64;

bool IsGzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<std::string> Gunzip(std::string_view bytes, const std::string& path) {
#if defined(OCTET_WITH_ZLIB)
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer (with its CRC-32 and length checked by zlib).
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return IoError("failed to read '{}': zlib did not start", path);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  constexpr size_t kChunk = 1 << 16;
  constexpr size_t kMaxBytes = size_t{1} << 30;  // a bound against decompression bombs
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    const size_t used = out.size();
    if (used >= kMaxBytes) {
      inflateEnd(&z);
      return InvalidArgument("failed to read '{}': decompresses to more than {} bytes", path, kMaxBytes);
    }
    out.resize(used + kChunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    z.avail_out = static_cast<uInt>(kChunk);
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(used + kChunk - z.avail_out);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const std::string why = z.msg != nullptr ? z.msg : (rc == Z_BUF_ERROR ? "truncated" : "corrupt");
      inflateEnd(&z);
      return InvalidArgument("failed to read '{}': gzip data is {}", path, why);
    }
  }
  inflateEnd(&z);
  return out;
#else
  (void)bytes;
  return Unimplemented("failed to read '{}': this build of octet has no zlib for .gz files; gunzip it first", path);
#endif
}

}  // namespace

Result<DigitsData> ParseDigitsCsv(std::string_view text, std::string_view source) {
  std::vector<float> pixels;
  std::vector<int64_t> labels;
  int64_t line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    int field = 0;
    size_t at = 0;
    while (true) {
      size_t comma = line.find(',', at);
      const std::string_view token = line.substr(at, comma == std::string_view::npos ? line.size() - at : comma - at);
      int value = 0;
      const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || ptr != token.data() + token.size() || token.empty()) {
        return InvalidArgument("{} line {} field {}: '{}' is not an integer", source, line_number, field + 1, token);
      }
      if (field < kPixels) {
        if (value < 0 || value > 16) {
          return InvalidArgument("{} line {} field {}: pixel {} is outside 0..16", source, line_number, field + 1,
                                 value);
        }
        pixels.push_back(static_cast<float>(value) / 16.0f);
      } else if (field == kPixels) {
        if (value < 0 || value > 9) {
          return InvalidArgument("{} line {}: label {} is outside 0..9", source, line_number, value);
        }
        labels.push_back(value);
      }
      ++field;
      if (comma == std::string_view::npos) break;
      at = comma + 1;
    }
    if (field != kPixels + 1) {
      return InvalidArgument("{} line {}: {} fields, expected {} (64 pixels and the label)", source, line_number,
                             field, kPixels + 1);
    }
  }
  if (labels.empty()) return InvalidArgument("{}: no images", source);
  const int64_t n = static_cast<int64_t>(labels.size());
  OCTET_ASSIGN_OR_RETURN(Tensor images, Tensor::Create(DType::kF32, Shape{n, kPixels}));
  std::memcpy(images.data<float>(), pixels.data(), pixels.size() * sizeof(float));
  return DigitsData{std::move(images), std::move(labels)};
}

Result<DigitsData> ReadDigitsCsv(const std::string& path) {
  OCTET_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  if (IsGzip(bytes)) {
    OCTET_ASSIGN_OR_RETURN(bytes, Gunzip(bytes, path));
  }
  return ParseDigitsCsv(bytes, path);
}

bool DigitsCsvReadsGzip() {
#if defined(OCTET_WITH_ZLIB)
  return true;
#else
  return false;
#endif
}

Result<DigitsData> DigitsRows(const DigitsData& data, int64_t begin, int64_t end) {
  const int64_t n = static_cast<int64_t>(data.labels.size());
  if (begin < 0 || end > n || begin >= end) {
    return InvalidArgument("digits rows [{}, {}) are outside the {} images", begin, end, n);
  }
  OCTET_ASSIGN_OR_RETURN(Tensor images, Tensor::Create(DType::kF32, Shape{end - begin, kPixels}));
  std::memcpy(images.data<float>(), data.images.data<float>() + begin * kPixels,
              static_cast<size_t>((end - begin) * kPixels) * sizeof(float));
  return DigitsData{std::move(images), std::vector<int64_t>(data.labels.begin() + begin, data.labels.begin() + end)};
}

}  // namespace octet

// The digits data set as octet bundles it (data/digits.csv.gz; see data/README.md for its provenance): one image per
// line, 64 pixel values 0..16 (8x8, row-major) followed by the label 0..9, comma-separated, no header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace octet {

struct DigitsData {
  Tensor images;                // f32 [N, 64]: the pixel values divided by 16, so in [0, 1]
  std::vector<int64_t> labels;  // N labels in [0, 9]
};

// Parses the CSV text. Errors name `source`, the line and the field (a wrong field count, a pixel outside 0..16, a
// label outside 0..9, a field that is not an integer).
Result<DigitsData> ParseDigitsCsv(std::string_view text, std::string_view source);

// Reads a .csv file, or a gzip-compressed one (.gz: needs a build with zlib; others say so).
Result<DigitsData> ReadDigitsCsv(const std::string& path);

// Whether ReadDigitsCsv reads .gz files (the build has zlib).
bool DigitsCsvReadsGzip();

// Rows [begin, end) of `data` (copies).
Result<DigitsData> DigitsRows(const DigitsData& data, int64_t begin, int64_t end);

}  // namespace octet

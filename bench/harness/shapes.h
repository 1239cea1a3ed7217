// Shape files and shape arguments of the benchmarks (bench/shapes/*.txt, the peer tool's shapes/): one problem a line,
// '#' starts a comment, blank lines are skipped. Errors name the file, the line number and the line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/harness/peer_problem.h"
#include "core/status.h"

namespace octet::bench {

inline constexpr int64_t kMaxElementCount = int64_t{1} << 32;

// An element count: "16777216", "64Ki", "16Mi", "1Gi", in [1, kMaxElementCount].
Result<int64_t> ParseElementCount(std::string_view text);

// "MxNxK", each dimension >= 1.
Result<GemmShape> ParseGemmShape(std::string_view text);
// "c_in c_out h w kh kw stride pad groups", groups dividing both channel counts.
Result<ConvShape> ParseConvShape(std::string_view text);

// A layer of bench/shapes/resnet18_conv.txt: benchdnn's descriptor g<G>ic<C>oc<C>ih<H>[iw<W>]kh<K>[kw<K>][sh<S>][ph<P>]
// n"name" (defaults: iw = ih, kw = kh, sh 1, ph 0, g 1).
struct ConvLayer {
  std::string name;
  ConvShape shape;
};
Result<ConvLayer> ParseConvDescriptor(std::string_view text);

// The non-comment lines of a shapes file, comments and surrounding blanks removed, each with its line number.
struct ShapeLine {
  int number = 0;
  std::string text;
};
Result<std::vector<ShapeLine>> ReadShapeLines(const std::string& path);

Result<std::vector<int64_t>> ReadElementCounts(const std::string& path);
Result<std::vector<GemmShape>> ReadGemmShapes(const std::string& path);
Result<std::vector<ConvShape>> ReadConvShapes(const std::string& path);
Result<std::vector<ConvLayer>> ReadConvLayers(const std::string& path);

}  // namespace octet::bench

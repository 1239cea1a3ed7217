// The inline SVG charts of the HTML report: horizontal bar charts, float vs int8 histograms and per-channel
// ranges. Each function returns one <svg> element with fixed pixel sizes, no scripts and no external references;
// every string it is given is escaped here. Rectangles sit on whole pixels so that a screenshot shows the exact
// colours below (tests/numeric_suite/check_screenshot.py looks for them).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace octet {

// Colours of the report, shared by the charts, the page's legend and the screenshot check.
inline constexpr const char* kColourSqnrGood = "#2ca25f";   // SQNR >= kSqnrGoodDb, or exact
inline constexpr const char* kColourSqnrFair = "#f0a202";   // kSqnrFairDb <= SQNR < kSqnrGoodDb
inline constexpr const char* kColourSqnrPoor = "#d7301f";   // SQNR < kSqnrFairDb
inline constexpr const char* kColourSensitivity = "#756bb1";
inline constexpr const char* kColourHistogramFloat = "#9ecae1";
inline constexpr const char* kColourHistogramInt8 = "#e6550d";
inline constexpr const char* kColourChannelRange = "#3182bd";
inline constexpr const char* kColourChannelScale = "#74c476";

// SQNR thresholds of the bar colours, in dB: >= 30 dB keeps int8 within ~3% of the signal's RMS, < 20 dB (10%)
// usually costs accuracy.
inline constexpr double kSqnrGoodDb = 30.0;
inline constexpr double kSqnrFairDb = 20.0;

// The colour of an SQNR bar; exact (identical tensors) counts as good.
const char* SqnrColour(std::optional<double> sqnr_db);

struct Bar {
  std::string label;       // shown left of the bar, cut to fit; the full text is in the tooltip
  double value = 0;        // bar length in axis units, clamped to the axis
  bool full_length = false;  // draw to the end of the axis (exact SQNR = +inf)
  std::string value_text;  // printed after the bar
  std::string colour;      // CSS colour
  std::string tooltip;     // <title> of the bar
};

struct BarMarker {  // a dashed vertical line across the chart (a target, a baseline)
  double value = 0;
  std::string label;
};

struct BarChart {
  std::string aria_label;  // the chart's accessible name
  std::string unit;        // axis unit ("dB")
  std::vector<Bar> bars;
  std::vector<BarMarker> markers;
  std::vector<double> axis_span;  // values the axis must reach too (one axis for several charts)
};

// One horizontal bar per entry, top to bottom in the given order, on a common axis that spans 0, every finite
// value and every marker, rounded out to whole ticks. Precondition: !chart.bars.empty().
std::string RenderBarChart(const BarChart& chart);

struct HistogramChart {
  std::string aria_label;
  double min = 0, max = 0;                 // the range the bins split evenly
  std::vector<double> float_counts;        // one count per bin
  std::vector<double> quantized_counts;    // same bins, dequantized int8 values
};

// Float counts as filled bars, int8 counts as a step line over them, on one linear count axis.
// Precondition: float_counts.size() == quantized_counts.size() > 0.
std::string RenderHistogram(const HistogramChart& chart);

struct ChannelRange {
  double min = 0, max = 0;  // float range of the channel's weights
  double scale = 0;
  long long zero_point = 0;
};

// One min..max whisker per channel on a common axis that includes 0, and under it each channel's scale as a bar
// relative to the largest. Precondition: !channels.empty().
std::string RenderChannelRanges(const std::string& aria_label, const std::vector<ChannelRange>& channels);

}  // namespace octet

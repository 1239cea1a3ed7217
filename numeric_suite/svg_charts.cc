// The report's inline SVG charts (numeric_suite/svg_charts.h).
#include "numeric_suite/svg_charts.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/status.h"
#include "numeric_suite/html_text.h"

namespace octet {
namespace {

constexpr const char* kColourAxis = "#555555";
constexpr const char* kColourGrid = "#e3e3e3";

long Px(double x) { return std::lround(x); }

// An axis from lo to hi with ticks at a 1-2-5 step that gives at most ~8 intervals, both ends on ticks.
struct Axis {
  double lo = 0, hi = 1, step = 1;
};

Axis NiceAxis(double lo, double hi) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / 8.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude * 10;
  for (double m : {1.0, 2.0, 5.0}) {
    if (raw <= m * magnitude) {
      step = m * magnitude;
      break;
    }
  }
  return {std::floor(lo / step) * step, std::ceil(hi / step) * step, step};
}

// Tick labels with as many decimals as the step needs.
std::string TickLabel(double value, double step) {
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return FormatDecimal(value, decimals);
}

std::string SvgOpen(int width, int height, const std::string& aria_label) {
  return fmt::format(
      "<svg class=\"chart\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"{2}\" font-size=\"12\">\n",
      width, height, EscapeHtml(aria_label));
}

}  // namespace

const char* SqnrColour(std::optional<double> sqnr_db) {
  if (!sqnr_db || *sqnr_db >= kSqnrGoodDb) return kColourSqnrGood;
  if (*sqnr_db >= kSqnrFairDb) return kColourSqnrFair;
  return kColourSqnrPoor;
}

std::string RenderBarChart(const BarChart& chart) {
  OCTET_CHECK(!chart.bars.empty());
  constexpr int kWidth = 1040, kLabelWidth = 210, kValueWidth = 110, kRowHeight = 20, kBarHeight = 14;
  constexpr int kTop = 16, kAxisHeight = 26;
  constexpr int kPlotWidth = kWidth - kLabelWidth - kValueWidth;
  const int rows = static_cast<int>(chart.bars.size());
  const int height = kTop + rows * kRowHeight + kAxisHeight;

  double lo = 0, hi = 0;
  for (const Bar& bar : chart.bars) {
    if (bar.full_length || !std::isfinite(bar.value)) continue;
    lo = std::min(lo, bar.value);
    hi = std::max(hi, bar.value);
  }
  for (const BarMarker& marker : chart.markers) {
    if (!std::isfinite(marker.value)) continue;
    lo = std::min(lo, marker.value);
    hi = std::max(hi, marker.value);
  }
  for (double v : chart.axis_span) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const Axis axis = NiceAxis(lo, std::max(hi, lo + 10));
  auto x = [&](double v) {
    v = std::clamp(v, axis.lo, axis.hi);
    return kLabelWidth + Px((v - axis.lo) / (axis.hi - axis.lo) * kPlotWidth);
  };
  const long plot_bottom = kTop + rows * kRowHeight;

  std::string svg = SvgOpen(kWidth, height, chart.aria_label);
  // Grid and tick labels.
  for (double t = axis.lo; t <= axis.hi + axis.step / 2; t += axis.step) {
    const long tx = x(t);
    svg += fmt::format("<line x1=\"{0}.5\" y1=\"{1}\" x2=\"{0}.5\" y2=\"{2}\" stroke=\"{3}\"/>", tx, kTop, plot_bottom,
                       kColourGrid);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n", tx, plot_bottom + 16,
                       kColourAxis, TickLabel(t, axis.step));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n", kLabelWidth + kPlotWidth + 16,
                     plot_bottom + 16, kColourAxis, EscapeHtml(chart.unit));

  // Bars, each with its label, value and tooltip.
  const long x0 = x(0);
  for (int i = 0; i < rows; ++i) {
    const Bar& bar = chart.bars[static_cast<size_t>(i)];
    const long row_top = kTop + i * kRowHeight;
    const long bar_top = row_top + (kRowHeight - kBarHeight) / 2;
    const long xe = bar.full_length ? x(axis.hi) : (std::isfinite(bar.value) ? x(bar.value) : x0);
    const long left = std::min(x0, xe), width = std::max(std::labs(xe - x0), 1L);
    svg += "<g>";
    if (!bar.tooltip.empty()) svg += fmt::format("<title>{}</title>", EscapeHtml(bar.tooltip));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"central\">{}</text>",
                       kLabelWidth - 8, row_top + kRowHeight / 2, EscapeHtml(TruncateLabel(bar.label, 30)));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>", left, bar_top, width,
                       kBarHeight, EscapeHtml(bar.colour));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" dominant-baseline=\"central\">{}</text></g>\n",
                       std::max(x0, xe) + 6, row_top + kRowHeight / 2, EscapeHtml(bar.value_text));
  }
  // The zero line over the bars, then the markers.
  svg += fmt::format("<line x1=\"{0}.5\" y1=\"{1}\" x2=\"{0}.5\" y2=\"{2}\" stroke=\"{3}\"/>\n", x0, kTop - 4,
                     plot_bottom, kColourAxis);
  for (const BarMarker& marker : chart.markers) {
    if (!std::isfinite(marker.value)) continue;
    const long mx = x(marker.value);
    svg += fmt::format(
        "<line x1=\"{0}.5\" y1=\"{1}\" x2=\"{0}.5\" y2=\"{2}\" stroke=\"#222222\" stroke-dasharray=\"4 3\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" font-size=\"11\">{4}</text>\n",
        mx, kTop - 2, plot_bottom, kTop - 5, EscapeHtml(marker.label));
  }
  svg += "</svg>\n";
  return svg;
}

std::string RenderHistogram(const HistogramChart& chart) {
  OCTET_CHECK(!chart.float_counts.empty());
  OCTET_CHECK_OP(chart.float_counts.size(), ==, chart.quantized_counts.size());
  const size_t bins = chart.float_counts.size();
  constexpr int kLeft = 52, kTop = 24, kPlotHeight = 120, kBottom = 34, kPlotWidthTarget = 448;
  // Whole pixels per bin, so bars and steps land on pixel edges.
  const long bin_width = std::max(1L, static_cast<long>(kPlotWidthTarget / static_cast<long>(bins)));
  const long plot_width = bin_width * static_cast<long>(bins);
  const long width = kLeft + plot_width + 14, height = kTop + kPlotHeight + kBottom;
  const long base = kTop + kPlotHeight;

  double max_count = 0;
  for (size_t i = 0; i < bins; ++i) {
    max_count = std::max({max_count, chart.float_counts[i], chart.quantized_counts[i]});
  }
  auto bar_height = [&](double count) {
    return max_count > 0 ? Px(std::max(count, 0.0) / max_count * kPlotHeight) : 0L;
  };

  std::string svg = SvgOpen(static_cast<int>(width), static_cast<int>(height), chart.aria_label);
  // Legend.
  svg += fmt::format(
      "<rect x=\"{0}\" y=\"6\" width=\"12\" height=\"10\" fill=\"{1}\"/><text x=\"{2}\" y=\"15\">float</text>"
      "<line x1=\"{3}\" y1=\"11\" x2=\"{4}\" y2=\"11\" stroke=\"{5}\" stroke-width=\"2\"/>"
      "<text x=\"{6}\" y=\"15\">int8 (dequantized)</text>\n",
      kLeft, kColourHistogramFloat, kLeft + 16, kLeft + 70, kLeft + 86, kColourHistogramInt8, kLeft + 90);
  // Float bars.
  for (size_t i = 0; i < bins; ++i) {
    const long h = bar_height(chart.float_counts[i]);
    if (h == 0) continue;
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                       kLeft + static_cast<long>(i) * bin_width, base - h, bin_width, h, kColourHistogramFloat);
  }
  svg += "\n";
  // Int8 steps: across each bin at its count, down/up at the bin edges.
  std::string path = fmt::format("M{} {}", kLeft, base);
  for (size_t i = 0; i < bins; ++i) {
    const long top = base - bar_height(chart.quantized_counts[i]);
    path += fmt::format(" V{} H{}", top, kLeft + static_cast<long>(i + 1) * bin_width);
  }
  path += fmt::format(" V{}", base);
  svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", path, kColourHistogramInt8);
  // Axes: counts on the left, the value range below.
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}.5\" x2=\"{2}\" y2=\"{1}.5\" stroke=\"{3}\"/>", kLeft, base,
                     kLeft + plot_width, kColourAxis);
  svg += fmt::format("<line x1=\"{0}.5\" y1=\"{1}\" x2=\"{0}.5\" y2=\"{2}\" stroke=\"{3}\"/>", kLeft - 1, kTop, base,
                     kColourAxis);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", kLeft - 5, kTop + 10,
                     FormatSignificant(max_count, 4));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text>", kLeft - 5, base);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"start\">{}</text>", kLeft, base + 16,
                     FormatSignificant(chart.min, 4));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", kLeft + plot_width, base + 16,
                     FormatSignificant(chart.max, 4));
  if (chart.min < 0 && chart.max > 0) {
    const long zx = kLeft + Px(-chart.min / (chart.max - chart.min) * static_cast<double>(plot_width));
    svg += fmt::format("<line x1=\"{0}.5\" y1=\"{1}\" x2=\"{0}.5\" y2=\"{2}\" stroke=\"{3}\"/>"
                       "<text x=\"{0}\" y=\"{4}\" text-anchor=\"middle\">0</text>",
                       zx, base, base + 4, kColourAxis, base + 16);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">weight value</text>\n",
                     kLeft + plot_width / 2, base + 30, kColourAxis);
  svg += "</svg>\n";
  return svg;
}

std::string RenderChannelRanges(const std::string& aria_label, const std::vector<ChannelRange>& channels) {
  OCTET_CHECK(!channels.empty());
  constexpr int kLeft = 52, kTop = 10, kPlotHeight = 110, kGap = 10, kScaleHeight = 30, kBottom = 22;
  constexpr long kPlotWidthTarget = 448;
  const long n = static_cast<long>(channels.size());
  const long slot = std::max(1L, kPlotWidthTarget / n);
  const long plot_width = slot * n;
  const long width = kLeft + plot_width + 14, height = kTop + kPlotHeight + kGap + kScaleHeight + kBottom;

  double lo = 0, hi = 0, max_scale = 0;
  for (const ChannelRange& c : channels) {
    lo = std::min({lo, c.min, c.max});
    hi = std::max({hi, c.min, c.max});
    max_scale = std::max(max_scale, c.scale);
  }
  if (!(hi > lo)) hi = lo + 1;
  auto y = [&](double v) { return kTop + Px((hi - v) / (hi - lo) * kPlotHeight); };
  const long whisker = std::clamp(slot / 3, 1L, 3L);
  const long cap = std::clamp(slot * 3 / 5, 1L, 10L);
  const long scale_base = kTop + kPlotHeight + kGap + kScaleHeight;

  std::string svg = SvgOpen(static_cast<int>(width), static_cast<int>(height), aria_label);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}.5\" x2=\"{2}\" y2=\"{1}.5\" stroke=\"{3}\"/>", kLeft, y(0),
                     kLeft + plot_width, kColourAxis);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", kLeft - 5, kTop + 10,
                     FormatSignificant(hi, 3));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", kLeft - 5, kTop + kPlotHeight,
                     FormatSignificant(lo, 3));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">scale</text>", kLeft - 5, scale_base - 4);
  for (long i = 0; i < n; ++i) {
    const ChannelRange& c = channels[static_cast<size_t>(i)];
    const long cx = kLeft + i * slot + slot / 2;
    const long top = y(std::max(c.min, c.max)), bottom = y(std::min(c.min, c.max));
    const long scale_h = max_scale > 0 ? std::max(1L, Px(c.scale / max_scale * kScaleHeight)) : 1L;
    svg += fmt::format("<g><title>channel {}: min {}, max {}, scale {}, zero point {}</title>", i,
                       FormatSignificant(c.min, 4), FormatSignificant(c.max, 4), FormatSignificant(c.scale, 4),
                       c.zero_point);
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>", cx - whisker / 2, top,
                       whisker, std::max(bottom - top, 1L), kColourChannelRange);
    svg += fmt::format("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"2\" fill=\"{4}\"/>"
                       "<rect x=\"{0}\" y=\"{3}\" width=\"{2}\" height=\"2\" fill=\"{4}\"/>",
                       cx - cap / 2, top, cap, bottom - 1, kColourChannelRange);
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/></g>\n",
                       kLeft + i * slot + (slot > 2 ? 1 : 0), scale_base - scale_h, std::max(slot - 2, 1L), scale_h,
                       kColourChannelScale);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">max scale {}</text>",
                     kLeft + plot_width, scale_base + 16, kColourAxis, FormatSignificant(max_scale, 4));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\">channel 0 … {}</text>\n", kLeft, scale_base + 16,
                     kColourAxis, n - 1);
  svg += "</svg>\n";
  return svg;
}

}  // namespace octet

// Tests of the HTML report (numeric_suite/report_html.h) and its SVG charts (numeric_suite/svg_charts.h): structure
// (one <svg> per chart, self-contained), escaping of every string, number formats, exact SQNR, empty sections.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/file_util.h"
#include "numeric_suite/report_html.h"
#include "numeric_suite/svg_charts.h"

namespace octet {
namespace {

using nlohmann::json;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;

json SampleReport() {
  const auto text = ReadFile(std::string(OCTET_TEST_DATA_DIR) + "/numeric_suite/sample_report.json");
  REQUIRE(text.ok());
  return json::parse(*text);
}

std::string Render(const json& report) {
  const auto html = RenderReportHtml(report);
  INFO(html.status().ToString());
  REQUIRE(html.ok());
  return *html;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// The widths of the <rect> elements with the given fill, in document order.
std::vector<long> RectWidths(const std::string& svg, const std::string& fill) {
  std::vector<long> widths;
  const std::regex rect("<rect x=\"-?\\d+\" y=\"\\d+\" width=\"(\\d+)\" height=\"\\d+\" fill=\"" + fill + "\"/>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    widths.push_back(std::stol((*it)[1]));
  }
  return widths;
}

// The <svg> elements of `html`, in order.
std::vector<std::string> Svgs(const std::string& html) {
  std::vector<std::string> svgs;
  for (size_t pos = html.find("<svg"); pos != std::string::npos; pos = html.find("<svg", pos + 1)) {
    const size_t end = html.find("</svg>", pos);
    REQUIRE(end != std::string::npos);
    svgs.push_back(html.substr(pos, end + 6 - pos));
  }
  return svgs;
}

TEST_CASE("the sample report is one self-contained page with one <svg> per chart", "[report_html]") {
  const json report = SampleReport();
  const std::string html = Render(report);
  CHECK_THAT(html, StartsWith("<!DOCTYPE html>\n<html lang=\"en\">"));
  CHECK_THAT(html, EndsWith("</html>\n"));
  CHECK_THAT(html, Contains("<meta charset=\"utf-8\">"));

  // Nothing runs, nothing is fetched.
  const std::string lower = Lower(html);
  for (const char* banned : {"<script", "javascript:", "http://", "https://", "<link", "@import", "url(", "<img",
                             "<iframe", "<object", "@font-face", " on"}) {
    INFO(banned);
    if (std::string(banned) == " on") {
      CHECK_FALSE(std::regex_search(lower, std::regex(" on[a-z]+=")));  // no event handler attributes
    } else {
      CHECK(lower.find(banned) == std::string::npos);
    }
  }

  // 3 SQNR charts + a histogram and a channel-range chart per weight + the sensitivity chart.
  size_t histograms = 0, channels = 0;
  for (const json& w : report["weights"]) {
    histograms += w.contains("histogram");
    channels += w.contains("channels");
  }
  REQUIRE(histograms == 4);
  REQUIRE(channels == 4);
  const std::vector<std::string> svgs = Svgs(html);
  CHECK(svgs.size() == 3 + histograms + channels + 1);
  CHECK(Count(html, "<svg") == Count(html, "</svg>"));
  for (const std::string& svg : svgs) CHECK(Count(svg, "<svg") == 1);  // not nested

  // Sections in page order.
  std::vector<size_t> at;
  for (const char* id : {"summary", "sqnr", "histograms", "channels", "sensitivity", "metrics"}) {
    at.push_back(html.find(std::string("<section id=\"") + id + "\">"));
    INFO(id);
    CHECK(at.back() != std::string::npos);
  }
  CHECK(std::is_sorted(at.begin(), at.end()));
}

TEST_CASE("SQNR charts draw one bar per entry in its threshold colour, lengths on one axis", "[report_html]") {
  const json report = SampleReport();
  const std::vector<std::string> svgs = Svgs(Render(report));
  REQUIRE(svgs.size() >= 3);
  const char* sections[] = {"weights", "activations", "shadow"};
  std::vector<std::pair<double, long>> db_and_width;  // finite SQNR and bar width, over the three charts
  for (int s = 0; s < 3; ++s) {
    const json& entries = report[sections[s]];
    INFO(sections[s]);
    CHECK(Count(svgs[static_cast<size_t>(s)], "<rect") == entries.size());
    size_t good = 0, fair = 0, poor = 0;
    for (const json& e : entries) {
      const std::optional<double> db =
          e["sqnr_db"].is_null() ? std::nullopt : std::optional(e["sqnr_db"].get<double>());
      const std::string colour = SqnrColour(db);
      good += colour == kColourSqnrGood;
      fair += colour == kColourSqnrFair;
      poor += colour == kColourSqnrPoor;
      // The bar's tooltip names the node, its op and its SQNR.
      const std::string sqnr = db ? fmt::format("{:.1f} dB", *db) : "exact";
      CHECK_THAT(svgs[static_cast<size_t>(s)],
                 Contains("<title>" + e["name"].get<std::string>() + " (" + e["op"].get<std::string>() +
                          "): SQNR " + sqnr + "</title>"));
    }
    CHECK(RectWidths(svgs[static_cast<size_t>(s)], kColourSqnrGood).size() == good);
    CHECK(RectWidths(svgs[static_cast<size_t>(s)], kColourSqnrFair).size() == fair);
    CHECK(RectWidths(svgs[static_cast<size_t>(s)], kColourSqnrPoor).size() == poor);
    std::vector<long> widths;
    const std::regex rect("<rect x=\"\\d+\" y=\"\\d+\" width=\"(\\d+)\"");
    const std::string& svg = svgs[static_cast<size_t>(s)];
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
      widths.push_back(std::stol((*it)[1]));
    }
    REQUIRE(widths.size() == entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i]["sqnr_db"].is_number()) db_and_width.emplace_back(entries[i]["sqnr_db"].get<double>(), widths[i]);
    }
  }
  // The sample spans all three colours, and the bars share one axis: width / dB is the same everywhere (+-1 px).
  REQUIRE(db_and_width.size() == 12);
  const auto [top_db, top_width] = *std::max_element(db_and_width.begin(), db_and_width.end());
  for (const auto& [db, width] : db_and_width) {
    INFO(db << " dB: " << width << " px");
    CHECK(std::abs(static_cast<double>(width) - top_width * db / top_db) <= 1.0);
  }
}

TEST_CASE("every string from the report is escaped", "[report_html]") {
  const std::string evil = "<script>alert(\"x\")</script> & 'q'";
  const std::string escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;";
  json report = SampleReport();
  report["float_model"] = "float" + evil;
  report["quantized_model"] = "quant" + evil;
  report["generator"] = "gen" + evil;
  report["inputs"][0]["name"] = "input" + evil;
  report["inputs"][0]["file"] = "file" + evil;
  for (const char* section : {"weights", "activations", "shadow", "outputs"}) {
    for (json& e : report[section]) {
      e["name"] = e["name"].get<std::string>() + evil;
      e["op"] = "Op" + evil;
    }
  }
  for (json& w : report["weights"]) {
    w["node"] = "node" + evil;
    w["qscheme"] = "qscheme" + evil;
    w["dtype"] = "dtype" + evil;
  }
  report["activations"][0]["value"] = "value" + evil;
  report["sensitivity"]["metric"] = "metric" + evil;
  report["sensitivity"]["nodes"][0]["name"] = "fc2" + evil;
  report["sensitivity"]["nodes"][0]["op"] = "Gemm" + evil;
  report["sensitivity"]["keep_float"][0] = "fc2" + evil;
  const std::string html = Render(report);

  CHECK(Lower(html).find("<script") == std::string::npos);
  CHECK(html.find(evil) == std::string::npos);
  CHECK(html.find("'q'") == std::string::npos);
  for (const std::string prefix : {"float", "quant", "gen", "input", "file", "conv1.weight", "conv1", "pool1", "logits",
                                   "Op", "node", "qscheme", "dtype", "value", "metric", "fc2", "Gemm"}) {
    INFO(prefix);
    CHECK_THAT(html, Contains(prefix + escaped));
  }
  // Labels in the bar charts are cut to fit, and the cut text is escaped too.
  CHECK_THAT(html, Contains(">conv1.weight&lt;script&gt;alert(&quot;x&quot;\xE2\x80\xA6</text>"));
  // Only the page's own markup is left: every '<' opens one of the elements the renderer writes.
  const std::regex tag("<(/?)([a-zA-Z!][a-zA-Z0-9]*)");
  const std::vector<std::string> allowed = {
      "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "p", "b", "br", "sub",
      "sup", "span", "div", "section", "table", "thead", "tbody", "tr", "th", "td", "figure", "figcaption", "svg",
      "g", "rect", "line", "path", "text", "footer"};
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator(); ++it) {
    INFO((*it)[0]);
    CHECK(std::find(allowed.begin(), allowed.end(), (*it)[2].str()) != allowed.end());
  }
}

TEST_CASE("metric tables format each number for its kind", "[report_html]") {
  const std::string html = Render(SampleReport());
  // fc2's activation row: SQNR (below 20 dB, so marked), normalized L2, cosine, LSB, qparams, clipped, headroom.
  CHECK_THAT(html, Contains("<td>fc2</td><td>logits</td><td>QGemm</td><td class=\"num\">[16, 10]</td>"
                            "<td class=\"num poor\">19.4 dB</td><td class=\"num\">0.107</td>"
                            "<td class=\"num\">0.99427</td><td class=\"num\">9</td><td class=\"num\">0.1187 / 3</td>"
                            "<td class=\"num\">1.25%</td><td class=\"num\">10.6</td>"));
  // conv1's weight: SQNR with one decimal even when it is whole, max error 0.5 LSB.
  CHECK_THAT(html, Contains("<td>conv1.weight</td><td>conv1</td><td>QConv</td><td>per_channel_symmetric</td>"
                            "<td>s8</td><td class=\"num\">46.0 dB</td><td class=\"num\">0.00503</td>"
                            "<td class=\"num\">0.999988</td><td class=\"num\">0.5</td>"));
  // Sensitivity: latencies in microseconds, speed-up float / int8, the proposal.
  CHECK_THAT(html, Contains("<td class=\"num\">6.8 &micro;s</td><td class=\"num\">19.5 &micro;s</td>"
                            "<td class=\"num\">2.87&times;</td>"));
  CHECK_THAT(html, Contains("Proposal: keep 1 of 4 nodes float (<b>fc2</b>): output_sqnr_db 26.8 dB, reaches "
                            "the target."));
  // Summary: the input's shape and the model output's SQNR card in the poor colour.
  CHECK_THAT(html, Contains("<b>image</b> [16, 1, 8, 8] from digits_test_x.npy"));
  CHECK_THAT(html, Contains(std::string("border-left-color:") + kColourSqnrPoor + "\"><div>logits</div>"
                            "<div class=\"v\">19.4 dB</div>"));
}

TEST_CASE("null SQNR renders as exact or n/a, and null metrics as a dash", "[report_html]") {
  json report = SampleReport();
  // pool1 (shadow[1]) is exact in the sample; make fc1's shadow SQNR unknown (null without "exact").
  report["shadow"][3]["sqnr_db"] = nullptr;
  report["shadow"][3]["cosine"] = nullptr;
  const std::string html = Render(report);
  const std::vector<std::string> svgs = Svgs(html);
  REQUIRE(svgs.size() >= 3);
  const std::string& shadow = svgs[2];
  CHECK_THAT(shadow, Contains("<title>pool1 (QMaxPool): SQNR exact</title>"));
  CHECK_THAT(shadow, Contains("<title>fc1 (QGemm): SQNR n/a</title>"));
  CHECK(RectWidths(shadow, "#bbbbbb").size() == 1);  // the unknown bar is grey
  // The exact bar spans the whole axis: the longest bar of the chart.
  const std::vector<long> widths = RectWidths(shadow, kColourSqnrGood);  // conv1, pool1, conv2, fc2
  REQUIRE(widths.size() == 4);
  for (size_t i : {0, 2, 3}) CHECK(widths[1] > widths[i]);
  CHECK_THAT(html, Contains("<td>pool1</td><td>QMaxPool</td><td class=\"num\">exact</td>"));
  CHECK_THAT(html, Contains("<td>fc1</td><td>QGemm</td><td class=\"num\">n/a</td><td class=\"num\">0.0351</td>"
                            "<td class=\"num\">&mdash;</td>"));
}

TEST_CASE("empty sections render as notes, without charts", "[report_html]") {
  const json report = {{"schema_version", 1}, {"weights", json::array()}, {"activations", json::array()},
                       {"shadow", json::array()}};
  const std::string html = Render(report);
  CHECK(Count(html, "<svg") == 0);
  CHECK(Count(html, "No entries in this report.") == 6);  // 3 charts + 3 tables
  CHECK_THAT(html, Contains("No weight histograms in this report."));
  CHECK_THAT(html, Contains("No per-channel ranges in this report."));
  CHECK_THAT(html, Contains("<tr><th>Float model</th><td>&mdash;</td></tr>"));
  CHECK(html.find("id=\"sensitivity\"") == std::string::npos);

  json no_nodes = report;
  no_nodes["sensitivity"] = {{"metric", "accuracy"}, {"nodes", json::array()}};
  CHECK_THAT(Render(no_nodes), Contains("No nodes were analysed."));
}

TEST_CASE("the page leads with the 10 worst layers; large reports stay small", "[report_html]") {
  json report = SampleReport();
  const json shadow = report["shadow"], weight = report["weights"][0];
  report["shadow"] = json::array();
  report["weights"] = json::array();
  for (int i = 0; i < 300; ++i) {
    json s = shadow[0];
    s["name"] = fmt::format("layer{}", i);
    s["sqnr_db"] = 20.0 + (i * 37 % 300) / 10.0;  // a permutation of 20.0 .. 49.9: layer0 is 20.0 dB
    s.erase("exact");
    report["shadow"].push_back(s);
    json w = weight;
    w["name"] = fmt::format("layer{}.weight", i);
    w["node"] = fmt::format("layer{}", i);
    w["sqnr_db"] = 30.0 + i % 17;
    report["weights"].push_back(w);
  }
  const std::string html = Render(report);
  const size_t worst = html.find("<section id=\"worst\">"), sqnr = html.find("<section id=\"sqnr\">");
  REQUIRE(worst != std::string::npos);
  CHECK(worst < sqnr);
  CHECK(html.find("<section id=\"summary\">") < worst);
  const std::string table = html.substr(worst, sqnr - worst);
  CHECK(Count(table, "<tr><td><span class=\"sw\"") == 10);
  CHECK_THAT(table, Contains("The 10 of 300 layers with the lowest shadow SQNR"));
  // Ascending: layer0 (20.0 dB) first, then the next lowest values of the permutation.
  std::vector<double> shown;
  const std::regex cell("</span>layer\\d+</td><td>[^<]*</td><td class=\"num[^\"]*\">(\\d+\\.\\d) dB</td>");
  for (auto it = std::sregex_iterator(table.begin(), table.end(), cell); it != std::sregex_iterator(); ++it) {
    shown.push_back(std::stod((*it)[1]));
  }
  REQUIRE(shown.size() == 10);
  CHECK(shown.front() == 20.0);
  CHECK(std::is_sorted(shown.begin(), shown.end()));
  CHECK(table.find(">layer0</td>") != std::string::npos);
  // 300 weight charts would be 300 histograms and channel charts: only the 12 with the lowest SQNR are drawn.
  CHECK_THAT(html, Contains("Showing the 12 of 300 weights with the lowest SQNR"));
  CHECK(Count(html, "float vs int8 histogram") == 12);
  CHECK_THAT(html, Contains("<details><summary>All 300 entries</summary>"));
  CHECK_THAT(html, Contains("<div class=\"scroll\">"));
  CHECK(Count(html, "<svg") == Count(html, "</svg>"));

  // The sample report (a handful of entries) keeps every chart and open tables.
  const std::string small = Render(SampleReport());
  CHECK(small.find("<details>") == std::string::npos);
  CHECK(small.find("<div class=\"scroll\">") == std::string::npos);
  CHECK(small.find("Showing the") == std::string::npos);
}

TEST_CASE("RenderBarChart puts negative values left of zero and spans the markers", "[report_html]") {
  BarChart chart;
  chart.unit = "dB";
  chart.bars = {{"a", 10, false, "10 dB", "#111111", ""}, {"b", 40, false, "40 dB", "#222222", ""},
                {"c", -10, false, "-10 dB", "#333333", ""}};
  chart.markers = {{55, "target"}};
  const std::string svg = RenderBarChart(chart);
  const std::regex rect("<rect x=\"(\\d+)\" y=\"\\d+\" width=\"(\\d+)\" height=\"14\" fill=\"#(\\d)\\3{5}\"/>");
  std::vector<std::pair<long, long>> bars;  // x, width
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    bars.emplace_back(std::stol((*it)[1]), std::stol((*it)[2]));
  }
  REQUIRE(bars.size() == 3);
  CHECK(bars[0].first == bars[1].first);                  // positive bars start at zero
  CHECK(std::abs(bars[1].second - 4 * bars[0].second) <= 1);  // 40 dB is 4x 10 dB (to the pixel)
  CHECK(bars[2].first + bars[2].second == bars[0].first);      // the negative bar ends at zero
  CHECK(std::abs(bars[2].second - bars[0].second) <= 1);
  // The axis runs from -10 to 60 in ticks of 10 (it must reach the marker at 55).
  for (const char* tick : {">-10</text>", ">0</text>", ">60</text>"}) CHECK_THAT(svg, Contains(tick));
  CHECK(svg.find(">70</text>") == std::string::npos);
  CHECK_THAT(svg, Contains(">target</text>"));
}

TEST_CASE("RenderHistogram and RenderChannelRanges draw each bin and channel", "[report_html]") {
  HistogramChart histogram;
  histogram.min = -1;
  histogram.max = 1;
  histogram.float_counts = {0, 2, 5, 9, 4, 0, 1, 0};
  histogram.quantized_counts = {0, 0, 7, 9, 0, 4, 1, 0};
  const std::string h = RenderHistogram(histogram);
  // One float bar per non-empty bin (and the legend's swatch); the tallest bin fills the plot.
  CHECK(Count(h, std::string("fill=\"") + kColourHistogramFloat + "\"") == 5 + 1);
  CHECK_THAT(h, Contains("height=\"120\" fill=\"" + std::string(kColourHistogramFloat) + "\""));
  // The int8 step line visits every bin: 8 horizontal segments.
  const std::smatch path = [&] {
    std::smatch m;
    REQUIRE(std::regex_search(h, m, std::regex("<path d=\"([^\"]*)\"")));
    return m;
  }();
  CHECK(Count(path[1].str(), " H") == 8);
  CHECK_THAT(h, Contains(">-1</text>"));
  CHECK_THAT(h, Contains(">9</text>"));

  const std::vector<ChannelRange> channels = {{-0.5, 0.25, 0.5 / 127.5, 0}, {-0.1, 0.4, 0.4 / 127.5, 0},
                                              {-1.0, 0.0, 1.0 / 127.5, 3}};
  const std::string c = RenderChannelRanges("w <ranges>", channels);
  CHECK(Count(c, "<title>channel ") == 3);
  CHECK_THAT(c, Contains("<title>channel 2: min -1, max 0, scale 0.007843, zero point 3</title>"));
  CHECK(Count(c, std::string("fill=\"") + kColourChannelRange + "\"") == 3 * 3);  // whisker and two caps
  CHECK(Count(c, std::string("fill=\"") + kColourChannelScale + "\"") == 3);
  CHECK_THAT(c, Contains("aria-label=\"w &lt;ranges&gt;\""));
}

TEST_CASE("SqnrColour thresholds", "[report_html]") {
  CHECK(std::string(SqnrColour(std::nullopt)) == kColourSqnrGood);
  CHECK(std::string(SqnrColour(kSqnrGoodDb)) == kColourSqnrGood);
  CHECK(std::string(SqnrColour(29.99)) == kColourSqnrFair);
  CHECK(std::string(SqnrColour(kSqnrFairDb)) == kColourSqnrFair);
  CHECK(std::string(SqnrColour(19.99)) == kColourSqnrPoor);
  CHECK(std::string(SqnrColour(-5.0)) == kColourSqnrPoor);
}

}  // namespace
}  // namespace octet

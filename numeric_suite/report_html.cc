// The numeric-suite report rendered as one self-contained HTML page (numeric_suite/report_html.h).
#include "numeric_suite/report_html.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "numeric_suite/html_text.h"
#include "numeric_suite/report_validate.h"
#include "numeric_suite/svg_charts.h"

namespace octet {
namespace {

using nlohmann::json;

constexpr const char* kNone = "&mdash;";
// Large models (hundreds of layers) keep the page readable and small: the summary leads with the worst layers,
// bar charts longer than kScrollBars scroll in a box, only the kMaxWeightCharts weights with the lowest SQNR get
// histograms and channel-range charts, and tables longer than kCollapseRows start collapsed.
constexpr size_t kWorstLayerRows = 10;
constexpr size_t kScrollBars = 40;
constexpr size_t kMaxWeightCharts = 12;
constexpr size_t kCollapseRows = 40;  // a metric the report leaves out (or null: not a number)

constexpr const char* kStyle = R"css(
body{margin:0;background:#fff;color:#1a1a1a;font:14px/1.45 "DejaVu Sans",Arial,Helvetica,sans-serif}
main{max-width:1100px;margin:0 auto;padding:12px 24px 40px}
h1{font-size:22px;margin:8px 0 2px}
h2{font-size:18px;margin:26px 0 8px;border-bottom:1px solid #d8d8d8;padding-bottom:3px}
h3{font-size:15px;margin:14px 0 4px}
p{margin:4px 0 8px}
table{border-collapse:collapse;font-size:13px;margin:4px 0 12px}
th,td{border:1px solid #d8d8d8;padding:2px 8px;text-align:left;vertical-align:top}
thead th{background:#f2f2f2}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.meta th{background:#f7f7f7;font-weight:600}
figure{margin:6px 0 14px}
figcaption{font-weight:600;margin:0 0 2px}
figcaption .sub{font-weight:400;color:#555}
.grid{display:flex;flex-wrap:wrap;column-gap:22px}
.grid figure{margin:4px 0 10px}
svg.chart{display:block;background:#fff}
svg.chart text{fill:#1a1a1a}
.legend{color:#444;font-size:13px}
.legend .sw{display:inline-block;width:12px;height:12px;margin:0 4px 0 14px;vertical-align:-1px}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border-left:5px solid #999;background:#f5f5f5;padding:4px 14px}
.card .v{font-size:20px;font-weight:600}
.poor{color:#b3200f;font-weight:700}
.note,.empty{color:#666}
.empty{font-style:italic}
footer{margin-top:28px;color:#777;font-size:12px}
table.worst thead th{background:#fdd0a2}
table.worst .sw{display:inline-block;width:8px;height:12px;margin-right:6px;vertical-align:-1px}
.scroll{max-height:640px;overflow-y:auto;border:1px solid #e3e3e3}
details>summary{cursor:pointer;color:#333;margin:4px 0}
)css";

std::optional<double> Number(const json& entry, const char* key) {
  const auto it = entry.find(key);
  if (it == entry.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string Text(const json& entry, const char* key) {
  const auto it = entry.find(key);
  return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Escaped string value, or a dash when the key is absent.
std::string TextCell(const json& entry, const char* key) {
  const std::string text = Text(entry, key);
  return text.empty() ? kNone : EscapeHtml(text);
}

bool IsExact(const json& entry) { return entry["sqnr_db"].is_null() && entry.value("exact", false); }

std::optional<double> Sqnr(const json& entry) { return Number(entry, "sqnr_db"); }

std::string SqnrText(const json& entry) {
  if (const auto db = Sqnr(entry)) return FormatFixed(*db, 1) + " dB";
  return IsExact(entry) ? "exact" : "n/a";
}

template <typename Format>
std::string MetricCell(const json& entry, const char* key, Format format) {
  const auto value = Number(entry, key);
  return value ? EscapeHtml(format(*value)) : kNone;
}

std::string Db(double v) { return FormatFixed(v, 1) + " dB"; }

std::string ShapeText(const json& entry) {
  const auto it = entry.find("shape");
  if (it == entry.end()) return kNone;
  std::string text = "[";
  for (size_t i = 0; i < it->size(); ++i) text += (i ? ", " : "") + (*it)[i].dump();
  return text + "]";
}

std::string Opening(const json& report) {
  const std::string float_model = Text(report, "float_model"), quantized_model = Text(report, "quantized_model");
  std::string title = "octet numeric suite";
  if (!float_model.empty() || !quantized_model.empty()) title += ": " + float_model + " vs " + quantized_model;
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n<main>\n<h1>Numeric suite report</h1>\n",
      EscapeHtml(title), kStyle);
}

std::string Legend() {
  return fmt::format(
      "<p class=\"legend\">SQNR = 20 log<sub>10</sub>(&#8214;float&#8214; / &#8214;float &minus; int8&#8214;);"
      "<span class=\"sw\" style=\"background:{}\"></span>&ge; {} dB or exact"
      "<span class=\"sw\" style=\"background:{}\"></span>{}&ndash;{} dB"
      "<span class=\"sw\" style=\"background:{}\"></span>&lt; {} dB</p>\n",
      kColourSqnrGood, FormatDecimal(kSqnrGoodDb, 1), kColourSqnrFair, FormatDecimal(kSqnrFairDb, 1),
      FormatDecimal(kSqnrGoodDb, 1), kColourSqnrPoor, FormatDecimal(kSqnrFairDb, 1));
}

std::string Summary(const json& report) {
  std::string html = "<section id=\"summary\">\n<table class=\"meta\">\n";
  html += fmt::format("<tr><th>Float model</th><td>{}</td></tr>\n", TextCell(report, "float_model"));
  html += fmt::format("<tr><th>Quantized model</th><td>{}</td></tr>\n", TextCell(report, "quantized_model"));
  std::string inputs;
  for (const json& input : report.value("inputs", json::array())) {
    if (!inputs.empty()) inputs += "<br>";
    inputs += "<b>" + EscapeHtml(input["name"].get<std::string>()) + "</b>";
    if (input.contains("shape")) inputs += " " + ShapeText(input);
    if (input.contains("file")) inputs += " from " + EscapeHtml(Text(input, "file"));
  }
  html += fmt::format("<tr><th>Inputs</th><td>{}</td></tr>\n", inputs.empty() ? kNone : inputs);
  html += fmt::format("<tr><th>Compared</th><td>{} weights, {} activations, {} shadow nodes</td></tr>\n",
                      report["weights"].size(), report["activations"].size(), report["shadow"].size());
  html += "</table>\n";

  const json outputs = report.value("outputs", json::array());
  if (!outputs.empty()) {
    html += "<h3>Model outputs</h3>\n<div class=\"cards\">\n";
    for (const json& output : outputs) {
      html += fmt::format(
          "<div class=\"card\" style=\"border-left-color:{}\"><div>{}</div><div class=\"v\">{}</div>"
          "<div class=\"note\">cosine {}, max error {} LSB</div></div>\n",
          SqnrColour(Sqnr(output)), EscapeHtml(output["name"].get<std::string>()), SqnrText(output),
          MetricCell(output, "cosine", [](double v) { return FormatDecimal(v, 6); }),
          MetricCell(output, "max_abs_error_lsb", [](double v) { return FormatDecimal(v, 2); }));
    }
    html += "</div>\n";
  }
  html += Legend();
  return html + "</section>\n";
}

// Sort key of an SQNR entry, lowest first: exact (+inf) last, undefined (null without exact) first.
double SortDb(const json& entry) {
  if (const auto db = Sqnr(entry)) return *db;
  return IsExact(entry) ? INFINITY : -INFINITY;
}

// The layers with the lowest shadow SQNR (each int8 node against its float twin: the layers that cause the error,
// not those that inherit it), or the lowest propagated SQNR when the report has no shadow entries; with the
// propagated SQNR, the worst weight SQNR and the clipped fraction of each.
std::string WorstLayers(const json& report) {
  const bool by_shadow = !report["shadow"].empty();
  const json& ranked = by_shadow ? report["shadow"] : report["activations"];
  std::string html = "<section id=\"worst\">\n<h2>Worst layers</h2>\n";
  if (ranked.empty()) return html + "<p class=\"empty\">No layers in this report.</p>\n</section>\n";
  std::map<std::string, const json*> activation, weight;
  for (const json& a : report["activations"]) activation.emplace(a["name"].get<std::string>(), &a);
  for (const json& w : report["weights"]) {
    const std::string node = Text(w, "node");
    auto [it, inserted] = weight.emplace(node, &w);
    if (!inserted && SortDb(w) < SortDb(*it->second)) it->second = &w;
  }
  std::vector<const json*> rows;
  for (const json& entry : ranked) rows.push_back(&entry);
  std::stable_sort(rows.begin(), rows.end(), [](const json* a, const json* b) { return SortDb(*a) < SortDb(*b); });
  const size_t shown = std::min(rows.size(), kWorstLayerRows);
  html += fmt::format("<p class=\"note\">The {} of {} layers with the lowest {} SQNR{}; the full lists follow.</p>\n",
                      shown, rows.size(), by_shadow ? "shadow" : "propagated",
                      by_shadow ? " (each int8 layer against its float twin on the same input: where the error "
                                  "is made, not where it is inherited)"
                                : "");
  html +=
      "<table class=\"worst\">\n<thead><tr><th>layer</th><th>op</th><th>shadow SQNR</th><th>propagated SQNR</th>"
      "<th>weight SQNR</th><th>clipped</th></tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < shown; ++i) {
    const json& e = *rows[i];
    const std::string name = e["name"].get<std::string>();
    const auto a = activation.find(name);
    const auto w = weight.find(name);
    const json* shadow = by_shadow ? &e : nullptr;
    const auto cell = [](const json* entry) -> std::string {
      if (entry == nullptr) return kNone;
      const auto db = Sqnr(*entry);
      return fmt::format("<td class=\"num{}\">{}</td>", db && *db < kSqnrFairDb ? " poor" : "", SqnrText(*entry));
    };
    const auto wrap = [](const std::string& c) { return c == kNone ? "<td class=\"num\">" + c + "</td>" : c; };
    html += fmt::format(
        "<tr><td><span class=\"sw\" style=\"background:{}\"></span>{}</td><td>{}</td>{}{}{}<td class=\"num\">{}</td>"
        "</tr>\n",
        (Sqnr(e) || IsExact(e)) ? SqnrColour(Sqnr(e)) : "#bbbbbb", EscapeHtml(name), TextCell(e, "op"),
        wrap(cell(shadow)), wrap(cell(a == activation.end() ? nullptr : a->second)),
        wrap(cell(w == weight.end() ? nullptr : w->second)),
        a == activation.end() ? kNone : MetricCell(*a->second, "clipped_fraction", [](double v) {
          return FormatPercent(v, 3);
        }));
  }
  return html + "</tbody>\n</table>\n</section>\n";
}

// One bar per entry, coloured by its SQNR; exact entries (null SQNR) span the axis.
std::string SqnrFigure(const json& entries, const std::string& caption, const std::string& note,
                       const std::vector<double>& axis_span) {
  std::string html = fmt::format("<figure>\n<figcaption>{} <span class=\"sub\">{}</span></figcaption>\n",
                                 EscapeHtml(caption), EscapeHtml(note));
  if (entries.empty()) return html + "<p class=\"empty\">No entries in this report.</p>\n</figure>\n";
  BarChart chart;
  chart.aria_label = caption + " SQNR per layer";
  chart.unit = "dB";
  chart.axis_span = axis_span;
  for (const json& entry : entries) {
    Bar bar;
    bar.label = entry["name"].get<std::string>();
    const auto db = Sqnr(entry);
    bar.value = db.value_or(0);
    bar.full_length = !db && IsExact(entry);
    bar.value_text = SqnrText(entry);
    bar.colour = (db || IsExact(entry)) ? SqnrColour(db) : "#bbbbbb";
    const std::string op = Text(entry, "op");
    bar.tooltip = bar.label + (op.empty() ? "" : " (" + op + ")") + ": SQNR " + bar.value_text;
    chart.bars.push_back(std::move(bar));
  }
  const bool scroll = entries.size() > kScrollBars;
  return html + (scroll ? "<div class=\"scroll\">\n" : "") + RenderBarChart(chart) + (scroll ? "</div>\n" : "") +
         "</figure>\n";
}

std::string SqnrCharts(const json& report) {
  // One axis for the three charts, so that equal lengths mean equal SQNR.
  std::vector<double> axis_span;
  for (const char* section : {"weights", "activations", "shadow"}) {
    for (const json& entry : report[section]) {
      if (const auto db = Sqnr(entry)) axis_span.push_back(*db);
    }
  }
  std::string html = "<section id=\"sqnr\">\n<h2>Per-layer SQNR</h2>\n";
  html += SqnrFigure(report["weights"], "Weights", "float vs dequantized int8 weights (CompareWeights)", axis_span);
  html += SqnrFigure(report["activations"], "Activations",
                     "error propagated through the int8 graph (CompareModelOutputs)", axis_span);
  html += SqnrFigure(report["shadow"], "Shadow",
                     "each int8 node vs its float twin on the same input, error not propagated (CompareModelStub)",
                     axis_span);
  return html + "</section>\n";
}

std::string WeightCaption(const json& weight) {
  std::string sub = Text(weight, "qscheme");
  if (const std::string dtype = Text(weight, "dtype"); !dtype.empty()) sub += (sub.empty() ? "" : " ") + dtype;
  if (weight.contains("axis") && weight["axis"].is_number_integer()) sub += ", axis " + weight["axis"].dump();
  sub += (sub.empty() ? "" : ", ") + std::string("SQNR ") + SqnrText(weight);
  return fmt::format("<figcaption>{} <span class=\"sub\">{}</span></figcaption>\n",
                     EscapeHtml(weight["name"].get<std::string>()), EscapeHtml(sub));
}

// The weights that get charts: all of them, or the kMaxWeightCharts with the lowest SQNR (in report order).
std::vector<const json*> ChartedWeights(const json& report, const char* key) {
  std::vector<const json*> weights;
  for (const json& w : report["weights"]) {
    if (w.contains(key) && !w[key].empty()) weights.push_back(&w);
  }
  if (weights.size() <= kMaxWeightCharts) return weights;
  std::vector<const json*> worst = weights;
  std::stable_sort(worst.begin(), worst.end(), [](const json* a, const json* b) { return SortDb(*a) < SortDb(*b); });
  worst.resize(kMaxWeightCharts);
  std::vector<const json*> kept;
  for (const json* w : weights) {
    if (std::find(worst.begin(), worst.end(), w) != worst.end()) kept.push_back(w);
  }
  return kept;
}

std::string ChartedNote(size_t shown, size_t total) {
  if (shown == total) return "";
  return fmt::format(
      "<p class=\"note\">Showing the {} of {} weights with the lowest SQNR; every weight is in the "
      "tables below and in the JSON report.</p>\n",
      shown, total);
}

size_t CountWith(const json& report, const char* key) {
  size_t n = 0;
  for (const json& w : report["weights"]) n += w.contains(key) && !w[key].empty() ? 1 : 0;
  return n;
}

std::string Histograms(const json& report) {
  std::string html =
      "<section id=\"histograms\">\n<h2>Weight histograms</h2>\n"
      "<p class=\"note\">Float weights (bars) and the dequantized int8 weights (line) in the same "
      "bins; int8 values gather on the quantization grid.</p>\n";
  const std::vector<const json*> charted = ChartedWeights(report, "histogram");
  html += ChartedNote(charted.size(), CountWith(report, "histogram")) + "<div class=\"grid\">\n";
  int count = 0;
  for (const json* w : charted) {
    const json& weight = *w;
    const json& h = weight["histogram"];
    HistogramChart chart;
    chart.aria_label = weight["name"].get<std::string>() + " float vs int8 histogram";
    chart.min = h["min"].get<double>();
    chart.max = h["max"].get<double>();
    chart.float_counts = h["float"].get<std::vector<double>>();
    chart.quantized_counts = h["quantized"].get<std::vector<double>>();
    html += "<figure>\n" + WeightCaption(weight) + RenderHistogram(chart) + "</figure>\n";
    ++count;
  }
  html += "</div>\n";
  if (count == 0) html += "<p class=\"empty\">No weight histograms in this report.</p>\n";
  return html + "</section>\n";
}

std::string ChannelRanges(const json& report) {
  std::string html =
      "<section id=\"channels\">\n<h2>Per-channel weight ranges</h2>\n"
      "<p class=\"note\">Per output channel: the float min&ndash;max (whisker) and the quantization "
      "scale (bars below, relative to the largest). Hover a channel for its values.</p>\n";
  const std::vector<const json*> charted = ChartedWeights(report, "channels");
  html += ChartedNote(charted.size(), CountWith(report, "channels")) + "<div class=\"grid\">\n";
  int count = 0;
  for (const json* w : charted) {
    const json& weight = *w;
    std::vector<ChannelRange> channels;
    for (const json& c : weight["channels"]) {
      channels.push_back({c["min"].get<double>(), c["max"].get<double>(), c["scale"].get<double>(),
                          c.value("zero_point", 0LL)});
    }
    html += "<figure>\n" + WeightCaption(weight) +
            RenderChannelRanges(weight["name"].get<std::string>() + " per-channel ranges", channels) +
            "</figure>\n";
    ++count;
  }
  html += "</div>\n";
  if (count == 0) html += "<p class=\"empty\">No per-channel ranges in this report.</p>\n";
  return html + "</section>\n";
}

// The metrics every comparison has, as table cells after the name columns.
std::string MetricCells(const json& entry) {
  const std::string sqnr = SqnrText(entry);
  const auto db = Sqnr(entry);
  return fmt::format(
      "<td class=\"num{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
      db && *db < kSqnrFairDb ? " poor" : "", sqnr,
      MetricCell(entry, "normalized_l2", [](double v) { return FormatSignificant(v, 3); }),
      MetricCell(entry, "cosine", [](double v) { return FormatDecimal(v, 6); }),
      MetricCell(entry, "max_abs_error_lsb", [](double v) { return FormatDecimal(v, 2); }));
}
constexpr const char* kMetricHeads =
    "<th>SQNR</th><th>normalized L2</th><th>cosine</th><th>max abs error (LSB)</th>";

std::string Table(const json& entries, const std::string& title, const std::string& heads,
                  std::string (*row)(const json&)) {
  std::string html = "<h3>" + EscapeHtml(title) + "</h3>\n";
  if (entries.empty()) return html + "<p class=\"empty\">No entries in this report.</p>\n";
  const bool collapse = entries.size() > kCollapseRows;
  if (collapse) html += fmt::format("<details><summary>All {} entries</summary>\n", entries.size());
  html += "<table>\n<thead><tr>" + heads + "</tr></thead>\n<tbody>\n";
  for (const json& entry : entries) html += "<tr>" + row(entry) + "</tr>\n";
  return html + "</tbody>\n</table>\n" + (collapse ? "</details>\n" : "");
}

std::string WeightRow(const json& w) {
  return fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}",
                     EscapeHtml(w["name"].get<std::string>()), TextCell(w, "node"), TextCell(w, "op"),
                     TextCell(w, "qscheme"), TextCell(w, "dtype"), MetricCells(w));
}

std::string ActivationRow(const json& a) {
  const std::string qparams = a.contains("scale") ? FormatSignificant(a["scale"].get<double>(), 4) + " / " +
                                                        (a.contains("zero_point") ? a["zero_point"].dump() : "?")
                                                  : kNone;
  return fmt::format("<td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>{}<td class=\"num\">{}</td>"
                     "<td class=\"num\">{}</td><td class=\"num\">{}</td>",
                     EscapeHtml(a["name"].get<std::string>()), TextCell(a, "value"), TextCell(a, "op"), ShapeText(a),
                     MetricCells(a), qparams,
                     MetricCell(a, "clipped_fraction", [](double v) { return FormatPercent(v, 3); }),
                     MetricCell(a, "accumulator_headroom_bits", [](double v) { return FormatDecimal(v, 1); }));
}

std::string ComparisonRow(const json& e) {
  return fmt::format("<td>{}</td><td>{}</td>{}", EscapeHtml(e["name"].get<std::string>()), TextCell(e, "op"),
                     MetricCells(e));
}

std::string Tables(const json& report) {
  std::string html = "<section id=\"metrics\">\n<h2>All metrics</h2>\n";
  html += Table(report["weights"], "Weights",
                std::string("<th>weight</th><th>node</th><th>op</th><th>qscheme</th><th>dtype</th>") + kMetricHeads,
                WeightRow);
  html += Table(report["activations"], "Activations",
                std::string("<th>node</th><th>value</th><th>op</th><th>shape</th>") + kMetricHeads +
                    "<th>scale / zero point</th><th>clipped</th><th>accumulator headroom (bits)</th>",
                ActivationRow);
  html += Table(report["shadow"], "Shadow", std::string("<th>node</th><th>op</th>") + kMetricHeads, ComparisonRow);
  if (report.contains("outputs")) {
    html += Table(report["outputs"], "Model outputs", std::string("<th>output</th><th>op</th>") + kMetricHeads,
                  ComparisonRow);
  }
  html += "<p class=\"note\">clipped: fraction of requantized outputs saturated at the int8 limits; accumulator "
          "headroom: log<sub>2</sub>(2<sup>31</sup> / max |int32 accumulator|), QConv/QGemm only.</p>\n";
  return html + "</section>\n";
}

std::string Sensitivity(const json& s) {
  const std::string metric = s["metric"].get<std::string>();
  const bool db = metric.size() >= 3 && metric.compare(metric.size() - 3, 3, "_db") == 0;
  auto value = [&](std::optional<double> v) -> std::string {
    if (!v) return kNone;
    return EscapeHtml(db ? Db(*v) : FormatSignificant(*v, 4));
  };
  const auto target = Number(s, "target"), all_quantized = Number(s, "all_quantized"),
             float_value = Number(s, "float"), achieved = Number(s, "achieved");

  std::string html = "<section id=\"sensitivity\">\n<h2>Sensitivity</h2>\n";
  html += fmt::format("<p>Metric <b>{}</b>: all quantized {}, float {}, target {}.</p>\n", EscapeHtml(metric),
                      value(all_quantized), value(float_value), value(target));

  std::vector<json> nodes(s["nodes"].begin(), s["nodes"].end());
  std::stable_sort(nodes.begin(), nodes.end(), [](const json& a, const json& b) {
    return a.value("rank", INT64_MAX) < b.value("rank", INT64_MAX);
  });
  if (nodes.empty()) return html + "<p class=\"empty\">No nodes were analysed.</p>\n</section>\n";

  BarChart chart;
  chart.aria_label = "metric with all but one node quantized";
  chart.unit = db ? "dB" : metric;
  for (const json& node : nodes) {
    const auto v = Number(node, "all_but_this_quantized");
    chart.bars.push_back({node["name"].get<std::string>(), v.value_or(0), false, v ? value(v) : "n/a",
                          kColourSensitivity, node["name"].get<std::string>() + " kept float: " + value(v)});
  }
  if (target) chart.markers.push_back({*target, "target"});
  if (all_quantized) chart.markers.push_back({*all_quantized, "all int8"});
  html += "<figure>\n<figcaption>Keeping one node float <span class=\"sub\">(all but this node quantized)"
          "</span></figcaption>\n" + RenderBarChart(chart) + "</figure>\n";

  html += "<table>\n<thead><tr><th>rank</th><th>node</th><th>op</th><th>only this quantized</th>"
          "<th>all but this quantized</th><th>int8 latency</th><th>float latency</th><th>speed-up</th></tr></thead>"
          "\n<tbody>\n";
  for (const json& node : nodes) {
    const auto int8_us = Number(node, "int8_latency_us"), float_us = Number(node, "float_latency_us");
    const auto us = [](std::optional<double> v) { return v ? FormatDecimal(*v, 1) + " &micro;s" : kNone; };
    html += fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
        node.contains("rank") ? node["rank"].dump() : kNone, EscapeHtml(node["name"].get<std::string>()),
        TextCell(node, "op"), value(Number(node, "only_this_quantized")),
        value(Number(node, "all_but_this_quantized")), us(int8_us), us(float_us),
        int8_us && float_us && *int8_us > 0 ? FormatDecimal(*float_us / *int8_us, 2) + "&times;" : kNone);
  }
  html += "</tbody>\n</table>\n";

  const json keep = s.value("keep_float", json::array());
  std::string names;
  for (const json& name : keep) {
    names += (names.empty() ? "<b>" : ", <b>") + EscapeHtml(name.get<std::string>()) + "</b>";
  }
  if (!keep.empty()) {
    html += fmt::format("<p>Proposal: keep {} of {} nodes float ({}): {} {}{}.</p>\n", keep.size(), nodes.size(),
                        names, EscapeHtml(metric), value(achieved),
                        target ? (achieved && *achieved >= *target ? ", reaches the target"
                                                                   : ", does not reach the target")
                               : "");
  } else if (target && all_quantized && *all_quantized >= *target) {
    html += "<p>Proposal: quantize every node; all quantized already reaches the target.</p>\n";
  } else {
    html += "<p class=\"empty\">No keep-float proposal in this report.</p>\n";
  }
  return html + "</section>\n";
}

}  // namespace

Result<std::string> RenderReportHtml(const json& report) {
  OCTET_RETURN_IF_ERROR(ValidateReportJson(report));
  std::string html = Opening(report);
  html += Summary(report);
  html += WorstLayers(report);
  html += SqnrCharts(report);
  html += Histograms(report);
  html += ChannelRanges(report);
  if (report.contains("sensitivity")) html += Sensitivity(report["sensitivity"]);
  html += Tables(report);
  const std::string generator = Text(report, "generator");
  html += fmt::format("<footer>Report schema version {}{}.</footer>\n</main>\n</body>\n</html>\n",
                      report["schema_version"].dump(),
                      generator.empty() ? "" : ", written by " + EscapeHtml(generator));
  return html;
}

}  // namespace octet

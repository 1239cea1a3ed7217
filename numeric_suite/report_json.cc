// The numeric-suite report as JSON, schema version 1 (see report_json.h and docs/report_schema.md).
#include "numeric_suite/report_json.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/version.h"

namespace octet {
namespace {

using nlohmann::json;

json Number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json ShapeJson(const Shape& s) { return json(s.dims()); }

// sqnr_db, normalized_l2, cosine (and "exact" for identical tensors) into `entry`.
void AddMetrics(const ErrorSums& sums, json& entry) {
  const double sqnr = sums.Sqnr();
  entry["sqnr_db"] = Number(sqnr);
  if (sqnr == std::numeric_limits<double>::infinity()) entry["exact"] = true;
  entry["normalized_l2"] = Number(sums.NormalizedL2());
  entry["cosine"] = Number(sums.CosineSimilarity());
}

void AddValueMetrics(const ValueComparison& c, json& entry) {
  AddMetrics(c.sums, entry);
  const double lsb = c.max_abs_error_lsb();
  if (!std::isnan(lsb)) entry["max_abs_error_lsb"] = Number(lsb);
}

const char* DTypeJsonName(DType d) { return DTypeName(d); }

struct ChannelLayout {
  int axis;
  int64_t channels;
  int64_t inner;
};

ChannelLayout Layout(const Shape& shape, int axis) {
  if (shape.rank() == 0) return {0, 1, 1};
  axis = std::clamp(axis, 0, shape.rank() - 1);
  return {axis, shape.dim(axis), shape.Product(axis + 1, shape.rank())};
}

Result<json> WeightJson(const WeightComparison& w, int channel_axis) {
  json e;
  e["name"] = w.name;
  e["node"] = w.node;
  e["op"] = w.op;
  ErrorSums sums;
  OCTET_RETURN_IF_ERROR(sums.Accumulate(w.float_weight, w.dequantized));
  AddMetrics(sums, e);
  e["qscheme"] = QSchemeName(w.qparams.scheme());
  e["dtype"] = DTypeJsonName(w.qparams.dtype());
  if (w.qparams.per_channel()) e["axis"] = w.qparams.axis();

  const ChannelLayout layout = Layout(w.float_weight.shape(), w.qparams.per_channel() ? w.qparams.axis() : channel_axis);
  if (w.qparams.per_channel() && layout.channels != w.qparams.num_channels()) {
    return InvalidArgument("failed to report weight '{}': {} per-channel qparams for {} channels of shape {}", w.name,
                           w.qparams.num_channels(), layout.channels, w.float_weight.shape());
  }
  const float* f = w.float_weight.data<float>();
  const float* q = w.dequantized.data<float>();
  const int64_t n = w.float_weight.NumElements();
  // Max error in LSB of each element's own channel scale.
  double max_lsb = 0;
  std::vector<double> cmin(static_cast<size_t>(layout.channels), std::numeric_limits<double>::infinity());
  std::vector<double> cmax(static_cast<size_t>(layout.channels), -std::numeric_limits<double>::infinity());
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (int64_t i = 0; i < n; ++i) {
    const size_t c = static_cast<size_t>((i / layout.inner) % layout.channels);
    const size_t qc = w.qparams.per_channel() ? c : 0;
    max_lsb = std::max(max_lsb, std::abs(double{f[i]} - double{q[i]}) / w.qparams.scales()[qc]);
    cmin[c] = std::min(cmin[c], double{f[i]});
    cmax[c] = std::max(cmax[c], double{f[i]});
    lo = std::min({lo, double{f[i]}, double{q[i]}});
    hi = std::max({hi, double{f[i]}, double{q[i]}});
  }
  e["max_abs_error_lsb"] = Number(max_lsb);
  if (n == 0) lo = hi = 0;
  // The same 64 bins over [min, max] of both tensors; the last bin is closed.
  std::vector<int64_t> hf(kWeightHistogramBins, 0), hq(kWeightHistogramBins, 0);
  const double width = (hi - lo) / kWeightHistogramBins;
  auto bin = [&](double v) {
    if (!(width > 0)) return 0;
    return std::clamp(static_cast<int>((v - lo) / width), 0, kWeightHistogramBins - 1);
  };
  for (int64_t i = 0; i < n; ++i) {
    ++hf[static_cast<size_t>(bin(f[i]))];
    ++hq[static_cast<size_t>(bin(q[i]))];
  }
  e["histogram"] = {{"min", Number(lo)}, {"max", Number(hi)}, {"float", hf}, {"quantized", hq}};
  json channels = json::array();
  for (int64_t c = 0; c < layout.channels; ++c) {
    const size_t qc = w.qparams.per_channel() ? static_cast<size_t>(c) : 0;
    channels.push_back({{"min", Number(cmin[static_cast<size_t>(c)])},
                        {"max", Number(cmax[static_cast<size_t>(c)])},
                        {"scale", Number(w.qparams.scales()[qc])},
                        {"zero_point", w.qparams.zero_points()[qc]}});
  }
  e["channels"] = std::move(channels);
  return e;
}

}  // namespace

Result<nlohmann::json> BuildReportJson(const ReportSources& sources, std::span<const WeightComparison> weights,
                                       std::span<const ValueComparison> activations,
                                       std::span<const ValueComparison> shadow,
                                       std::span<const ValueComparison> outputs) {
  json report;
  report["schema_version"] = kReportSchemaVersion;
  report["generator"] = std::string("octet ") + Version();
  report["float_model"] = sources.float_model;
  report["quantized_model"] = sources.quantized_model;
  json inputs = json::array();
  for (const ReportSources::Input& in : sources.inputs) {
    inputs.push_back({{"name", in.name}, {"file", in.file}, {"shape", ShapeJson(in.shape)}});
  }
  report["inputs"] = std::move(inputs);

  json w = json::array();
  for (const WeightComparison& c : weights) {
    OCTET_ASSIGN_OR_RETURN(json e, WeightJson(c, c.channel_axis));
    w.push_back(std::move(e));
  }
  report["weights"] = std::move(w);

  json a = json::array();
  for (const ValueComparison& c : activations) {
    json e = {{"name", c.name}, {"value", c.value}, {"op", c.op}, {"shape", ShapeJson(c.shape)}};
    AddValueMetrics(c, e);
    if (c.qparams && !c.qparams->per_channel()) {
      e["scale"] = c.qparams->scale();
      e["zero_point"] = c.qparams->zero_point();
    }
    if (c.clipping && c.clipping->total > 0) {
      e["clipped_fraction"] = static_cast<double>(c.clipping->clipped) / static_cast<double>(c.clipping->total);
    }
    if (c.max_abs_accumulator) e["accumulator_headroom_bits"] = AccumulatorHeadroomBits(*c.max_abs_accumulator);
    a.push_back(std::move(e));
  }
  report["activations"] = std::move(a);

  json s = json::array();
  for (const ValueComparison& c : shadow) {
    json e = {{"name", c.name}, {"op", c.op}};
    AddValueMetrics(c, e);
    s.push_back(std::move(e));
  }
  report["shadow"] = std::move(s);

  json o = json::array();
  for (const ValueComparison& c : outputs) {
    json e = {{"name", c.name}};
    AddMetrics(c.sums, e);
    o.push_back(std::move(e));
  }
  report["outputs"] = std::move(o);
  return report;
}

}  // namespace octet

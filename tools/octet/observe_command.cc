// `octet observe`: observers/ over .npy batches, the result as one JSON object on stdout.
#include "tools/octet/observe_command.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/dtype.h"
#include "core/qparams.h"
#include "observers/observer_factory.h"
#include "observers/state_json.h"
#include "tools/octet/context_options.h"

namespace octet::cli {
namespace {

struct ObserveCommand {
  std::string observer;
  std::string dtype = "quint8";
  std::string qscheme;
  bool reduce_range = false;
  std::optional<int64_t> quant_min;
  std::optional<int64_t> quant_max;
  std::optional<double> eps;
  std::optional<double> averaging_constant;
  std::optional<int> ch_axis;
  std::optional<int64_t> bins;
  std::optional<int64_t> upsample_rate;
  std::string histogram_variant;
  std::optional<double> percentile;
  bool skip_non_finite = false;
  bool state = false;
  std::vector<std::string> batches;
  ContextFlags context;
};

// The command line as ObserverOptions, then the observer (exit 2 on failure).
Result<std::unique_ptr<Observer>> MakeFromFlags(const ObserveCommand& c) {
  OCTET_ASSIGN_OR_RETURN(const ObserverKind kind, ParseObserverKind(c.observer));
  ObserverOptions o;
  OCTET_ASSIGN_OR_RETURN(o.dtype, ParseDType(c.dtype));
  if (!c.qscheme.empty()) {
    OCTET_ASSIGN_OR_RETURN(o.qscheme, ParseQScheme(c.qscheme));
  }
  if (!c.histogram_variant.empty()) {
    OCTET_ASSIGN_OR_RETURN(o.histogram_variant, ParseHistogramVariant(c.histogram_variant));
  }
  o.reduce_range = c.reduce_range;
  o.quant_min = c.quant_min;
  o.quant_max = c.quant_max;
  o.eps = c.eps;
  o.averaging_constant = c.averaging_constant;
  o.ch_axis = c.ch_axis;
  o.bins = c.bins;
  o.upsample_rate = c.upsample_rate;
  o.percentile = c.percentile;
  o.skip_non_finite = c.skip_non_finite;
  return MakeObserver(kind, o);
}

int RunObserve(const ObserveCommand& c) {
  auto made = MakeFromFlags(c);
  if (!made.ok()) return ReportUsage(made.status().message());
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());
  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Observer& observer = **made;
  observer.set_context(&*context);
  for (const std::string& path : c.batches) {
    Result<Tensor> x = ReadTensorFile(path);
    if (!x.ok()) return ReportFailure(x.status());
    if (Status s = observer.Observe(*x, path); !s.ok()) return ReportFailure(NameFile(s, "observe", path));
  }
  nlohmann::ordered_json out;  // keys in the documented order
  out["observer"] = ObserverKindName(observer.kind());
  out["dtype"] = ObserverDTypeName(observer.options().dtype);
  out["qscheme"] = QSchemeName(observer.options().qscheme);
  out["quant_min"] = observer.quant_min();
  out["quant_max"] = observer.quant_max();
  nlohmann::ordered_json scales = nlohmann::ordered_json::array();
  nlohmann::ordered_json zero_points = nlohmann::ordered_json::array();
  if (observer.kind() != ObserverKind::kPlaceholder) {
    Result<QParams> q = observer.CalculateQParams();
    if (!q.ok()) return ReportFailure(q.status());
    for (float s : q->scales()) scales.push_back(static_cast<double>(s));
    for (int32_t z : q->zero_points()) zero_points.push_back(z);
  }
  out["scale"] = std::move(scales);
  out["zero_point"] = std::move(zero_points);
  out["min_val"] = nlohmann::ordered_json::parse(FloatsToJson(observer.min_val()).dump());
  out["max_val"] = nlohmann::ordered_json::parse(FloatsToJson(observer.max_val()).dump());
  if (c.state) out["state"] = nlohmann::ordered_json::parse(observer.SaveState().dump());
  fmt::print("{}\n", out.dump());
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

void AddObserveCommand(CLI::App& app, CommandRegistry& registry) {
  auto c = std::make_shared<ObserveCommand>();
  CLI::App* sub = app.add_subcommand(
      "observe", "Run an observer over .npy batches in order and print its qparams and range as JSON");
  sub->add_option("--observer", c->observer,
                  "minmax, moving_average_minmax, per_channel_minmax, moving_average_per_channel_minmax, histogram, "
                  "percentile, entropy, mse or placeholder")
      ->required()
      ->type_name("NAME");
  sub->add_option("--dtype", c->dtype, "quint8, qint8 or qint32")->capture_default_str()->type_name("D");
  sub->add_option("--qscheme", c->qscheme,
                  "per_tensor_affine, per_tensor_symmetric, per_channel_affine or per_channel_symmetric (default: "
                  "the observer's affine scheme)")
      ->type_name("S");
  sub->add_flag("--reduce-range", c->reduce_range, "Use one bit less (PyTorch's reduce_range)");
  sub->add_option("--quant-min", c->quant_min, "Customized range: lowest integer (with --quant-max)")->type_name("A");
  sub->add_option("--quant-max", c->quant_max, "Customized range: highest integer (with --quant-min)")->type_name("B");
  sub->add_option("--eps", c->eps, "Smallest scale (default float32 epsilon)")->type_name("E");
  sub->add_option("--averaging-constant", c->averaging_constant, "Moving averages: weight of each batch (0.01)")
      ->type_name("C");
  sub->add_option("--ch-axis", c->ch_axis, "Per-channel observers: the channel axis (0; negative from the end)")
      ->type_name("A");
  sub->add_option("--bins", c->bins, "Histogram bins (2048)")->type_name("N");
  sub->add_option("--upsample-rate", c->upsample_rate, "HistogramObserver's up-sampling (16 upstream, 128 legacy)")
      ->type_name("R");
  sub->add_option("--histogram-variant", c->histogram_variant, "upstream (default) or legacy_1_13")
      ->type_name("V");
  sub->add_option("--percentile", c->percentile, "PercentileObserver: the percentile kept (99.99)")->type_name("P");
  sub->add_flag("--skip-non-finite", c->skip_non_finite, "Skip and count NaN and +-Inf instead of failing");
  sub->add_flag("--state", c->state, "Also print the observer's saved state under \"state\"");
  sub->add_option("batches", c->batches, "Float32 .npy batches, observed in order")->required()->type_name("BATCH.npy");
  c->context.AddTo(sub, 1);
  registry.Add(sub, [c] { return RunObserve(*c); });
}

}  // namespace octet::cli

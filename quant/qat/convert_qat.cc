// ConvertQat (see convert_qat.h).
#include "quant/qat/convert_qat.h"

#include <map>

namespace octet::qat {
namespace {

// `q` with the symmetric form of its scheme when the module was configured symmetric and the zero points allow it.
QParams SymmetricIfConfigured(const QParams& q, const FakeQuantizeConfig& config) {
  const std::optional<QScheme>& wanted = config.observer_options.qscheme;
  if (!wanted.has_value() || !IsSymmetric(*wanted) || IsSymmetric(q.scheme())) return q;
  const QScheme scheme = q.per_channel() ? QScheme::kPerChannelSymmetric : QScheme::kPerTensorSymmetric;
  Result<QParams> sym = QParams::Create(scheme, q.dtype(), q.quant_min(), q.quant_max(), q.scales(),
                                        q.zero_points(), q.axis());
  return sym.ok() ? *sym : q;
}

}  // namespace

Result<PreparedGraph> PrepareForConvert(QatModel& model, QatQParamsSource source) {
  OCTET_ASSIGN_OR_RETURN(Graph trained, model.TrainedFloatGraph());
  OCTET_ASSIGN_OR_RETURN(PreparedGraph prepared, Prepare(std::move(trained), model.mapping()));
  std::map<std::string, FakeQuantSite*> activation_site, weight_site;
  for (FakeQuantSite& site : model.mutable_sites()) {
    if (site.role == ObservedRole::kWeight) {
      weight_site[site.owner] = &site;
    } else {
      for (const std::string& v : site.values) activation_site[v] = &site;
    }
  }
  const Graph& g = prepared.graph();
  for (ObserverSlot& slot : prepared.mutable_slots()) {
    const std::string& first = g.value(slot.values.front()).name;
    FakeQuantSite* site = nullptr;
    if (slot.role == ObservedRole::kWeight) {
      auto it = weight_site.find(slot.owner);
      site = it == weight_site.end() ? nullptr : it->second;
    } else {
      auto it = activation_site.find(first);
      site = it == activation_site.end() ? nullptr : it->second;
    }
    if (site == nullptr) {
      return Internal("failed to convert the QAT model: value '{}' (observed for node '{}') has no fake-quant module",
                      first, slot.owner);
    }
    if (slot.role == ObservedRole::kWeight) {
      // from_float: weight_post_process(weight) on the folded weight, then its qparams.
      const Tensor& w = g.value(slot.values.front()).data;
      Result<Tensor> seen = site->module->Forward(w);
      if (!seen.ok()) return seen.status().WithContext(fmt::format("failed to convert weight '{}'", first));
    }
    Result<QParams> q = source == QatQParamsSource::kForward ? site->module->FakeQuantQParams()
                                                             : site->module->CalculateQParams();
    if (!q.ok()) {
      return q.status().WithContext(fmt::format("failed to convert the qparams of '{}' ({})", first, site->node));
    }
    slot.fixed_qparams = SymmetricIfConfigured(*q, site->module->config());
  }
  return prepared;
}

Result<Graph> ConvertQat(QatModel& model, const QatConvertOptions& options, ConvertReport* report) {
  OCTET_ASSIGN_OR_RETURN(PreparedGraph prepared, PrepareForConvert(model, options.qparams));
  return Convert(prepared, options.convert, report);
}

}  // namespace octet::qat

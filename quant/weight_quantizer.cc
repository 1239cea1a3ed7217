// WeightQuantizer: observe, calculate qparams, quantize, add the constant.
#include "quant/weight_quantizer.h"

#include <fmt/format.h>

#include "observers/observer.h"
#include "ops/quantize.h"
#include "quant/graph_rewrite.h"

namespace octet {

Result<ValueId> WeightQuantizer::Quantize(Graph& graph, const Node& node, ValueId value, const ObserverSpec& spec,
                                          int axis) {
  const std::string key = fmt::format("{}@{}", spec.ToString(), axis);
  if (auto it = done_.find({value, key}); it != done_.end()) return it->second;
  const Value& w = graph.value(value);
  auto fail = [&](const Status& s) {
    return Status(s.code(), fmt::format("failed to quantize weight '{}' of node '{}': {}", w.name, node.name,
                                        s.message()));
  };
  if (w.kind != ValueKind::kConstant || w.data.dtype() != DType::kF32) {
    return fail(InvalidArgument("need an f32 constant, got {} {}", ValueKindName(w.kind), w.dtype));
  }
  const Context& context = context_ != nullptr ? *context_ : DefaultObserverContext();
  auto observer = spec.Make(axis);
  if (!observer.ok()) return fail(observer.status());
  (*observer)->set_context(&context);
  if (Status s = (*observer)->Observe(w.data, w.name); !s.ok()) return fail(s);
  auto qparams = (*observer)->CalculateQParams();
  if (!qparams.ok()) return fail(qparams.status());
  if (qparams->dtype() != DType::kS8) {
    return fail(InvalidArgument("the weight observer must give s8 (qint8) qparams, got {} ({})", qparams->dtype(),
                                spec.ToString()));
  }
  QuantizeOptions qo;
  qo.name = w.name;
  auto q = octet::Quantize(context, w.data, *qparams, qo);
  if (!q.ok()) return fail(q.status());
  const std::string name = UniqueValueName(graph, w.name + "_quantized");
  OCTET_ASSIGN_OR_RETURN(ValueId id, graph.AddConstant(name, q->values()));
  graph.mutable_value(id).qparams = q->qparams();
  done_[{value, key}] = id;
  return id;
}

}  // namespace octet

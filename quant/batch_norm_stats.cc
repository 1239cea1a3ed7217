// BatchNorm statistics kept through folding (see batch_norm_stats.h).
#include "quant/batch_norm_stats.h"

#include <algorithm>
#include <cmath>

#include "core/float_op_table.h"
#include "quant/fold_batch_norm.h"

namespace octet {

Result<PreActivationStats> FoldBatchNormKeepingStats(Graph& graph, std::vector<std::string>* folded) {
  // Read every candidate before folding: FoldBatchNorm removes the BatchNorm nodes it folds.
  std::map<std::string, std::pair<std::string, ChannelStats>> by_bn;  // BatchNorm name -> (producer, stats)
  const std::vector<int> producers = graph.Producers();
  for (const Node& bn : graph.nodes()) {
    if (bn.op_type != FloatOpName(FloatOp::kBatchNormalization) || !bn.domain.empty() || bn.inputs.size() != 5)
      continue;
    const ValueId x = bn.inputs[0];
    if (x == kNoValue || producers[static_cast<size_t>(x)] < 0) continue;
    const Value& gamma = graph.value(bn.inputs[1]);
    const Value& beta = graph.value(bn.inputs[2]);
    if (gamma.kind != ValueKind::kConstant || beta.kind != ValueKind::kConstant || gamma.data.dtype() != DType::kF32 ||
        beta.data.dtype() != DType::kF32 || gamma.data.NumElements() != beta.data.NumElements()) {
      continue;
    }
    ChannelStats s;
    for (int64_t c = 0; c < gamma.data.NumElements(); ++c) {
      s.mean.push_back(beta.data.data<float>()[c]);
      s.std.push_back(std::fabs(gamma.data.data<float>()[c]));
    }
    by_bn[bn.name] = {graph.node(producers[static_cast<size_t>(x)]).name, std::move(s)};
  }
  OCTET_ASSIGN_OR_RETURN(std::vector<std::string> names, FoldBatchNorm(graph));
  PreActivationStats stats;
  for (const std::string& name : names) {
    auto it = by_bn.find(name);
    if (it != by_bn.end()) stats[it->second.first] = std::move(it->second.second);
  }
  if (folded != nullptr) *folded = std::move(names);
  return stats;
}

float ReluOfNormalMean(float mean, float std) {
  if (!(std > 0.0f)) return std::max(mean, 0.0f);
  const double z = static_cast<double>(mean) / std;
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  return static_cast<float>(std * pdf + mean * cdf);
}

}  // namespace octet

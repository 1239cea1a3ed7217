// Warnings for flows that quantized none of their candidate operators (see
// nothing_quantized.h).
#include "quant/nothing_quantized.h"

#include <fmt/format.h>

#include "core/float_op_table.h"

namespace octet {
namespace {

constexpr size_t kListed = 10;  // the first nodes named; the rest counted

bool IsWeighted(const std::string &op_type) {
  return op_type == FloatOpName(FloatOp::kConv) || op_type == FloatOpName(FloatOp::kGemm) ||
         op_type == FloatOpName(FloatOp::kMatMul);
}

}  // namespace

std::string NothingQuantizedWarning(const Graph &prepared_graph, const ConvertReport &report) {
  for (const std::string &name : report.quantized) {
    for (const Node &n : prepared_graph.nodes()) {
      if (n.name == name && IsWeighted(n.op_type)) return "";
    }
  }
  std::vector<const ConvertReport::FloatNode *> candidates;
  for (const ConvertReport::FloatNode &f : report.kept_float) {
    if (IsWeighted(f.op_type)) candidates.push_back(&f);
  }
  if (candidates.empty()) return "";
  std::string text = fmt::format(
      "warning: static quantization quantized none of the {} "
      "Conv/Gemm/MatMul node{}; the "
      "model runs in float:",
      candidates.size(), candidates.size() == 1 ? "" : "s");
  for (size_t i = 0; i < candidates.size() && i < kListed; ++i) {
    text += fmt::format("\n  {} ({}): {}", candidates[i]->node, candidates[i]->op_type, candidates[i]->reason);
  }
  if (candidates.size() > kListed) text += fmt::format("\n  ... and {} more", candidates.size() - kListed);
  return text;
}

std::string NothingQuantizedWarning(const QuantizeDynamicReport &report) {
  if (!report.quantized.empty() || report.kept_float.empty()) return "";
  std::string text = fmt::format(
      "warning: dynamic quantization converted none "
      "of the {} Gemm/MatMul/LSTM/GRU node{} "
      "it considered; the model runs in float:",
      report.kept_float.size(), report.kept_float.size() == 1 ? "" : "s");
  for (size_t i = 0; i < report.kept_float.size() && i < kListed; ++i) text += "\n  " + report.kept_float[i];
  if (report.kept_float.size() > kListed)
    text += fmt::format("\n  ... and {} more", report.kept_float.size() - kListed);
  return text;
}

}  // namespace octet

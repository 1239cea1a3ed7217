// PrepareQat: the graph half of quantization-aware training (torch.ao.quantization.prepare_qat_fx, 1.13). It turns a
// float graph into a QatModel, a TrainingGraph in which
//   * every Conv + BatchNormalization pair is PyTorch's ConvBn2d simulated folding (quant/qat/conv_bn.h), the
//     BatchNormalization still training on batch statistics;
//   * the weight of each quantized Conv/Gemm/MatMul (for a ConvBn unit: W * s) passes through a fake-quant node
//     before its node, with the QatQConfig's weight module, per channel along the operator's output-channel axis
//     when the config is per channel;
//   * activations are fake-quantized where Prepare (quant/prepare.h) would place activation observers: graph inputs
//     and outputs of quantized nodes, after fusion (so a Conv-BN-Relu is quantized after the Relu only), one module
//     per share-qparams group (MaxPool, Flatten, Relu... keep their input's qparams: the group's entry value is
//     fake-quantized, the rest follow). Placement is Prepare's own, run on the fused copy of the graph.
// Fake-quant nodes are op "FakeQuantize" in domain "octet.qat", named "<value>.fake_quant" (activations) and
// "<node>.weight_fake_quant" (weights); the TrainingGraph runs their FakeQuantizeModule (quant/qat/
// fake_quantize_module.h) forward and backward, and SGD trains learned scales and zero points (kLearnable) with the
// weights.
//
// PyTorch's recipe in one model: DisableObservers() (disable_observer) and FreezeBatchNormStats()
// (freeze_bn_stats) after some steps; QatTrainOptions and TrainQat (quant/qat/train_qat.h) schedule them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/status.h"
#include "quant/prepare.h"
#include "quant/qat/conv_bn.h"
#include "quant/qat/fake_quantize_module.h"
#include "quant/qconfig_mapping.h"
#include "quant/training/training_graph.h"

namespace octet::qat {

// One fake-quant node and the PTQ observer slot it stands for.
struct FakeQuantSite {
  std::string node;                 // the FakeQuantize node of the training graph
  ObservedRole role = ObservedRole::kActivation;
  std::vector<std::string> values;  // activation: the values sharing its qparams (graph order of the fused graph);
                                    // weight: the weight constant (its name in the float graph)
  std::string owner;                // the node whose QConfig placed it (weights: the weighted node)
  std::unique_ptr<FakeQuantizeModule> module;
};

struct PrepareQatOptions {
  // Nodes (or sub-module name prefixes) kept float: QConfigMapping::SetModuleName(name, none).
  std::vector<std::string> skip;
};

class QatModel {
 public:
  QatModel(QatModel&&) = default;
  QatModel& operator=(QatModel&&) = default;

  // The input graph (BatchNormalization kept, constants as given), what ConvertQat rebuilds from.
  const Graph& float_graph() const { return float_graph_; }
  training::TrainingGraph& training_graph() { return *training_; }
  const training::TrainingGraph& training_graph() const { return *training_; }
  const std::vector<FakeQuantSite>& sites() const { return sites_; }
  std::vector<FakeQuantSite>& mutable_sites() { return sites_; }
  const std::vector<ConvBnUnit>& conv_bn_units() const { return conv_bn_units_; }
  // The PTQ-observer form of the QatQConfig, by which placement (and ConvertQat's Prepare) is decided.
  const QConfigMapping& mapping() const { return mapping_; }
  const QatQConfig& qconfig() const { return qconfig_; }

  // PyTorch's model.apply(disable_observer) / enable_observer: every module's observer flag. For kLearnable
  // modules DisableObservers() starts learning (enable_param_learning: scale and zero point trained from now).
  Status DisableObservers();
  void EnableObservers();
  void SetFakeQuantEnabled(bool on);
  // freeze_bn_stats: every BatchNormalization normalizes with its running statistics, which stay fixed.
  void FreezeBatchNormStats() { training_->set_batch_norm_frozen(true); }

  // The float graph with the trained weights, biases and BatchNormalization statistics (the input graph with each
  // constant replaced by the training graph's current value of the same name).
  Result<Graph> TrainedFloatGraph() const;

 private:
  friend Result<QatModel> PrepareQat(Graph graph, const QatQConfig& qconfig, const Context& context,
                                     const PrepareQatOptions& options);
  QatModel() = default;

  Graph float_graph_;
  QatQConfig qconfig_;
  QConfigMapping mapping_;
  std::vector<ConvBnUnit> conv_bn_units_;
  std::vector<FakeQuantSite> sites_;
  std::vector<std::unique_ptr<training::TrainingModule>> adapters_;  // one per site, run by the training graph
  std::unique_ptr<training::TrainingGraph> training_;
};

// The QConfig whose observers stand for `qconfig`'s modules in placement and Convert (the same observer kind and
// options).
QConfig ObserverQConfig(const QatQConfig& qconfig);

// Fails naming the node or value: a graph the TrainingGraph cannot train, a weight that is not an f32 constant, a
// module the config cannot build, or what is not supported yet: a share-qparams group entered by two values (Concat
// of two fake-quantized inputs), a BatchNormalization after a Gemm (PyTorch 1.13 has no LinearBn either).
// `context` must outlive the model.
Result<QatModel> PrepareQat(Graph graph, const QatQConfig& qconfig, const Context& context,
                            const PrepareQatOptions& options = {});
// With GetDefaultQatQConfig(backend, version 1).
Result<QatModel> PrepareQat(Graph graph, std::string_view backend, const Context& context,
                            const PrepareQatOptions& options = {});

}  // namespace octet::qat

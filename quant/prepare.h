// Prepare: the first step of static post-training quantization (torch.ao.quantization.quantize_fx.prepare_fx).
// It fuses the graph (quant/fuse.h, unless told not to), resolves each node's QConfig from the mapping, and attaches
// observers to the values the quantized graph will need qparams for (quant/quantizable_ops.h):
//   * activations: every float input and the output of each quantized node; one observer per value, shared along
//     chains of share-qparams ops (MaxPool, Flatten, Reshape, Concat, Relu, ...), built by the activation factory
//     of the first node (in graph order) that observes the value; with ReduceRangeScope::kWeights (the x86
//     preset) its reduce_range holds only for input B of a MatMul of two activations (quant/qconfig.h);
//   * weights: the constant weight of each Conv/Gemm/MatMul, by the weight factory, per channel along the
//     operator's output-channel axis when the factory is per-channel, observed once here; with
//     ReduceRangeScope::kWeights and reduce_range, in [-64, 63].
// Nodes whose QConfig is none stay float and get no observers of their own. With a dynamic QConfig (activation
// PlaceholderObserver) only the weight is observed: activation qparams are computed per call.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/graph.h"
#include "core/qparams.h"
#include "core/status.h"
#include "observers/observer.h"
#include "quant/fuse.h"
#include "quant/qconfig.h"
#include "quant/qconfig_mapping.h"

namespace octet {

enum class ObservedRole { kActivation, kWeight };

// One observer and the values it watches (several for shared qparams).
struct ObserverSlot {
  ObservedRole role = ObservedRole::kActivation;
  std::unique_ptr<Observer> observer;
  std::vector<ValueId> values;
  std::string owner;  // the node whose QConfig built the observer
  // Qparams given from outside (QAT's ConvertQat: the fake-quant module's), used instead of the observer's.
  std::optional<QParams> fixed_qparams;
};

struct PrepareOptions {
  bool fuse = true;                  // run Fuse (BatchNorm folding, activation fusion) first
  const Context* context = nullptr;  // for the observers (nullptr: DefaultObserverContext())
};

class PreparedGraph {
 public:
  // The fused graph to calibrate (compile it with QuantFloatRegistry()).
  const Graph& graph() const { return graph_; }
  const FuseReport& fuse_report() const { return fuse_report_; }
  // Each node's QConfig (std::nullopt: kept float), by node index in graph().
  const std::optional<QConfig>& node_qconfig(int node_index) const { return node_qconfigs_.at(node_index); }
  const std::vector<ObserverSlot>& slots() const { return slots_; }
  std::vector<ObserverSlot>& mutable_slots() { return slots_; }
  // The slot observing `value`, or -1.
  int slot_of(ValueId value) const;
  // The observer of the value called `name`, or nullptr.
  const Observer* FindObserver(const std::string& name) const;
  // Qparams of every observed value, by value name (a slot's fixed_qparams when set); fails naming a value whose
  // observer saw nothing (an activation never reached by calibration) or whose observer fails.
  Result<std::map<std::string, QParams>> CalculateQParams() const;

 private:
  friend Result<PreparedGraph> Prepare(Graph graph, const QConfigMapping& mapping, const PrepareOptions& o);
  Graph graph_;
  FuseReport fuse_report_;
  std::vector<std::optional<QConfig>> node_qconfigs_;
  std::vector<ObserverSlot> slots_;
  std::vector<int> slot_of_;  // by value id
};

// Fails on a mapping that does not validate against the graph (QConfigMapping::Validate), or a weight that cannot be
// observed (naming node and value).
Result<PreparedGraph> Prepare(Graph graph, const QConfigMapping& mapping, const PrepareOptions& options = {});

}  // namespace octet

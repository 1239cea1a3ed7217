// Per-opset node rewrites into the form octet's operators read (opset 13-17
// schemas); see opset_adapters.h.
#include "io/onnx/opset_adapters.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/float_op_table.h"
#include "io/onnx/onnx_importer.h"
#include "io/onnx/onnx_op_names.h"
#include "io/onnx/onnx_tensor.h"

namespace octet::onnx_import {
namespace {

using onnx::AttributeProto;
using onnx::NodeProto;
using onnx_names::IsOpType;
using onnx_names::IsOpTypeIn;

// Since-versions up to opset 7 of the ops read at opsets 1 to 6: such a node is
// read when its op's schema at the model's opset is the one opset 7 has
// (GlobalAveragePool-1, HardSigmoid-6), refused otherwise (Add-6's broadcast
// attribute, Relu-1's consumed_inputs).
const std::map<FloatOp, std::vector<int>> &EarlyVersions() {
  static const auto *versions = [] {
    using F = FloatOp;
    // Each list of since-versions with the ops that have it.
    const std::pair<std::vector<int>, std::vector<FloatOp>> groups[] = {
        {{1},
         {F::kArgMax, F::kArgMin, F::kConstant, F::kConv, F::kConvTranspose, F::kDepthToSpace, F::kFlatten, F::kGather,
          F::kGlobalAveragePool, F::kGlobalMaxPool, F::kHardmax, F::kIdentity, F::kLogSoftmax, F::kMatMul, F::kMaxPool,
          F::kNot}},
        {{1}, {F::kReduceL1,  F::kReduceL2,   F::kReduceLogSum, F::kReduceLogSumExp, F::kReduceMax,    F::kReduceMean,
               F::kReduceMin, F::kReduceProd, F::kReduceSum,    F::kReduceSumSquare, F::kShape,        F::kSize,
               F::kSlice,     F::kSoftmax,    F::kSoftplus,     F::kSoftsign,        F::kSpaceToDepth, F::kSqueeze,
               F::kTopK,      F::kTranspose,  F::kUnsqueeze}},
        {{1, 2}, {F::kPad, F::kSplit}},
        {{1, 3, 7}, {F::kGRU}},
        {{1, 4}, {F::kConcat}},
        {{1, 5}, {F::kReshape}},
        {{1, 6}, {F::kAbs,        F::kCast,        F::kCeil,
                  F::kClip,       F::kElu,         F::kExp,
                  F::kFloor,      F::kHardSigmoid, F::kInstanceNormalization,
                  F::kLeakyRelu,  F::kLog,         F::kMax,
                  F::kMean,       F::kMin,         F::kNeg,
                  F::kReciprocal, F::kRelu,        F::kSelu,
                  F::kSigmoid,    F::kSqrt,        F::kSum,
                  F::kTanh,       F::kTile}},
        {{1, 6, 7}, {F::kAdd, F::kBatchNormalization, F::kDiv, F::kDropout, F::kGemm, F::kMul, F::kSub}},
        {{1, 7}, {F::kAveragePool, F::kLSTM, F::kPow}},
    };
    auto *m = new std::map<FloatOp, std::vector<int>>();
    for (const auto &[since, ops] : groups) {
      for (FloatOp op : ops) m->emplace(op, since);
    }
    return m;
  }();
  return *versions;
}

// The since-versions of `op` up to opset 7 (EarlyVersions, and Upsample's), or
// null when it is not listed.
const std::vector<int> *EarlyVersionsOf(const std::string &op) {
  static const auto *upsample = new std::vector<int>{1, 7};
  if (op == onnx_names::kUpsample) return upsample;
  const std::optional<FloatOp> id = FindFloatOp(kFloatDomain, op);
  if (!id.has_value()) return nullptr;
  const auto it = EarlyVersions().find(*id);
  return it == EarlyVersions().end() ? nullptr : &it->second;
}

// Reductions whose axes moved from an attribute to an input at opset 18
// (ReduceSum's moved at 13).
bool IsReduceWithAxesAttribute(const std::string &op) {
  using F = FloatOp;
  return IsOpTypeIn(op, {F::kReduceMean, F::kReduceMax, F::kReduceMin, F::kReduceProd, F::kReduceL1, F::kReduceL2,
                         F::kReduceLogSum, F::kReduceLogSumExp, F::kReduceSumSquare});
}

class Adapter {
 public:
  Adapter(onnx::GraphProto &graph, int64_t opset, const OpRegistry &registry)
      : g_(graph), opset_(opset), registry_(registry) {}

  Status Run() {
    Index();
    const int count = g_.node_size();
    for (int i = 0; i < count; ++i) {
      NodeProto &n = *g_.mutable_node(i);
      if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
      OCTET_RETURN_IF_ERROR(AdaptNode(n, names_[static_cast<size_t>(i)]));
    }
    for (NodeProto &n : appended_) *g_.add_node() = std::move(n);
    return OkStatus();
  }

 private:
  // Records value and node names (the importer's, "<op_type>_<index>" for
  // unnamed nodes), constants and uses.
  void Index() {
    for (const auto &t : g_.initializer()) {
      values_.insert(t.name());
      constants_[t.name()] = &t;
    }
    for (const auto &vi : g_.input()) values_.insert(vi.name());
    for (const auto &vi : g_.output()) used_.insert(vi.name());
    std::unordered_set<std::string> taken;
    for (const NodeProto &n : g_.node()) {
      if (!n.name().empty()) taken.insert(n.name());
    }
    for (int i = 0; i < g_.node_size(); ++i) {
      const NodeProto &n = g_.node(i);
      for (const std::string &v : n.input()) used_.insert(v);
      for (const std::string &v : n.output()) values_.insert(v);
      if (IsOpType(n.op_type(), FloatOp::kConstant) && n.output_size() == 1 && n.attribute_size() == 1 &&
          n.attribute(0).name() == "value" && n.attribute(0).has_t()) {
        constants_[n.output(0)] = &n.attribute(0).t();
      }
      std::string name = n.name();
      if (name.empty()) {
        name = fmt::format("{}_{}", n.op_type().empty() ? "node" : n.op_type(), i);
        while (!taken.insert(name).second) name += "_";
      }
      names_.push_back(name);
    }
    node_names_ = std::move(taken);
  }

  std::string Unique(std::unordered_set<std::string> &taken, std::string base) {
    while (!taken.insert(base).second) base += "_";
    return base;
  }

  Status Refuse(const NodeProto &n, const std::string &name, const std::string &why) const {
    return Unimplemented("node '{}' ({}) at opset {}: {}", name, n.op_type(), opset_, why);
  }

  static const AttributeProto *Attr(const NodeProto &n, const char *attr) {
    for (const AttributeProto &a : n.attribute()) {
      if (a.name() == attr) return &a;
    }
    return nullptr;
  }

  static void RemoveAttr(NodeProto &n, const char *attr) {
    auto *list = n.mutable_attribute();
    for (int k = 0; k < list->size(); ++k) {
      if (list->Get(k).name() == attr) {
        list->erase(list->begin() + k);
        return;
      }
    }
  }

  static void SetIntAttr(NodeProto &n, const char *attr, int64_t v) {
    RemoveAttr(n, attr);
    AttributeProto *a = n.add_attribute();
    a->set_name(attr);
    a->set_type(AttributeProto::INT);
    a->set_i(v);
  }

  static void SetStringAttr(NodeProto &n, const char *attr, const std::string &v) {
    RemoveAttr(n, attr);
    AttributeProto *a = n.add_attribute();
    a->set_name(attr);
    a->set_type(AttributeProto::STRING);
    a->set_s(v);
  }

  static void SetInput(NodeProto &n, int slot, const std::string &value) {
    while (n.input_size() <= slot) n.add_input("");
    n.set_input(slot, value);
  }

  // Drops trailing outputs nothing reads (training-only outputs of inference
  // graphs); a read one is left for the operator to refuse.
  void DropUnusedOutputs(NodeProto &n, int keep) {
    while (n.output_size() > keep &&
           (n.output(n.output_size() - 1).empty() || used_.count(n.output(n.output_size() - 1)) == 0)) {
      n.mutable_output()->RemoveLast();
    }
  }

  // Checks the attribute's kind and returns it, or null when absent.
  Result<const AttributeProto *> TypedAttr(const NodeProto &n, const std::string &name, const char *attr,
                                           AttributeProto::AttributeType type) const {
    const AttributeProto *a = Attr(n, attr);
    if (a == nullptr) return a;
    if (a->type() != type) {
      return InvalidArgument("node '{}' ({}) at opset {}: attribute '{}' must be {}, got {}", name, n.op_type(), opset_,
                             attr, AttributeProto::AttributeType_Name(type),
                             AttributeProto::AttributeType_Name(a->type()));
    }
    return a;
  }

  // An INTS attribute becomes an int64 initializer in input `slot` (left absent
  // when the attribute is).
  Status IntsAttrToInput(NodeProto &n, const std::string &name, const char *attr, int slot, bool as_1d = true) {
    OCTET_ASSIGN_OR_RETURN(const AttributeProto *a,
                           TypedAttr(n, name, attr, as_1d ? AttributeProto::INTS : AttributeProto::INT));
    if (a == nullptr) return OkStatus();
    onnx::TensorProto *t = g_.add_initializer();
    t->set_name(Unique(values_, fmt::format("{}/{}", name, attr)));
    t->set_data_type(onnx::TensorProto::INT64);
    if (as_1d) {
      t->add_dims(a->ints_size());
      for (int64_t v : a->ints()) t->add_int64_data(v);
    } else {
      t->add_dims(1);
      t->add_int64_data(a->i());
    }
    SetInput(n, slot, t->name());
    RemoveAttr(n, attr);
    return OkStatus();
  }

  // A FLOAT attribute becomes a scalar f32 initializer in input `slot` (absent
  // stays absent).
  Status FloatAttrToInput(NodeProto &n, const std::string &name, const char *attr, int slot) {
    OCTET_ASSIGN_OR_RETURN(const AttributeProto *a, TypedAttr(n, name, attr, AttributeProto::FLOAT));
    if (a == nullptr) return OkStatus();
    onnx::TensorProto *t = g_.add_initializer();
    t->set_name(Unique(values_, fmt::format("{}/{}", name, attr)));
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(a->f());
    SetInput(n, slot, t->name());
    RemoveAttr(n, attr);
    return OkStatus();
  }

  // Input `slot` (opset 18's axes) becomes an INTS attribute; it must be a
  // constant.
  Status InputToIntsAttr(NodeProto &n, const std::string &name, int slot, const char *attr) {
    if (n.input_size() <= slot || n.input(slot).empty()) return OkStatus();
    const auto it = constants_.find(n.input(slot));
    if (it == constants_.end()) {
      return Refuse(n, name,
                    fmt::format("input {} ({}) '{}' is computed at run time; "
                                "octet needs it constant (an initializer "
                                "or a Constant node)",
                                slot, attr, n.input(slot)));
    }
    auto t = TensorFromOnnx(*it->second, "");
    if (!t.ok())
      return t.status().WithContext(fmt::format("node '{}' ({}) input {} ({})", name, n.op_type(), slot, attr));
    if (t->dtype() != DType::kS32 || t->shape().rank() > 1) {
      return InvalidArgument(
          "node '{}' ({}) at opset {}: input {} ({}) must "
          "be a 1-D int64 tensor, got {} {}",
          name, n.op_type(), opset_, slot, attr, t->dtype(), t->shape());
    }
    std::vector<int64_t> values;
    for (int32_t v : t->values<int32_t>()) values.push_back(v);
    while (n.input_size() > slot) n.mutable_input()->RemoveLast();
    while (n.input_size() > 0 && n.input(n.input_size() - 1).empty()) n.mutable_input()->RemoveLast();
    if (values.empty()) return OkStatus();  // empty axes mean none given
    RemoveAttr(n, attr);
    AttributeProto *a = n.add_attribute();
    a->set_name(attr);
    a->set_type(AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
    return OkStatus();
  }

  NodeProto &Append(FloatOp op, const std::string &name, std::vector<std::string> inputs,
                    std::vector<std::string> outputs) {
    NodeProto &n = appended_.emplace_back();
    n.set_op_type(std::string(FloatOpName(op)));
    n.set_name(Unique(node_names_, name));
    for (auto &v : inputs) n.add_input(std::move(v));
    for (auto &v : outputs) n.add_output(std::move(v));
    return n;
  }

  // Softmax, LogSoftmax and Hardmax before 13 coerce the input to 2-D at `axis`
  // (default 1) and normalize each row: Shape + Flatten + the op at axis 1 +
  // Reshape back. axis -1 flattens to rows of the last dim, as 13 does.
  Status AdaptCoercedSoftmax(NodeProto &n, const std::string &name) {
    OCTET_ASSIGN_OR_RETURN(const AttributeProto *a, TypedAttr(n, name, "axis", AttributeProto::INT));
    const int64_t axis = a == nullptr ? 1 : a->i();
    if (axis == -1) return OkStatus();
    if (n.input_size() != 1 || n.output_size() != 1 || n.input(0).empty() || n.output(0).empty()) {
      return OkStatus();  // the operator reports the arity
    }
    const std::string x = n.input(0), y = n.output(0);
    const std::string shape = Unique(values_, name + "/shape"), flat = Unique(values_, name + "/flat"),
                      rows = Unique(values_, name + "/rows");
    Append(FloatOp::kShape, name + "/shape", {x}, {shape});
    SetIntAttr(Append(FloatOp::kFlatten, name + "/flatten", {x}, {flat}), "axis", axis);
    n.set_input(0, flat);
    n.set_output(0, rows);
    SetIntAttr(n, "axis", 1);
    Append(FloatOp::kReshape, name + "/reshape", {rows, shape}, {y});
    return OkStatus();
  }

  // Upsample (7-9) and Resize-10 become Resize in its opset 13 form: asymmetric
  // coordinates, nearest rounding down.
  Status AdaptToResize(NodeProto &n, const std::string &name) {
    OCTET_ASSIGN_OR_RETURN(const AttributeProto *mode, TypedAttr(n, name, "mode", AttributeProto::STRING));
    const std::string m = mode == nullptr ? "nearest" : mode->s();
    if (m != "nearest" && m != "linear") {
      return Refuse(n, name, fmt::format("mode '{}' is not an opset-{} mode (nearest or linear)", m, opset_));
    }
    std::string scales;
    if (n.op_type() == onnx_names::kUpsample && opset_ < 9) {
      OCTET_ASSIGN_OR_RETURN(const AttributeProto *s, TypedAttr(n, name, "scales", AttributeProto::FLOATS));
      if (s == nullptr) return Refuse(n, name, "required attribute 'scales' is missing");
      onnx::TensorProto *t = g_.add_initializer();
      t->set_name(Unique(values_, name + "/scales"));
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_dims(s->floats_size());
      for (float v : s->floats()) t->add_float_data(v);
      scales = t->name();
      RemoveAttr(n, "scales");
    } else {
      if (n.input_size() < 2 || n.input(1).empty()) return Refuse(n, name, "input 1 (scales) is missing");
      scales = n.input(1);
    }
    const std::string x = n.input_size() > 0 ? n.input(0) : "";
    n.set_op_type(std::string(FloatOpName(FloatOp::kResize)));
    n.clear_input();
    n.add_input(x);
    n.add_input("");
    n.add_input(scales);
    SetStringAttr(n, "mode", m);
    SetStringAttr(n, "coordinate_transformation_mode", "asymmetric");
    if (m == "nearest") SetStringAttr(n, "nearest_mode", "floor");
    return OkStatus();
  }

  bool Registered(std::string_view op) const { return registry_.Find("", op) != nullptr; }
  bool Registered(FloatOp op) const { return Registered(FloatOpName(op)); }

  // Opsets below 7: read only what opset 7 kept.
  Status CheckEarly(const NodeProto &n, const std::string &name) const {
    const std::vector<int> *versions = EarlyVersionsOf(n.op_type());
    if (versions == nullptr) {
      if (!Registered(n.op_type())) return OkStatus();  // listed as unsupported by the importer
      return Refuse(n, name,
                    fmt::format("octet reads {} from opset {} on; convert the "
                                "model to opset {} or later",
                                n.op_type(), kOldestAdaptedOpset, kOldestAdaptedOpset));
    }
    int here = 0, at7 = 0;
    for (int v : *versions) {
      if (v <= opset_) here = v;
      if (v <= kOldestAdaptedOpset) at7 = v;
    }
    if (here != at7) {
      return Refuse(n, name,
                    fmt::format("{}-{} is an older form than {}-{}, the one "
                                "octet reads from opset {} on; convert the "
                                "model to opset {} or later",
                                n.op_type(), here, n.op_type(), at7, kOldestAdaptedOpset, kOldestAdaptedOpset));
    }
    return OkStatus();
  }

  Status AdaptNode(NodeProto &n, const std::string &name) {
    using F = FloatOp;
    const std::string &op = n.op_type();
    if (opset_ < kOldestAdaptedOpset) OCTET_RETURN_IF_ERROR(CheckEarly(n, name));
    if (opset_ >= 13 && opset_ <= 17) return OkStatus();
    if (opset_ < 13) {
      if (IsOpTypeIn(op, {F::kSoftmax, F::kLogSoftmax, F::kHardmax})) return AdaptCoercedSoftmax(n, name);
      if (IsOpTypeIn(op, {F::kSqueeze, F::kUnsqueeze, F::kReduceSum})) return IntsAttrToInput(n, name, "axes", 1);
      if (IsOpType(op, F::kSplit)) return IntsAttrToInput(n, name, "split", 1);
      if (IsOpType(op, F::kBatchNormalization)) {
        if (opset_ < 9) {
          OCTET_ASSIGN_OR_RETURN(const AttributeProto *s, TypedAttr(n, name, "spatial", AttributeProto::INT));
          if (s != nullptr && s->i() != 1) {
            return Refuse(n, name,
                          fmt::format("spatial={} (statistics per activation "
                                      "rather than per channel, opsets "
                                      "7-8) is not supported",
                                      s->i()));
          }
          RemoveAttr(n, "spatial");
        }
        DropUnusedOutputs(n, 1);  // mean, var, saved_mean, saved_var: training-mode outputs
        return OkStatus();
      }
      if (IsOpType(op, F::kDropout) && opset_ < 12) {
        RemoveAttr(n,
                   "ratio");  // inference: Dropout is the identity whatever the ratio
        DropUnusedOutputs(n, 1);
        return OkStatus();
      }
    }
    if (opset_ < 11) {
      if (IsOpType(op, F::kClip)) {
        OCTET_RETURN_IF_ERROR(FloatAttrToInput(n, name, "min", 1));
        return FloatAttrToInput(n, name, "max", 2);
      }
      if (IsOpType(op, F::kPad)) {
        OCTET_ASSIGN_OR_RETURN(const AttributeProto *pads, TypedAttr(n, name, "pads", AttributeProto::INTS));
        if (pads == nullptr) return Refuse(n, name, "required attribute 'pads' is missing");
        OCTET_RETURN_IF_ERROR(IntsAttrToInput(n, name, "pads", 1));
        return FloatAttrToInput(n, name, "value", 2);
      }
    }
    if (opset_ < 10) {
      if (IsOpType(op, F::kSlice)) {
        for (const char *required : {"starts", "ends"}) {
          if (Attr(n, required) == nullptr) {
            return Refuse(n, name, fmt::format("required attribute '{}' is missing", required));
          }
        }
        OCTET_RETURN_IF_ERROR(IntsAttrToInput(n, name, "starts", 1));
        OCTET_RETURN_IF_ERROR(IntsAttrToInput(n, name, "ends", 2));
        return IntsAttrToInput(n, name, "axes", 3);
      }
      if (IsOpType(op, F::kTopK)) return IntsAttrToInput(n, name, "k", 1, /*as_1d=*/false);
      if (op == onnx_names::kUpsample && Registered(FloatOp::kResize)) return AdaptToResize(n, name);
    }
    if (IsOpType(op, F::kResize) && opset_ == 10) return AdaptToResize(n, name);
    if (opset_ >= 18) {
      if (IsReduceWithAxesAttribute(op)) return InputToIntsAttr(n, name, 1, "axes");
      if (IsOpType(op, F::kSplit)) {
        OCTET_ASSIGN_OR_RETURN(const AttributeProto *k, TypedAttr(n, name, "num_outputs", AttributeProto::INT));
        if (k == nullptr) return OkStatus();
        if (k->i() != n.output_size()) {
          return InvalidArgument(
              "node '{}' (Split) at opset {}: num_outputs "
              "{} but the node has {} outputs",
              name, opset_, k->i(), n.output_size());
        }
        // Without split sizes, opset 13 splits into equal parts; 18's smaller
        // last part is refused when compiled.
        RemoveAttr(n, "num_outputs");
        return OkStatus();
      }
      if (op == onnx_names::kGroupNormalization && opset_ < 21 && Registered(op)) {
        return Refuse(n, name,
                      "scale and bias are per group before opset 21 (per "
                      "channel from 21); re-export at "
                      "opset 21");
      }
    }
    return OkStatus();
  }

  onnx::GraphProto &g_;
  const int64_t opset_;
  const OpRegistry &registry_;
  std::vector<std::string> names_;              // the importer's name of each original node
  std::unordered_set<std::string> node_names_;  // taken node names
  std::unordered_set<std::string> values_;      // taken value names
  std::unordered_set<std::string> used_;        // values some node or graph output reads
  std::unordered_map<std::string, const onnx::TensorProto *> constants_;
  std::vector<NodeProto> appended_;
};

}  // namespace

Status AdaptToOctetOpset(onnx::GraphProto &graph, int64_t opset, const OpRegistry &registry) {
  return Adapter(graph, opset, registry).Run();
}

}  // namespace octet::onnx_import

// The int8 operator table: every operator of quantized graphs (domain "octet", ops/int8/int8_ops.h) declared once,
// with a typed id and what the rest of the system needs to know about it. Code outside this file names an int8
// operator by its Int8Op id, never by a string (checked by the ctest entry op_literals).
//
// What each entry carries, and who reads it:
//   name         the op type in graphs and .octet files ("QConv").
//   convert      how Convert (quant/convert.cc) or QuantizeDynamic makes it, from which float operators (`from`);
//                kInserted for the operators Convert places between layers.
//   qdq          its ONNX QDQ export pattern (io/onnx/qdq_export.cc) and the ONNX operator it computes in float.
//   reference    whether test vectors derive and replay it with the op-level references (io/vectors/vectors.h),
//                or why not.
//   counters     its layer counters (numeric_suite/layer_counters.h): saturation of a requantized output, the int32
//                accumulators recomputed for headroom.
// The executor's Prepare functions are registered per id (ops/int8/int8_ops.cc). A forgotten field fails the
// static_assert below; a forgotten Prepare, replay or export fails tests/ops/int8/op_table_test.cc, and the
// switches over Int8Op in the libraries fail to compile (-Wswitch under -Werror) when an id is added without a case.
//
// Adding an int8 operator: an id here, its entry in kInt8OpTable, its ops/int8/ file registering a Prepare under
// the id, and (when reference is true) its op-level reference with a case in the replay dispatcher.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/float_op_table.h"

namespace octet {

inline constexpr std::string_view kInt8Domain = "octet";

enum class Int8Op : uint8_t {
  kQuantize,
  kDequantize,
  kRequantize,
  kQConv,
  kQGemm,
  kQMatMul,
  kQAdd,
  kQMul,
  kQMaxPool,
  kQAveragePool,
  kQGlobalMaxPool,
  kQGlobalAveragePool,
  kQConcat,
  kQLookup,
  kQClamp,
  kDynamicQGemm,
  kDynamicQMatMul,
  kDynamicQLSTM,
  kDynamicQGRU,
  kQLayerNorm,
  kQSoftmax,
  kQBatchMatMul,
};
inline constexpr size_t kNumInt8Ops = static_cast<size_t>(Int8Op::kQBatchMatMul) + 1;

// How an int8 operator comes to be in a graph.
enum class ConvertForm : uint8_t {
  kUnset,     // a forgotten field: rejected by the static_assert below
  kInserted,  // placed by Convert between layers (Quantize, Dequantize, Requantize); no float operator becomes it
  kWeighted,  // int8 activation at input 0, s8 weight at 1, s32 or f32 bias at 2; own output qparams
  kBinary,    // two int8 activations; own output qparams
  kUnary,     // one int8 activation (other inputs float); own output qparams
  kShared,    // one int8 activation; the output shares its qparams (no rescaling)
  kClamp,     // one int8 activation, bounds as attributes; the output shares its qparams
  kConcat,    // int8 activations; own output qparams (inputs requantized where theirs differ)
  kDynamic,   // made by QuantizeDynamic (quant/dynamic.h): f32 activations quantized per call, s8 weights
};

// The ONNX QDQ form of an int8 operator (opset 13).
enum class QdqPattern : uint8_t {
  kUnset,             // a forgotten field: rejected by the static_assert below
  kQuantizeLinear,    // QuantizeLinear
  kDequantizeLinear,  // DequantizeLinear
  kRequantize,        // DequantizeLinear -> QuantizeLinear
  kFloatOp,           // DequantizeLinear on the inputs -> float_op [-> Relu] -> QuantizeLinear
  kClip,              // DequantizeLinear -> Clip(min, max) -> QuantizeLinear
  kLookup,            // DequantizeLinear -> the `function` attribute's ONNX form -> QuantizeLinear
  kDynamic,           // float_op on DequantizeLinear'd weights; activations stay f32
};

// The int32 accumulators the layer counters recompute (accumulator headroom).
enum class AccumulatorKind : uint8_t { kNone, kConv, kGemm };

struct Int8OpInfo {
  Int8Op id;
  std::string_view name;
  ConvertForm convert;
  std::span<const FloatOp> from;  // the float operators it is made from (empty for kInserted)
  QdqPattern qdq;
  std::string_view float_op;          // the ONNX operator it computes in float (kFloatOp, kDynamic), else ""
  bool reference;                     // test vectors derive and replay it with the op-level references
  std::string_view no_reference_why;  // when !reference
  bool requantizes;                   // its output is a requantization (a new scale): saturation is information lost
  AccumulatorKind accumulator;
};

namespace op_table_detail {
inline constexpr FloatOp kConv[] = {FloatOp::kConv};
inline constexpr FloatOp kGemm[] = {FloatOp::kGemm};
inline constexpr FloatOp kMatMul[] = {FloatOp::kMatMul};
inline constexpr FloatOp kAdd[] = {FloatOp::kAdd};
inline constexpr FloatOp kMul[] = {FloatOp::kMul};
inline constexpr FloatOp kMaxPool[] = {FloatOp::kMaxPool};
inline constexpr FloatOp kAveragePool[] = {FloatOp::kAveragePool};
inline constexpr FloatOp kGlobalMaxPool[] = {FloatOp::kGlobalMaxPool};
inline constexpr FloatOp kGlobalAveragePool[] = {FloatOp::kGlobalAveragePool};
inline constexpr FloatOp kConcat[] = {FloatOp::kConcat};
inline constexpr FloatOp kLookup[] = {FloatOp::kHardSwish,   FloatOp::kSigmoid,   FloatOp::kTanh,
                                      FloatOp::kHardSigmoid, FloatOp::kLeakyRelu, FloatOp::kGelu};
inline constexpr FloatOp kClamp[] = {FloatOp::kRelu, FloatOp::kClip};
inline constexpr FloatOp kLstm[] = {FloatOp::kLSTM};
inline constexpr FloatOp kGru[] = {FloatOp::kGRU};
inline constexpr FloatOp kLayerNorm[] = {FloatOp::kLayerNormalization};
inline constexpr FloatOp kSoftmax[] = {FloatOp::kSoftmax};
inline constexpr std::span<const FloatOp> kNothing{};
inline constexpr std::string_view kDynamicWhy =
    "its activation qparams are chosen per call from the live range; the vectors record inputs and outputs only";
inline constexpr std::string_view kReplayLaterWhy =
    "its op-level reference (ops/reference/) is not wired into the test-vector replay yet (issue 17)";
}  // namespace op_table_detail

// Entry i has id Int8Op(i).
inline constexpr std::array<Int8OpInfo, kNumInt8Ops> kInt8OpTable = [] {
  namespace d = op_table_detail;
  using C = ConvertForm;
  using Q = QdqPattern;
  using A = AccumulatorKind;
  using F = FloatOp;
  return std::array<Int8OpInfo, kNumInt8Ops>{{
      {Int8Op::kQuantize, "Quantize", C::kInserted, d::kNothing, Q::kQuantizeLinear, "", true, "", false, A::kNone},
      {Int8Op::kDequantize, "Dequantize", C::kInserted, d::kNothing, Q::kDequantizeLinear, "", true, "", false,
       A::kNone},
      {Int8Op::kRequantize, "Requantize", C::kInserted, d::kNothing, Q::kRequantize, "", true, "", true, A::kNone},
      {Int8Op::kQConv, "QConv", C::kWeighted, d::kConv, Q::kFloatOp, FloatOpName(F::kConv), true, "", true, A::kConv},
      {Int8Op::kQGemm, "QGemm", C::kWeighted, d::kGemm, Q::kFloatOp, FloatOpName(F::kGemm), true, "", true, A::kGemm},
      {Int8Op::kQMatMul, "QMatMul", C::kWeighted, d::kMatMul, Q::kFloatOp, FloatOpName(F::kMatMul), true, "", true,
       A::kGemm},
      {Int8Op::kQAdd, "QAdd", C::kBinary, d::kAdd, Q::kFloatOp, FloatOpName(F::kAdd), true, "", true, A::kNone},
      {Int8Op::kQMul, "QMul", C::kBinary, d::kMul, Q::kFloatOp, FloatOpName(F::kMul), true, "", true, A::kNone},
      {Int8Op::kQMaxPool, "QMaxPool", C::kShared, d::kMaxPool, Q::kFloatOp, FloatOpName(F::kMaxPool), true, "", false,
       A::kNone},
      {Int8Op::kQAveragePool, "QAveragePool", C::kUnary, d::kAveragePool, Q::kFloatOp, FloatOpName(F::kAveragePool),
       true, "", true, A::kNone},
      {Int8Op::kQGlobalMaxPool, "QGlobalMaxPool", C::kShared, d::kGlobalMaxPool, Q::kFloatOp,
       FloatOpName(F::kGlobalMaxPool), true, "", false, A::kNone},
      {Int8Op::kQGlobalAveragePool, "QGlobalAveragePool", C::kUnary, d::kGlobalAveragePool, Q::kFloatOp,
       FloatOpName(F::kGlobalAveragePool), true, "", true, A::kNone},
      {Int8Op::kQConcat, "QConcat", C::kConcat, d::kConcat, Q::kFloatOp, FloatOpName(F::kConcat), true, "", true,
       A::kNone},
      {Int8Op::kQLookup, "QLookup", C::kUnary, d::kLookup, Q::kLookup, "", true, "", true, A::kNone},
      {Int8Op::kQClamp, "QClamp", C::kClamp, d::kClamp, Q::kClip, "", true, "", false, A::kNone},
      {Int8Op::kDynamicQGemm, "DynamicQGemm", C::kDynamic, d::kGemm, Q::kDynamic, FloatOpName(F::kGemm), false,
       d::kDynamicWhy, false, A::kNone},
      {Int8Op::kDynamicQMatMul, "DynamicQMatMul", C::kDynamic, d::kMatMul, Q::kDynamic, FloatOpName(F::kMatMul), false,
       d::kDynamicWhy, false, A::kNone},
      {Int8Op::kDynamicQLSTM, "DynamicQLSTM", C::kDynamic, d::kLstm, Q::kDynamic, FloatOpName(F::kLSTM), false,
       d::kDynamicWhy, false, A::kNone},
      {Int8Op::kDynamicQGRU, "DynamicQGRU", C::kDynamic, d::kGru, Q::kDynamic, FloatOpName(F::kGRU), false,
       d::kDynamicWhy, false, A::kNone},
      {Int8Op::kQLayerNorm, "QLayerNorm", C::kUnary, d::kLayerNorm, Q::kFloatOp, FloatOpName(F::kLayerNormalization),
       false, d::kReplayLaterWhy, true, A::kNone},
      {Int8Op::kQSoftmax, "QSoftmax", C::kUnary, d::kSoftmax, Q::kFloatOp, FloatOpName(F::kSoftmax), false,
       d::kReplayLaterWhy, true, A::kNone},
      // MatMul of two activations (Convert picks it over QMatMul when input 1 is no constant; Int8OpFrom("MatMul")
      // answers QMatMul, the first entry).
      {Int8Op::kQBatchMatMul, "QBatchMatMul", C::kBinary, d::kMatMul, Q::kFloatOp, FloatOpName(F::kMatMul), false,
       d::kReplayLaterWhy, true, A::kNone},
  }};
}();

// "" when the entry is complete, else what it lacks (compile-time checkable; also used by the registry test).
constexpr std::string_view Int8OpEntryProblem(const Int8OpInfo& e, size_t index) {
  if (static_cast<size_t>(e.id) != index) return "its id is not its index in kInt8OpTable";
  if (e.name.empty()) return "no name";
  if (e.convert == ConvertForm::kUnset) return "no convert form";
  if ((e.convert == ConvertForm::kInserted) != e.from.empty()) {
    return "operators Convert inserts come from no float operator; the others from at least one";
  }
  if (e.qdq == QdqPattern::kUnset) return "no QDQ export pattern";
  if ((e.qdq == QdqPattern::kFloatOp || e.qdq == QdqPattern::kDynamic) == e.float_op.empty()) {
    return "a float_op exactly when the QDQ pattern computes one (kFloatOp, kDynamic)";
  }
  if (e.reference == !e.no_reference_why.empty()) return "either a reference or the reason it has none";
  return "";
}

static_assert(OpTableSound(kInt8OpTable, Int8OpEntryProblem),
              "kInt8OpTable: an entry lacks a piece (see Int8OpEntryProblem) or repeats a name");

constexpr const Int8OpInfo& Int8OpInfoOf(Int8Op op) { return kInt8OpTable[static_cast<size_t>(op)]; }
constexpr std::string_view Int8OpName(Int8Op op) { return Int8OpInfoOf(op).name; }

// The int8 operator of (domain, op_type), or nullopt for any other operator.
constexpr std::optional<Int8Op> FindInt8Op(std::string_view domain, std::string_view op_type) {
  if (domain != kInt8Domain) return std::nullopt;
  for (const Int8OpInfo& e : kInt8OpTable) {
    if (e.name == op_type) return e.id;
  }
  return std::nullopt;
}

constexpr bool IsInt8Op(std::string_view domain, std::string_view op_type, Int8Op op) {
  return domain == kInt8Domain && op_type == Int8OpName(op);
}

// Whether the node-like `n` (with .domain and .op_type) is int8 operator `op`.
template <typename NodeLike>
constexpr bool IsInt8Op(const NodeLike& n, Int8Op op) {
  return IsInt8Op(n.domain, n.op_type, op);
}

// The int8 operator Convert (dynamic = false) or QuantizeDynamic (dynamic = true) makes of float operator
// `float_op`, or nullopt.
constexpr std::optional<Int8Op> Int8OpFrom(std::string_view float_op, bool dynamic) {
  for (const Int8OpInfo& e : kInt8OpTable) {
    if ((e.convert == ConvertForm::kDynamic) != dynamic) continue;
    for (FloatOp f : e.from) {
      if (FloatOpName(f) == float_op) return e.id;
    }
  }
  return std::nullopt;
}

}  // namespace octet

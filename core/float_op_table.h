// The float operator table: every operator of ops/float (ONNX's default domain "") declared once, with a typed id.
// Code outside this file names a float operator by its FloatOp id (FloatOpName, IsFloatOp), never by a string (the
// ctest entry op_literals, scripts/check_op_literals.py, lists any literal that comes back); the int8 table
// (core/op_table.h) names the float operators each int8 operator is made from by these ids.
//
// The Prepare functions are registered per id (ops/float/*.cc through RegisterFloatOp). A repeated or empty name, or an
// entry out of order, fails the static_assert below; an operator registered without an entry, or an entry without a
// registered Prepare, fails tests/ops/float/float_op_table_test.cc; switches over FloatOp fail to compile (-Wswitch
// under -Werror) when an id is added without a case.
//
// Adding a float operator: an id here, its entry in kFloatOpTable, and its ops/float/ file registering a Prepare under
// the id.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace octet {

// ONNX's default operator domain, where every float operator lives.
inline constexpr std::string_view kFloatDomain = "";

// In the order of kFloatOpTable (alphabetical, ignoring case).
enum class FloatOp : uint8_t {
  kAbs,
  kAcos,
  kAcosh,
  kAdd,
  kAnd,
  kArgMax,
  kArgMin,
  kAsin,
  kAsinh,
  kAtan,
  kAtanh,
  kAveragePool,
  kBatchNormalization,
  kCast,
  kCeil,
  kCelu,
  kClip,
  kConcat,
  kConstant,
  kConstantOfShape,
  kConv,
  kConvInteger,
  kConvTranspose,
  kCos,
  kCosh,
  kCumSum,
  kDepthToSpace,
  kDequantizeLinear,
  kDiv,
  kDropout,
  kDynamicQuantizeLinear,
  kEinsum,
  kElu,
  kEqual,
  kErf,
  kExp,
  kExpand,
  kFlatten,
  kFloor,
  kGather,
  kGatherElements,
  kGatherND,
  kGelu,
  kGemm,
  kGlobalAveragePool,
  kGlobalMaxPool,
  kGreater,
  kGreaterOrEqual,
  kGRU,
  kHardmax,
  kHardSigmoid,
  kHardSwish,
  kIdentity,
  kIf,
  kInstanceNormalization,
  kLayerNormalization,
  kLeakyRelu,
  kLess,
  kLessOrEqual,
  kLog,
  kLogSoftmax,
  kLoop,
  kLSTM,
  kMatMul,
  kMatMulInteger,
  kMax,
  kMaxPool,
  kMean,
  kMin,
  kMod,
  kMul,
  kNeg,
  kNot,
  kOr,
  kPad,
  kPow,
  kPRelu,
  kQLinearConv,
  kQLinearMatMul,
  kQuantizeLinear,
  kRange,
  kReciprocal,
  kReduceL1,
  kReduceL2,
  kReduceLogSum,
  kReduceLogSumExp,
  kReduceMax,
  kReduceMean,
  kReduceMin,
  kReduceProd,
  kReduceSum,
  kReduceSumSquare,
  kRelu,
  kReshape,
  kResize,
  kRound,
  kScatterElements,
  kScatterND,
  kSelu,
  kShape,
  kShrink,
  kSigmoid,
  kSign,
  kSin,
  kSinh,
  kSize,
  kSlice,
  kSoftmax,
  kSoftplus,
  kSoftsign,
  kSpaceToDepth,
  kSplit,
  kSqrt,
  kSqueeze,
  kSub,
  kSum,
  kTan,
  kTanh,
  kThresholdedRelu,
  kTile,
  kTopK,
  kTranspose,
  kTrilu,
  kUnsqueeze,
  kWhere,
  kXor,
};
inline constexpr size_t kNumFloatOps = static_cast<size_t>(FloatOp::kXor) + 1;

struct FloatOpInfo {
  FloatOp id;
  std::string_view name;  // the ONNX op type ("Conv")
};

// Entry i has id FloatOp(i).
inline constexpr std::array<FloatOpInfo, kNumFloatOps> kFloatOpTable = [] {
  using F = FloatOp;
  return std::array<FloatOpInfo, kNumFloatOps>{{
      {F::kAbs, "Abs"},
      {F::kAcos, "Acos"},
      {F::kAcosh, "Acosh"},
      {F::kAdd, "Add"},
      {F::kAnd, "And"},
      {F::kArgMax, "ArgMax"},
      {F::kArgMin, "ArgMin"},
      {F::kAsin, "Asin"},
      {F::kAsinh, "Asinh"},
      {F::kAtan, "Atan"},
      {F::kAtanh, "Atanh"},
      {F::kAveragePool, "AveragePool"},
      {F::kBatchNormalization, "BatchNormalization"},
      {F::kCast, "Cast"},
      {F::kCeil, "Ceil"},
      {F::kCelu, "Celu"},
      {F::kClip, "Clip"},
      {F::kConcat, "Concat"},
      {F::kConstant, "Constant"},
      {F::kConstantOfShape, "ConstantOfShape"},
      {F::kConv, "Conv"},
      {F::kConvInteger, "ConvInteger"},
      {F::kConvTranspose, "ConvTranspose"},
      {F::kCos, "Cos"},
      {F::kCosh, "Cosh"},
      {F::kCumSum, "CumSum"},
      {F::kDepthToSpace, "DepthToSpace"},
      {F::kDequantizeLinear, "DequantizeLinear"},
      {F::kDiv, "Div"},
      {F::kDropout, "Dropout"},
      {F::kDynamicQuantizeLinear, "DynamicQuantizeLinear"},
      {F::kEinsum, "Einsum"},
      {F::kElu, "Elu"},
      {F::kEqual, "Equal"},
      {F::kErf, "Erf"},
      {F::kExp, "Exp"},
      {F::kExpand, "Expand"},
      {F::kFlatten, "Flatten"},
      {F::kFloor, "Floor"},
      {F::kGather, "Gather"},
      {F::kGatherElements, "GatherElements"},
      {F::kGatherND, "GatherND"},
      {F::kGelu, "Gelu"},
      {F::kGemm, "Gemm"},
      {F::kGlobalAveragePool, "GlobalAveragePool"},
      {F::kGlobalMaxPool, "GlobalMaxPool"},
      {F::kGreater, "Greater"},
      {F::kGreaterOrEqual, "GreaterOrEqual"},
      {F::kGRU, "GRU"},
      {F::kHardmax, "Hardmax"},
      {F::kHardSigmoid, "HardSigmoid"},
      {F::kHardSwish, "HardSwish"},
      {F::kIdentity, "Identity"},
      {F::kIf, "If"},
      {F::kInstanceNormalization, "InstanceNormalization"},
      {F::kLayerNormalization, "LayerNormalization"},
      {F::kLeakyRelu, "LeakyRelu"},
      {F::kLess, "Less"},
      {F::kLessOrEqual, "LessOrEqual"},
      {F::kLog, "Log"},
      {F::kLogSoftmax, "LogSoftmax"},
      {F::kLoop, "Loop"},
      {F::kLSTM, "LSTM"},
      {F::kMatMul, "MatMul"},
      {F::kMatMulInteger, "MatMulInteger"},
      {F::kMax, "Max"},
      {F::kMaxPool, "MaxPool"},
      {F::kMean, "Mean"},
      {F::kMin, "Min"},
      {F::kMod, "Mod"},
      {F::kMul, "Mul"},
      {F::kNeg, "Neg"},
      {F::kNot, "Not"},
      {F::kOr, "Or"},
      {F::kPad, "Pad"},
      {F::kPow, "Pow"},
      {F::kPRelu, "PRelu"},
      {F::kQLinearConv, "QLinearConv"},
      {F::kQLinearMatMul, "QLinearMatMul"},
      {F::kQuantizeLinear, "QuantizeLinear"},
      {F::kRange, "Range"},
      {F::kReciprocal, "Reciprocal"},
      {F::kReduceL1, "ReduceL1"},
      {F::kReduceL2, "ReduceL2"},
      {F::kReduceLogSum, "ReduceLogSum"},
      {F::kReduceLogSumExp, "ReduceLogSumExp"},
      {F::kReduceMax, "ReduceMax"},
      {F::kReduceMean, "ReduceMean"},
      {F::kReduceMin, "ReduceMin"},
      {F::kReduceProd, "ReduceProd"},
      {F::kReduceSum, "ReduceSum"},
      {F::kReduceSumSquare, "ReduceSumSquare"},
      {F::kRelu, "Relu"},
      {F::kReshape, "Reshape"},
      {F::kResize, "Resize"},
      {F::kRound, "Round"},
      {F::kScatterElements, "ScatterElements"},
      {F::kScatterND, "ScatterND"},
      {F::kSelu, "Selu"},
      {F::kShape, "Shape"},
      {F::kShrink, "Shrink"},
      {F::kSigmoid, "Sigmoid"},
      {F::kSign, "Sign"},
      {F::kSin, "Sin"},
      {F::kSinh, "Sinh"},
      {F::kSize, "Size"},
      {F::kSlice, "Slice"},
      {F::kSoftmax, "Softmax"},
      {F::kSoftplus, "Softplus"},
      {F::kSoftsign, "Softsign"},
      {F::kSpaceToDepth, "SpaceToDepth"},
      {F::kSplit, "Split"},
      {F::kSqrt, "Sqrt"},
      {F::kSqueeze, "Squeeze"},
      {F::kSub, "Sub"},
      {F::kSum, "Sum"},
      {F::kTan, "Tan"},
      {F::kTanh, "Tanh"},
      {F::kThresholdedRelu, "ThresholdedRelu"},
      {F::kTile, "Tile"},
      {F::kTopK, "TopK"},
      {F::kTranspose, "Transpose"},
      {F::kTrilu, "Trilu"},
      {F::kUnsqueeze, "Unsqueeze"},
      {F::kWhere, "Where"},
      {F::kXor, "Xor"},
  }};
}();

// "" when the entry is sound, else what is wrong with it (compile-time checkable; also used by the registry test).
constexpr std::string_view FloatOpEntryProblem(const FloatOpInfo& e, size_t index) {
  if (static_cast<size_t>(e.id) != index) return "its id is not its index in kFloatOpTable";
  if (e.name.empty()) return "no name";
  return "";
}

// Whether every entry of an op table (float or int8) passes `entry_problem` (an *EntryProblem function: "" when
// sound) and no two entries share a name.
template <typename Table, typename EntryProblem>
constexpr bool OpTableSound(const Table& table, EntryProblem entry_problem) {
  for (size_t i = 0; i < table.size(); ++i) {
    if (!entry_problem(table[i], i).empty()) return false;
    for (size_t j = 0; j < i; ++j) {
      if (table[i].name == table[j].name) return false;
    }
  }
  return true;
}
static_assert(OpTableSound(kFloatOpTable, FloatOpEntryProblem),
              "kFloatOpTable: an entry is out of order, has no name, or repeats a name");

constexpr std::string_view FloatOpName(FloatOp op) { return kFloatOpTable[static_cast<size_t>(op)].name; }

// The float operator of (domain, op_type), or nullopt for any other operator.
constexpr std::optional<FloatOp> FindFloatOp(std::string_view domain, std::string_view op_type) {
  if (domain != kFloatDomain) return std::nullopt;
  for (const FloatOpInfo& e : kFloatOpTable) {
    if (e.name == op_type) return e.id;
  }
  return std::nullopt;
}

// Whether op type `op_type` is float operator `op` (the caller has checked the domain, or has none).
constexpr bool IsFloatOp(std::string_view op_type, FloatOp op) { return op_type == FloatOpName(op); }

// Whether the node-like `n` (with .domain and .op_type) is float operator `op`. Strings (std::string included) take
// the overload above.
template <typename NodeLike>
  requires(!std::is_convertible_v<const NodeLike&, std::string_view>)
constexpr bool IsFloatOp(const NodeLike& n, FloatOp op) {
  return n.domain == kFloatDomain && n.op_type == FloatOpName(op);
}

}  // namespace octet

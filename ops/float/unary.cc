// Element-wise unary f32 functions, split over threads in fixed tiles.
#include "ops/float/unary.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/threading.h"
#include "ops/float/half_float.h"
#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"
#include "ops/float/ukernels/erf.h"

namespace octet::float_ops {
namespace {

constexpr int64_t kTile = int64_t{1} << 14;

template <typename F>
std::unique_ptr<OpKernel> UnaryKernel(F f) {
  return MakeKernel([f](const OpRunArgs& r) -> Status {
    const float* x = r.inputs[0].data<float>();
    float* y = r.outputs[0].data<float>();
    ParallelFor(r.context, r.outputs[0].NumElements(), kTile, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
    });
    return OkStatus();
  });
}

// Prepare for a one-input f32 op whose extra parameters come from `make` (which may read attributes and inputs).
template <typename Make>
Result<PreparedOp> PrepareUnary(const OpPrepareArgs& args, size_t max_inputs, const char* name, Make make) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, max_inputs));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  OCTET_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, make());
  return MakePrepared({{DType::kF32, args.inputs[0].shape}}, std::move(kernel), fmt::format("{}_f32", name));
}

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

template <typename F>
Status RegisterSimple(OpRegistry& registry, FloatOp op, const char* name, F f) {
  return RegisterFloatOp(registry, op, [name, f](const OpPrepareArgs& args) {
    return PrepareUnary(args, 1, name, [f]() -> Result<std::unique_ptr<OpKernel>> { return UnaryKernel(f); });
  });
}

// Clip with a min or max computed at run time: the bounds are read from the input views at each call.
Result<PreparedOp> PrepareRunTimeClip(const OpPrepareArgs& args) {
  for (size_t s = 1; s < 3; ++s) {
    if (Present(args, s) && (args.inputs[s].dtype != DType::kF32 || args.inputs[s].shape.NumElements() != 1)) {
      return InvalidArgument("input {} ({}) must be one f32 value, got {} {}", s, s == 1 ? "min" : "max",
                             args.inputs[s].dtype, args.inputs[s].shape);
    }
  }
  return PrepareUnary(args, 3, "clip_runtime_bounds", [&]() -> Result<std::unique_ptr<OpKernel>> {
    return MakeKernel([](const OpRunArgs& r) -> Status {
      const bool has_lo = r.inputs.size() > 1 && r.inputs[1].raw_data() != nullptr;
      const bool has_hi = r.inputs.size() > 2 && r.inputs[2].raw_data() != nullptr;
      const float lo = has_lo ? r.inputs[1].data<float>()[0] : -INFINITY;
      const float hi = has_hi ? r.inputs[2].data<float>()[0] : INFINITY;
      if (lo > hi) return InvalidArgument("Clip's min {} exceeds its max {}", lo, hi);
      const float* x = r.inputs[0].data<float>();
      float* y = r.outputs[0].data<float>();
      ParallelFor(r.context, r.outputs[0].NumElements(), kTile, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = std::min(std::max(x[i], lo), hi);
      });
      return OkStatus();
    });
  });
}

// Clip of an integer tensor (u8, s8, s32; not quantized codes): min and max of the same dtype, read per call.
Result<PreparedOp> PrepareIntegerClip(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 3));
  OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, 0));
  const DType dtype = args.inputs[0].dtype;
  for (size_t s = 1; s < 3; ++s) {
    if (Present(args, s) && (args.inputs[s].dtype != dtype || args.inputs[s].shape.NumElements() != 1)) {
      return InvalidArgument("input {} ({}) must be one {} value, got {} {}", s, s == 1 ? "min" : "max", dtype,
                             args.inputs[s].dtype, args.inputs[s].shape);
    }
  }
  auto kernel = MakeKernel([dtype](const OpRunArgs& r) -> Status {
    Status status;
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      const bool has_lo = r.inputs.size() > 1 && r.inputs[1].raw_data() != nullptr;
      const bool has_hi = r.inputs.size() > 2 && r.inputs[2].raw_data() != nullptr;
      const T lo = has_lo ? r.inputs[1].data<T>()[0] : std::numeric_limits<T>::lowest();
      const T hi = has_hi ? r.inputs[2].data<T>()[0] : std::numeric_limits<T>::max();
      if (lo > hi) {
        status =
            InvalidArgument("Clip's min {} exceeds its max {}", static_cast<int64_t>(lo), static_cast<int64_t>(hi));
        return;
      }
      const T* x = r.inputs[0].data<T>();
      T* y = r.outputs[0].data<T>();
      for (int64_t i = 0; i < r.outputs[0].NumElements(); ++i) y[i] = std::min(std::max(x[i], lo), hi);
    });
    return status;
  });
  return MakePrepared({{dtype, args.inputs[0].shape}}, std::move(kernel), fmt::format("clip_{}", DTypeName(dtype)));
}

Result<PreparedOp> PrepareClip(const OpPrepareArgs& args) {
  if (Present(args, 0) && args.inputs[0].dtype != DType::kF32) return PrepareIntegerClip(args);
  for (size_t s = 1; s < 3 && s < args.inputs.size(); ++s) {
    if (Present(args, s) && args.inputs[s].constant == nullptr) return PrepareRunTimeClip(args);
  }
  return PrepareUnary(args, 3, "clip", [&]() -> Result<std::unique_ptr<OpKernel>> {
    OCTET_ASSIGN_OR_RETURN(float lo, ConstantScalar(args, 1, -INFINITY, "min"));
    OCTET_ASSIGN_OR_RETURN(float hi, ConstantScalar(args, 2, INFINITY, "max"));
    // ONNX leaves min > max undefined; like std::clamp's callers, octet refuses it rather than pick an order.
    if (lo > hi) return InvalidArgument("min {} must not exceed max {}", lo, hi);
    return UnaryKernel([lo, hi](float x) { return std::min(std::max(x, lo), hi); });
  });
}

// Erf through the erf kernel chosen here, once (vector erf: GELU's Erf was 15% of a BERT-style encoder's float time).
Result<PreparedOp> PrepareErf(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_RETURN_IF_ERROR(CheckInput(args, 0, DType::kF32));
  const auto& erf = SelectUkernel(args.context, ErfUkernels());
  const ErfFn fn = erf.fn;
  auto kernel = MakeKernel([fn](const OpRunArgs& r) -> Status {
    const float* x = r.inputs[0].data<float>();
    float* y = r.outputs[0].data<float>();
    ParallelFor(r.context, r.outputs[0].NumElements(), kTile,
                [&](int64_t begin, int64_t end) { fn(x + begin, y + begin, end - begin); });
    return OkStatus();
  });
  return MakePrepared({{DType::kF32, args.inputs[0].shape}}, std::move(kernel), fmt::format("erf_f32+{}", erf.name));
}

Result<PreparedOp> PrepareGelu(const OpPrepareArgs& args) {
  return PrepareUnary(args, 1, "gelu", [&]() -> Result<std::unique_ptr<OpKernel>> {
    // Read through the Result (not OCTET_ASSIGN_OR_RETURN): g++ 12 -O3 warns maybe-uninitialized on the latter here.
    Result<std::string> approximate_or = args.node.attributes.GetString("approximate", "none");
    if (!approximate_or.ok()) return approximate_or.status();
    const std::string approximate = *approximate_or;
    if (approximate == "none") {
      return UnaryKernel([](float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); });
    }
    if (approximate == "tanh") {
      return UnaryKernel([](float x) {
        return 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
      });
    }
    return InvalidArgument("attribute 'approximate' must be 'none' or 'tanh', got '{}'", approximate);
  });
}

template <typename To>
To SaturatingRound(float x) {
  if (std::isnan(x)) return To{0};
  const float r = std::nearbyint(x);
  if (r <= static_cast<float>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
  if (r >= static_cast<float>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
  return static_cast<To>(r);
}

template <typename From, typename To>
void CastLoop(const void* src, void* dst, int64_t n) {
  const From* x = static_cast<const From*>(src);
  To* y = static_cast<To*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<From, float> && !std::is_same_v<To, float>) {
      y[i] = SaturatingRound<To>(x[i]);
    } else if constexpr (std::is_same_v<To, float>) {
      y[i] = static_cast<float>(x[i]);
    } else {
      const int64_t v = static_cast<int64_t>(x[i]);
      y[i] = static_cast<To>(std::clamp<int64_t>(v, std::numeric_limits<To>::min(), std::numeric_limits<To>::max()));
    }
  }
}

template <typename From>
void CastFrom(DType to, const void* src, void* dst, int64_t n) {
  switch (to) {
    case DType::kF32: CastLoop<From, float>(src, dst, n); break;
    case DType::kS32: CastLoop<From, int32_t>(src, dst, n); break;
    case DType::kU8: CastLoop<From, uint8_t>(src, dst, n); break;
    case DType::kS8: CastLoop<From, int8_t>(src, dst, n); break;
  }
}

Result<DType> OnnxElemTypeToDType(int64_t t) {
  switch (t) {
    case 1: return DType::kF32;   // FLOAT
    case 2: return DType::kU8;    // UINT8
    case 3: return DType::kS8;    // INT8
    case 6: return DType::kS32;   // INT32
    case 7: return DType::kS32;   // INT64, held as s32 by octet
    case 4: return DType::kS32;   // UINT16, held as s32 (clamped to its range)
    case 5: return DType::kS32;   // INT16, likewise
    case 12: return DType::kS32;  // UINT32, held as s32 (clamped to [0, INT32_MAX])
    case 13: return DType::kS32;  // UINT64, likewise
    case 9: return DType::kU8;    // BOOL, held as u8 0/1
    case 10: return DType::kF32;  // FLOAT16, held as f32 (rounded to half values)
    case 16: return DType::kF32;  // BFLOAT16, held as f32 (rounded to bfloat16 values)
    case 11: return DType::kF32;  // DOUBLE, held as f32
    default: return Unimplemented("Cast to ONNX element type {} is not supported", t);
  }
}

// Cast to BOOL (non-zero is 1), to FLOAT16 and BFLOAT16 (rounded to the nearest such value) and to the integer types
// held as s32 (clamped to their range), on top of the plain cast.
void CastFinish(int64_t to_code, DType from, const void* src, void* dst, int64_t n) {
  if (to_code == 9) {
    auto* y = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) {
      switch (from) {
        case DType::kF32: y[i] = static_cast<const float*>(src)[i] != 0.0f; break;
        case DType::kS32: y[i] = static_cast<const int32_t*>(src)[i] != 0; break;
        case DType::kU8: y[i] = static_cast<const uint8_t*>(src)[i] != 0; break;
        case DType::kS8: y[i] = static_cast<const int8_t*>(src)[i] != 0; break;
      }
    }
  } else if (to_code == 10) {
    auto* y = static_cast<float*>(dst);
    for (int64_t i = 0; i < n; ++i) y[i] = RoundToHalf(y[i]);
  } else if (to_code == 16) {
    auto* y = static_cast<float*>(dst);
    for (int64_t i = 0; i < n; ++i) y[i] = RoundToBfloat16(y[i]);
  } else if (to_code == 4 || to_code == 5 || to_code == 12 || to_code == 13) {
    const int32_t lo = to_code == 5 ? -32768 : 0;
    const int32_t hi = to_code == 4 ? 65535 : to_code == 5 ? 32767 : INT32_MAX;
    auto* y = static_cast<int32_t*>(dst);
    for (int64_t i = 0; i < n; ++i) y[i] = std::clamp(y[i], lo, hi);
  }
}

Result<PreparedOp> PrepareCast(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_ASSIGN_OR_RETURN(int64_t to_code, args.node.attributes.GetInt("to"));
  OCTET_ASSIGN_OR_RETURN(DType to, OnnxElemTypeToDType(to_code));
  const DType from = args.inputs[0].dtype;
  auto kernel = MakeKernel([from, to, to_code](const OpRunArgs& r) -> Status {
    const void* src = r.inputs[0].raw_data();
    void* dst = r.outputs[0].raw_data();
    const int64_t n = r.outputs[0].NumElements();
    switch (from) {
      case DType::kF32: CastFrom<float>(to, src, dst, n); break;
      case DType::kS32: CastFrom<int32_t>(to, src, dst, n); break;
      case DType::kU8: CastFrom<uint8_t>(to, src, dst, n); break;
      case DType::kS8: CastFrom<int8_t>(to, src, dst, n); break;
    }
    CastFinish(to_code, from, src, dst, n);
    return OkStatus();
  });
  return MakePrepared({{to, args.inputs[0].shape}}, std::move(kernel),
                      fmt::format("cast_{}_{}", DTypeName(from), DTypeName(to)));
}

// Sign takes every numeric type ONNX allows that octet holds; NaN stays NaN.
Result<PreparedOp> PrepareSign(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  const DType dtype = args.inputs[0].dtype;
  if (args.inputs[0].qparams != nullptr) {
    return Unimplemented("input 0 ('{}') holds quantized codes ({}): dequantize it first (DequantizeLinear)",
                         args.inputs[0].name, args.inputs[0].qparams->ToString());
  }
  auto kernel = MakeKernel([dtype](const OpRunArgs& r) -> Status {
    const int64_t n = r.outputs[0].NumElements();
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* x = r.inputs[0].data<T>();
      T* y = r.outputs[0].data<T>();
      ParallelFor(r.context, n, kTile, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          if constexpr (std::is_same_v<T, float>) {
            y[i] = x[i] > 0.0f ? 1.0f : x[i] < 0.0f ? -1.0f : x[i];  // keeps NaN and the sign of zero
          } else {
            y[i] = static_cast<T>((x[i] > 0) - (x[i] < 0));
          }
        }
      });
    };
    switch (dtype) {
      case DType::kF32: run(float{}); break;
      case DType::kU8: run(uint8_t{}); break;
      case DType::kS8: run(int8_t{}); break;
      case DType::kS32: run(int32_t{}); break;
    }
    return OkStatus();
  });
  return MakePrepared({{dtype, args.inputs[0].shape}}, std::move(kernel), fmt::format("sign_{}", DTypeName(dtype)));
}

}  // namespace

// Neg and Abs: f32 as the other unary functions, and integer tensors (s32 for ONNX's int32/int64, s8; u8 for Abs)
// with two's complement wrap-around, as ONNX's integer arithmetic (the LayerNormalization function negates an axis).
Status RegisterNegAbs(OpRegistry& registry, FloatOp op, bool abs) {
  return RegisterFloatOp(registry, op, [abs](const OpPrepareArgs& args) -> Result<PreparedOp> {
    const char* name = abs ? "abs" : "neg";
    if (args.inputs.empty() || args.inputs[0].dtype == DType::kF32) {
      return PrepareUnary(args, 1, name, [abs]() -> Result<std::unique_ptr<OpKernel>> {
        if (abs) return UnaryKernel([](float x) { return std::fabs(x); });
        return UnaryKernel([](float x) { return -x; });
      });
    }
    OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
    OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, 0));
    const DType dtype = args.inputs[0].dtype;
    if (dtype == DType::kU8 && !abs) return InvalidArgument("Neg of an unsigned (u8) tensor is not defined");
    auto kernel = MakeKernel([dtype, abs](const OpRunArgs& r) -> Status {
      const int64_t n = r.outputs[0].NumElements();
      auto run = [&](auto tag) {
        using T = decltype(tag);
        using U = std::make_unsigned_t<T>;
        const T* x = r.inputs[0].data<T>();
        T* y = r.outputs[0].data<T>();
        for (int64_t i = 0; i < n; ++i) {
          const bool flip = !abs || x[i] < 0;
          y[i] = flip ? static_cast<T>(U(0) - static_cast<U>(x[i])) : x[i];  // wraps for the most negative value
        }
      };
      switch (dtype) {
        case DType::kS32: run(int32_t{}); break;
        case DType::kS8: run(int8_t{}); break;
        case DType::kU8: std::memcpy(r.outputs[0].raw_data(), r.inputs[0].raw_data(), static_cast<size_t>(n)); break;
        case DType::kF32: break;
      }
      return OkStatus();
    });
    return MakePrepared({{dtype, args.inputs[0].shape}}, std::move(kernel),
                        fmt::format("{}_{}", name, DTypeName(dtype)));
  });
}

// ONNX's other element-wise float functions (trigonometric, hyperbolic, Softsign, Celu, Shrink, ThresholdedRelu).
Status RegisterMoreUnaryOps(OpRegistry& registry) {
  using Fn = float (*)(float);
  const std::pair<FloatOp, Fn> simple[] = {
      {FloatOp::kTan, [](float x) { return std::tan(x); }},
      {FloatOp::kAsin, [](float x) { return std::asin(x); }},
      {FloatOp::kAcos, [](float x) { return std::acos(x); }},
      {FloatOp::kAtan, [](float x) { return std::atan(x); }},
      {FloatOp::kSinh, [](float x) { return std::sinh(x); }},
      {FloatOp::kCosh, [](float x) { return std::cosh(x); }},
      {FloatOp::kAsinh, [](float x) { return std::asinh(x); }},
      {FloatOp::kAcosh, [](float x) { return std::acosh(x); }},
      {FloatOp::kAtanh, [](float x) { return std::atanh(x); }},
      {FloatOp::kSoftsign, [](float x) { return x / (1.0f + std::fabs(x)); }},
  };
  for (const auto& [op, f] : simple) {
    // The kernel is named after the operator (the table's names are string literals: null-terminated).
    OCTET_RETURN_IF_ERROR(RegisterSimple(registry, op, FloatOpName(op).data(), f));
  }
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kThresholdedRelu, [](const OpPrepareArgs& args) {
    return PrepareUnary(args, 1, "thresholded_relu", [&]() -> Result<std::unique_ptr<OpKernel>> {
      OCTET_ASSIGN_OR_RETURN(float alpha, args.node.attributes.GetFloat("alpha", 1.0f));
      return UnaryKernel([alpha](float x) { return x > alpha ? x : 0.0f; });
    });
  }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kCelu, [](const OpPrepareArgs& args) {
    return PrepareUnary(args, 1, "celu", [&]() -> Result<std::unique_ptr<OpKernel>> {
      OCTET_ASSIGN_OR_RETURN(float alpha, args.node.attributes.GetFloat("alpha", 1.0f));
      if (alpha == 0.0f) return InvalidArgument("attribute 'alpha' must not be 0");
      return UnaryKernel(
          [alpha](float x) { return std::max(0.0f, x) + std::min(0.0f, alpha * std::expm1(x / alpha)); });
    });
  }));
  return RegisterFloatOp(registry, FloatOp::kShrink, [](const OpPrepareArgs& args) {
    return PrepareUnary(args, 1, "shrink", [&]() -> Result<std::unique_ptr<OpKernel>> {
      OCTET_ASSIGN_OR_RETURN(float bias, args.node.attributes.GetFloat("bias", 0.0f));
      OCTET_ASSIGN_OR_RETURN(float lambd, args.node.attributes.GetFloat("lambd", 0.5f));
      return UnaryKernel([bias, lambd](float x) { return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0f); });
    });
  });
}

Status RegisterUnaryOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kRelu, "relu", [](float x) { return x > 0.0f ? x : 0.0f; }));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kSigmoid, "sigmoid", [](float x) { return Sigmoid(x); }));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kTanh, "tanh", [](float x) { return std::tanh(x); }));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kHardSwish, "hardswish", [](float x) {
    return x * std::max(0.0f, std::min(1.0f, x * (1.0f / 6.0f) + 0.5f));
  }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kErf, PrepareErf));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kSqrt, "sqrt", [](float x) { return std::sqrt(x); }));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kExp, "exp", [](float x) { return std::exp(x); }));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kLog, "log", [](float x) { return std::log(x); }));
  OCTET_RETURN_IF_ERROR(RegisterNegAbs(registry, FloatOp::kNeg, false));
  OCTET_RETURN_IF_ERROR(RegisterNegAbs(registry, FloatOp::kAbs, true));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kReciprocal, "reciprocal", [](float x) { return 1.0f / x; }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kClip, PrepareClip));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kGelu, PrepareGelu));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kLeakyRelu, [](const OpPrepareArgs& args) {
    return PrepareUnary(args, 1, "leaky_relu", [&]() -> Result<std::unique_ptr<OpKernel>> {
      OCTET_ASSIGN_OR_RETURN(float alpha, args.node.attributes.GetFloat("alpha", 0.01f));
      return UnaryKernel([alpha](float x) { return x < 0.0f ? alpha * x : x; });
    });
  }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kHardSigmoid, [](const OpPrepareArgs& args) {
    return PrepareUnary(args, 1, "hardsigmoid", [&]() -> Result<std::unique_ptr<OpKernel>> {
      OCTET_ASSIGN_OR_RETURN(float alpha, args.node.attributes.GetFloat("alpha", 0.2f));
      OCTET_ASSIGN_OR_RETURN(float beta, args.node.attributes.GetFloat("beta", 0.5f));
      return UnaryKernel([alpha, beta](float x) { return std::max(0.0f, std::min(1.0f, alpha * x + beta)); });
    });
  }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kCast, PrepareCast));
  // std::nearbyint rounds half to even in the default rounding mode, which octet never changes.
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kFloor, "floor", [](float x) { return std::floor(x); }));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kCeil, "ceil", [](float x) { return std::ceil(x); }));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kRound, "round", [](float x) { return std::nearbyint(x); }));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kSin, "sin", [](float x) { return std::sin(x); }));
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kCos, "cos", [](float x) { return std::cos(x); }));
  // log(1 + e^x) without overflow: x + log1p(e^-x) for x > 0.
  OCTET_RETURN_IF_ERROR(RegisterSimple(registry, FloatOp::kSoftplus, "softplus", [](float x) {
    return x > 0.0f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kElu, [](const OpPrepareArgs& args) {
    return PrepareUnary(args, 1, "elu", [&]() -> Result<std::unique_ptr<OpKernel>> {
      OCTET_ASSIGN_OR_RETURN(float alpha, args.node.attributes.GetFloat("alpha", 1.0f));
      return UnaryKernel([alpha](float x) { return x < 0.0f ? alpha * std::expm1(x) : x; });
    });
  }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kSelu, [](const OpPrepareArgs& args) {
    return PrepareUnary(args, 1, "selu", [&]() -> Result<std::unique_ptr<OpKernel>> {
      OCTET_ASSIGN_OR_RETURN(float alpha, args.node.attributes.GetFloat("alpha", 1.67326319217681884765625f));
      OCTET_ASSIGN_OR_RETURN(float gamma, args.node.attributes.GetFloat("gamma", 1.05070102214813232421875f));
      return UnaryKernel([alpha, gamma](float x) { return x > 0.0f ? gamma * x : gamma * alpha * std::expm1(x); });
    });
  }));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kSign, PrepareSign));
  return RegisterMoreUnaryOps(registry);
}

}  // namespace octet::float_ops

// ConvInteger, MatMulInteger, QLinearConv and QLinearMatMul with run-time qparams (see integer_linear.h). The
// accumulators come from the op-level references; this file only moves data into their layouts.
#include "ops/float/integer_linear.h"

#include <algorithm>
#include <vector>

#include "ops/float/linear_qparams.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"
#include "ops/reference/qconv_op_reference.h"
#include "ops/reference/qgemm_reference.h"
#include "ops/reference/requantize_reference.h"

namespace octet::float_ops {
namespace {

// With |a - a_zp| and |w - w_zp| at most 255 (any 8-bit value and zero point), K taps fit int32 up to
// floor((2^31 - 1) / 255^2).
constexpr int64_t kMaxTaps = 33025;

bool Is8Bit(DType d) { return d == DType::kU8 || d == DType::kS8; }

Status Check8Bit(const OpPrepareArgs& args, size_t slot, const char* what) {
  if (!Present(args, slot)) return InvalidArgument("input {} ({}) is required", slot, what);
  if (!Is8Bit(args.inputs[slot].dtype)) {
    return InvalidArgument("input {} ({}) must be uint8 or int8, got {}", slot, what, args.inputs[slot].dtype);
  }
  return OkStatus();
}

Status CheckTaps(int64_t k) {
  if (k > kMaxTaps) {
    return Unimplemented("{} taps per output could overflow the int32 accumulator (at most {} are exact)", k, kMaxTaps);
  }
  return OkStatus();
}

// Weights as the references read them: s8 with int32 zero points; u8 values shifted by -128 with their zero points
// (w - zp unchanged). `zp` holds one zero point per output channel (a per-tensor one repeated).
void WeightsAsS8(const ConstTensorView& w, const ConstTensorView& zp, int64_t channels, std::vector<int8_t>& out,
                 std::vector<int32_t>& zps) {
  const int64_t n = w.NumElements();
  const int32_t shift = w.dtype() == DType::kU8 ? 128 : 0;
  out.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<int8_t>(IntAt(w, i) - shift);
  zps.resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) zps[static_cast<size_t>(c)] = IntAtOrOnly(zp, c) - shift;
}

// Requantizes accumulator `acc` (plus bias) of output channel o in the fp32 scheme, bias sum saturated to int32.
int32_t Requantize(int64_t acc, float multiplier, int32_t zp, DType out) {
  const int64_t sat = std::clamp<int64_t>(acc, INT32_MIN, INT32_MAX);
  return reference::RequantizeFp32Value(static_cast<int32_t>(sat), multiplier, zp, QMin(out), QMax(out));
}

void Store(const TensorView& y, int64_t i, int32_t v) {
  if (y.dtype() == DType::kU8) {
    y.data<uint8_t>()[i] = static_cast<uint8_t>(v);
  } else {
    y.data<int8_t>()[i] = static_cast<int8_t>(v);
  }
}

// ---- Convolution ------------------------------------------------------------------------------------------------

struct ConvSlots {
  size_t x, x_zp, w, w_zp;
};

struct ConvPlan {
  reference::QConvOpGeometry g;
  std::vector<int64_t> out_dims;
  DType x_dtype = DType::kU8;
};

Result<ConvPlan> PlanConv(const OpPrepareArgs& args, const ConvSlots& s) {
  OCTET_RETURN_IF_ERROR(Check8Bit(args, s.x, "x"));
  OCTET_RETURN_IF_ERROR(Check8Bit(args, s.w, "w"));
  const Shape& xs = args.inputs[s.x].shape;
  const Shape& ws = args.inputs[s.w].shape;
  if (xs.rank() != 3 && xs.rank() != 4) {
    return Unimplemented("x has shape {}; octet's integer convolution is 1-D or 2-D (rank 3 or 4)", xs);
  }
  if (ws.rank() != xs.rank()) return InvalidArgument("w has shape {}, x {}: their ranks must match", ws, xs);
  const size_t nd = static_cast<size_t>(xs.rank() - 2);
  const AttributeMap& at = args.node.attributes;
  std::vector<int64_t> in(xs.dims().begin() + 2, xs.dims().end());
  std::vector<int64_t> kernel(ws.dims().begin() + 2, ws.dims().end());
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> kernel_attr, at.GetInts("kernel_shape", kernel));
  if (kernel_attr != kernel) return InvalidArgument("kernel_shape does not match w's spatial dims {}", ws);
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> strides, at.GetInts("strides", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, at.GetInts("dilations", std::vector<int64_t>(nd, 1)));
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads_attr, at.GetInts("pads", {}));
  OCTET_ASSIGN_OR_RETURN(std::string auto_pad, at.GetString("auto_pad", "NOTSET"));
  OCTET_ASSIGN_OR_RETURN(int64_t group, at.GetInt("group", 1));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("kernel_shape", kernel, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("strides", strides, nd));
  OCTET_RETURN_IF_ERROR(CheckPositiveInts("dilations", dilations, nd));
  if (group < 1 || xs.dim(1) != group * ws.dim(1) || ws.dim(0) % group != 0) {
    return InvalidArgument(
        "group {} does not fit x {} and w {} (x channels = group * w dim 1, w dim 0 divisible "
        "by group)",
        group, xs, ws);
  }
  OCTET_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ResolvePads(auto_pad, pads_attr, in, kernel, strides, dilations));
  ConvPlan p;
  p.x_dtype = args.inputs[s.x].dtype;
  p.g = reference::MakeQConvOpGeometry(xs, ws, strides, dilations, pads, group);
  p.out_dims = {xs.dim(0), ws.dim(0)};
  for (size_t i = 0; i < nd; ++i) {
    OCTET_ASSIGN_OR_RETURN(int64_t o,
                           WindowOutputSize(in[i], kernel[i], strides[i], pads[i], pads[i + nd], dilations[i], false));
    p.out_dims.push_back(o);
  }
  int64_t taps = ws.dim(1);
  for (int64_t k : kernel) taps *= k;
  OCTET_RETURN_IF_ERROR(CheckTaps(taps));
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, p.out_dims));
  // Zero points: x per tensor; w per tensor or per output channel.
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, s.x_zp, "x_zero_point", false, 1));
  const bool w_per_channel = Present(args, s.w_zp) && args.inputs[s.w_zp].shape.NumElements() != 1;
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, s.w_zp, "w_zero_point", false, w_per_channel ? ws.dim(0) : 1));
  for (size_t slot : {s.x_zp, s.w_zp}) {
    const size_t of = slot == s.x_zp ? s.x : s.w;
    if (Present(args, slot) && args.inputs[slot].dtype != args.inputs[of].dtype) {
      return InvalidArgument("input {} (zero point) has dtype {} but input {} has {}", slot, args.inputs[slot].dtype,
                             of, args.inputs[of].dtype);
    }
  }
  return p;
}

// The int32 accumulators of one convolution, NCHW, into acc.
void ConvAccumulate(const ConvPlan& p, const ConvSlots& s, const OpRunArgs& r, int32_t* acc) {
  // ConvInteger's zero points are trailing optional inputs: a node may end before them.
  const ConstTensorView none;
  const ConstTensorView& w_zp = s.w_zp < r.inputs.size() ? r.inputs[s.w_zp] : none;
  const ConstTensorView& x_zp_view = s.x_zp < r.inputs.size() ? r.inputs[s.x_zp] : none;
  std::vector<int8_t> w;
  std::vector<int32_t> zps;
  WeightsAsS8(r.inputs[s.w], w_zp, p.g.c_out, w, zps);
  const int32_t x_zp = IntAt(x_zp_view, 0);
  if (p.x_dtype == DType::kU8) {
    reference::QConvOpAccumulate(p.g, r.inputs[s.x].data<uint8_t>(), x_zp, w.data(), zps.data(), acc);
  } else {
    reference::QConvOpAccumulate(p.g, r.inputs[s.x].data<int8_t>(), x_zp, w.data(), zps.data(), acc);
  }
}

Result<PreparedOp> PrepareConvInteger(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 4));
  const ConvSlots s{0, 2, 1, 3};
  OCTET_ASSIGN_OR_RETURN(ConvPlan p, PlanConv(args, s));
  auto kernel = MakeKernel([p, s](const OpRunArgs& r) -> Status {
    if (r.outputs[0].NumElements() == 0) return OkStatus();  // an empty batch
    ConvAccumulate(p, s, r, r.outputs[0].data<int32_t>());
    return OkStatus();
  });
  return MakePrepared({{DType::kS32, Shape(p.out_dims)}}, std::move(kernel), "conv_integer_reference");
}

Result<PreparedOp> PrepareQLinearConv(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 8, 9));
  const ConvSlots s{0, 2, 3, 5};
  OCTET_ASSIGN_OR_RETURN(ConvPlan p, PlanConv(args, s));
  const int64_t c_out = p.g.c_out;
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 1, "x_scale", true, 1));
  const bool w_per_channel = args.inputs[4].shape.NumElements() != 1;
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 4, "w_scale", true, w_per_channel ? c_out : 1));
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 6, "y_scale", true, 1));
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 7, "y_zero_point", false, 1));
  const DType out = Present(args, 7) ? args.inputs[7].dtype : DType::kU8;
  const bool has_bias = Present(args, 8);
  if (has_bias) {
    OCTET_RETURN_IF_ERROR(CheckInput(args, 8, DType::kS32));
    if (args.inputs[8].shape.rank() != 1 || args.inputs[8].shape.dim(0) != c_out) {
      return InvalidArgument("input 8 (B) has shape {}; expected [{}] (one int32 per output channel)",
                             args.inputs[8].shape, c_out);
    }
  }
  auto kernel = MakeKernel([p, s, out, has_bias, c_out](const OpRunArgs& r) -> Status {
    if (r.outputs[0].NumElements() == 0) return OkStatus();  // an empty batch
    std::vector<int32_t> acc(static_cast<size_t>(r.outputs[0].NumElements()));
    ConvAccumulate(p, s, r, acc.data());
    const float x_scale = FloatAt(r.inputs[1], 0), y_scale = FloatAt(r.inputs[6], 0);
    const int32_t y_zp = IntAt(r.inputs[7], 0);
    const int64_t spatial = r.outputs[0].NumElements() / std::max<int64_t>(1, p.g.n * c_out);
    for (int64_t o = 0; o < c_out; ++o) {
      const float m = reference::QGemmFp32Multiplier(x_scale, FloatAt(r.inputs[4], o), y_scale);
      const int64_t bias = has_bias ? r.inputs[8].data<int32_t>()[o] : 0;
      for (int64_t b = 0; b < p.g.n; ++b) {
        const int64_t base = (b * c_out + o) * spatial;
        for (int64_t i = base; i < base + spatial; ++i) {
          Store(r.outputs[0], i, Requantize(int64_t{acc[static_cast<size_t>(i)]} + bias, m, y_zp, out));
        }
      }
    }
    return OkStatus();
  });
  return MakePrepared({{out, Shape(p.out_dims)}}, std::move(kernel), "qlinear_conv_reference");
}

// ---- Matrix product ---------------------------------------------------------------------------------------------

struct MatMulPlan {
  int64_t m = 1, k = 1, n = 1;
  std::vector<int64_t> batch;                 // the broadcast batch dims
  std::vector<int64_t> a_strides, b_strides;  // per batch dim, in matrices (0 where broadcast)
  std::vector<int64_t> out_dims;
  DType a_dtype = DType::kU8;
};

Result<MatMulPlan> PlanMatMul(const OpPrepareArgs& args, size_t a_slot, size_t b_slot) {
  OCTET_RETURN_IF_ERROR(Check8Bit(args, a_slot, "A"));
  OCTET_RETURN_IF_ERROR(Check8Bit(args, b_slot, "B"));
  const Shape& as = args.inputs[a_slot].shape;
  const Shape& bs = args.inputs[b_slot].shape;
  if (as.rank() < 1 || bs.rank() < 1) return InvalidArgument("A {} and B {} must have rank 1 or more", as, bs);
  std::vector<int64_t> ad = as.dims(), bd = bs.dims();
  const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), 1);
  if (b_vec) bd.push_back(1);
  MatMulPlan p;
  p.a_dtype = args.inputs[a_slot].dtype;
  p.m = ad[ad.size() - 2];
  p.k = ad.back();
  p.n = bd.back();
  if (bd[bd.size() - 2] != p.k) return InvalidArgument("A {} and B {}: inner dims differ", as, bs);
  OCTET_RETURN_IF_ERROR(CheckTaps(p.k));
  const Shape a_batch(std::vector<int64_t>(ad.begin(), ad.end() - 2));
  const Shape b_batch(std::vector<int64_t>(bd.begin(), bd.end() - 2));
  OCTET_ASSIGN_OR_RETURN(Shape batch, BroadcastShapes(a_batch, b_batch));
  p.batch = batch.dims();
  p.a_strides = BroadcastStrides(a_batch, batch);
  p.b_strides = BroadcastStrides(b_batch, batch);
  p.out_dims = p.batch;
  if (!a_vec) p.out_dims.push_back(p.m);
  if (!b_vec) p.out_dims.push_back(p.n);
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, p.out_dims));
  return p;
}

// acc[batch][m][n] = sum_k (A - a_zp[row]) (B - b_zp[col]); a_zp per tensor or per row, b_zp per tensor or column.
void MatMulAccumulate(const MatMulPlan& p, const ConstTensorView& a, const ConstTensorView& a_zp,
                      const ConstTensorView& b, const ConstTensorView& b_zp, int32_t* acc) {
  int64_t batches = 1;
  for (int64_t d : p.batch) batches *= d;
  std::vector<int8_t> bt(static_cast<size_t>(p.k * p.n));  // one B matrix, transposed to [n][k], as s8
  std::vector<int32_t> zps(static_cast<size_t>(p.n));
  const int32_t shift = b.dtype() == DType::kU8 ? 128 : 0;
  for (int64_t j = 0; j < p.n; ++j) zps[static_cast<size_t>(j)] = IntAtOrOnly(b_zp, j) - shift;
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t a_off = 0, b_off = 0, rem = bi;
    for (size_t d = p.batch.size(); d-- > 0;) {
      const int64_t idx = rem % p.batch[d];
      rem /= p.batch[d];
      a_off += idx * p.a_strides[d];
      b_off += idx * p.b_strides[d];
    }
    a_off *= p.m * p.k;
    b_off *= p.k * p.n;
    for (int64_t kk = 0; kk < p.k; ++kk) {
      for (int64_t j = 0; j < p.n; ++j) {
        bt[static_cast<size_t>(j * p.k + kk)] = static_cast<int8_t>(IntAt(b, b_off + kk * p.n + j) - shift);
      }
    }
    int32_t* out = acc + bi * p.m * p.n;
    for (int64_t i = 0; i < p.m; ++i) {
      const int32_t row_zp = IntAtOrOnly(a_zp, i);
      const size_t k = static_cast<size_t>(p.k), n = static_cast<size_t>(p.n);
      if (p.a_dtype == DType::kU8) {
        reference::QGemmAccumulate(1, n, k, a.data<uint8_t>() + a_off + i * p.k, k, row_zp, bt.data(), k, zps.data(),
                                   out + i * p.n, n);
      } else {
        reference::QGemmAccumulate(1, n, k, a.data<int8_t>() + a_off + i * p.k, k, row_zp, bt.data(), k, zps.data(),
                                   out + i * p.n, n);
      }
    }
  }
}

Status CheckZeroPointDType(const OpPrepareArgs& args, size_t zp, size_t of) {
  if (Present(args, zp) && args.inputs[zp].dtype != args.inputs[of].dtype) {
    return InvalidArgument("input {} (zero point) has dtype {} but input {} has {}", zp, args.inputs[zp].dtype, of,
                           args.inputs[of].dtype);
  }
  return OkStatus();
}

Result<PreparedOp> PrepareMatMulInteger(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 4));
  OCTET_ASSIGN_OR_RETURN(MatMulPlan p, PlanMatMul(args, 0, 1));
  const bool a_rows = Present(args, 2) && args.inputs[2].shape.NumElements() != 1;
  const bool b_cols = Present(args, 3) && args.inputs[3].shape.NumElements() != 1;
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 2, "a_zero_point", false, a_rows ? p.m : 1));
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 3, "b_zero_point", false, b_cols ? p.n : 1));
  OCTET_RETURN_IF_ERROR(CheckZeroPointDType(args, 2, 0));
  OCTET_RETURN_IF_ERROR(CheckZeroPointDType(args, 3, 1));
  auto kernel = MakeKernel([p](const OpRunArgs& r) -> Status {
    const ConstTensorView none;
    MatMulAccumulate(p, r.inputs[0], r.inputs.size() > 2 ? r.inputs[2] : none, r.inputs[1],
                     r.inputs.size() > 3 ? r.inputs[3] : none, r.outputs[0].data<int32_t>());
    return OkStatus();
  });
  return MakePrepared({{DType::kS32, Shape(p.out_dims)}}, std::move(kernel), "matmul_integer_reference");
}

Result<PreparedOp> PrepareQLinearMatMul(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 8, 8));
  OCTET_ASSIGN_OR_RETURN(MatMulPlan p, PlanMatMul(args, 0, 3));
  const bool b_cols = args.inputs[4].shape.NumElements() != 1;
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 1, "a_scale", true, 1));
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 2, "a_zero_point", false, 1));
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 4, "b_scale", true, b_cols ? p.n : 1));
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 5, "b_zero_point", false, b_cols ? p.n : 1));
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 6, "y_scale", true, 1));
  OCTET_RETURN_IF_ERROR(CheckQParamInput(args, 7, "y_zero_point", false, 1));
  OCTET_RETURN_IF_ERROR(CheckZeroPointDType(args, 2, 0));
  OCTET_RETURN_IF_ERROR(CheckZeroPointDType(args, 5, 3));
  const DType out = Present(args, 7) ? args.inputs[7].dtype : DType::kU8;
  auto kernel = MakeKernel([p, out](const OpRunArgs& r) -> Status {
    std::vector<int32_t> acc(static_cast<size_t>(r.outputs[0].NumElements()));
    MatMulAccumulate(p, r.inputs[0], r.inputs[2], r.inputs[3], r.inputs[5], acc.data());
    const float a_scale = FloatAt(r.inputs[1], 0), y_scale = FloatAt(r.inputs[6], 0);
    const int32_t y_zp = IntAt(r.inputs[7], 0);
    std::vector<float> m(static_cast<size_t>(p.n));
    for (int64_t j = 0; j < p.n; ++j) {
      m[static_cast<size_t>(j)] = reference::QGemmFp32Multiplier(a_scale, FloatAt(r.inputs[4], j), y_scale);
    }
    for (size_t i = 0; i < acc.size(); ++i) {
      Store(r.outputs[0], static_cast<int64_t>(i), Requantize(acc[i], m[i % static_cast<size_t>(p.n)], y_zp, out));
    }
    return OkStatus();
  });
  return MakePrepared({{out, Shape(p.out_dims)}}, std::move(kernel), "qlinear_matmul_reference");
}

}  // namespace

Status RegisterIntegerLinearOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kConvInteger, PrepareConvInteger));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kMatMulInteger, PrepareMatMulInteger));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kQLinearConv, PrepareQLinearConv));
  return RegisterFloatOp(registry, FloatOp::kQLinearMatMul, PrepareQLinearMatMul);
}

}  // namespace octet::float_ops

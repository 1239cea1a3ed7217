// QAdd and QMul: Prepare reads the qparams and builds the multipliers once; Run walks the broadcast plan, or, with a
// single-element operand, applies a 256-entry table of the other operand's results.
#include "ops/int8/qelementwise_ops.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <variant>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/int8/activation_qparams.h"
#include "ops/int8/int8_ops.h"
#include "ops/int8/nhwc_layout.h"
#include "ops/reference/qelementwise_reference.h"
#include "ops/ukernels/lut.h"
#include "ops/ukernels/qvadd.h"

namespace octet::int8_ops {
namespace {

using float_ops::BroadcastPlan;

enum class QBinaryKind { kAdd, kMul };

using QBinaryParams = std::variant<reference::QAddFp32Params, reference::QAddQ31Params, reference::QMulFp32Params,
                                   reference::QMulQ31Params>;

// Elements per parallel tile: long inner runs are cut into chunks of this size, short ones grouped into tiles of
// about this many elements.
constexpr int64_t kTileElements = int64_t{1} << 14;

// One inner run of n output elements: operand x advances by step_x (0 or 1).
template <typename T, typename P>
void RunScalar(const T* a, int64_t step_a, const T* b, int64_t step_b, T* y, int64_t n, const P& p) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t va = a[i * step_a];
    const int32_t vb = b[i * step_b];
    if constexpr (std::is_same_v<P, reference::QAddFp32Params>) {
      y[i] = static_cast<T>(reference::QAddFp32Value(va, vb, p));
    } else if constexpr (std::is_same_v<P, reference::QAddQ31Params>) {
      y[i] = static_cast<T>(reference::QAddQ31Value(va, vb, p));
    } else if constexpr (std::is_same_v<P, reference::QMulFp32Params>) {
      y[i] = static_cast<T>(reference::QMulFp32Value(va, vb, p));
    } else {
      y[i] = static_cast<T>(reference::QMulQ31Value(va, vb, p));
    }
  }
}

// Outputs from which a single-element operand goes through a table (below, 256 evaluations are noise).
constexpr int64_t kTableMinElements = 1024;

template <typename T>
void RunQBinary(const OpRunArgs& r, const BroadcastPlan& plan, const QBinaryParams& params, QVAddUkernelFn<T> qvadd,
                LutUkernelFn lut) {
  const T* a = r.inputs[0].data<T>();
  const T* b = r.inputs[1].data<T>();
  T* y = r.outputs[0].data<T>();
  const int64_t count = r.outputs[0].NumElements();
  if (count == 0) return;
  // One operand a single element (attention's scale, a constant offset): y is a function of the other operand's
  // code, so the reference's values for all 256 codes make a table and the lut kernels apply it (equal to the
  // per-element arithmetic by construction).
  const bool b_one = r.inputs[1].NumElements() == 1 && r.inputs[0].NumElements() == count;
  const bool a_one = !b_one && r.inputs[0].NumElements() == 1 && r.inputs[1].NumElements() == count;
  if ((a_one || b_one) && count >= kTableMinElements) {
    T codes[256], table[256];
    for (int c = 0; c < 256; ++c) codes[c] = static_cast<T>(static_cast<uint8_t>(c));
    std::visit(
        [&](const auto& p) {
          if (b_one) {
            RunScalar(codes, 1, b, 0, table, 256, p);
          } else {
            RunScalar(a, 0, codes, 1, table, 256, p);
          }
        },
        params);
    const auto* x = reinterpret_cast<const uint8_t*>(b_one ? a : b);
    auto* out = reinterpret_cast<uint8_t*>(y);
    const auto* t = reinterpret_cast<const uint8_t*>(table);
    ParallelFor(r.context, count, kTileElements,
                [&](int64_t begin, int64_t end) { lut(t, x + begin, static_cast<size_t>(end - begin), out + begin); });
    return;
  }
  // A run: `n` elements of output row `row` from element `start`.
  auto run = [&](int64_t row, int64_t start, int64_t n, int64_t off_a, int64_t off_b) {
    const T* pa = a + off_a + start * plan.step_a;
    const T* pb = b + off_b + start * plan.step_b;
    T* py = y + row * plan.inner + start;
    std::visit(
        [&](const auto& p) {
          using P = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<P, reference::QAddFp32Params>) {
            if (plan.step_a == 1 && plan.step_b == 1) {
              qvadd(static_cast<size_t>(n), pa, pb, py, p);
              return;
            }
          }
          RunScalar(pa, plan.step_a, pb, plan.step_b, py, n, p);
        },
        params);
  };
  if (plan.inner >= kTileElements) {
    const int64_t chunks = (plan.inner + kTileElements - 1) / kTileElements;
    ParallelFor(r.context, plan.outer * chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t row = u / chunks;
        const int64_t start = (u % chunks) * kTileElements;
        int64_t off_a = 0, off_b = 0;
        float_ops::BroadcastRowOffsets(plan, row, &off_a, &off_b);
        run(row, start, std::min(kTileElements, plan.inner - start), off_a, off_b);
      }
    });
  } else {
    const int64_t rows_per_tile = std::max<int64_t>(1, kTileElements / std::max<int64_t>(plan.inner, 1));
    float_ops::ForEachBroadcastRow(r.context, plan, rows_per_tile, [&](int64_t row, int64_t off_a, int64_t off_b) {
      run(row, 0, plan.inner, off_a, off_b);
    });
  }
}

Result<PreparedOp> PrepareQBinary(const OpPrepareArgs& args, QBinaryKind kind) {
  const std::string_view op = Int8OpName(kind == QBinaryKind::kAdd ? Int8Op::kQAdd : Int8Op::kQMul);
  OCTET_RETURN_IF_ERROR(float_ops::CheckArity(args, 2, 2));
  OCTET_ASSIGN_OR_RETURN(const QActivation qa, ReadInputActivation(args, 0, "A"));
  OCTET_ASSIGN_OR_RETURN(const QActivation qb, ReadInputActivation(args, 1, "B"));
  OCTET_ASSIGN_OR_RETURN(const QActivation qy, ReadOutputActivation(args, 0, "C"));
  if (qa.dtype != qb.dtype || qa.dtype != qy.dtype) {
    return InvalidArgument("{} needs A, B and C of one dtype, got {}, {} and {}", op, qa.dtype, qb.dtype, qy.dtype);
  }
  OCTET_ASSIGN_OR_RETURN(const auto bounds, ReadActivationBounds(args, qy));
  OCTET_ASSIGN_OR_RETURN(const Requantization requant, ReadRequantization(args));
  OCTET_ASSIGN_OR_RETURN(Shape out, float_ops::BroadcastShapes(args.inputs[0].shape, args.inputs[1].shape));
  OCTET_RETURN_IF_ERROR(float_ops::CheckOutputElements(args, out.dims()));
  const auto [lo, hi] = bounds;
  QBinaryParams params;
  switch (requant) {
    case Requantization::kFp32:
      if (kind == QBinaryKind::kAdd) {
        OCTET_ASSIGN_OR_RETURN(params, reference::MakeQAddFp32Params(qa.operand(), qb.operand(), qy.operand(), lo, hi));
      } else {
        OCTET_ASSIGN_OR_RETURN(params, reference::MakeQMulFp32Params(qa.operand(), qb.operand(), qy.operand(), lo, hi));
      }
      break;
    case Requantization::kQ31:
      if (kind == QBinaryKind::kAdd) {
        OCTET_ASSIGN_OR_RETURN(params, reference::MakeQAddQ31Params(qa.operand(), qb.operand(), qy.operand(), lo, hi));
      } else {
        OCTET_ASSIGN_OR_RETURN(params, reference::MakeQMulQ31Params(qa.operand(), qb.operand(), qy.operand(), lo, hi));
      }
      break;
    case Requantization::kFbgemm:
      return Unimplemented("{} supports requantization \"fp32\" and \"q31\", not \"fbgemm\" (PyTorch's x86 add/mul "
                           "dequantize and requantize in float with fused multiply-adds)",
                           op);
  }
  // With the layout pass's "nhwc" (ops/int8/nhwc_layout.h) all three are stored [N, H, W, C]: the plan broadcasts
  // over the stored shapes; the logical output shape stays NCHW.
  OCTET_ASSIGN_OR_RETURN(const int64_t nhwc, args.node.attributes.GetInt(kNhwcAttribute, 0));
  if (nhwc != 0 && (args.inputs[0].shape.rank() != 4 || args.inputs[1].shape.rank() != 4)) {
    return InvalidArgument("attribute '{}' (set by the NHWC layout pass) needs 4-D A and B, got {} and {}",
                           kNhwcAttribute, args.inputs[0].shape, args.inputs[1].shape);
  }
  auto stored = [&](const Shape& s) { return nhwc != 0 ? Shape{s.dim(0), s.dim(2), s.dim(3), s.dim(1)} : s; };
  const BroadcastPlan plan =
      float_ops::PlanBroadcast(stored(args.inputs[0].shape), stored(args.inputs[1].shape), stored(out));
  const DType dtype = qa.dtype;
  const std::string base = fmt::format("{}_{}_{}", kind == QBinaryKind::kAdd ? "qadd" : "qmul", DTypeName(dtype),
                                       RequantizationName(requant));
  // The qvadd kernels take the runs where both operands are contiguous (same-shape inputs, or a shared leading
  // broadcast); a run with a repeated operand uses the reference's function.
  const bool vectorised = kind == QBinaryKind::kAdd && requant == Requantization::kFp32 && plan.step_a == 1 &&
                          plan.step_b == 1;
  std::string kernel_name = base + (plan.step_a == 1 && plan.step_b == 1 ? "_scalar" : "_broadcast_scalar");
  // A single-element operand on a large output runs as a table (RunQBinary).
  const auto& lut_entry = SelectUkernel(args.context, LutUkernels());
  const LutUkernelFn lut = lut_entry.fn;
  const int64_t out_count = out.NumElements();
  if (out_count >= kTableMinElements &&
      (args.inputs[0].shape.NumElements() == 1 || args.inputs[1].shape.NumElements() == 1)) {
    kernel_name = base + "_table/" + lut_entry.name;
  }
  std::unique_ptr<OpKernel> kernel;
  if (dtype == DType::kU8) {
    const auto& uk = SelectUkernel(args.context, QVAddUkernels<uint8_t>());
    if (vectorised) kernel_name = uk.name;
    kernel = MakeKernel([plan, params, fn = uk.fn, lut](const OpRunArgs& r) -> Status {
      RunQBinary<uint8_t>(r, plan, params, fn, lut);
      return OkStatus();
    });
  } else {
    const auto& uk = SelectUkernel(args.context, QVAddUkernels<int8_t>());
    if (vectorised) kernel_name = uk.name;
    kernel = MakeKernel([plan, params, fn = uk.fn, lut](const OpRunArgs& r) -> Status {
      RunQBinary<int8_t>(r, plan, params, fn, lut);
      return OkStatus();
    });
  }
  return float_ops::MakePrepared({{dtype, std::move(out)}}, std::move(kernel), kernel_name);
}

}  // namespace

Status RegisterQElementwiseOps(OpRegistry& registry) {
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQAdd,
                                       [](const OpPrepareArgs& a) { return PrepareQBinary(a, QBinaryKind::kAdd); }));
  OCTET_RETURN_IF_ERROR(RegisterInt8Op(registry, Int8Op::kQMul,
                                       [](const OpPrepareArgs& a) { return PrepareQBinary(a, QBinaryKind::kMul); }));
  return OkStatus();
}

}  // namespace octet::int8_ops

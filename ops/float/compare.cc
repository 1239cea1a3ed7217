// Comparison, logic and Where kernels over broadcast plans (ops/float/nary_broadcast.h).
#include "ops/float/compare.h"

#include "ops/float/nary_broadcast.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

enum class CompareKind { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };
enum class LogicKind { kAnd, kOr, kXor };

Result<PreparedOp> PrepareCompare(const OpPrepareArgs& args, CompareKind kind, const char* name) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  const ValueInfo& a = args.inputs[0];
  const ValueInfo& b = args.inputs[1];
  if (a.dtype != b.dtype) return InvalidArgument("inputs A and B must have one dtype, got {} and {}", a.dtype, b.dtype);
  for (size_t i : {0, 1}) OCTET_RETURN_IF_ERROR(CheckNotQuantized(args, i));
  OCTET_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(a.shape, b.shape));
  const Shape shapes[] = {a.shape, b.shape};
  NaryPlan plan = PlanNary(shapes, out);
  const DType dtype = a.dtype;
  auto kernel = MakeKernel([plan, kind, dtype](const OpRunArgs& r) -> Status {
    uint8_t* y = r.outputs[0].data<uint8_t>();
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      // One instantiation per kind keeps the switch out of the inner loop.
      auto run = [&](auto f) { BroadcastBinary(r.context, plan, f, r.inputs[0].data<T>(), r.inputs[1].data<T>(), y); };
      switch (kind) {
        case CompareKind::kEqual: run([](T p, T q) -> uint8_t { return p == q; }); break;
        case CompareKind::kLess: run([](T p, T q) -> uint8_t { return p < q; }); break;
        case CompareKind::kGreater: run([](T p, T q) -> uint8_t { return p > q; }); break;
        case CompareKind::kLessOrEqual: run([](T p, T q) -> uint8_t { return p <= q; }); break;
        case CompareKind::kGreaterOrEqual: run([](T p, T q) -> uint8_t { return p >= q; }); break;
      }
    });
    return OkStatus();
  });
  return MakePrepared({{DType::kU8, out}}, std::move(kernel), fmt::format("{}_{}", name, DTypeName(dtype)));
}

Status CheckBool(const OpPrepareArgs& args, size_t slot, const char* what) {
  if (args.inputs[slot].dtype != DType::kU8) {
    return InvalidArgument("input {} ({}) must be bool (octet holds BOOL as u8), got {}", slot, what,
                           args.inputs[slot].dtype);
  }
  return CheckNotQuantized(args, slot);
}

Result<PreparedOp> PrepareLogic(const OpPrepareArgs& args, LogicKind kind, const char* name) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 2, 2));
  OCTET_RETURN_IF_ERROR(CheckBool(args, 0, "A"));
  OCTET_RETURN_IF_ERROR(CheckBool(args, 1, "B"));
  OCTET_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(args.inputs[0].shape, args.inputs[1].shape));
  const Shape shapes[] = {args.inputs[0].shape, args.inputs[1].shape};
  NaryPlan plan = PlanNary(shapes, out);
  auto kernel = MakeKernel([plan, kind](const OpRunArgs& r) -> Status {
    const uint8_t* a = r.inputs[0].data<uint8_t>();
    const uint8_t* b = r.inputs[1].data<uint8_t>();
    uint8_t* y = r.outputs[0].data<uint8_t>();
    switch (kind) {
      case LogicKind::kAnd:
        BroadcastBinary(
            r.context, plan, [](uint8_t p, uint8_t q) -> uint8_t { return p != 0 && q != 0; }, a, b, y);
        break;
      case LogicKind::kOr:
        BroadcastBinary(
            r.context, plan, [](uint8_t p, uint8_t q) -> uint8_t { return p != 0 || q != 0; }, a, b, y);
        break;
      case LogicKind::kXor:
        BroadcastBinary(
            r.context, plan, [](uint8_t p, uint8_t q) -> uint8_t { return (p != 0) != (q != 0); }, a, b, y);
        break;
    }
    return OkStatus();
  });
  return MakePrepared({{DType::kU8, out}}, std::move(kernel), fmt::format("{}_bool", name));
}

Result<PreparedOp> PrepareNot(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 1));
  OCTET_RETURN_IF_ERROR(CheckBool(args, 0, "X"));
  auto kernel = MakeKernel([](const OpRunArgs& r) -> Status {
    const uint8_t* x = r.inputs[0].data<uint8_t>();
    uint8_t* y = r.outputs[0].data<uint8_t>();
    ParallelFor(r.context, r.outputs[0].NumElements(), int64_t{1} << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = x[i] == 0;
    });
    return OkStatus();
  });
  return MakePrepared({{DType::kU8, args.inputs[0].shape}}, std::move(kernel), "not_bool");
}

// Where's X and Y move stored values, so quantized codes pass through when X, Y and the output share qparams.
Status CheckWhereQParams(const OpPrepareArgs& args) {
  const QParams* x = args.inputs[1].qparams;
  const QParams* y = args.inputs[2].qparams;
  const QParams* out = args.output_qparams.empty() ? nullptr : args.output_qparams[0];
  if (x == nullptr && y == nullptr && out == nullptr) return OkStatus();
  auto same = [](const QParams* p, const QParams* q) {
    return p != nullptr && q != nullptr && !p->per_channel() && !q->per_channel() && p->dtype() == q->dtype() &&
           p->scale() == q->scale() && p->zero_point() == q->zero_point();
  };
  if (!same(x, y) || !same(x, out)) {
    return Unimplemented(
        "X, Y and the output must have the same per-tensor qparams or none (X {}, Y {}, output {}): "
        "dequantize X and Y first",
        x ? x->ToString() : "none", y ? y->ToString() : "none", out ? out->ToString() : "none");
  }
  return OkStatus();
}

Result<PreparedOp> PrepareWhere(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 3, 3));
  OCTET_RETURN_IF_ERROR(CheckBool(args, 0, "condition"));
  const ValueInfo& x = args.inputs[1];
  const ValueInfo& y = args.inputs[2];
  if (x.dtype != y.dtype) return InvalidArgument("inputs X and Y must have one dtype, got {} and {}", x.dtype, y.dtype);
  OCTET_RETURN_IF_ERROR(CheckWhereQParams(args));
  const Shape shapes[] = {args.inputs[0].shape, x.shape, y.shape};
  OCTET_ASSIGN_OR_RETURN(Shape out, BroadcastAll(shapes));
  NaryPlan plan = PlanNary(shapes, out);
  const DType dtype = x.dtype;
  auto kernel = MakeKernel([plan, dtype](const OpRunArgs& r) -> Status {
    if (plan.outer * plan.inner == 0) return OkStatus();
    VisitDType(dtype, [&](auto tag) {
      using T = decltype(tag);
      const uint8_t* c = r.inputs[0].data<uint8_t>();
      const T* a = r.inputs[1].data<T>();
      const T* b = r.inputs[2].data<T>();
      T* out = r.outputs[0].data<T>();
      const int64_t sc = plan.inner_step[0], sa = plan.inner_step[1], sb = plan.inner_step[2], n = plan.inner;
      ForEachNaryRow(r.context, plan, [&](int64_t row, const int64_t* off) {
        const uint8_t* cr = c + off[0];
        const T* ar = a + off[1];
        const T* br = b + off[2];
        T* o = out + row * n;
        for (int64_t i = 0; i < n; ++i) o[i] = cr[i * sc] != 0 ? ar[i * sa] : br[i * sb];
      });
    });
    return OkStatus();
  });
  return MakePrepared({{dtype, out}}, std::move(kernel), fmt::format("where_{}", DTypeName(dtype)));
}

}  // namespace

Status RegisterCompareOps(OpRegistry& registry) {
  struct CompareEntry {
    FloatOp op;
    CompareKind kind;
    const char* name;
  };
  for (const CompareEntry& e :
       {CompareEntry{FloatOp::kEqual, CompareKind::kEqual, "equal"},
        CompareEntry{FloatOp::kLess, CompareKind::kLess, "less"},
        CompareEntry{FloatOp::kGreater, CompareKind::kGreater, "greater"},
        CompareEntry{FloatOp::kLessOrEqual, CompareKind::kLessOrEqual, "less_equal"},
        CompareEntry{FloatOp::kGreaterOrEqual, CompareKind::kGreaterOrEqual, "greater_equal"}}) {
    OCTET_RETURN_IF_ERROR(RegisterFloatOp(
        registry, e.op, [e](const OpPrepareArgs& args) { return PrepareCompare(args, e.kind, e.name); }));
  }
  struct LogicEntry {
    FloatOp op;
    LogicKind kind;
    const char* name;
  };
  for (const LogicEntry& e :
       {LogicEntry{FloatOp::kAnd, LogicKind::kAnd, "and"}, LogicEntry{FloatOp::kOr, LogicKind::kOr, "or"},
        LogicEntry{FloatOp::kXor, LogicKind::kXor, "xor"}}) {
    OCTET_RETURN_IF_ERROR(
        RegisterFloatOp(registry, e.op, [e](const OpPrepareArgs& args) { return PrepareLogic(args, e.kind, e.name); }));
  }
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kNot, PrepareNot));
  OCTET_RETURN_IF_ERROR(RegisterFloatOp(registry, FloatOp::kWhere, PrepareWhere));
  return OkStatus();
}

}  // namespace octet::float_ops

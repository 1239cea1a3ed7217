// `octet bench quantize|dequantize`.
#include "tools/octet/bench_command.h"

#include <bit>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/harness/fill.h"
#include "bench/harness/kernel_isa.h"
#include "bench/harness/shapes.h"
#include "bench/harness/timing.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "ops/reference/quantize_reference.h"
#include "ops/quantize.h"
#include "tools/octet/bench_flags.h"

namespace octet::cli {
namespace {

// The per-tensor affine qparams of the benchmark (a typical u8 activation; also valid for s8 and s32).
constexpr float kScale = 0.05f;
constexpr int32_t kZeroPoint = 117;

struct BenchCommand : BenchFlags {
  std::string op;  // "quantize" or "dequantize"
  std::string elements = "16Mi";
  std::string dtype = "quint8";
};

struct Measurement {
  const char* isa;
  std::string kernel;
  bench::Timing timing;
};

// The kernel that ran for `family`, as recorded in the context, and its ISA.
Measurement Ran(const Context& context, const std::string& family, const bench::Timing& timing) {
  return Measurement{bench::KernelIsa(context.LastKernel(family), "?"), context.LastKernel(family), timing};
}

// Times the Quantize operator itself (QuantizeInto: validation, kernel choice, tiling over threads) on one
// preallocated output, after checking its result once against the scalar reference.
template <typename T>
Result<Measurement> BenchQuantize(const Context& context, int64_t n, const bench::TimingOptions& timing_options) {
  const DType dtype = DTypeOf<T>::value;
  OCTET_ASSIGN_OR_RETURN(Tensor x, Tensor::Create(DType::kF32, Shape{n}));
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(dtype, Shape{n}));
  bench::FillQuantizeInputs(x.values<float>(), 0x9e3779b9u);
  OCTET_ASSIGN_OR_RETURN(QParams qparams, QParams::PerTensor(dtype, kScale, kZeroPoint));
  auto run = [&] { return QuantizeInto(context, x, qparams, y); };
  OCTET_RETURN_IF_ERROR(run());
  const float* xp = x.data<float>();
  const T* yp = y.data<T>();
  const float inv_scale = 1.0f / kScale;
  for (int64_t i = 0; i < n; ++i) {
    const T want = reference::QuantizeValue<T>(xp[i], inv_scale, kZeroPoint, qparams.quant_min(), qparams.quant_max());
    if (yp[i] != want) {
      return Internal("bench quantize: {} differs from the reference at element {} (x = {}): got {}, expected {}",
                      context.LastKernel(fmt::format("quantize_f32_{}", DTypeName(dtype))), i, xp[i], int64_t{yp[i]},
                      int64_t{want});
    }
  }
  OCTET_ASSIGN_OR_RETURN(const bench::Timing timing, bench::MeasureStatusCalls(run, timing_options));
  return Ran(context, fmt::format("quantize_f32_{}", DTypeName(dtype)), timing);
}

// Times the Dequantize operator (DequantizeInto) on one preallocated output, checked once against the reference.
template <typename T>
Result<Measurement> BenchDequantize(const Context& context, int64_t n, const bench::TimingOptions& timing_options) {
  const DType dtype = DTypeOf<T>::value;
  OCTET_ASSIGN_OR_RETURN(Tensor q, Tensor::Create(dtype, Shape{n}));
  OCTET_ASSIGN_OR_RETURN(Tensor y, Tensor::Create(DType::kF32, Shape{n}));
  bench::FillIntegers(q.values<T>(), 0x85ebca6bu);
  OCTET_ASSIGN_OR_RETURN(QParams qparams, QParams::PerTensor(dtype, kScale, kZeroPoint));
  OCTET_ASSIGN_OR_RETURN(QTensor qt, QTensor::Create(q, qparams));
  auto run = [&] { return DequantizeInto(context, qt, y); };
  OCTET_RETURN_IF_ERROR(run());
  const T* qp = q.data<T>();
  const float* yp = y.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float want = reference::DequantizeValue<T>(qp[i], kScale, kZeroPoint);
    if (std::bit_cast<uint32_t>(yp[i]) != std::bit_cast<uint32_t>(want)) {
      return Internal("bench dequantize: {} differs from the reference at element {} (q = {}): got {}, expected {}",
                      context.LastKernel(fmt::format("dequantize_{}_f32", DTypeName(dtype))), i, int64_t{qp[i]},
                      yp[i], want);
    }
  }
  OCTET_ASSIGN_OR_RETURN(const bench::Timing timing, bench::MeasureStatusCalls(run, timing_options));
  return Ran(context, fmt::format("dequantize_{}_f32", DTypeName(dtype)), timing);
}

Result<Measurement> Bench(const BenchCommand& c, DType dtype, const Context& context, int64_t n,
                          const bench::TimingOptions& options) {
  const bool quantize = c.op == "quantize";
  switch (dtype) {
    case DType::kU8: return quantize ? BenchQuantize<uint8_t>(context, n, options)
                                     : BenchDequantize<uint8_t>(context, n, options);
    case DType::kS8: return quantize ? BenchQuantize<int8_t>(context, n, options)
                                     : BenchDequantize<int8_t>(context, n, options);
    case DType::kS32: return quantize ? BenchQuantize<int32_t>(context, n, options)
                                      : BenchDequantize<int32_t>(context, n, options);
    case DType::kF32: break;
  }
  return Internal("bench {}: unsupported dtype {}", c.op, dtype);
}

int RunBench(const BenchCommand& c) {
  Result<int64_t> n = bench::ParseElementCount(c.elements);
  if (!n.ok()) {
    return ReportUsage(fmt::format("--elements must be a count in [1, {}] such as 16777216 or 16Mi, got '{}'",
                                   bench::kMaxElementCount, c.elements));
  }
  Result<DType> dtype = ParseDType(c.dtype);
  if (!dtype.ok() || !IsIntegerDType(*dtype)) {
    return ReportUsage(fmt::format("--dtype must be quint8, qint8 or qint32, got '{}'", c.dtype));
  }
  if (Status s = c.context.CheckUsage(); !s.ok()) return ReportUsage(s.message());

  Result<Context> context = c.context.Create();
  if (!context.ok()) return ReportFailure(context.status());
  Result<Measurement> m = Bench(c, *dtype, *context, *n, c.TimingOptions());
  if (!m.ok()) return ReportFailure(m.status());

  const int64_t bytes = *n * static_cast<int64_t>(DTypeSize(DType::kF32) + DTypeSize(*dtype));
  const double gbps = static_cast<double>(bytes) / (m->timing.median_us * 1e3);
  if (c.json) {
    nlohmann::ordered_json j;
    j["op"] = c.op;
    j["elements"] = *n;
    j["threads"] = context->threads();
    j["isa"] = m->isa;
    j["kernel"] = m->kernel;
    j["dtype"] = DTypeName(*dtype);
    bench::AddTimingJson(j, m->timing, "gbps", gbps);
    j["bytes"] = bytes;
    j["scale"] = kScale;
    j["zero_point"] = kZeroPoint;
    j["enabled_isas"] = context->enabled_isas().ToString();
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("{} {} elements ({}), {} thread(s), {} [{}]: {}, {:.2f} GB/s read+written\n", c.op, *n,
               DTypeName(*dtype), context->threads(), m->kernel, m->isa, bench::TimingText(m->timing), gbps);
  }
  std::fflush(stdout);
  return kExitOk;
}

void AddBenchCommand(CLI::App* bench, CommandRegistry& registry, const char* op, const char* description) {
  auto c = std::make_shared<BenchCommand>();
  c->op = op;
  CLI::App* app = bench->add_subcommand(op, description);
  app->add_option("--elements", c->elements, "Element count, e.g. 16777216 or 16Mi")
      ->type_name("N")
      ->capture_default_str();
  app->add_option("--dtype", c->dtype, "Quantized dtype: quint8, qint8 or qint32")
      ->type_name("DTYPE")
      ->capture_default_str();
  c->AddTo(app);
  registry.Add(app, [c] { return RunBench(*c); });
}

}  // namespace

void AddBenchCommands(CLI::App& app, CommandRegistry& registry) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks (checked against the reference before timing)");
  bench->require_subcommand(1);
  AddBenchCommand(bench, registry, "quantize", "f32 -> quint8 (or --dtype) per-tensor, scale 0.05, zero point 117");
  AddBenchCommand(bench, registry, "dequantize", "quint8 (or --dtype) -> f32 per-tensor, scale 0.05, zero point 117");
}

}  // namespace octet::cli

// The QConv graph operator (ops/int8/qconv_op.h: NCHW in and out) against octet's float Conv on the layers of
// bench/shapes/resnet18_conv.txt, each as a one-node graph through the executor (what a model pays per layer), plus
// the NHWC plan alone (ops/qconv2d.h) so the cost of the NCHW <-> NHWC transposes shows. Batch 1, u8 activations,
// per-channel s8 weights, s32 bias, fp32 requantization with a fused Relu. Each QConv output is checked against
// the plan's (NHWC) once before timing.
//
//   octet_bench_qconv_op [--threads N] [--repetitions R] [--shapes FILE]
//
// Prints one row per layer (median over R runs; with one thread the calling thread's CPU time, which a busy shared
// machine disturbs far less than wall time; with more, wall time) and the totals.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/harness/shapes.h"
#include "core/context.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/latency.h"
#include "core/op_table.h"
#include "ops/float/registry.h"
#include "ops/int8/int8_ops.h"
#include "ops/qconv2d.h"

namespace octet {
namespace {

// Median milliseconds of `fn` over `repetitions` runs after two warm-up runs.
template <typename Fn>
double MedianMs(int repetitions, bool cpu, Fn&& fn) {
  return MedianRunUs(cpu ? LatencyClock::kThreadCpu : LatencyClock::kWall, 2, repetitions, fn).value() * 1e-3;
}

Node ConvNode(const bench::ConvLayer& l, std::string op, std::string domain, std::vector<ValueId> in, ValueId out) {
  Node n;
  n.name = l.name;
  n.op_type = std::move(op);
  n.domain = std::move(domain);
  n.inputs = std::move(in);
  n.outputs = {out};
  n.attributes = {{"kernel_shape", std::vector<int64_t>{l.shape.kh, l.shape.kw}},
                  {"strides", std::vector<int64_t>{l.shape.stride, l.shape.stride}},
                  {"pads", std::vector<int64_t>{l.shape.pad, l.shape.pad, l.shape.pad, l.shape.pad}},
                  {"group", l.shape.groups}};
  return n;
}

int Main(int argc, char** argv) {
  int threads = 1, repetitions = 7;
  std::string shapes = OCTET_BENCH_SHAPES_DIR "/resnet18_conv.txt";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--threads") threads = std::stoi(argv[i + 1]);
    else if (a == "--repetitions") repetitions = std::stoi(argv[i + 1]);
    else if (a == "--shapes") shapes = argv[i + 1];
    else {
      fmt::print(stderr, "usage: octet_bench_qconv_op [--threads N] [--repetitions R] [--shapes FILE]\n");
      return 2;
    }
  }
  ContextOptions options;
  options.threads = threads;
  const Context context = Context::Create(options).value();
  OpRegistry registry = FloatOpRegistry();
  OCTET_CHECK(RegisterInt8Ops(registry).ok());
  const bool cpu = threads == 1;
  Result<std::vector<bench::ConvLayer>> layers_or = bench::ReadConvLayers(shapes);
  if (!layers_or.ok()) {
    fmt::print(stderr, "octet_bench_qconv_op: {}\n", layers_or.status().message());
    return 2;
  }
  const std::vector<bench::ConvLayer>& layers = *layers_or;
  std::mt19937_64 rng(1);
  fmt::print("{:<24} {:>10} {:>10} {:>10} {:>8}  {}\n", "layer", "f32 Conv", Int8OpName(Int8Op::kQConv), "NHWC plan",
             "f32/int8", cpu ? "(ms, calling thread's CPU time, median)" : "(ms, wall time, median)");
  double sum_f = 0, sum_q = 0, sum_p = 0;
  for (const bench::ConvLayer& l : layers) {
    const QParams x_qp = QParams::PerTensor(DType::kU8, 0.02f, 117).value();
    std::vector<float> w_scales;
    for (int64_t o = 0; o < l.shape.c_out; ++o) w_scales.push_back(0.004f + 0.0005f * static_cast<float>(o % 5));
    const QParams w_qp =
        QParams::PerChannel(DType::kS8, w_scales, std::vector<int32_t>(w_scales.size(), 0), 0, -127, 127).value();
    const QParams y_qp = QParams::PerTensor(DType::kU8, 0.5f, 3).value();
    const Shape xs{1, l.shape.c_in, l.shape.h, l.shape.w},
        ws{l.shape.c_out, l.shape.c_in / l.shape.groups, l.shape.kh, l.shape.kw};
    Tensor xq = Tensor::Create(DType::kU8, xs).value(), wq = Tensor::Create(DType::kS8, ws).value();
    for (uint8_t& v : xq.values<uint8_t>()) v = static_cast<uint8_t>(rng());
    for (int8_t& v : wq.values<int8_t>()) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    Tensor xf = Tensor::Create(DType::kF32, xs).value(), wf = Tensor::Create(DType::kF32, ws).value();
    for (int64_t i = 0; i < xf.NumElements(); ++i) xf.data<float>()[i] = 0.02f * (xq.data<uint8_t>()[i] - 117);
    for (int64_t i = 0; i < wf.NumElements(); ++i) wf.data<float>()[i] = 0.004f * wq.data<int8_t>()[i];
    Tensor bq = Tensor::Create(DType::kS32, Shape{l.shape.c_out}).value(),
           bf = Tensor::Create(DType::kF32, Shape{l.shape.c_out}).value();
    std::vector<float> b_scales;
    for (int64_t o = 0; o < l.shape.c_out; ++o) b_scales.push_back(x_qp.scale() * w_scales[static_cast<size_t>(o)]);

    // The int8 graph.
    Graph gq("qconv");
    const ValueId x = gq.AddInput("x", DType::kU8, xs).value();
    gq.mutable_value(x).qparams = x_qp;
    const ValueId w = gq.AddConstant("w", wq).value();
    gq.mutable_value(w).qparams = w_qp;
    const ValueId b = gq.AddConstant("b", bq).value();
    gq.mutable_value(b).qparams =
        QParams::PerChannel(DType::kS32, b_scales, std::vector<int32_t>(b_scales.size(), 0), 0, INT32_MIN, INT32_MAX)
            .value();
    const ValueId y = gq.AddNodeValue("y", DType::kU8).value();
    gq.mutable_value(y).qparams = y_qp;
    Node qn = ConvNode(l, std::string(Int8OpName(Int8Op::kQConv)), std::string(kInt8Domain), {x, w, b}, y);
    qn.attributes.Set("activation", std::string(FloatOpName(FloatOp::kRelu)));
    OCTET_CHECK(gq.AddNode(qn).ok());
    OCTET_CHECK(gq.AddOutput(y).ok());
    const Executor eq = Executor::Compile(gq, context, registry).value();

    // The float graph.
    Graph gf("conv");
    const ValueId fx = gf.AddInput("x", DType::kF32, xs).value();
    const ValueId fw = gf.AddConstant("w", wf).value();
    const ValueId fb = gf.AddConstant("b", bf).value();
    const ValueId fy = gf.AddNodeValue("y").value();
    OCTET_CHECK(gf.AddNode(ConvNode(l, std::string(FloatOpName(FloatOp::kConv)), "", {fx, fw, fb}, fy)).ok());
    OCTET_CHECK(gf.AddOutput(fy).ok());
    const Executor ef = Executor::Compile(gf, context, registry).value();

    // The plan alone, on NHWC data (the same values transposed), for the transposes' share.
    Conv2dParams p;
    p.kernel_h = l.shape.kh;
    p.kernel_w = l.shape.kw;
    p.stride_h = p.stride_w = l.shape.stride;
    p.pad_h = p.pad_w = l.shape.pad;
    p.groups = l.shape.groups;
    Tensor ohwi =
        Tensor::Create(DType::kS8, Shape{l.shape.c_out, l.shape.kh, l.shape.kw, l.shape.c_in / l.shape.groups}).value();
    const int64_t cg = l.shape.c_in / l.shape.groups, taps = l.shape.kh * l.shape.kw;
    for (int64_t o = 0; o < l.shape.c_out; ++o) {
      for (int64_t i = 0; i < cg; ++i) {
        for (int64_t t = 0; t < taps; ++t) {
          ohwi.data<int8_t>()[(o * taps + t) * cg + i] = wq.data<int8_t>()[(o * cg + i) * taps + t];
        }
      }
    }
    Tensor nhwc = Tensor::Create(DType::kU8, Shape{1, l.shape.h, l.shape.w, l.shape.c_in}).value();
    for (int64_t c = 0; c < l.shape.c_in; ++c) {
      for (int64_t q = 0; q < l.shape.h * l.shape.w; ++q)
        nhwc.data<uint8_t>()[q * l.shape.c_in + c] = xq.data<uint8_t>()[c * l.shape.h * l.shape.w + q];
    }
    QGemmOutput out = QGemmOutput::Requantized(QGemmStage::kFp32, DType::kU8, y_qp.scale(), y_qp.zero_point(),
                                               std::vector<int32_t>(static_cast<size_t>(l.shape.c_out), 0));
    out.lo = y_qp.zero_point();
    const QConv2dPlan plan =
        QConv2dPlan::Create(context, QTensor::Create(ohwi, w_qp).value(), p, x_qp, out).value();
    Tensor py = Tensor::Create(DType::kU8, plan.OutputShape(nhwc.shape()).value()).value();

    const std::vector<Tensor> fin{xf}, qin{xq};
    // Check once: the operator's NCHW output is the plan's NHWC output transposed.
    const Tensor qy = eq.Run(qin).value().front();
    OCTET_CHECK(plan.RunInto(context, nhwc, py).ok());
    const int64_t ohw = py.shape().dim(1) * py.shape().dim(2);
    for (int64_t c = 0; c < l.shape.c_out; ++c) {
      for (int64_t q = 0; q < ohw; ++q) {
        if (qy.data<uint8_t>()[c * ohw + q] != py.data<uint8_t>()[q * l.shape.c_out + c]) {
          fmt::print(stderr, "octet_bench_qconv_op: {}: QConv differs from the plan at channel {} pixel {}\n", l.name,
                     c, q);
          return 1;
        }
      }
    }
    const double tf = MedianMs(repetitions, cpu, [&] { return ef.Run(fin).status(); });
    const double tq = MedianMs(repetitions, cpu, [&] { return eq.Run(qin).status(); });
    const double tp = MedianMs(repetitions, cpu, [&] { return plan.RunInto(context, nhwc, py); });
    sum_f += tf;
    sum_q += tq;
    sum_p += tp;
    fmt::print("{:<24} {:>10.3f} {:>10.3f} {:>10.3f} {:>8.2f}  {}\n", l.name, tf, tq, tp, tf / tq,
               eq.kernel_name(0));
  }
  fmt::print("{:<24} {:>10.3f} {:>10.3f} {:>10.3f} {:>8.2f}  (QConv / plan: {:.2f})\n", "total", sum_f, sum_q, sum_p,
             sum_f / sum_q, sum_q / sum_p);
  return 0;
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) { return octet::Main(argc, argv); }

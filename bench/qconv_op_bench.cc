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
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/context.h"
#include "core/executor.h"
#include "core/graph.h"
#include "ops/float/registry.h"
#include "ops/int8/int8_ops.h"
#include "ops/qconv2d.h"

namespace octet {
namespace {

struct Layer {
  std::string name;
  int64_t ic = 0, oc = 0, ih = 0, iw = 0, kh = 0, kw = 0, sh = 1, ph = 0, g = 1;
};

// benchdnn-style descriptors: g<groups>ic<C>oc<M>ih<H>[iw<W>]kh<K>[kw<K>][sh<S>][ph<P>] n"name".
std::vector<Layer> ReadLayers(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "octet_bench_qconv_op: cannot read '{}'\n", path);
    std::exit(2);
  }
  std::vector<Layer> layers;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Layer l;
    const size_t q = line.find("n\"");
    if (q != std::string::npos) l.name = line.substr(q + 2, line.find('"', q + 2) - q - 2);
    const std::string d = line.substr(0, q);
    l.iw = -1;
    l.kw = -1;
    for (size_t i = 0; i < d.size();) {
      size_t j = i;
      while (j < d.size() && std::isalpha(static_cast<unsigned char>(d[j]))) ++j;
      const std::string key = d.substr(i, j - i);
      size_t k = j;
      while (k < d.size() && std::isdigit(static_cast<unsigned char>(d[k]))) ++k;
      if (key.empty() || k == j) break;
      const int64_t v = std::stoll(d.substr(j, k - j));
      if (key == "g") l.g = v;
      if (key == "ic") l.ic = v;
      if (key == "oc") l.oc = v;
      if (key == "ih") l.ih = v;
      if (key == "iw") l.iw = v;
      if (key == "kh") l.kh = v;
      if (key == "kw") l.kw = v;
      if (key == "sh") l.sh = v;
      if (key == "ph") l.ph = v;
      i = k;
    }
    if (l.iw < 0) l.iw = l.ih;
    if (l.kw < 0) l.kw = l.kh;
    layers.push_back(l);
  }
  return layers;
}

double Now(bool cpu) {
  if (!cpu) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

template <typename Fn>
double MedianMs(int repetitions, bool cpu, Fn&& fn) {
  fn();
  fn();
  std::vector<double> t;
  for (int r = 0; r < repetitions; ++r) {
    const double t0 = Now(cpu);
    fn();
    t.push_back((Now(cpu) - t0) * 1e3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

Node ConvNode(const Layer& l, std::string op, std::string domain, std::vector<ValueId> in, ValueId out) {
  Node n;
  n.name = l.name;
  n.op_type = std::move(op);
  n.domain = std::move(domain);
  n.inputs = std::move(in);
  n.outputs = {out};
  n.attributes = {{"kernel_shape", std::vector<int64_t>{l.kh, l.kw}},
                  {"strides", std::vector<int64_t>{l.sh, l.sh}},
                  {"pads", std::vector<int64_t>{l.ph, l.ph, l.ph, l.ph}},
                  {"group", l.g}};
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
  std::mt19937_64 rng(1);
  fmt::print("{:<24} {:>10} {:>10} {:>10} {:>8}  {}\n", "layer", "f32 Conv", "QConv", "NHWC plan", "f32/int8",
             cpu ? "(ms, calling thread's CPU time, median)" : "(ms, wall time, median)");
  double sum_f = 0, sum_q = 0, sum_p = 0;
  for (const Layer& l : ReadLayers(shapes)) {
    const QParams x_qp = QParams::PerTensor(DType::kU8, 0.02f, 117).value();
    std::vector<float> w_scales;
    for (int64_t o = 0; o < l.oc; ++o) w_scales.push_back(0.004f + 0.0005f * static_cast<float>(o % 5));
    const QParams w_qp =
        QParams::PerChannel(DType::kS8, w_scales, std::vector<int32_t>(w_scales.size(), 0), 0, -127, 127).value();
    const QParams y_qp = QParams::PerTensor(DType::kU8, 0.5f, 3).value();
    const Shape xs{1, l.ic, l.ih, l.iw}, ws{l.oc, l.ic / l.g, l.kh, l.kw};
    Tensor xq = Tensor::Create(DType::kU8, xs).value(), wq = Tensor::Create(DType::kS8, ws).value();
    for (uint8_t& v : xq.values<uint8_t>()) v = static_cast<uint8_t>(rng());
    for (int8_t& v : wq.values<int8_t>()) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    Tensor xf = Tensor::Create(DType::kF32, xs).value(), wf = Tensor::Create(DType::kF32, ws).value();
    for (int64_t i = 0; i < xf.NumElements(); ++i) xf.data<float>()[i] = 0.02f * (xq.data<uint8_t>()[i] - 117);
    for (int64_t i = 0; i < wf.NumElements(); ++i) wf.data<float>()[i] = 0.004f * wq.data<int8_t>()[i];
    Tensor bq = Tensor::Create(DType::kS32, Shape{l.oc}).value(), bf = Tensor::Create(DType::kF32, Shape{l.oc}).value();
    std::vector<float> b_scales;
    for (int64_t o = 0; o < l.oc; ++o) b_scales.push_back(x_qp.scale() * w_scales[static_cast<size_t>(o)]);

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
    Node qn = ConvNode(l, "QConv", "octet", {x, w, b}, y);
    qn.attributes.Set("activation", "Relu");
    OCTET_CHECK(gq.AddNode(qn).ok());
    OCTET_CHECK(gq.AddOutput(y).ok());
    const Executor eq = Executor::Compile(gq, context, registry).value();

    // The float graph.
    Graph gf("conv");
    const ValueId fx = gf.AddInput("x", DType::kF32, xs).value();
    const ValueId fw = gf.AddConstant("w", wf).value();
    const ValueId fb = gf.AddConstant("b", bf).value();
    const ValueId fy = gf.AddNodeValue("y").value();
    OCTET_CHECK(gf.AddNode(ConvNode(l, "Conv", "", {fx, fw, fb}, fy)).ok());
    OCTET_CHECK(gf.AddOutput(fy).ok());
    const Executor ef = Executor::Compile(gf, context, registry).value();

    // The plan alone, on NHWC data (the same values transposed), for the transposes' share.
    Conv2dParams p;
    p.kernel_h = l.kh;
    p.kernel_w = l.kw;
    p.stride_h = p.stride_w = l.sh;
    p.pad_h = p.pad_w = l.ph;
    p.groups = l.g;
    Tensor ohwi = Tensor::Create(DType::kS8, Shape{l.oc, l.kh, l.kw, l.ic / l.g}).value();
    const int64_t cg = l.ic / l.g, taps = l.kh * l.kw;
    for (int64_t o = 0; o < l.oc; ++o) {
      for (int64_t i = 0; i < cg; ++i) {
        for (int64_t t = 0; t < taps; ++t) {
          ohwi.data<int8_t>()[(o * taps + t) * cg + i] = wq.data<int8_t>()[(o * cg + i) * taps + t];
        }
      }
    }
    Tensor nhwc = Tensor::Create(DType::kU8, Shape{1, l.ih, l.iw, l.ic}).value();
    for (int64_t c = 0; c < l.ic; ++c) {
      for (int64_t q = 0; q < l.ih * l.iw; ++q) nhwc.data<uint8_t>()[q * l.ic + c] = xq.data<uint8_t>()[c * l.ih * l.iw + q];
    }
    QGemmOutput out = QGemmOutput::Requantized(QGemmStage::kFp32, DType::kU8, y_qp.scale(), y_qp.zero_point(),
                                               std::vector<int32_t>(static_cast<size_t>(l.oc), 0));
    out.lo = y_qp.zero_point();
    const QConv2dPlan plan =
        QConv2dPlan::Create(context, QTensor::Create(ohwi, w_qp).value(), p, x_qp, out).value();
    Tensor py = Tensor::Create(DType::kU8, plan.OutputShape(nhwc.shape()).value()).value();

    const std::vector<Tensor> fin{xf}, qin{xq};
    // Check once: the operator's NCHW output is the plan's NHWC output transposed.
    const Tensor qy = eq.Run(qin).value().front();
    OCTET_CHECK(plan.RunInto(context, nhwc, py).ok());
    const int64_t ohw = py.shape().dim(1) * py.shape().dim(2);
    for (int64_t c = 0; c < l.oc; ++c) {
      for (int64_t q = 0; q < ohw; ++q) {
        if (qy.data<uint8_t>()[c * ohw + q] != py.data<uint8_t>()[q * l.oc + c]) {
          fmt::print(stderr, "octet_bench_qconv_op: {}: QConv differs from the plan at channel {} pixel {}\n", l.name,
                     c, q);
          return 1;
        }
      }
    }
    const double tf = MedianMs(repetitions, cpu, [&] { OCTET_CHECK(ef.Run(fin).ok()); });
    const double tq = MedianMs(repetitions, cpu, [&] { OCTET_CHECK(eq.Run(qin).ok()); });
    const double tp = MedianMs(repetitions, cpu, [&] { OCTET_CHECK(plan.RunInto(context, nhwc, py).ok()); });
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

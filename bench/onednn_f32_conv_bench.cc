// oneDNN's f32 convolution on a list of layers (bench/shapes/resnet18_conv.txt by default): the peer figure for
// octet's float path (`octet bench model --per-op` reports octet's Conv time on the same layers). The peer tool
// (../shared/peers/compare) measures only int8 convolution, hence this program.
//
// Each layer: batch 1, f32 source, weights, bias and destination, every memory format left to oneDNN ("any": its
// blocked layouts, the fastest it has), weights and source reordered outside the timed region, so the figure is the
// convolution primitive alone. Each case is checked once against a naive double-precision convolution on sampled
// outputs (relative error <= 1e-4) before it is timed. Timing: warm-up >= 20 ms, calls per repetition calibrated to
// >= 10 ms, --repetitions repetitions (default 5), median per call. Threads: oneDNN's OpenMP runtime, so set
// OMP_NUM_THREADS (1 for single-thread figures); ONEDNN_MAX_CPU_ISA caps the ISA. Beside the wall-clock median,
// the median of the calling thread's CPU time per call (meaningful with one thread).
//
// Usage: octet_bench_onednn_f32_conv [--shapes FILE] [--repetitions R] [--json]
// Prints one line per layer (name, shape, implementation, us, GFLOPS) and the total; with --json one JSON object
// per line, {"op": "onednn_conv_f32", "name", "shape", "impl", "us", "gflops"}, and a last {"op": "total", "us"}.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <dnnl.hpp>

namespace {

struct ConvShape {
  std::string name, text;
  long g = 1, ic = 0, oc = 0, ih = 0, iw = 0, kh = 0, kw = 0, sh = 1, ph = 0;
  long oh() const { return (ih + 2 * ph - kh) / sh + 1; }
  long ow() const { return (iw + 2 * ph - kw) / sh + 1; }
  double flops() const { return 2.0 * oh() * ow() * oc * (ic / g) * kh * kw; }
};

bool ParseShape(const std::string& line, ConvShape* s) {
  const std::string desc = line.substr(0, line.find_first_of(" \t"));
  std::smatch name;
  if (std::regex_search(line, name, std::regex("n\"([^\"]*)\""))) s->name = name[1];
  s->text = desc;
  const std::regex field("([a-z]+)([0-9]+)");
  bool any = false;
  for (auto it = std::sregex_iterator(desc.begin(), desc.end(), field); it != std::sregex_iterator(); ++it) {
    const std::string key = (*it)[1];
    const long v = std::stol((*it)[2]);
    any = true;
    if (key == "g") s->g = v;
    else if (key == "ic") s->ic = v;
    else if (key == "oc") s->oc = v;
    else if (key == "ih") s->ih = v;
    else if (key == "iw") s->iw = v;
    else if (key == "kh") s->kh = v;
    else if (key == "kw") s->kw = v;
    else if (key == "sh") s->sh = v;
    else if (key == "ph") s->ph = v;
    else return false;
  }
  if (s->iw == 0) s->iw = s->ih;
  if (s->kw == 0) s->kw = s->kh;
  return any && s->ic > 0 && s->oc > 0 && s->ih > 0 && s->kh > 0 && s->ic % s->g == 0 && s->oc % s->g == 0;
}

double MedianCallUs(const std::function<void()>& fn, int repetitions) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  const auto warm = Clock::now();
  double fastest = 1e30;
  do {
    const auto t = Clock::now();
    fn();
    fastest = std::min(fastest, seconds(t));
  } while (seconds(warm) < 0.020);
  const long calls = std::max(1L, static_cast<long>(std::ceil(0.010 / std::max(fastest, 1e-9))));
  std::vector<double> us;
  for (int r = 0; r < repetitions; ++r) {
    const auto t = Clock::now();
    for (long i = 0; i < calls; ++i) fn();
    us.push_back(seconds(t) * 1e6 / static_cast<double>(calls));
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

double ThreadCpuUs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
}

// The median over `repetitions` calls of the calling thread's CPU time per call: with OMP_NUM_THREADS=1 oneDNN runs
// on the calling thread, and on a shared machine this counts only the time the convolution had a core.
double MedianCallCpuUs(const std::function<void()>& fn, int repetitions) {
  std::vector<double> us;
  for (int r = 0; r < std::max(3, repetitions); ++r) {
    const double start = ThreadCpuUs();
    fn();
    us.push_back(ThreadCpuUs() - start);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string shapes_path = OCTET_BENCH_SHAPES_DIR "/resnet18_conv.txt";
  int repetitions = 5;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--shapes" && i + 1 < argc) {
      shapes_path = argv[++i];
    } else if (a == "--repetitions" && i + 1 < argc) {
      repetitions = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--json") {
      json = true;
    } else {
      std::fprintf(stderr, "usage: %s [--shapes FILE] [--repetitions R] [--json]\n", argv[0]);
      return 2;
    }
  }
  std::ifstream in(shapes_path);
  if (!in) {
    std::fprintf(stderr, "onednn_f32_conv: cannot open '%s'\n", shapes_path.c_str());
    return 1;
  }
  std::vector<ConvShape> shapes;
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ConvShape s;
    if (!ParseShape(line, &s)) {
      std::fprintf(stderr, "onednn_f32_conv: '%s': bad shape line '%s'\n", shapes_path.c_str(), line.c_str());
      return 1;
    }
    shapes.push_back(s);
  }

  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  double total_us = 0.0, total_cpu_us = 0.0;
  for (const ConvShape& s : shapes) {
    const dnnl::memory::dims src_dims = {1, s.ic, s.ih, s.iw}, dst_dims = {1, s.oc, s.oh(), s.ow()};
    const dnnl::memory::dims w_dims = s.g == 1 ? dnnl::memory::dims{s.oc, s.ic, s.kh, s.kw}
                                               : dnnl::memory::dims{s.g, s.oc / s.g, s.ic / s.g, s.kh, s.kw};
    std::vector<float> src(static_cast<size_t>(s.ic * s.ih * s.iw)), wts(static_cast<size_t>(s.oc * s.ic / s.g * s.kh * s.kw));
    std::vector<float> bias(static_cast<size_t>(s.oc)), dst(static_cast<size_t>(s.oc * s.oh() * s.ow()));
    for (float& v : src) v = uniform(rng);
    for (float& v : wts) v = uniform(rng);
    for (float& v : bias) v = uniform(rng);
    dnnl::memory::desc src_any(src_dims, dt::f32, tag::any), dst_any(dst_dims, dt::f32, tag::any);
    dnnl::memory::desc w_any(w_dims, dt::f32, tag::any), b_md({s.oc}, dt::f32, tag::a);
    dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                        src_any, w_any, b_md, dst_any, {s.sh, s.sh}, {s.ph, s.ph}, {s.ph, s.ph}),
        engine);
    dnnl::memory src_user({src_dims, dt::f32, tag::nchw}, engine, src.data());
    dnnl::memory w_user({w_dims, dt::f32, s.g == 1 ? tag::oihw : tag::goihw}, engine, wts.data());
    dnnl::memory b_mem(b_md, engine, bias.data());
    dnnl::memory dst_user({dst_dims, dt::f32, tag::nchw}, engine, dst.data());
    dnnl::memory src_mem(pd.src_desc(), engine), w_mem(pd.weights_desc(), engine), dst_mem(pd.dst_desc(), engine);
    dnnl::reorder(src_user, src_mem).execute(stream, src_user, src_mem);
    dnnl::reorder(w_user, w_mem).execute(stream, w_user, w_mem);
    dnnl::convolution_forward conv(pd);
    auto run = [&] {
      conv.execute(stream, {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_BIAS, b_mem},
                            {DNNL_ARG_DST, dst_mem}});
      stream.wait();
    };
    run();
    dnnl::reorder(dst_mem, dst_user).execute(stream, dst_mem, dst_user);
    stream.wait();
    // Check sampled outputs (and both corners) against a naive convolution in double.
    std::uniform_int_distribution<long> pick(0, static_cast<long>(dst.size()) - 1);
    for (int t = 0; t < 200; ++t) {
      const long idx = t == 0 ? 0 : t == 1 ? static_cast<long>(dst.size()) - 1 : pick(rng);
      const long o = idx / (s.oh() * s.ow()), y = idx / s.ow() % s.oh(), x = idx % s.ow();
      const long cg = s.ic / s.g, gi = o / (s.oc / s.g);
      double ref = bias[static_cast<size_t>(o)], mag = std::fabs(ref);
      for (long c = 0; c < cg; ++c) {
        for (long i = 0; i < s.kh; ++i) {
          for (long j = 0; j < s.kw; ++j) {
            const long yy = y * s.sh - s.ph + i, xx = x * s.sh - s.ph + j;
            if (yy < 0 || yy >= s.ih || xx < 0 || xx >= s.iw) continue;
            const double p = double{src[static_cast<size_t>(((gi * cg + c) * s.ih + yy) * s.iw + xx)]} *
                             wts[static_cast<size_t>(((o * cg + c) * s.kh + i) * s.kw + j)];
            ref += p;
            mag += std::fabs(p);
          }
        }
      }
      if (std::fabs(dst[static_cast<size_t>(idx)] - ref) > 1e-4 * mag + 1e-6) {
        std::fprintf(stderr, "onednn_f32_conv: %s: output %ld is %g, the reference %g\n", s.text.c_str(), idx,
                     dst[static_cast<size_t>(idx)], ref);
        return 1;
      }
    }
    const double us = MedianCallUs(run, repetitions);
    const double cpu_us = MedianCallCpuUs(run, repetitions);
    total_us += us;
    total_cpu_us += cpu_us;
    const char* impl = pd.impl_info_str();
    if (json) {
      std::printf("{\"op\":\"onednn_conv_f32\",\"name\":\"%s\",\"shape\":\"%s\",\"impl\":\"%s\",\"us\":%.2f,"
                  "\"cpu_us\":%.2f,\"gflops\":%.2f}\n",
                  s.name.c_str(), s.text.c_str(), impl, us, cpu_us, s.flops() / us * 1e-3);
    } else {
      std::printf("%-24s %-28s %-28s %10.1f us %7.1f GFLOPS  CPU %10.1f us\n", s.name.c_str(), s.text.c_str(), impl,
                  us, s.flops() / us * 1e-3, cpu_us);
    }
  }
  if (json) {
    std::printf("{\"op\":\"total\",\"layers\":%zu,\"us\":%.2f,\"cpu_us\":%.2f}\n", shapes.size(), total_us,
                total_cpu_us);
  } else {
    std::printf("total: %zu layers, %.1f us, CPU %.1f us\n", shapes.size(), total_us, total_cpu_us);
  }
  return 0;
}

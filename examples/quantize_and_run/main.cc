// quantize_and_run [--backend NAME] [--profile NAME] [-o MODEL.octet INPUT.npy]: builds a small float CNN with the
// C++ builder (conv-bn-relu, max pool, conv-relu, global average pool, linear; PyTorch's default initialisation
// from a fixed seed), quantizes it statically (Prepare, Calibrate on 8 random batches, Convert), runs the float and
// the int8 graph on a held-out batch and prints the SQNR of the int8 logits against the float ones. With -o it also
// writes the int8 graph as a .octet file and the held-out batch as .npy, for embedded_runner. Exit status 1 when a
// step fails or the SQNR is below 20 dB (a random-init network of this size gives about 30-40 dB).
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/builder.h"
#include "core/context.h"
#include "core/executor.h"
#include "io/npy.h"
#include "io/octet_file.h"
#include "ops/float/registry.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/numerics_profile.h"
#include "quant/prepare.h"
#include "quant/qconfig_mapping.h"
#include "quant/quantized_registry.h"

namespace {

constexpr int64_t kBatch = 16, kChannels = 3, kSize = 16, kClasses = 10;
constexpr int kCalibrationBatches = 8;
constexpr double kMinSqnrDb = 20.0;

int Fail(const octet::Status& status) {
  fmt::print(stderr, "quantize_and_run: {}\n", status.message());
  return 1;
}

octet::Result<octet::Graph> BuildFloatModel() {
  octet::GraphBuilder b("small_cnn", /*seed=*/7);
  octet::ValueId x = b.Input("x", octet::DType::kF32, octet::Shape{octet::kUnknownDim, kChannels, kSize, kSize});
  octet::Conv2dOptions c1;
  c1.in_channels = kChannels;
  c1.out_channels = 16;
  c1.padding = {1, 1};
  x = b.Conv2d("conv1", x, c1);
  x = b.BatchNorm2d("bn1", x, 16);
  x = b.ReLU("relu1", x);
  x = b.MaxPool2d("pool", x, octet::Pool2dOptions{});
  octet::Conv2dOptions c2;
  c2.in_channels = 16;
  c2.out_channels = 32;
  c2.padding = {1, 1};
  x = b.Conv2d("conv2", x, c2);
  x = b.ReLU("relu2", x);
  x = b.AdaptiveAvgPool2d1("gap", x);
  x = b.Flatten("flatten", x);
  x = b.Linear("fc", x, 32, kClasses);
  b.Output(x);
  return std::move(b).Build();
}

// Images with some structure (a smooth pattern plus noise), so activations are not all alike.
octet::Tensor RandomImages(std::mt19937_64& rng) {
  octet::Tensor t = octet::Tensor::Create(octet::DType::kF32, octet::Shape{kBatch, kChannels, kSize, kSize}).value();
  std::uniform_real_distribution<float> phase(0.0f, 6.28f), noise(-0.3f, 0.3f);
  float* p = t.data<float>();
  for (int64_t n = 0; n < kBatch * kChannels; ++n) {
    const float a = phase(rng), f = 0.2f + 0.1f * static_cast<float>(n % 5);
    for (int64_t i = 0; i < kSize * kSize; ++i) {
      *p++ = std::sin(a + f * static_cast<float>(i % kSize + i / kSize)) + noise(rng);
    }
  }
  return t;
}

octet::Result<octet::Tensor> RunOnce(const octet::Graph& graph, const octet::OpRegistry& registry,
                                     const octet::Context& context, const octet::Tensor& x) {
  octet::CompileOptions options;
  options.input_shapes.emplace_back("x", x.shape());
  OCTET_ASSIGN_OR_RETURN(octet::Executor executor, octet::Executor::Compile(graph, context, registry, options));
  OCTET_ASSIGN_OR_RETURN(std::vector<octet::Tensor> y, executor.Run(std::vector<octet::Tensor>{x}));
  return std::move(y.at(0));
}

// 10 log10(sum(f^2) / sum((f - q)^2)), as torch.ao's numeric suite computes it.
double SqnrDb(const octet::Tensor& f, const octet::Tensor& q) {
  double signal = 0.0, noise = 0.0;
  for (int64_t i = 0; i < f.NumElements(); ++i) {
    const double a = f.data<float>()[i], d = a - q.data<float>()[i];
    signal += a * a;
    noise += d * d;
  }
  return noise == 0.0 ? INFINITY : 10.0 * std::log10(signal / noise);
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "x86", profile_name = "reference", model_out, input_out;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--backend" && k + 1 < argc) {
      backend = argv[++k];
    } else if (arg == "--profile" && k + 1 < argc) {
      profile_name = argv[++k];
    } else if (arg == "-o" && k + 2 < argc) {
      model_out = argv[++k];
      input_out = argv[++k];
    } else {
      fmt::print(stderr, "usage: quantize_and_run [--backend NAME] [--profile NAME] [-o MODEL.octet INPUT.npy]\n");
      return 2;
    }
  }

  octet::Result<octet::Context> context = octet::Context::Create();
  if (!context.ok()) return Fail(context.status());
  octet::Result<octet::Graph> model = BuildFloatModel();
  if (!model.ok()) return Fail(model.status());
  octet::Result<octet::QConfigMapping> mapping = octet::GetDefaultQConfigMapping(backend);
  if (!mapping.ok()) return Fail(mapping.status());
  octet::Result<octet::NumericsProfile> profile = octet::ParseNumericsProfile(profile_name);
  if (!profile.ok()) return Fail(profile.status());

  // Prepare fuses (BatchNorm folding, conv + relu) and attaches observers; Calibrate feeds them batches.
  octet::Result<octet::PreparedGraph> prepared = octet::Prepare(*model, *mapping);
  if (!prepared.ok()) return Fail(prepared.status());
  std::mt19937_64 rng(2024);
  std::vector<std::vector<octet::Tensor>> batches;
  for (int k = 0; k < kCalibrationBatches; ++k) batches.push_back({RandomImages(rng)});
  octet::CalibrateOptions calibrate_options;
  calibrate_options.progress = [](int64_t, int64_t) {};
  if (octet::Status s = octet::Calibrate(*prepared, *context, batches, calibrate_options); !s.ok()) return Fail(s);

  octet::ConvertOptions convert_options;
  convert_options.profile = *profile;
  octet::ConvertReport report;
  octet::Result<octet::Graph> int8 = octet::Convert(*prepared, convert_options, &report);
  if (!int8.ok()) return Fail(int8.status());
  fmt::print("backend {}, profile {}: {} nodes quantized, {} kept float\n", backend, profile_name,
             report.quantized.size(), report.kept_float.size());

  const octet::Tensor x = RandomImages(rng);  // held out: not seen by calibration
  octet::Result<octet::Tensor> y_float = RunOnce(*model, octet::FloatOpRegistry(), *context, x);
  if (!y_float.ok()) return Fail(y_float.status());
  octet::Result<octet::Tensor> y_int8 = RunOnce(*int8, octet::QuantizedGraphRegistry(), *context, x);
  if (!y_int8.ok()) return Fail(y_int8.status());
  const double sqnr = SqnrDb(*y_float, *y_int8);
  fmt::print("logits {}: float {:.5f} {:.5f} {:.5f} ..., int8 {:.5f} {:.5f} {:.5f} ...\n", y_int8->shape(),
             y_float->data<float>()[0], y_float->data<float>()[1], y_float->data<float>()[2],
             y_int8->data<float>()[0], y_int8->data<float>()[1], y_int8->data<float>()[2]);
  fmt::print("SQNR int8 vs float: {:.2f} dB\n", sqnr);

  if (!model_out.empty()) {
    const octet::OctetMetadata metadata = {{"producer", "examples/quantize_and_run"}, {"profile", profile_name}};
    if (octet::Status s = octet::WriteOctetFile(model_out, *int8, metadata); !s.ok()) return Fail(s);
    if (octet::Status s = octet::WriteNpy(input_out, x); !s.ok()) return Fail(s);
    fmt::print("wrote {} and {}\n", model_out, input_out);
  }
  if (!(sqnr >= kMinSqnrDb)) {
    fmt::print(stderr, "quantize_and_run: SQNR {:.2f} dB is below {} dB\n", sqnr, kMinSqnrDb);
    return 1;
  }
  return 0;
}

// ONNX models exported from PyTorch (tests/data/models/generate.py) run through the importer and executor and match
// PyTorch's outputs within 1e-4 relative L2 error (the criterion); the digits models also classify.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/executor.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "tests/onnx/large_models.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kModels;

const OpRegistry& Registry() {
  static const OpRegistry r = FloatOpRegistry();
  return r;
}

// ||a - b|| / ||b||.
double RelativeL2(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < b.NumElements(); ++i) {
    const double d = double{a.data<float>()[i]} - b.data<float>()[i];
    num += d * d;
    den += double{b.data<float>()[i]} * b.data<float>()[i];
  }
  return std::sqrt(num) / std::sqrt(std::max(den, 1e-30));
}

// Every ISA this machine has (the kernels a user gets), with `threads` threads.
Context DetectedContext(int threads) {
  ContextOptions options;
  options.threads = threads;
  options.use_environment = false;
  return Context::Create(options).value();
}

// Imports dir/name.onnx, runs it on its inputs in `context`, and checks every output against PyTorch's.
std::vector<Tensor> CheckModel(const std::string& dir, const std::string& name, const Context& context) {
  INFO("model " << name << ", ISAs " << context.enabled_isas().ToString() << ", " << context.threads()
                << " thread(s)");
  auto graph = ReadOnnxModel(dir + name + ".onnx");
  REQUIRE(graph.ok());
  const std::vector<Tensor> inputs = testing::ReadNumberedNpy(dir + name, "input");
  const std::vector<Tensor> expected = testing::ReadNumberedNpy(dir + name, "output");
  REQUIRE(inputs.size() == graph->inputs().size());
  REQUIRE(expected.size() == graph->outputs().size());
  std::vector<Tensor> outputs = testing::RunWithInputShapes(*graph, context, Registry(), inputs);
  for (size_t k = 0; k < expected.size(); ++k) {
    INFO("output " << k << " '" << graph->value(graph->outputs()[k]).name << "'");
    REQUIRE(outputs[k].shape() == expected[k].shape());
    const double err = RelativeL2(outputs[k], expected[k]);
    CHECK(err < 1e-4);
    UNSCOPED_INFO(name << " output " << k << " relative L2 error " << err);
  }
  return outputs;
}

TEST_CASE("PyTorch-exported models match PyTorch within 1e-4 relative L2", "[onnx]") {
  for (const char* name : {"digits_mlp", "digits_cnn", "lstm_lm", "gru_bidir", "transformer", "transformer13", "convs"}) {
    const std::vector<Tensor> one = CheckModel(kModels, name, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1));
    const std::vector<Tensor> two = CheckModel(kModels, name, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 2));
    for (size_t k = 0; k < one.size(); ++k) {
      CHECK(std::memcmp(one[k].raw_data(), two[k].raw_data(), one[k].SizeBytes()) == 0);
    }
    CheckModel(kModels, name, DetectedContext(2));  // the SIMD kernels this machine picks
  }
}

TEST_CASE("The digits models classify the held-out batch", "[onnx]") {
  // The CNN keeps its BatchNormalization nodes (not folded by the exporter).
  auto cnn = ReadOnnxModel(kModels + "digits_cnn.onnx");
  REQUIRE(cnn.ok());
  int batch_norms = 0;
  for (const Node& n : cnn->nodes()) batch_norms += n.op_type == "BatchNormalization" ? 1 : 0;
  CHECK(batch_norms == 2);
  const Tensor labels = ReadNpy(kModels + "digits_labels.npy").value();
  for (const char* name : {"digits_mlp", "digits_cnn"}) {
    const std::vector<Tensor> out = CheckModel(kModels, name, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1));
    int correct = 0;
    for (int64_t r = 0; r < labels.NumElements(); ++r) {
      const float* row = out[0].data<float>() + r * 10;
      correct += std::max_element(row, row + 10) - row == labels.data<int32_t>()[r] ? 1 : 0;
    }
    INFO(name << ": " << correct << "/32 correct");
    // Trained for seconds on 1765 images; 28/32 leaves room for an unlucky batch, far above chance (3/32).
    CHECK(correct >= 28);
  }
}

TEST_CASE("Imported graphs keep ONNX names; a symbolic batch dim binds at Compile", "[onnx]") {
  auto g = ReadOnnxModel(kModels + "digits_mlp.onnx");
  REQUIRE(g.ok());
  CHECK(g->FindNode("/fc1/Gemm") >= 0);
  CHECK(g->FindValue("fc1.weight") != kNoValue);
  CHECK(g->value(g->inputs()[0]).shape == Shape{kUnknownDim, 64});
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  REQUIRE_FALSE(Executor::Compile(*g, context, Registry()).ok());
  const Tensor all = ReadNpy(kModels + "digits_mlp.input0.npy").value();
  const Tensor expected = ReadNpy(kModels + "digits_mlp.output0.npy").value();
  CompileOptions options;
  options.input_shapes = {{"x", Shape{5, 64}}};
  auto exec = Executor::Compile(*g, context, Registry(), options);
  REQUIRE(exec.ok());
  Tensor five = Tensor::Create(DType::kF32, Shape{5, 64}).value();
  std::memcpy(five.raw_data(), all.raw_data(), five.SizeBytes());
  auto y = exec->Run(std::vector<Tensor>{five});
  REQUIRE(y.ok());
  for (int64_t i = 0; i < 50; ++i) CHECK((*y)[0].data<float>()[i] == Approx(expected.data<float>()[i]).margin(1e-5));
}

TEST_CASE("Dynamic input dims keep their dim_param names; dim_value -1 is an unnamed dynamic dim", "[onnx]") {
  auto named = ReadOnnxModel(kModels + "dynamic/seq_named.onnx");
  REQUIRE(named.ok());
  const Value& x = named->value(named->inputs()[0]);
  CHECK(x.shape == Shape{kUnknownDim, kUnknownDim, 16});
  CHECK(x.dim_names == std::vector<std::string>{"batch", "seq", ""});
  CHECK(named->value(named->inputs()[1]).dim_names == std::vector<std::string>{"", "", "h", ""});
  for (const char* file : {"dynamic/cnn_unnamed.onnx", "dynamic/cnn_minus1.onnx"}) {
    auto g = ReadOnnxModel(kModels + file);
    REQUIRE(g.ok());
    CHECK(g->value(g->inputs()[0]).shape == Shape{kUnknownDim, 1, 8, 8});
    CHECK(g->value(g->inputs()[0]).dim_names.empty());
  }
}

TEST_CASE("External data inside the model's folder is read", "[onnx]") {
  // A copy of base.onnx with fc.bias moved to an external file, written at test time next to the model.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("octet_onnx_ext_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "weights");
  auto base = ReadOnnxModel(kModels + "malformed/base.onnx");
  REQUIRE(base.ok());
  // external_missing.onnx points fc.bias at "no_such_file.bin"; provide that file under the name it expects.
  std::filesystem::copy_file(kModels + "malformed/external_missing.onnx", dir / "model.onnx");
  {
    const float bias[3] = {0.1f, -0.2f, 0.3f};
    FILE* f = std::fopen((dir / "no_such_file.bin").c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(bias, sizeof(float), 3, f);
    std::fclose(f);
  }
  auto g = ReadOnnxModel((dir / "model.onnx").string());
  REQUIRE(g.ok());
  const Tensor& b = g->value(g->FindValue("fc.bias")).data;
  CHECK(b.data<float>()[1] == -0.2f);
  // A symbolic link that leaves the folder is refused even though the name looks local.
  std::filesystem::remove(dir / "no_such_file.bin");
  std::filesystem::create_symlink(std::filesystem::absolute(kModels + "malformed/base.onnx"), dir / "no_such_file.bin");
  auto escaped = ReadOnnxModel((dir / "model.onnx").string());
  REQUIRE_FALSE(escaped.ok());
  CHECK_THAT(escaped.status().message(), Catch::Contains("resolves outside the model's folder"));
  std::filesystem::remove_all(dir);
}

// ResNet-18 and MobileNetV2 (tests/onnx/large_models.h); "[onnx_large]" first generates them with /usr/bin/python3
// and torch.
using testing::HaveLargeModels;
using testing::LargeModelDir;

void CheckLargeModels(const std::filesystem::path& dir) {
  const std::string d = dir.string() + "/";
  for (const char* name : {"resnet18", "mobilenet_v2"}) {
    const std::vector<Tensor> one = CheckModel(d, name, DetectedContext(1));
    const std::vector<Tensor> two = CheckModel(d, name, DetectedContext(2));
    REQUIRE(one[0].SizeBytes() == two[0].SizeBytes());
    CHECK(std::memcmp(one[0].raw_data(), two[0].raw_data(), one[0].SizeBytes()) == 0);
  }
}

TEST_CASE("ResNet-18 and MobileNetV2 match PyTorch (when generated)", "[onnx]") {
  const std::filesystem::path dir = LargeModelDir();
  if (!HaveLargeModels(dir)) {
    testing::Skip("ResNet-18 and MobileNetV2 against PyTorch: no models in " + dir.string() +
                  " (write them with /usr/bin/python3 tests/data/models/generate.py --large " + dir.string() +
                  ", or run the [onnx_large] test)");
    return;
  }
  CheckLargeModels(dir);
}

TEST_CASE("ResNet-18 and MobileNetV2 generated with torch match PyTorch", "[.long][onnx_large]") {
  const std::filesystem::path dir = LargeModelDir();
  if (!HaveLargeModels(dir)) {
    const std::string cmd = "/usr/bin/python3 " + kModels + "generate.py --large " + dir.string() + " > /dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      testing::Skip("large ONNX models (needs /usr/bin/python3 with torch and torchvision)");
      return;
    }
  }
  CheckLargeModels(dir);
}

}  // namespace
}  // namespace octet

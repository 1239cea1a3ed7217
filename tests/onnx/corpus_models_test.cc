// The third-party-style corpus (tests/data/models/corpus/make_corpus.py: a detector with an upsampling neck, a CRNN
// text recognizer, an audio front end, keyword spotters, a GRU voice-activity detector, tf2onnx- and hand-written
// graphs with control flow and shapes computed at run time; opsets 7 to 21, IR versions up to 10) runs in octet and
// matches ONNX Runtime 1.30 (graph optimizations off; the outputs ort_reference.js wrote) within 1e-4 relative L2,
// on the scalar kernels and on the kernels this machine picks. Every model in the folder is checked.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/executor.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "tests/test_util.h"

namespace octet {
namespace {

const std::string kThirdPartyCorpus = testing::kModels + "corpus/";

// ||a - b|| / ||b|| over float outputs; exact equality (0 or 1) for any other dtype.
double OrtRelativeError(const Tensor& a, const Tensor& b) {
  if (b.dtype() != DType::kF32) {
    return a.dtype() == b.dtype() && a.SizeBytes() == b.SizeBytes() &&
                   std::memcmp(a.raw_data(), b.raw_data(), b.SizeBytes()) == 0
               ? 0.0
               : 1.0;
  }
  double num = 0, den = 0;
  for (int64_t i = 0; i < b.NumElements(); ++i) {
    const double d = double{a.data<float>()[i]} - b.data<float>()[i];
    num += d * d;
    den += double{b.data<float>()[i]} * b.data<float>()[i];
  }
  return std::sqrt(num) / std::sqrt(std::max(den, 1e-30));
}

std::vector<Tensor> CorpusTensors(const std::string& name, const char* kind) {
  std::vector<Tensor> ts;
  for (int k = 0;; ++k) {
    const std::string path = kThirdPartyCorpus + name + "." + kind + std::to_string(k) + ".npy";
    if (!std::filesystem::exists(path)) break;
    auto t = ReadNpy(path);
    REQUIRE(t.ok());
    ts.push_back(std::move(*t));
  }
  return ts;
}

void CheckAgainstOrt(const std::string& name, const Context& context) {
  INFO("corpus model " << name << ", ISAs " << context.enabled_isas().ToString() << ", " << context.threads()
                       << " thread(s)");
  const OpRegistry registry = FloatOpRegistry();
  auto graph = ReadOnnxModel(kThirdPartyCorpus + name + ".onnx");
  if (!graph.ok()) FAIL(graph.status().ToString());
  const std::vector<Tensor> inputs = CorpusTensors(name, "input");
  const std::vector<Tensor> expected = CorpusTensors(name, "output");
  REQUIRE(inputs.size() == graph->inputs().size());
  REQUIRE(expected.size() == graph->outputs().size());
  CompileOptions options;
  for (size_t i = 0; i < inputs.size(); ++i) {
    options.input_shapes.emplace_back(graph->value(graph->inputs()[i]).name, inputs[i].shape());
  }
  auto exec = Executor::Compile(*graph, context, registry, options);
  if (!exec.ok()) FAIL(exec.status().ToString());
  auto outputs = exec->Run(inputs);
  if (!outputs.ok()) FAIL(outputs.status().ToString());
  for (size_t k = 0; k < expected.size(); ++k) {
    INFO("output " << k << " '" << graph->value(graph->outputs()[k]).name << "'");
    REQUIRE((*outputs)[k].shape() == expected[k].shape());
    const double err = OrtRelativeError((*outputs)[k], expected[k]);
    CHECK(err < 1e-4);
  }
}

TEST_CASE("Third-party-style corpus matches ONNX Runtime within 1e-4 relative L2", "[onnx][corpus]") {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kThirdPartyCorpus)) {
    if (entry.path().extension() == ".onnx") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  // The generator writes 11 models; fewer means files went missing, which must not pass as "all matched".
  REQUIRE(names.size() >= 11);
  ContextOptions detected;
  detected.threads = 2;
  detected.use_environment = false;
  const Context simd = Context::Create(detected).value();
  for (const std::string& name : names) {
    CheckAgainstOrt(name, Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1));
    CheckAgainstOrt(name, simd);
  }
}

}  // namespace
}  // namespace octet

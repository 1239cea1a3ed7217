// Test vectors of the int8 digits CNN and MLP (tests/data/models, quantized as quant_convert_digits_test.cc does),
// in the reference (fp32), tflite (q31) and pytorch-fbgemm profiles: every node of the graphs (Quantize, Reshape,
// QConv, QMaxPool, Flatten, QGemm, Dequantize) replays bit-exactly through the reference kernels, and a changed
// output element of any node makes the replay fail naming that node and element.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/cpu_features.h"
#include "io/file_util.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "io/vectors/vectors.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/prepare.h"
#include "quant/qconfig_mapping.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::kModels;

// The static int8 model (x86 preset: Histogram activations with reduce_range, per-channel weights).
Graph Quantized(const std::string& model, NumericsProfile profile) {
  const bool cnn = model == "digits_cnn";
  const Graph original = ReadOnnxModel(kModels + model + ".onnx").value();
  std::vector<std::vector<Tensor>> batches;
  const std::vector<Tensor> calib = SplitBatches(testing::DigitsImages("digits_calib_x.npy", cnn), 64).value();
  for (const Tensor& t : calib) batches.push_back({t});
  auto prepared = Prepare(original, GetDefaultQConfigMapping("x86").value());
  REQUIRE(prepared.ok());
  testing::CalibrateQuietly(*prepared, batches);
  ConvertOptions options;
  options.profile = profile;
  auto converted = Convert(*prepared, options);
  INFO(converted.status().message());
  REQUIRE(converted.ok());
  return std::move(*converted);
}

TEST_CASE("Vectors of the int8 digits CNN and MLP replay bit-exactly for every node", "[vectors][onnx]") {
  const fs::path tmp = fs::temp_directory_path() / fmt::format("octet_vectors_digits_{}", ::getpid());
  fs::remove_all(tmp);
  for (const char* model : {"digits_cnn", "digits_mlp"}) {
    const bool cnn = std::string(model) == "digits_cnn";
    const Tensor x = testing::DigitsImages("digits_test_x.npy", cnn).Clone().value();
    const Tensor batch =
        Tensor::FromValues<float>(cnn ? Shape{16, 1, 8, 8} : Shape{16, 64}, x.values<float>().subspan(0, 16 * 64))
            .value();
    for (NumericsProfile profile :
         {NumericsProfile::kReference, NumericsProfile::kTflite, NumericsProfile::kPytorchFbgemm}) {
      INFO(model << ", profile " << NumericsProfileName(profile));
      const Graph g = Quantized(model, profile);
      const std::string dir = (tmp / fmt::format("{}_{}", model, NumericsProfileName(profile))).string();
      const std::string input = g.value(g.inputs()[0]).name;
      auto summary = WriteVectors(g, {{input, batch}}, dir, Context::ForIsas(DetectedIsas(), 2));
      INFO(summary.status().message());
      REQUIRE(summary.ok());
      CHECK(summary->nodes.size() == static_cast<size_t>(g.num_nodes()));  // nothing folded, nothing skipped
      CHECK(summary->not_replayed.empty());
      auto report = ReplayVectors(dir);
      INFO(report.status().message());
      REQUIRE(report.ok());
      CHECK(report->replayed == summary->nodes);

      const json manifest = json::parse(ReadFile(dir + "/manifest.json").value());
      std::set<std::string> ops;
      for (const json& n : manifest["nodes"]) ops.insert(n["op"].get<std::string>());
      const std::set<std::string> want =
          cnn ? std::set<std::string>{"Quantize", "Reshape", "QConv", "QMaxPool", "Flatten", "QGemm", "Dequantize"}
              : std::set<std::string>{"Quantize", "QGemm", "Dequantize"};
      CHECK(ops == want);

      // One changed output element of any node is caught, named by node and element.
      for (const json& n : manifest["nodes"]) {
        for (const json& f : n["files"]) {
          if (f["role"] != "output") continue;
          const std::string path = dir + "/" + f["file"].get<std::string>();
          const Tensor original = ReadNpy(path).value();
          Tensor changed = original.Clone().value();
          const int64_t at = changed.NumElements() / 2 + 1;
          if (changed.dtype() == DType::kF32) {
            changed.data<float>()[at] += 1.0f;
          } else {
            static_cast<uint8_t*>(changed.raw_data())[at] ^= 0x10;
          }
          REQUIRE(WriteNpy(path, changed).ok());
          auto tampered = ReplayVectors(dir);
          REQUIRE_FALSE(tampered.ok());
          CHECK_THAT(tampered.status().message(),
                     Catch::Contains(fmt::format("node '{}'", n["name"].get<std::string>())) &&
                         Catch::Contains(fmt::format("differs at element {}", at)));
          REQUIRE(WriteNpy(path, original).ok());
        }
      }
    }
  }
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace octet

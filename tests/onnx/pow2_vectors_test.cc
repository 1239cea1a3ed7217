// A power-of-two target in the test vectors (issue #18): the digits CNN quantized for pow2-int8 (rounded to nearest,
// and by AdaRound on the power-of-two weight grid) has only power-of-two scales, so every requantization multiplier
// the vectors record (x_scale * w_scale / y_scale) is an exact power of two, recorded as an explicit right shift
// (requant_shift) that the replay requantizes by; and every node replays bit for bit from the vectors.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/file_util.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "io/vectors/vectors.h"
#include "quant/adaround.h"
#include "quant/batch_norm_stats.h"
#include "quant/bias_correction.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fuse.h"
#include "quant/prepare.h"
#include "quant/target_spec.h"
#include "tests/test_util.h"

namespace octet {
namespace {

bool IsPowerOfTwo(float x) {
  int exponent = 0;
  return x > 0.0f && std::frexp(x, &exponent) == 0.5f;
}

TEST_CASE("pow2-int8 vectors: every requantization multiplier is a power of two and every node replays",
          "[onnx][target][vectors]") {
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  const TargetSpec target = LoadTargetSpec("pow2-int8").value();
  Graph g = ReadOnnxModel(testing::kModels + "digits_cnn.onnx").value();
  FoldConstantNodes(g);
  REQUIRE(FoldBatchNormKeepingStats(g).ok());
  const Tensor images = ReadNpy(testing::kModels + "digits_cnn.input0.npy").value();
  const std::vector<std::vector<Tensor>> calib = {{images}};
  for (const bool adaround : {false, true}) {
    INFO("adaround " << adaround);
    Graph model = g;
    std::map<std::string, QParams> fixed;
    if (adaround) {
      auto qparams = WeightQParamsByNode(model, target.Mapping(), &context);
      REQUIRE(qparams.ok());
      for (auto& [node, q] : *qparams) q = RoundScaleToPowerOfTwo(q).value();
      AdaRoundOptions options;
      options.iterations = 100;
      auto result = AdaRound(model, *qparams, calib, context, options);
      REQUIRE(result.ok());
      REQUIRE(ApplyRoundedWeights(model, result->rounded).ok());
      fixed = result->weight_qparams;
    }
    auto prepared = Prepare(model, target.Mapping());
    REQUIRE(prepared.ok());
    CalibrateOptions quiet;
    quiet.progress = [](int64_t, int64_t) {};
    REQUIRE(Calibrate(*prepared, context, calib, quiet).ok());
    REQUIRE(RoundScalesToPowerOfTwo(*prepared).ok());
    REQUIRE(FixWeightQParams(*prepared, fixed).ok());
    auto converted = Convert(*prepared);
    INFO(converted.status().message());
    REQUIRE(converted.ok());

    const std::string dir = (std::filesystem::temp_directory_path() /
                             fmt::format("octet_pow2_vectors_{}_{}", ::getpid(), adaround ? "adaround" : "nearest"))
                                .string();
    std::filesystem::remove_all(dir);
    const std::string input = converted->value(converted->inputs()[0]).name;
    auto summary = WriteVectors(*converted, {{input, images}}, dir, context);
    INFO(summary.status().message());
    REQUIRE(summary.ok());
    auto replay = ReplayVectors(dir);
    INFO(replay.status().message());
    REQUIRE(replay.ok());
    CHECK(replay->replayed == summary->nodes);

    const nlohmann::json manifest = nlohmann::json::parse(ReadFile(dir + "/manifest.json").value());
    int multipliers = 0, scales = 0, shifts = 0;
    std::string shift_file;
    for (const nlohmann::json& n : manifest["nodes"]) {
      for (const nlohmann::json& f : n["files"]) {
        if (f.contains("qparams") && f["qparams"]["dtype"] != "s32") {
          for (const nlohmann::json& s : f["qparams"]["scales"]) {
            INFO(f["file"].get<std::string>() << " scale " << s.get<float>());
            CHECK(IsPowerOfTwo(s.get<float>()));
            ++scales;
          }
        }
        if (f["role"] == "requant_shift") {
          // The shift stands for the multiplier beside it: 2^-n.
          shift_file = dir + "/" + f["file"].get<std::string>();
          const std::string multiplier_file = shift_file.substr(0, shift_file.rfind('/')) + "/multiplier.npy";
          const Tensor n = ReadNpy(shift_file).value();
          const Tensor m = ReadNpy(multiplier_file).value();
          REQUIRE(n.dtype() == DType::kS32);
          REQUIRE(n.NumElements() == m.NumElements());
          for (int64_t i = 0; i < n.NumElements(); ++i) {
            CHECK(std::ldexp(1.0f, -n.data<int32_t>()[i]) == m.data<float>()[i]);
            CHECK(n.data<int32_t>()[i] > 0);
          }
          ++shifts;
        }
        if (f["role"] != "multiplier") continue;
        const Tensor m = ReadNpy(dir + "/" + f["file"].get<std::string>()).value();
        REQUIRE(m.dtype() == DType::kF32);
        for (int64_t i = 0; i < m.NumElements(); ++i) {
          INFO(f["file"].get<std::string>() << "[" << i << "] = " << m.data<float>()[i]);
          CHECK(IsPowerOfTwo(m.data<float>()[i]));
          ++multipliers;
        }
      }
    }
    CHECK(multipliers >= 3);  // conv1, conv2, fc
    CHECK(scales > 0);
    CHECK(shifts >= 3);  // every multiplier file has its shift
    // Replay requantizes by the shift: one shift off by one no longer matches (and is named).
    REQUIRE(!shift_file.empty());
    Tensor wrong = ReadNpy(shift_file).value();
    wrong.data<int32_t>()[0] += 1;
    REQUIRE(WriteNpy(shift_file, wrong).ok());
    auto broken = ReplayVectors(dir);
    REQUIRE(!broken.ok());
    CHECK(broken.status().message().find("requant_shift") != std::string::npos);
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace octet

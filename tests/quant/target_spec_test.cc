// Target specs (quant/target_spec.h): validation that names the key, the built-in targets, and a power-of-two target
// whose converted graph has only power-of-two scales.
#include "quant/target_spec.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/executor.h"
#include "quant/calibrate.h"
#include "quant/convert.h"
#include "quant/fused_ops.h"
#include "quant/prepare.h"
#include "quant/quantized_registry.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

nlohmann::json Pow2Json() {
  return nlohmann::json::parse(R"({
    "name": "npu",
    "activation": {"dtype": "int8", "symmetric": true, "bits": 8},
    "weight": {"dtype": "int8", "symmetric": true, "per_channel": false, "bits": 8},
    "power_of_two_scales": true,
    "bias_bits": 32,
    "keep_float": ["Softmax"]
  })");
}

bool IsPowerOfTwo(float s) {
  int e = 0;
  return std::frexp(s, &e) == 0.5f;
}

TEST_CASE("target spec: a valid spec becomes a QConfig", "[quant][target]") {
  auto t = ParseTargetSpec(Pow2Json(), "npu.json");
  INFO(t.status().message());
  REQUIRE(t.ok());
  CHECK(t->name == "npu");
  CHECK(t->power_of_two_scales);
  CHECK(t->keep_float == std::vector<std::string>{"Softmax"});
  CHECK(t->qconfig.activation.options.dtype == DType::kS8);
  CHECK(t->qconfig.activation.options.qscheme == QScheme::kPerTensorSymmetric);
  CHECK(t->qconfig.weight.kind == ObserverKind::kMinMax);
  CHECK(t->qconfig.weight.options.quant_min == -128);
  CHECK(t->qconfig.weight.options.quant_max == 127);
  auto builtin = LoadTargetSpec("pow2-int8");
  REQUIRE(builtin.ok());
  CHECK(builtin->power_of_two_scales);
  CHECK(builtin->qconfig.weight.options.qscheme == QScheme::kPerTensorSymmetric);
  for (const char* preset : {"x86", "qnnpack", "onednn"}) {
    auto p = LoadTargetSpec(preset);
    REQUIRE(p.ok());
    CHECK(p->qconfig == GetDefaultQConfig(preset).value());
    CHECK_FALSE(p->power_of_two_scales);
  }
}

TEST_CASE("target spec: errors name the key", "[quant][target]") {
  struct Case {
    std::string path;  // a JSON pointer to change
    nlohmann::json value;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"/colour", 1, "'t.json': colour: unknown key"},
      {"/weight/colour", 1, "weight.colour: unknown key"},
      {"/weight/dtype", "uint8", "weight.dtype: octet's int8 kernels take int8 weights"},
      {"/activation/dtype", "int4", "activation.dtype: must be int8 or uint8, got 'int4'"},
      {"/activation/bits", 9, "activation.bits: must be 2..8, got 9"},
      {"/weight/bits", "8", "weight.bits: must be an integer"},
      {"/weight/per_channel", "yes", "weight.per_channel: must be true or false"},
      {"/bias_bits", 16, "bias_bits: octet's kernels accumulate and add the bias in int32, got 16"},
      {"/activation/observer", "per_channel_minmax", "activation.observer: 'per_channel_minmax' is per-channel"},
      {"/activation/observer", "nonsense", "activation.observer: "},
      {"/keep_float", "Softmax", "keep_float: must be a list of op types"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = Pow2Json();
    j[nlohmann::json::json_pointer(c.path)] = c.value;
    auto t = ParseTargetSpec(j, "t.json");
    INFO(c.path << " = " << c.value.dump() << ": " << t.status().message());
    REQUIRE_FALSE(t.ok());
    CHECK_THAT(t.status().message(), Catch::Contains(c.want));
  }
  nlohmann::json missing = Pow2Json();
  missing.erase("weight");
  CHECK_THAT(ParseTargetSpec(missing, "t.json").status().message(), Catch::Contains("weight: missing"));
  CHECK_THAT(LoadTargetSpec("no-such-target").status().message(), Catch::Contains("pow2-int8"));
}

TEST_CASE("target spec: pow2-int8 gives only power-of-two scales and a working int8 graph", "[quant][target]") {
  std::mt19937_64 rng = testing::MakeRng("target_pow2");
  const Graph g = testing::SmallCnn(7);
  std::vector<std::vector<Tensor>> calib;
  for (int i = 0; i < 3; ++i) calib.push_back({testing::RandomTensor(rng, Shape{16, 3, 8, 8})});
  const Tensor x = testing::RandomTensor(rng, Shape{16, 3, 8, 8});
  const TargetSpec t = LoadTargetSpec("pow2-int8").value();
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}), 1);
  auto prepared = Prepare(g, t.Mapping());
  REQUIRE(prepared.ok());
  REQUIRE(Calibrate(*prepared, context, calib).ok());
  REQUIRE(RoundScalesToPowerOfTwo(*prepared).ok());
  auto converted = Convert(*prepared);
  INFO(converted.status().message());
  REQUIRE(converted.ok());
  int scales = 0;
  for (const Value& v : converted->values()) {
    if (!v.qparams) continue;
    for (float s : v.qparams->scales()) {
      INFO(v.name << " scale " << s);
      CHECK(IsPowerOfTwo(s));
      ++scales;
    }
    if (v.dtype == DType::kS8) CHECK(v.qparams->zero_point() == 0);  // symmetric
  }
  CHECK(scales > 10);
  // Scales at most 2x coarser than the observers': the int8 graph still follows the float one.
  CompileOptions co;
  co.input_shapes.emplace_back("x", x.shape());
  auto fexec = Executor::Compile(g, context, QuantFloatRegistry(), co);
  auto qexec = Executor::Compile(*converted, context, QuantizedGraphRegistry(), co);
  REQUIRE(fexec.ok());
  REQUIRE(qexec.ok());
  const double sqnr =
      testing::TensorSqnrDb((*fexec->Run(std::vector<Tensor>{x}))[0], (*qexec->Run(std::vector<Tensor>{x}))[0]);
  INFO("pow2-int8 output SQNR " << sqnr << " dB");
  CHECK(sqnr > 15.0);
}

}  // namespace
}  // namespace octet

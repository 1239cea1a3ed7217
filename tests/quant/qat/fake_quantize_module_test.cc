// The QAT fake-quantize modules (quant/qat/fake_quantize_module.h) against PyTorch 1.13 (tests/data/fake_quant,
// written by tests/data/fake_quant/generate.py; torch is not needed here), and their error cases.
//
// Bit-exact (compared by their bits): forward outputs, dX, calculate_qparams' scales and zero points after every
// step, the learnable module's scale / zero point parameters after every forward, and its dScale / dZeroPoint per
// tensor and per channel along axis 0 (summed in torch.sum's order). Within a relative tolerance of 1e-5: dScale /
// dZeroPoint per channel along another axis, which PyTorch reduces over strided dimensions in an order octet does
// not copy (octet sums the same float terms in double), and the parameters after the SGD step that follows. Each
// step starts again from PyTorch's parameters (scale_in / zero_point_in), so a last-bit difference does not carry.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/context.h"
#include "io/npy.h"
#include "observers/state_json.h"
#include "quant/qat/fake_quantize_module.h"
#include "tests/observers/observer_test_util.h"

namespace octet::qat {
namespace {

using nlohmann::json;
using testing::FloatText;
using testing::SameFloat;

const std::string kDataDir = std::string(OCTET_TEST_DATA_DIR) + "/fake_quant";

const json& FakeQuantManifest() {
  static const json manifest = [] {
    const std::string path = kDataDir + "/manifest.json";
    std::ifstream in(path);
    if (!in) FAIL("cannot open " << path << " (regenerate with /usr/bin/python3 tests/data/fake_quant/generate.py)");
    return json::parse(in);
  }();
  return manifest;
}

std::vector<float> Floats(const json& j) {
  std::vector<float> out;
  for (const json& v : j) {
    float f = 0.0f;
    REQUIRE(JsonToFloat(v, &f));
    out.push_back(f);
  }
  return out;
}

// Counts of what the parity run compared, for the summary check at the end.
struct ParityCounts {
  int64_t steps = 0;
  int64_t elements = 0;          // y and dX elements compared bit for bit (each)
  int64_t grads = 0;             // dScale / dZp values compared with the tolerance
  int64_t grads_bit_exact = 0;   // ... of which were bit-identical anyway
};

void CheckBits(const char* what, std::span<const float> got, std::span<const float> want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!SameFloat(got[i], want[i])) {
      FAIL_CHECK(what << "[" << i << "]: got " << FloatText(got[i]) << ", PyTorch " << FloatText(want[i]));
      return;
    }
  }
}

// dScale / dZp: bit-exact where each sum is one contiguous run (per tensor, channel axis 0: octet sums in
// torch.sum's order); otherwise PyTorch's float sum against octet's double sum of the same float terms.
void CheckGrad(const char* what, std::span<const float> got, const std::vector<float>& want, bool exact,
               ParityCounts& counts) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ++counts.grads;
    if (SameFloat(got[i], want[i])) {
      ++counts.grads_bit_exact;
      continue;
    }
    if (exact) {
      FAIL_CHECK(what << "[" << i << "]: got " << FloatText(got[i]) << ", PyTorch " << FloatText(want[i]));
      continue;
    }
    const double tolerance = 1e-5 * std::max(1.0, std::fabs(static_cast<double>(want[i])));
    if (!(std::fabs(static_cast<double>(got[i]) - want[i]) <= tolerance)) {
      FAIL_CHECK(what << "[" << i << "]: got " << FloatText(got[i]) << ", PyTorch " << FloatText(want[i]));
    }
  }
}

FakeQuantizeModule::LearnedTensor Learned(FakeQuantizeModule& module, const std::string& name) {
  for (auto& p : module.learnable_parameters()) {
    if (p.name == name) return p;
  }
  FAIL("no learnable parameter '" << name << "'");
  return {};
}

void RunCase(const json& c, const Context& context, ParityCounts& counts) {
  const std::string name = c.at("name").get<std::string>();
  INFO("case " << name);
  FakeQuantizeConfig config;
  auto kind = ParseFakeQuantizeKind(c.at("kind").get<std::string>());
  REQUIRE(kind.ok());
  config.kind = *kind;
  auto options = OptionsFromJson(c.at("options"));
  REQUIRE(options.ok());
  config.observer_options = *options;
  config.observer = options->qscheme && IsPerChannel(*options->qscheme) ? ObserverKind::kMovingAveragePerChannelMinMax
                                                                        : ObserverKind::kMovingAverageMinMax;
  config.use_grad_scaling = c.at("use_grad_scaling").get<bool>();
  auto made = FakeQuantizeModule::Create(config, context);
  REQUIRE(made.ok());
  FakeQuantizeModule& module = **made;

  std::vector<int64_t> dims = c.at("shape").get<std::vector<int64_t>>();
  const Shape shape(dims);
  auto tensors = ReadNpy(kDataDir + "/" + c.at("tensors").get<std::string>());
  REQUIRE(tensors.ok());
  const int64_t n = shape.NumElements();
  const float* data = tensors->data<float>();
  const float lr = c.at("lr").get<float>();
  int step_index = 0;
  for (const json& step : c.at("steps")) {
    INFO("step " << step_index);
    const json& expect = step.at("expect");
    const float* base = data + step_index * 4 * n;
    ++step_index;
    auto slice = [&](int k) { return std::span<const float>(base + k * n, static_cast<size_t>(n)); };
    const bool learnable = config.kind == FakeQuantizeKind::kLearnable;
    bool learning = false;
    if (learnable) {
      const std::string mode = step.at("mode").get<std::string>();
      if (mode == "static_estimate") {
        module.EnableStaticEstimate();
      } else if (mode == "param_learning") {
        REQUIRE(module.EnableParamLearning().ok());
        learning = true;
      } else {
        REQUIRE(mode == "static_observation");
        module.EnableStaticObservation();
      }
    } else {
      module.set_observer_enabled(step.at("observer").get<bool>());
      module.set_fake_quant_enabled(step.at("fake_quant").get<bool>());
    }
    module.ZeroGrad();
    if (learning) {  // start from PyTorch's parameters
      const std::vector<float> scale_in = Floats(step.at("scale_in"));
      const std::vector<float> zp_in = Floats(step.at("zero_point_in"));
      auto scale = Learned(module, "scale");
      auto zp = Learned(module, "zero_point");
      REQUIRE(scale.value.NumElements() == static_cast<int64_t>(scale_in.size()));
      std::copy(scale_in.begin(), scale_in.end(), scale.value.data<float>());
      std::copy(zp_in.begin(), zp_in.end(), zp.value.data<float>());
    }
    auto x = Tensor::FromValues<float>(shape, slice(0));
    auto dy = Tensor::FromValues<float>(shape, slice(1));
    REQUIRE(x.ok());
    REQUIRE(dy.ok());
    auto y = module.Forward(*x);
    REQUIRE(y.ok());
    CheckBits("y", y->values<float>(), slice(2));
    auto dx = module.Backward(*dy);
    REQUIRE(dx.ok());
    CheckBits("dx", dx->values<float>(), slice(3));
    counts.elements += n;
    if (learnable) {
      auto scale = Learned(module, "scale");
      auto zp = Learned(module, "zero_point");
      CheckBits("scale parameter", scale.value.values<float>(), Floats(expect.at("scale")));
      CheckBits("zero_point parameter", zp.value.values<float>(), Floats(expect.at("zero_point")));
      if (learning) {
        const bool exact = !(options->qscheme && IsPerChannel(*options->qscheme)) || options->ch_axis.value_or(0) == 0;
        CheckGrad("dscale", scale.grad.values<float>(), Floats(expect.at("dscale")), exact, counts);
        CheckGrad("dzero_point", zp.grad.values<float>(), Floats(expect.at("dzero_point")), exact, counts);
        // SGD with a power-of-two rate: value - lr * grad. Bit-exact where the gradient was.
        const std::vector<float> scale_after = Floats(expect.at("scale_after"));
        const std::vector<float> zp_after = Floats(expect.at("zero_point_after"));
        for (auto* p : {&scale, &zp}) {
          const std::vector<float>& want = p == &scale ? scale_after : zp_after;
          for (size_t i = 0; i < want.size(); ++i) {
            float& v = p->value.data<float>()[i];
            const float step = lr * p->grad.data<float>()[i];
            const double tolerance = 1e-5 * (std::fabs(v) + std::fabs(step)) + 1e-30;
            v -= step;
            if (!(std::fabs(static_cast<double>(v) - want[i]) <= tolerance)) {
              FAIL_CHECK(p->name << " after SGD [" << i << "]: got " << FloatText(v) << ", PyTorch "
                                 << FloatText(want[i]));
            }
          }
        }
        // Continue from PyTorch's parameters, so calculate_qparams below compares bit for bit.
        std::copy(scale_after.begin(), scale_after.end(), scale.value.data<float>());
        std::copy(zp_after.begin(), zp_after.end(), zp.value.data<float>());
      } else {
        for (float g : scale.grad.values<float>()) CHECK(g == 0.0f);  // no learning, no gradient
        for (float g : zp.grad.values<float>()) CHECK(g == 0.0f);
      }
    }
    auto qparams = module.CalculateQParams();
    REQUIRE(qparams.ok());
    CheckBits("calculate_qparams scale", qparams->scales(), Floats(expect.at("qparams_scale")));
    const std::vector<int64_t> want_zp = expect.at("qparams_zero_point").get<std::vector<int64_t>>();
    REQUIRE(qparams->zero_points().size() == want_zp.size());
    for (size_t i = 0; i < want_zp.size(); ++i) CHECK(qparams->zero_points()[i] == want_zp[i]);
    ++counts.steps;
  }
}

TEST_CASE("fake-quantize modules match PyTorch 1.13 step by step", "[qat_fake_quant]") {
  ParityCounts counts;
  for (int threads : {1, 2}) {
    const Context context = testing::ContextFor(Isa::kScalar, threads);
    for (const json& c : FakeQuantManifest().at("cases")) RunCase(c, context, counts);
  }
  auto native = Context::Create();
  REQUIRE(native.ok());
  for (const json& c : FakeQuantManifest().at("cases")) RunCase(c, *native, counts);
  INFO("steps " << counts.steps << ", elements " << counts.elements << ", gradients " << counts.grads
                << " (bit-exact " << counts.grads_bit_exact << ")");
  CHECK(counts.steps == 3 * 277);
  CHECK(counts.grads > 0);
  WARN("fake-quant parity: " << counts.steps << " steps, " << counts.elements << " y / dX elements bit-exact, "
                             << counts.grads_bit_exact << " of " << counts.grads << " dScale/dZp bit-exact");
}

}  // namespace
}  // namespace octet::qat

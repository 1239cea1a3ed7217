// SGD (momentum, weight decay, Nesterov) and the StepLR / CosineAnnealingLR schedules against PyTorch 1.13's
// values (tests/data/train/sgd_reference.json, made by tests/data/train/generate.py).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "quant/training/lr_scheduler.h"
#include "quant/training/sgd.h"

namespace octet {
namespace {

using training::LrScheduleKind;
using training::LrScheduleOptions;
using training::LrScheduler;
using training::Sgd;
using training::SgdOptions;

nlohmann::json Reference() {
  std::ifstream in(std::string(OCTET_TEST_DATA_DIR) + "/train/sgd_reference.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

Tensor FromList(const nlohmann::json& list) {
  std::vector<float> v = list.get<std::vector<float>>();
  return Tensor::FromValues<float>(Shape{static_cast<int64_t>(v.size())}, v).value();
}

TEST_CASE("SGD equals torch.optim.SGD step by step", "[train]") {
  const nlohmann::json ref = Reference();
  REQUIRE(ref["sgd"].size() == 5);
  for (const nlohmann::json& c : ref["sgd"]) {
    SgdOptions o;
    o.lr = c["lr"].get<double>();
    o.momentum = c["momentum"].get<double>();
    o.weight_decay = c["weight_decay"].get<double>();
    o.nesterov = c["nesterov"].get<bool>();
    Sgd sgd = Sgd::Create(o).value();
    std::vector<Tensor> params = {FromList(c["initial"])};
    for (size_t step = 0; step < c["grads"].size(); ++step) {
      const std::vector<Tensor> grads = {FromList(c["grads"][step])};
      REQUIRE(sgd.Step(params, grads).ok());
      const std::vector<float> expected = c["trajectory"][step].get<std::vector<float>>();
      for (size_t i = 0; i < expected.size(); ++i) {
        INFO("lr " << o.lr << " momentum " << o.momentum << " wd " << o.weight_decay << " nesterov " << o.nesterov
                   << " step " << step << " element " << i);
        // Bit-exact: the same float32 operations, fused multiply-adds where PyTorch's add(alpha) fuses them.
        CHECK(params[0].data<float>()[i] == expected[i]);
      }
    }
  }
}

TEST_CASE("SGD rejects bad options and mismatched steps", "[train]") {
  CHECK_FALSE(Sgd::Create({.lr = -1.0}).ok());
  CHECK_FALSE(Sgd::Create({.lr = 0.1, .momentum = -0.5}).ok());
  CHECK_FALSE(Sgd::Create({.lr = 0.1, .momentum = 0.0, .nesterov = true}).ok());
  Sgd sgd = Sgd::Create({.lr = 0.1, .momentum = 0.9}).value();
  std::vector<Tensor> p = {Tensor::Create(DType::kF32, Shape{3}).value()};
  std::vector<Tensor> g = {Tensor::Create(DType::kF32, Shape{4}).value()};
  CHECK_FALSE(sgd.Step(p, g).ok());
}

TEST_CASE("StepLR and CosineAnnealingLR equal PyTorch's learning rates", "[train]") {
  const nlohmann::json ref = Reference();
  {
    const nlohmann::json& s = ref["step_lr"];
    LrScheduleOptions o;
    o.kind = LrScheduleKind::kStep;
    o.step_size = s["step_size"].get<int>();
    o.gamma = s["gamma"].get<double>();
    LrScheduler sched = LrScheduler::Create(s["base_lr"].get<double>(), o).value();
    for (const nlohmann::json& lr : s["lrs"]) {
      INFO("epoch " << sched.epoch());
      CHECK(sched.lr() == lr.get<double>());
      sched.Step();
    }
  }
  {
    const nlohmann::json& s = ref["cosine_lr"];
    LrScheduleOptions o;
    o.kind = LrScheduleKind::kCosine;
    o.t_max = s["t_max"].get<int>();
    o.eta_min = s["eta_min"].get<double>();
    LrScheduler sched = LrScheduler::Create(s["base_lr"].get<double>(), o).value();
    REQUIRE(s["lrs"].size() > 2 * static_cast<size_t>(o.t_max));  // past one full period
    for (const nlohmann::json& lr : s["lrs"]) {
      INFO("epoch " << sched.epoch());
      CHECK(sched.lr() == Approx(lr.get<double>()).epsilon(1e-14));
      sched.Step();
    }
  }
  CHECK_FALSE(LrScheduler::Create(0.1, {.kind = LrScheduleKind::kStep, .step_size = 0}).ok());
  CHECK_FALSE(training::ParseLrScheduleKind("linear").ok());
}

}  // namespace
}  // namespace octet

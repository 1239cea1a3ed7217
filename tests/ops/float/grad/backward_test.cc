// Every float backward (ops/float/grad) against central finite differences on small random shapes, odd sizes
// included; inputs of piecewise-linear operators are kept away from their kinks by more than the step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "ops/float/grad/loss.h"
#include "tests/ops/float/float_op_tester.h"
#include "tests/ops/float/grad/gradient_checker.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::CheckGradients;
using testing::GradCase;
using testing::RandomTensor;

// Values at least `gap` away from every point in `kinks`.
Tensor AwayFrom(std::mt19937_64& rng, const Shape& shape, float lo, float hi, std::vector<float> kinks,
                float gap = 0.05f) {
  Tensor t = RandomTensor(rng, shape, lo, hi);
  for (float& v : t.values<float>()) {
    for (float k : kinks) {
      if (std::abs(v - k) < gap) v = k + (v < k ? -gap : gap);
    }
  }
  return t;
}

// Distinct values spaced by `spacing` in random order (max pooling without ties within the step).
Tensor Distinct(std::mt19937_64& rng, const Shape& shape, float spacing = 0.05f) {
  Tensor t = Tensor::Create(DType::kF32, shape).value();
  std::vector<int64_t> order(static_cast<size_t>(t.NumElements()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t i = 0; i < order.size(); ++i) {
    t.data<float>()[i] = (static_cast<float>(order[i]) - static_cast<float>(order.size()) / 2) * spacing;
  }
  return t;
}

Tensor Ints(std::vector<int32_t> v) {
  return Tensor::FromValues<int32_t>(Shape{static_cast<int64_t>(v.size())}, v).value();
}

Tensor Scalar(float v) { return Tensor::FromValues<float>(Shape{}, std::vector<float>{v}).value(); }

TEST_CASE("Conv backward: groups, strides, dilations, pads, 1-D and 2-D", "[grad]") {
  auto rng = testing::MakeRng("grad_conv");
  struct Case {
    int64_t n, c, h, w, oc, kh, kw, group;
    std::vector<int64_t> strides, dilations, pads;
    bool bias;
  };
  const std::vector<Case> cases = {
      {2, 4, 7, 6, 6, 3, 2, 2, {2, 1}, {1, 2}, {1, 0, 0, 1}, true},
      {1, 3, 5, 5, 3, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},   // depthwise
      {3, 5, 4, 3, 2, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false},  // pointwise
      {2, 1, 8, 8, 8, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},   // the digits CNN's first layer
  };
  for (const Case& p : cases) {
    GradCase c;
    c.op = "Conv";
    c.attributes = {{"strides", p.strides}, {"dilations", p.dilations}, {"pads", p.pads}, {"group", p.group}};
    c.inputs = {RandomTensor(rng, Shape{p.n, p.c, p.h, p.w}), RandomTensor(rng, Shape{p.oc, p.c / p.group, p.kh, p.kw})};
    c.check = {true, true, true};
    if (p.bias) c.inputs.push_back(RandomTensor(rng, Shape{p.oc}));
    CHECK(CheckGradients(c, rng) > 0);
  }
  // Random small geometries (odd sizes lean in), from the runner's seed.
  for (int trial = 0; trial < 6; ++trial) {
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int64_t group = pick(1, 3), kh = pick(1, 3), kw = pick(1, 3), sh = pick(1, 2), sw = pick(1, 3);
    const int64_t dh = pick(1, 2), dw = pick(1, 2);
    const int64_t c = group * pick(1, 2), oc = group * pick(1, 2);
    const std::vector<int64_t> pads = {pick(0, kh - 1), pick(0, kw - 1), pick(0, kh - 1), pick(0, kw - 1)};
    const int64_t h = dh * (kh - 1) + pick(1, 5), w = dw * (kw - 1) + pick(1, 5);
    GradCase rc;
    rc.op = "Conv";
    rc.attributes = {{"strides", std::vector<int64_t>{sh, sw}}, {"dilations", std::vector<int64_t>{dh, dw}},
                     {"pads", pads}, {"group", group}};
    rc.inputs = {RandomTensor(rng, Shape{pick(1, 3), c, h, w}), RandomTensor(rng, Shape{oc, c / group, kh, kw}),
                 RandomTensor(rng, Shape{oc})};
    rc.check = {true, true, true};
    INFO("trial " << trial << ": group " << group << " kernel " << kh << "x" << kw << " stride " << sh << "x" << sw
                  << " dilation " << dh << "x" << dw << " input " << h << "x" << w);
    CHECK(CheckGradients(rc, rng) > 0);
  }
  GradCase c1;  // 1-D, stride 2, asymmetric pads, groups
  c1.op = "Conv";
  c1.attributes = {{"strides", std::vector<int64_t>{2}}, {"pads", std::vector<int64_t>{2, 1}}, {"group", 2}};
  c1.inputs = {RandomTensor(rng, Shape{2, 4, 9}), RandomTensor(rng, Shape{4, 2, 3}), RandomTensor(rng, Shape{4})};
  c1.check = {true, true, true};
  CHECK(CheckGradients(c1, rng) > 0);
}

TEST_CASE("Gemm and MatMul backward: transposes, alpha, beta, broadcast C and batches", "[grad]") {
  auto rng = testing::MakeRng("grad_gemm");
  const int64_t m = 3, k = 5, n = 4;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      for (const Shape& cs : {Shape{n}, Shape{m, 1}, Shape{m, n}}) {
        GradCase c;
        c.op = "Gemm";
        c.attributes = {{"transA", ta}, {"transB", tb}, {"alpha", 0.7f}, {"beta", 1.3f}};
        c.inputs = {RandomTensor(rng, ta ? Shape{k, m} : Shape{m, k}), RandomTensor(rng, tb ? Shape{n, k} : Shape{k, n}),
                    RandomTensor(rng, cs)};
        c.check = {true, true, true};
        CHECK(CheckGradients(c, rng) > 0);
      }
    }
  }
  const std::vector<std::pair<Shape, Shape>> matmuls = {
      {Shape{2, 3, 5, 4}, Shape{4, 3}}, {Shape{5}, Shape{3, 5, 2}}, {Shape{2, 1, 3, 4}, Shape{3, 4, 2}},
      {Shape{3, 4}, Shape{4}}, {Shape{7, 2, 20}, Shape{20, 5}}};
  for (const auto& [a, b] : matmuls) {
    GradCase c;
    c.op = "MatMul";
    c.inputs = {RandomTensor(rng, a), RandomTensor(rng, b)};
    c.check = {true, true};
    CHECK(CheckGradients(c, rng) > 0);
  }
}

TEST_CASE("BatchNormalization backward in training and eval mode", "[grad]") {
  auto rng = testing::MakeRng("grad_bn");
  for (bool training : {true, false}) {
    for (const Shape& xs : {Shape{4, 3, 5, 3}, Shape{5, 2}, Shape{3, 4, 7}}) {
      const int64_t ch = xs.dim(1);
      GradCase c;
      c.op = "BatchNormalization";
      c.attributes = {{"epsilon", 1e-5f}, {"momentum", 0.9f}};
      c.inputs = {RandomTensor(rng, xs, -2.0f, 2.0f), RandomTensor(rng, Shape{ch}, 0.5f, 1.5f),
                  RandomTensor(rng, Shape{ch}), RandomTensor(rng, Shape{ch}, -0.5f, 0.5f),
                  RandomTensor(rng, Shape{ch}, 0.5f, 2.0f)};
      c.check = {true, true, true};
      c.training = training;
      c.tolerance = 5e-3;
      CHECK(CheckGradients(c, rng) > 0);
    }
  }
}

TEST_CASE("BatchNormalization training forward updates running statistics as PyTorch", "[grad]") {
  // x per channel: channel 0 = {1, 2, 3, 6}, channel 1 = {0, 0, 4, 4}; momentum 0.1 (ONNX 0.9).
  Tensor x = Tensor::FromValues<float>(Shape{2, 2, 2}, std::vector<float>{1, 2, 0, 0, 3, 6, 4, 4}).value();
  Tensor scale = Tensor::FromValues<float>(Shape{2}, std::vector<float>{1, 2}).value();
  Tensor bias = Tensor::FromValues<float>(Shape{2}, std::vector<float>{0, 1}).value();
  Tensor rm = Tensor::FromValues<float>(Shape{2}, std::vector<float>{0, 1}).value();
  Tensor rv = Tensor::FromValues<float>(Shape{2}, std::vector<float>{1, 1}).value();
  float_ops::BatchNormTrainingArgs args;
  args.epsilon = 0.0f;
  args.momentum = 0.1f;
  Tensor y = float_ops::BatchNormTrainingForward(x, scale, bias, rm, rv, args).value();
  // Channel 0: mean 3, biased var 3.5, unbiased 14/3. Channel 1: mean 2, var 4, unbiased 16/3.
  CHECK(rm.data<float>()[0] == Approx(0.9 * 0 + 0.1 * 3));
  CHECK(rm.data<float>()[1] == Approx(0.9 * 1 + 0.1 * 2));
  CHECK(rv.data<float>()[0] == Approx(0.9 + 0.1 * 14.0 / 3));
  CHECK(rv.data<float>()[1] == Approx(0.9 + 0.1 * 16.0 / 3));
  CHECK(y.data<float>()[0] == Approx((1 - 3) / std::sqrt(3.5)));
  CHECK(y.data<float>()[2] == Approx(2 * (0 - 2) / 2.0 + 1));
  // One value per channel cannot give batch statistics.
  Tensor one = Tensor::Create(DType::kF32, Shape{1, 2}).value();
  CHECK_FALSE(float_ops::BatchNormTrainingForward(one, scale, bias, rm, rv, args).ok());
}

TEST_CASE("Activation and Softmax backward", "[grad]") {
  auto rng = testing::MakeRng("grad_activation");
  const Shape shape{3, 7};
  GradCase relu{"Relu", {}, {testing::RandomTensor(rng, shape)}, {}, {}, {true}};
  relu.inputs[0] = AwayFrom(rng, shape, -1, 1, {0.0f});
  CHECK(CheckGradients(relu, rng) > 0);
  GradCase clip{"Clip", {}, {AwayFrom(rng, shape, -1, 1, {-0.5f, 0.5f}), Scalar(-0.5f), Scalar(0.5f)}, {}, {false, true, true},
                {true, false, false}};
  CHECK(CheckGradients(clip, rng) > 0);
  GradCase clip_min{"Clip", {}, {AwayFrom(rng, shape, -1, 1, {0.0f}), Scalar(0.0f), Tensor()}, {true, true, false},
                    {false, true, false}, {true, false, false}};
  CHECK(CheckGradients(clip_min, rng) > 0);
  GradCase hswish{"HardSwish", {}, {AwayFrom(rng, shape, -5, 5, {-3.0f, 3.0f})}, {}, {}, {true}};
  CHECK(CheckGradients(hswish, rng) > 0);
  for (const char* op : {"Sigmoid", "Tanh"}) {
    GradCase c{op, {}, {RandomTensor(rng, shape, -3, 3)}, {}, {}, {true}};
    CHECK(CheckGradients(c, rng) > 0);
  }
  for (int64_t axis : {-1, 0, 1}) {
    GradCase c{"Softmax", {{"axis", axis}}, {RandomTensor(rng, Shape{3, 5, 2}, -2, 2)}, {}, {}, {true}};
    CHECK(CheckGradients(c, rng) > 0);
  }
}

TEST_CASE("Pooling backward", "[grad]") {
  auto rng = testing::MakeRng("grad_pool");
  using V = std::vector<int64_t>;
  struct Case {
    const char* op;
    Shape x;
    AttributeMap attributes;
  };
  const std::vector<Case> cases = {
      {"MaxPool", Shape{2, 3, 8, 8}, {{"kernel_shape", V{2, 2}}, {"strides", V{2, 2}}}},
      {"MaxPool", Shape{1, 2, 7, 5}, {{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}},
      {"MaxPool", Shape{1, 2, 9, 7}, {{"kernel_shape", V{2, 3}}, {"dilations", V{2, 1}}, {"ceil_mode", 1},
                                      {"strides", V{2, 2}}}},
      {"MaxPool", Shape{2, 2, 9}, {{"kernel_shape", V{3}}, {"strides", V{2}}}},
      {"AveragePool", Shape{2, 3, 7, 6}, {{"kernel_shape", V{3, 2}}, {"strides", V{2, 2}}, {"pads", V{1, 0, 1, 1}}}},
      {"AveragePool", Shape{1, 2, 7, 6}, {{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}},
                                          {"count_include_pad", 1}}},
      {"AveragePool", Shape{1, 2, 7, 7}, {{"kernel_shape", V{2, 2}}, {"strides", V{2, 2}}, {"ceil_mode", 1}}},
      {"GlobalAveragePool", Shape{2, 3, 5, 3}, {}},
  };
  for (const Case& p : cases) {
    GradCase c{p.op, p.attributes, {Distinct(rng, p.x)}, {}, {}, {true}};
    CHECK(CheckGradients(c, rng) > 0);
  }
}

TEST_CASE("Add, Sub, Mul, Div backward with broadcasting", "[grad]") {
  auto rng = testing::MakeRng("grad_binary");
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {Shape{3, 1, 5}, Shape{4, 1}}, {Shape{2, 3}, Shape{2, 3}}, {Shape{5}, Shape{2, 3, 5}}, {Shape{}, Shape{3, 2}}};
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (const auto& [a, b] : shapes) {
      GradCase c{op, {}, {RandomTensor(rng, a), RandomTensor(rng, b, 0.5f, 1.5f)}, {}, {}, {true, true}};
      CHECK(CheckGradients(c, rng) > 0);
    }
  }
}

TEST_CASE("Concat, Flatten and Reshape backward", "[grad]") {
  auto rng = testing::MakeRng("grad_shape");
  GradCase concat{"Concat",
                  {{"axis", 1}},
                  {RandomTensor(rng, Shape{2, 3, 4}), RandomTensor(rng, Shape{2, 1, 4}), RandomTensor(rng, Shape{2, 5, 4})},
                  {},
                  {},
                  {true, true, true}};
  CHECK(CheckGradients(concat, rng) > 0);
  GradCase concat_last{"Concat", {{"axis", -1}}, {RandomTensor(rng, Shape{3, 2}), RandomTensor(rng, Shape{3, 3})}, {}, {},
                       {true, true}};
  CHECK(CheckGradients(concat_last, rng) > 0);
  GradCase flatten{"Flatten", {{"axis", 1}}, {RandomTensor(rng, Shape{2, 3, 2, 2})}, {}, {}, {true}};
  CHECK(CheckGradients(flatten, rng) > 0);
  GradCase reshape{"Reshape", {}, {RandomTensor(rng, Shape{2, 6}), Ints({3, -1})}, {}, {false, true}, {true, false}};
  CHECK(CheckGradients(reshape, rng) > 0);
}

TEST_CASE("Gather backward: scatter-add, repeated and negative indices, every axis", "[grad]") {
  auto rng = testing::MakeRng("grad_gather");
  // Index 1 is read three times (once as -2 of 3), index 0 never: its gradient must stay zero.
  GradCase rows{"Gather", {{"axis", 0}}, {RandomTensor(rng, Shape{3, 4}), Ints({1, 2, -2, 1})}, {}, {}, {true, false}};
  CHECK(CheckGradients(rows, rng) > 0);
  GradCase middle{"Gather", {{"axis", 1}}, {RandomTensor(rng, Shape{2, 5, 3}), Ints({4, 0, 4, -1, 2, 2})}, {}, {},
                  {true, false}};
  CHECK(CheckGradients(middle, rng) > 0);
  GradCase last{"Gather", {{"axis", -1}}, {RandomTensor(rng, Shape{2, 3, 4}), Ints({3, 3})}, {}, {}, {true, false}};
  CHECK(CheckGradients(last, rng) > 0);
  // Indices of rank 2 (an embedding lookup of a [batch, tokens] id matrix).
  GradCase embedding{"Gather", {{"axis", 0}},
                     {RandomTensor(rng, Shape{6, 3}),
                      Tensor::FromValues<int32_t>(Shape{2, 3}, std::vector<int32_t>{5, 0, 5, 1, 1, 3}).value()},
                     {}, {}, {true, false}};
  CHECK(CheckGradients(embedding, rng) > 0);
}

TEST_CASE("LSTM backward through time: forward, reverse, bidirectional", "[grad]") {
  auto rng = testing::MakeRng("grad_lstm");
  const int64_t t = 4, b = 3, in = 5, h = 3;
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    const int64_t d = std::string(direction) == "bidirectional" ? 2 : 1;
    GradCase c;
    c.op = "LSTM";
    c.attributes = {{"hidden_size", h}, {"direction", direction}};
    c.inputs = {RandomTensor(rng, Shape{t, b, in}),
                RandomTensor(rng, Shape{d, 4 * h, in}, -0.6f, 0.6f),
                RandomTensor(rng, Shape{d, 4 * h, h}, -0.6f, 0.6f),
                RandomTensor(rng, Shape{d, 8 * h}, -0.5f, 0.5f),
                Tensor(),
                RandomTensor(rng, Shape{d, b, h}),
                RandomTensor(rng, Shape{d, b, h})};
    c.present = {true, true, true, true, false, true, true};
    c.check = {true, true, true, true, false, true, true};
    c.outputs = 3;
    c.tolerance = 3e-3;
    CHECK(CheckGradients(c, rng) > 0);
  }
}

TEST_CASE("Cross-entropy and MSE losses: values and gradients", "[grad]") {
  auto rng = testing::MakeRng("grad_loss");
  Tensor logits = RandomTensor(rng, Shape{5, 7}, -4, 4);
  std::vector<int64_t> labels = {0, 6, 3, 3, 1};
  auto ce = float_ops::SoftmaxCrossEntropy(logits, labels).value();
  // Reference value in double.
  double expected = 0.0;
  for (int64_t i = 0; i < 5; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < 7; ++j) s += std::exp(static_cast<double>(logits.data<float>()[i * 7 + j]));
    expected += std::log(s) - logits.data<float>()[i * 7 + labels[static_cast<size_t>(i)]];
  }
  CHECK(ce.loss == Approx(expected / 5).epsilon(1e-9));
  // Central differences of the loss itself.
  for (int64_t e = 0; e < logits.NumElements(); ++e) {
    Tensor p = logits.Clone().value(), m = logits.Clone().value();
    p.data<float>()[e] += 1e-2f;
    m.data<float>()[e] -= 1e-2f;
    const double h2 = static_cast<double>(p.data<float>()[e]) - m.data<float>()[e];
    const double numeric = (float_ops::SoftmaxCrossEntropy(p, labels).value().loss -
                            float_ops::SoftmaxCrossEntropy(m, labels).value().loss) / h2;
    CHECK(ce.grad.data<float>()[e] == Approx(numeric).margin(1e-4));
  }
  // Large logits stay finite (the row maximum is subtracted).
  Tensor big = Tensor::FromValues<float>(Shape{1, 3}, std::vector<float>{1000.0f, 0.0f, -1000.0f}).value();
  auto big_ce = float_ops::SoftmaxCrossEntropy(big, std::vector<int64_t>{1}).value();
  CHECK(big_ce.loss == Approx(1000.0));
  CHECK(std::isfinite(big_ce.grad.data<float>()[0]));
  CHECK_FALSE(float_ops::SoftmaxCrossEntropy(logits, std::vector<int64_t>{0, 1, 2, 3, 7}).ok());

  Tensor x = RandomTensor(rng, Shape{3, 4}), target = RandomTensor(rng, Shape{3, 4});
  auto mse = float_ops::MseLoss(x, target).value();
  double sq = 0.0;
  for (int64_t i = 0; i < 12; ++i) {
    const double d = static_cast<double>(x.data<float>()[i]) - target.data<float>()[i];
    sq += d * d;
    CHECK(mse.grad.data<float>()[i] == Approx(2 * d / 12));
  }
  CHECK(mse.loss == Approx(sq / 12));
  CHECK_FALSE(float_ops::MseLoss(x, RandomTensor(rng, Shape{4, 3})).ok());
}

}  // namespace
}  // namespace octet

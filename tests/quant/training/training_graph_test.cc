// TrainingGraph end to end: the whole-graph gradient against finite differences of the loss, a one-layer model's
// loss going down, determinism with a seed, seeded mini-batches, default initialisation, and checkpoints.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "core/builder.h"
#include "io/weights_checkpoint.h"
#include "ops/float/grad/dropout_training.h"
#include "ops/float/grad/loss.h"
#include "quant/training/mini_batches.h"
#include "quant/training/parameter_init.h"
#include "quant/training/train_classifier.h"
#include "quant/training/training_graph.h"
#include "tests/ops/float/float_op_tester.h"
#include "tests/quant/training/gradient_check.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using training::Mode;
using training::TrainingGraph;

const Context& TestContext() {
  static const Context context = Context::ForIsas(DetectedIsas(), 1);
  return context;
}

// Conv-BN-Tanh-AvgPool, a residual Add (a value read twice), Flatten, Linear: a small CNN whose every node has a
// backward, smooth so finite differences of the whole loss are exact to O(step^2) (ReLU and MaxPool kinks are
// checked op by op in tests/ops/float/grad).
Graph TrainingSmallCnn(uint64_t seed) {
  GraphBuilder b("small_cnn", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 2, 6, 6});
  ValueId c = b.Conv2d("conv", x, {.in_channels = 2, .out_channels = 3, .kernel_size = {3, 3}, .padding = {1, 1}});
  ValueId n = b.BatchNorm2d("bn", c, 3);
  ValueId r = b.Tanh("act", n);
  ValueId s = b.Add("skip", r, c);
  ValueId p = b.AvgPool2d("pool", s, {.kernel_size = {2, 2}});
  ValueId f = b.Flatten("flatten", p);
  ValueId y = b.Linear("fc", f, 27, 4);
  b.Output(y);
  return std::move(b).Build().value();
}

double Loss(TrainingGraph& tg, const Tensor& x, const std::vector<int64_t>& labels, Mode mode) {
  const Tensor in[] = {x};
  std::vector<Tensor> out = tg.Forward(in, mode).value();
  return float_ops::SoftmaxCrossEntropy(out[0], labels).value().loss;
}

TEST_CASE("TrainingGraph gradients equal finite differences of the loss", "[train]") {
  auto rng = testing::MakeRng("train_graph_grad");
  Tensor x = testing::RandomTensor(rng, Shape{5, 2, 6, 6});
  const std::vector<int64_t> labels = {0, 3, 1, 2, 3};
  for (Mode mode : {Mode::kEval, Mode::kTraining}) {
    TrainingGraph tg = TrainingGraph::Create(TrainingSmallCnn(7), TestContext()).value();
    REQUIRE(tg.parameters().size() == 6);  // conv w, b; bn scale, bias; fc w, b
    REQUIRE(tg.buffers().size() == 2);
    const Tensor in[] = {x};
    std::vector<Tensor> out = tg.Forward(in, mode).value();
    auto loss = float_ops::SoftmaxCrossEntropy(out[0], labels).value();
    std::vector<Tensor> grads = {loss.grad};
    REQUIRE(tg.Backward(grads).ok());
    INFO("mode " << (mode == Mode::kTraining ? "training" : "eval"));
    int64_t compared = 0;
    for (size_t p = 0; p < tg.parameters().size(); ++p) {
      compared += testing::CheckFiniteDifferences(tg, p, 3, [&] { return Loss(tg, x, labels, mode); });
    }
    CHECK(compared > 20);
  }
}

TEST_CASE("Training-mode forward updates BatchNorm running statistics; eval mode does not", "[train]") {
  auto rng = testing::MakeRng("train_bn_stats");
  TrainingGraph tg = TrainingGraph::Create(TrainingSmallCnn(1), TestContext()).value();
  const Tensor x[] = {testing::RandomTensor(rng, Shape{4, 2, 6, 6}, 1.0f, 3.0f)};
  const Tensor mean = tg.graph().value(tg.buffers()[0]).data;
  REQUIRE(tg.Forward(x, Mode::kEval).ok());
  CHECK(mean.data<float>()[0] == 0.0f);
  REQUIRE(tg.Forward(x, Mode::kTraining).ok());
  CHECK(mean.data<float>()[0] != 0.0f);
}

// Two well separated Gaussian-ish blobs per class, for a one-layer model.
void Blobs(std::mt19937_64& rng, int64_t n, Tensor& x, std::vector<int64_t>& y) {
  x = Tensor::Create(DType::kF32, Shape{n, 4}).value();
  y.clear();
  std::normal_distribution<float> noise(0.0f, 0.5f);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = i % 3;
    for (int64_t j = 0; j < 4; ++j) x.data<float>()[i * 4 + j] = (j == label ? 2.0f : 0.0f) + noise(rng);
    y.push_back(label);
  }
}

Graph OneLayer(uint64_t seed) {
  GraphBuilder b("linear", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 4});
  b.Output(b.Linear("fc", x, 4, 3));
  return std::move(b).Build().value();
}

TEST_CASE("A one-layer model's loss decreases and its accuracy rises", "[train]") {
  auto rng = testing::MakeRng("train_one_layer");
  Tensor x;
  std::vector<int64_t> y;
  Blobs(rng, 90, x, y);
  TrainingGraph tg = TrainingGraph::Create(OneLayer(3), TestContext()).value();
  const double before = Loss(tg, x, y, Mode::kEval);
  training::TrainClassifierOptions o;
  o.epochs = 8;
  o.batch_size = 16;
  o.sgd = {.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-4};
  o.schedule = {.kind = training::LrScheduleKind::kCosine, .t_max = 8};
  int epochs_seen = 0;
  o.on_epoch_end = [&](const training::EpochSummary& s) {
    ++epochs_seen;
    CHECK(s.epoch == epochs_seen);
    return OkStatus();
  };
  auto summaries = training::TrainClassifier(tg, x, y, o).value();
  REQUIRE(summaries.size() == 8);
  const double after = Loss(tg, x, y, Mode::kEval);
  INFO("loss before " << before << ", after " << after);
  CHECK(after < 0.5 * before);
  CHECK(summaries.back().mean_loss < summaries.front().mean_loss);
  CHECK(training::ClassifierAccuracy(tg, x, y).value() > 0.9);
  CHECK(epochs_seen == 8);
  CHECK(summaries[1].lr < summaries[0].lr);  // the cosine schedule moved
}

TEST_CASE("Training is deterministic for a seed and depends on it", "[train]") {
  auto rng = testing::MakeRng("train_determinism");
  Tensor x;
  std::vector<int64_t> y;
  Blobs(rng, 50, x, y);
  auto train = [&](uint64_t seed) {
    TrainingGraph tg = TrainingGraph::Create(OneLayer(5), TestContext()).value();
    training::TrainClassifierOptions o;
    o.epochs = 2;
    o.batch_size = 8;
    o.seed = seed;
    o.sgd = {.lr = 0.05, .momentum = 0.9};
    REQUIRE(training::TrainClassifier(tg, x, y, o).ok());
    std::vector<float> w;
    for (size_t p = 0; p < tg.parameters().size(); ++p) {
      for (float v : tg.parameter(p).values<float>()) w.push_back(v);
    }
    return w;
  };
  const std::vector<float> a = train(11), b = train(11), c = train(12);
  CHECK(a == b);
  CHECK(a != c);
}

TEST_CASE("Mini-batches: a seeded permutation in batches", "[train]") {
  auto batches = training::MiniBatches(10, 4, 42, 0).value();
  REQUIRE(batches.size() == 3);
  CHECK(batches[2].size() == 2);
  std::vector<int64_t> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  std::vector<int64_t> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(all != sorted);  // shuffled (the chance of the identity is 1 / 10!)
  CHECK(training::MiniBatches(10, 4, 42, 0).value() == batches);
  CHECK(training::MiniBatches(10, 4, 42, 1).value() != batches);  // another epoch, another order
  CHECK(training::MiniBatches(10, 4, 42, 0, true, /*drop_last=*/true).value().size() == 2);
  CHECK_FALSE(training::MiniBatches(10, 0, 42, 0).ok());
  Tensor data = Tensor::FromValues<float>(Shape{3, 2}, std::vector<float>{0, 1, 2, 3, 4, 5}).value();
  Tensor rows = training::GatherRows(data, std::vector<int64_t>{2, 0}).value();
  CHECK(std::vector<float>(rows.values<float>().begin(), rows.values<float>().end()) ==
        std::vector<float>{4, 5, 0, 1});
  CHECK_FALSE(training::GatherRows(data, std::vector<int64_t>{3}).ok());
}

TEST_CASE("ResetParameters gives PyTorch's default init bounds", "[train]") {
  Graph g = TrainingSmallCnn(0);
  REQUIRE(training::ResetParameters(g, 9).ok());
  auto max_abs = [&](const char* name) {
    float m = 0.0f;
    for (float v : g.value(g.FindValue(name)).data.values<float>()) m = std::max(m, std::abs(v));
    return m;
  };
  const float conv_bound = 1.0f / std::sqrt(2.0f * 9.0f), fc_bound = 1.0f / std::sqrt(27.0f);
  CHECK(max_abs("conv.weight") <= conv_bound);
  CHECK(max_abs("conv.weight") > 0.8f * conv_bound);
  CHECK(max_abs("conv.bias") <= conv_bound);
  CHECK(max_abs("fc.weight") <= fc_bound);
  CHECK(max_abs("fc.weight") > 0.8f * fc_bound);
  CHECK(max_abs("bn.bias") == 0.0f);
  for (float v : g.value(g.FindValue("bn.weight")).data.values<float>()) CHECK(v == 1.0f);
}

TEST_CASE("Weights checkpoints round-trip and replace a previous one whole", "[train]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / fmt::format("octet_ckpt_{}", ::getpid());
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string dir = (root / "ckpt").string();
  Graph a = TrainingSmallCnn(1), b = TrainingSmallCnn(2);
  REQUIRE(WriteWeightsCheckpoint(b, dir, {{"epoch", "1"}}).ok());
  REQUIRE(WriteWeightsCheckpoint(a, dir, {{"epoch", "2"}}).ok());  // over the first
  int entries = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    ++entries;
    CHECK(e.path().filename() == "ckpt");  // no temporary left behind
  }
  CHECK(entries == 1);
  Graph c = TrainingSmallCnn(3);
  CHECK(LoadWeightsCheckpoint(dir, c).value() == 8);  // 6 parameters and 2 running statistics
  for (const Value& v : a.values()) {
    if (v.kind != ValueKind::kConstant) continue;
    const Tensor& got = c.value(c.FindValue(v.name)).data;
    CHECK(std::equal(v.data.values<float>().begin(), v.data.values<float>().end(), got.values<float>().begin()));
  }
  Graph other = OneLayer(0);
  auto wrong = LoadWeightsCheckpoint(dir, other);
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(wrong.status().ToString(), Catch::Contains("is not a constant"));
  CHECK_FALSE(LoadWeightsCheckpoint((root / "missing").string(), c).ok());
  fs::remove_all(root);
}

// Linear -> Dropout -> Tanh -> Linear: the masks of training mode must be those the backward uses.
Graph DropoutModel(uint64_t seed) {
  GraphBuilder b("dropout", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 6});
  ValueId h = b.Dropout("drop", b.Linear("fc1", x, 6, 8));
  b.Output(b.Linear("fc2", b.Tanh("act", h), 8, 3));
  return std::move(b).Build().value();
}

TEST_CASE("Dropout in training mode: seeded mask, 1/(1-p) scale, the same mask backward", "[train]") {
  auto rng = testing::MakeRng("train_dropout");
  const Tensor x[] = {testing::RandomTensor(rng, Shape{64, 6})};
  const std::vector<int64_t> labels = [] {
    std::vector<int64_t> l;
    for (int i = 0; i < 64; ++i) l.push_back(i % 3);
    return l;
  }();
  TrainingGraph tg = TrainingGraph::Create(DropoutModel(3), TestContext()).value();
  const std::vector<Tensor> eval_a = tg.Forward(x, Mode::kEval).value();
  const std::vector<Tensor> eval_b = tg.Forward(x, Mode::kEval).value();
  tg.set_dropout_seed(11);
  const std::vector<Tensor> train_a = tg.Forward(x, Mode::kTraining).value();
  const std::vector<Tensor> train_b = tg.Forward(x, Mode::kTraining).value();  // the next mask
  tg.set_dropout_seed(11);
  const std::vector<Tensor> train_a_again = tg.Forward(x, Mode::kTraining).value();
  tg.set_dropout_seed(12);
  const std::vector<Tensor> train_other_seed = tg.Forward(x, Mode::kTraining).value();
  auto same = [](const Tensor& a, const Tensor& b) {
    return std::equal(a.values<float>().begin(), a.values<float>().end(), b.values<float>().begin());
  };
  CHECK(same(eval_a[0], eval_b[0]));          // eval: the identity, deterministic
  CHECK_FALSE(same(eval_a[0], train_a[0]));   // training drops
  CHECK_FALSE(same(train_a[0], train_b[0]));  // a new mask per Forward
  CHECK(same(train_a[0], train_a_again[0]));  // reproducible from the seed
  CHECK_FALSE(same(train_a[0], train_other_seed[0]));

  // The dropout node's own values: kept ones scaled by 1 / (1 - 0.5) = 2, about half dropped.
  auto direct = float_ops::DropoutTrainingForward(testing::RandomTensor(rng, Shape{100, 40}, 1.0f, 2.0f), 0.5f, 99);
  REQUIRE(direct.ok());
  int64_t kept = 0;
  for (int64_t i = 0; i < direct->output.NumElements(); ++i) {
    const float y = direct->output.data<float>()[i];
    if (direct->mask.data<uint8_t>()[i] != 0) {
      ++kept;
      CHECK(y >= 2.0f);
    } else {
      CHECK(y == 0.0f);
    }
  }
  CHECK(kept > 1800);  // 4000 draws at p = 0.5: 2000 +- 5 sigma
  CHECK(kept < 2200);
  auto none = float_ops::DropoutTrainingForward(testing::RandomTensor(rng, Shape{10}), 1.0f, 1);
  REQUIRE(none.ok());
  for (float y : none->output.values<float>()) CHECK(y == 0.0f);
  CHECK_FALSE(float_ops::DropoutTrainingForward(testing::RandomTensor(rng, Shape{10}), 1.5f, 1).ok());

  // Gradients through the training-mode mask equal finite differences taken with the same mask.
  tg.set_dropout_seed(5);
  std::vector<Tensor> out = tg.Forward(x, Mode::kTraining).value();
  auto loss = float_ops::SoftmaxCrossEntropy(out[0], labels).value();
  std::vector<Tensor> grads = {loss.grad};
  REQUIRE(tg.Backward(grads).ok());
  auto loss_with_mask = [&] {
    tg.set_dropout_seed(5);
    return Loss(tg, x[0], labels, Mode::kTraining);
  };
  int64_t compared = 0;
  for (size_t p = 0; p < tg.parameters().size(); ++p) {
    compared += testing::CheckFiniteDifferences(tg, p, 3, loss_with_mask);
  }
  CHECK(compared > 20);
}

// Rows read several times (1, 5, 6, 3) sum their gradients; every row is checked against finite differences.
TEST_CASE("Embedding weights train through Gather's backward", "[train]") {
  GraphBuilder b("embedding", 4);
  ValueId ids = b.Input("ids", DType::kS32, Shape{kUnknownDim, 3});
  ValueId e = b.Embedding("embed", ids, 7, 4);
  b.Output(b.Linear("fc", b.Tanh("act", b.Flatten("flatten", e)), 12, 2));
  TrainingGraph tg = TrainingGraph::Create(std::move(b).Build().value(), TestContext()).value();
  const Tensor x[] = {Tensor::FromValues<int32_t>(Shape{4, 3}, std::vector<int32_t>{1, 5, 1, 0, 6, 6, 2, 1, 5, 3, 3, 4})
                          .value()};
  const std::vector<int64_t> labels = {0, 1, 1, 0};
  std::vector<Tensor> out = tg.Forward(x, Mode::kEval).value();
  auto loss = float_ops::SoftmaxCrossEntropy(out[0], labels).value();
  std::vector<Tensor> grads = {loss.grad};
  REQUIRE(tg.Backward(grads).ok());
  size_t embed = tg.parameters().size();
  for (size_t p = 0; p < tg.parameters().size(); ++p) {
    if (tg.parameter(p).shape() == Shape{7, 4}) embed = p;
  }
  REQUIRE(embed < tg.parameters().size());
  const auto eval_loss = [&] { return Loss(tg, x[0], labels, Mode::kEval); };
  CHECK(testing::CheckFiniteDifferences(tg, embed, 1, eval_loss) == 28);  // every element of the 7 x 4 table
}

TEST_CASE("TrainingGraph reports nodes it cannot differentiate", "[train]") {
  GraphBuilder b("gelu", 0);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 4});
  b.Output(b.GELU("act", b.Linear("fc", x, 4, 3)));
  auto tg = TrainingGraph::Create(std::move(b).Build().value(), TestContext());
  REQUIRE_FALSE(tg.ok());
  CHECK_THAT(tg.status().ToString(), Catch::Contains("'act'") && Catch::Contains("no backward"));
}

}  // namespace
}  // namespace octet

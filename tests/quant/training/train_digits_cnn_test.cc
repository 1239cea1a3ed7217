// The acceptance figure of the QAT issue's first point: octet trains the digits CNN (quant/training/digits_models.h:
// Conv-BN-ReLU x2, MaxPool, Flatten, Linear) from PyTorch's default random initialisation on the first 1437 digits
// images, to >= 96% accuracy on the last 360.
//
// The last 360 images come from other writers than the first 1437, so test accuracy depends on the seed. The
// narrower CNN of tests/data/models/digits_cnn.onnx gave 94.7-97.5% over seeds 1-8; this one gives 96.1-97.8%, and
// the hidden test below (octet_tests "[train_seeds]", about a minute) checks every one of those seeds. The
// default test ([train_digits], its own ctest, not run under qemu or the sanitizers) runs one seed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>

#include "core/cpu_features.h"
#include "quant/training/digits_models.h"
#include "quant/training/train_classifier.h"
#include "tests/quant/training/digits_data.h"

namespace octet {
namespace {

struct DigitsRun {
  double initial = 0.0, accuracy = 0.0, seconds = 0.0, last_loss = 0.0;
};

// The demo's recipe (training::DigitsCnnRecipe).
DigitsRun TrainDigits(const testing::DigitsSplit& data, uint64_t seed) {
  const Context context = Context::ForIsas(DetectedIsas(), 1);
  Graph graph = training::BuildDigitsCnn(seed).value();
  training::TrainingGraph model = training::TrainingGraph::Create(std::move(graph), context).value();
  DigitsRun run;
  run.initial = training::ClassifierAccuracy(model, data.test_x, data.test_y).value();
  const training::TrainClassifierOptions o = training::DigitsCnnRecipe(seed);
  const auto start = std::chrono::steady_clock::now();
  auto summaries = training::TrainClassifier(model, data.train_x, data.train_y, o);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(summaries.ok());
  run.last_loss = summaries->back().mean_loss;
  run.accuracy = training::ClassifierAccuracy(model, data.test_x, data.test_y).value();
  return run;
}

TEST_CASE("octet trains the digits CNN from random initialisation to >= 96% test accuracy", "[train_digits]") {
  const testing::DigitsSplit data = testing::LoadDigitsSplit(/*image_shape=*/true);
  REQUIRE(data.train_y.size() == 1437);
  REQUIRE(data.test_y.size() == 360);
  const DigitsRun run = TrainDigits(data, 5);
  WARN("digits CNN, seed 5: test accuracy " << 100.0 * run.accuracy << "% after 15 epochs (" << run.seconds
                                            << " s, 1 thread; initial " << 100.0 * run.initial
                                            << "%, last epoch loss " << run.last_loss << ")");
  CHECK(run.initial < 0.5);
  CHECK(run.accuracy >= 0.96);
}

TEST_CASE("digits CNN test accuracy over seeds 1-8", "[.][train_seeds]") {
  const testing::DigitsSplit data = testing::LoadDigitsSplit(/*image_shape=*/true);
  double sum = 0.0, best = 0.0, worst = 1.0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const DigitsRun run = TrainDigits(data, seed);
    WARN("seed " << seed << ": " << 100.0 * run.accuracy << "%");
    sum += run.accuracy;
    best = std::max(best, run.accuracy);
    worst = std::min(worst, run.accuracy);
  }
  WARN("digits CNN over seeds 1-8: mean " << 100.0 * sum / 8 << "%, min " << 100.0 * worst << "%, max "
                                          << 100.0 * best << "%");
  CHECK(worst >= 0.96);
}

}  // namespace
}  // namespace octet

// Training the ONNX models exported from PyTorch (tests/data/models): the imported digits CNN (Constant + Reshape,
// BatchNormalization with ONNX's momentum, Gemm with transB) trains from random initialisation, and the LSTM
// language model's whole-graph gradients (Gather, Slice, 2 LSTMs, Squeeze, Concat, MatMul, Add) equal finite
// differences of an MSE loss.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>

#include "core/cpu_features.h"
#include "io/npy.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/grad/loss.h"
#include "quant/training/parameter_init.h"
#include "quant/training/train_classifier.h"
#include "quant/training/training_graph.h"
#include "tests/quant/training/digits_data.h"
#include "tests/quant/training/gradient_check.h"
#include "tests/test_util.h"

namespace octet {
namespace {

using testing::kModels;

TEST_CASE("The imported digits CNN trains from random initialisation", "[train]") {
  const Context context = Context::ForIsas(DetectedIsas(), 1);
  Graph graph = ReadOnnxModel(kModels + "digits_cnn.onnx").value();
  REQUIRE(training::ResetParameters(graph, 2).ok());
  training::TrainingGraph model = training::TrainingGraph::Create(std::move(graph), context).value();
  CHECK(model.parameters().size() == 10);  // 2 conv (w, b), 2 bn (scale, bias), fc (w, b)
  CHECK(model.buffers().size() == 4);
  const testing::DigitsSplit data = testing::LoadDigitsSplit(/*image_shape=*/true);
  training::TrainClassifierOptions o;
  o.epochs = 3;
  o.batch_size = 32;
  o.seed = 2;
  o.sgd = {.lr = 0.05, .momentum = 0.9, .weight_decay = 5e-3};
  const auto summaries = training::TrainClassifier(model, data.train_x, data.train_y, o).value();
  const double accuracy = training::ClassifierAccuracy(model, data.test_x, data.test_y).value();
  WARN("imported digits CNN: " << 100.0 * accuracy << "% test accuracy after 3 epochs");
  CHECK(summaries.back().mean_loss < 0.5 * summaries.front().mean_loss);
  CHECK(accuracy > 0.9);
}

TEST_CASE("LSTM language model: whole-graph gradients equal finite differences", "[train]") {
  auto rng = testing::MakeRng("train_lstm_lm");
  const Context context = Context::ForIsas(DetectedIsas(), 1);
  training::TrainingGraph model =
      training::TrainingGraph::Create(ReadOnnxModel(kModels + "lstm_lm.onnx").value(), context).value();
  // The embedding's table (Gather), 2 LSTMs (W, R, B), the decoder's MatMul weight and Add bias.
  REQUIRE(model.parameters().size() == 9);
  const std::vector<Tensor> inputs = {ReadNpy(kModels + "lstm_lm.input0.npy").value(),
                                      ReadNpy(kModels + "lstm_lm.input1.npy").value(),
                                      ReadNpy(kModels + "lstm_lm.input2.npy").value()};
  std::vector<Tensor> outputs = model.Forward(inputs, training::Mode::kTraining).value();
  std::vector<Tensor> targets;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const Tensor& y : outputs) {
    Tensor t = Tensor::Create(DType::kF32, y.shape()).value();
    for (float& v : t.values<float>()) v = normal(rng);
    targets.push_back(std::move(t));
  }
  auto loss_of = [&](const std::vector<Tensor>& ys, std::vector<Tensor>* grads) {
    double total = 0.0;
    for (size_t k = 0; k < ys.size(); ++k) {
      auto l = float_ops::MseLoss(ys[k], targets[k]).value();
      total += l.loss;
      if (grads) grads->push_back(l.grad);
    }
    return total;
  };
  std::vector<Tensor> grads;
  loss_of(outputs, &grads);
  REQUIRE(model.Backward(grads).ok());
  const auto loss = [&] { return loss_of(model.Forward(inputs, training::Mode::kTraining).value(), nullptr); };
  int64_t compared = 0;
  for (size_t p = 0; p < model.parameters().size(); ++p) {
    compared += testing::CheckFiniteDifferences(model, p, 97, loss, {.margin = 2e-5, .epsilon = 5e-3});
  }
  CHECK(compared > 40);
}

}  // namespace
}  // namespace octet

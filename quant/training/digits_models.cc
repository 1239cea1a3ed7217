// The demo's digits models and their training recipes.
#include "quant/training/digits_models.h"

#include <utility>

#include "core/builder.h"
#include "quant/training/parameter_init.h"

namespace octet::training {
namespace {

Result<Graph> Initialised(GraphBuilder&& builder, uint64_t seed) {
  OCTET_ASSIGN_OR_RETURN(Graph graph, std::move(builder).Build());
  OCTET_RETURN_IF_ERROR(ResetParameters(graph, seed));
  return graph;
}

TrainClassifierOptions Recipe(int epochs, double weight_decay, uint64_t seed) {
  TrainClassifierOptions o;
  o.epochs = epochs;
  o.batch_size = 32;
  o.seed = seed;
  o.sgd = {.lr = 0.05, .momentum = 0.9, .weight_decay = weight_decay};
  o.schedule = {.kind = LrScheduleKind::kCosine, .t_max = epochs};
  return o;
}

}  // namespace

Result<Graph> BuildDigitsCnn(uint64_t seed) {
  GraphBuilder b("digits_cnn", seed);
  ValueId h = b.Input("image", DType::kF32, Shape{kUnknownDim, 1, 8, 8});
  h = b.Conv2d("conv1", h, {.in_channels = 1, .out_channels = 16, .kernel_size = {3, 3}, .padding = {1, 1}});
  h = b.ReLU("relu1", b.BatchNorm2d("bn1", h, 16));
  h = b.Conv2d("conv2", h, {.in_channels = 16, .out_channels = 32, .kernel_size = {3, 3}, .padding = {1, 1}});
  h = b.MaxPool2d("pool", b.ReLU("relu2", b.BatchNorm2d("bn2", h, 32)), {.kernel_size = {2, 2}});
  b.Output(b.Linear("fc", b.Flatten("flatten", h), 32 * 4 * 4, 10));
  return Initialised(std::move(b), seed);
}

Result<Graph> BuildDigitsMlp(uint64_t seed) {
  GraphBuilder b("digits_mlp", seed);
  ValueId h = b.Input("image", DType::kF32, Shape{kUnknownDim, 64});
  h = b.ReLU("relu1", b.Linear("fc1", h, 64, 64));
  b.Output(b.Linear("fc2", h, 64, 10));
  return Initialised(std::move(b), seed);
}

TrainClassifierOptions DigitsCnnRecipe(uint64_t seed) { return Recipe(15, 1e-2, seed); }
TrainClassifierOptions DigitsMlpRecipe(uint64_t seed) { return Recipe(30, 1e-3, seed); }

}  // namespace octet::training

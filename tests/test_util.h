// Shared test helpers: seeded random generators, the ISAs a test can run, visible skips, running a graph, and reading
// the test models' data files.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.h"
#include "core/cpu_features.h"
#include "core/graph.h"
#include "core/isa.h"
#include "core/op_registry.h"
#include "core/tensor.h"

namespace octet::testing {

// Defined once here rather than in each test file, so that the test files can share a unity translation unit.
inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
// The ONNX test models (tests/data/models/), with the trailing slash.
inline const std::string kModels = OCTET_TEST_DATA_DIR "/models/";

// The runner's seed (printed at start) mixed with `salt`, so each test has its own reproducible stream.
std::mt19937_64 MakeRng(std::string_view salt);

// Records a variant the machine cannot run; main() lists them at the end. Also WARNs inside the current test.
void Skip(const std::string& what);
std::vector<std::string> SkippedVariants();

// A context enabling exactly `isa` (and scalar), with `threads` threads, ignoring OCTET_ISA.
Context ContextFor(Isa isa, int threads = 1);
// The scalar kernels on one thread: the reference results, the same on every machine.
const Context& ScalarContext();

// True if `isa` can run here (and counts one kernel case for it); otherwise records a skip for `what` and returns
// false.
bool CanRun(Isa isa, std::string_view what);
// Kernel cases counted by CanRun, per ISA (index: the Isa's value).
std::vector<int64_t> IsaCaseCounts();

// Sizes leaning small and to tile edges: TFLite's ExponentialRandomPositiveInt idea.
size_t RandomSize(std::mt19937_64& rng, size_t max);

// A float tensor of `shape` with values uniform in [lo, hi).
Tensor RandomTensor(std::mt19937_64& rng, const Shape& shape, float lo = -1.0f, float hi = 1.0f);

// SQNR of `test` against `reference` in dB: 10 log10(sum reference^2 / sum (reference - test)^2); 1e9 when they are
// equal. Both float tensors of the same size.
double TensorSqnrDb(const Tensor& reference, const Tensor& test);

// Compiles `graph` with `registry` on `context`, runs it on `x` (its one input) and returns its first output;
// a failure to compile or run fails the test with octet's message.
Tensor RunFirstOutput(const Graph& graph, const Context& context, const OpRegistry& registry, const Tensor& x);

// Compiles `graph` with `registry` on `context` for the shapes of `inputs` (one per graph input, in order), runs it on
// them and returns every output; a failure to compile or run fails the test with octet's message.
std::vector<Tensor> RunWithInputShapes(const Graph& graph, const Context& context, const OpRegistry& registry,
                                       const std::vector<Tensor>& inputs);

// PREFIX.KIND0.npy, PREFIX.KIND1.npy, ... up to the first missing one (the test models' numbered inputs and
// outputs: KIND "input" or "output").
std::vector<Tensor> ReadNumberedNpy(const std::string& prefix, const std::string& kind);

// The digits images of `file` in tests/data/models ([N, 64]) as the MLP's input, or with `cnn` as the CNN's [N, 1, 8,
// 8].
Tensor DigitsImages(const std::string& file, bool cnn);

// Percent of the rows of f32 logits [N, C] whose top-1 class (training::CountTop1) is their label: 100 * right / N.
// `labels` is s32 [N] (the digits files) or one int64 per row.
double Top1Percent(const Tensor& logits, std::span<const int64_t> labels);
double Top1Percent(const Tensor& logits, const Tensor& labels);

// `count` batches of `shape` with N(0, 1) values from std::mt19937(seed), for calibration.
std::vector<std::vector<Tensor>> NormalBatches(const Shape& shape, int count, uint32_t seed);

// Every ISA compiled into this build (whether it can run or not), scalar first.
std::vector<Isa> CompiledIsaList();

}  // namespace octet::testing

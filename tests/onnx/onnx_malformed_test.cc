// The malformed-model corpus (tests/data/models/make_malformed.py): each file fails with the error that names its
// problem, at import or at compile, and nothing crashes. Also the importer's handling of bytes built in the test.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "core/executor.h"
#include "io/file_util.h"
#include "io/onnx/onnx_importer.h"
#include "ops/float/registry.h"
#include "tests/test_util.h"

namespace octet {
namespace {

const std::string kCorpus = std::string(OCTET_TEST_DATA_DIR) + "/models/malformed/";

// Import, then compile with the declared input shapes, then run on zeros: the first error, or ok.
Status ImportCompileRun(const std::string& path) {
  OCTET_ASSIGN_OR_RETURN(Graph g, ReadOnnxModel(path));
  static const OpRegistry registry = FloatOpRegistry();
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  OCTET_ASSIGN_OR_RETURN(Executor exec, Executor::Compile(g, context, registry));
  std::vector<Tensor> inputs;
  for (ValueId id : g.inputs()) {
    OCTET_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(exec.value_dtype(id), exec.value_shape(id)));
    inputs.push_back(std::move(t));
  }
  return exec.Run(inputs).status();
}

struct Expectation {
  const char* file;
  StatusCode code;
  std::vector<const char*> contains;  // substrings of the message
};

TEST_CASE("Every malformed model fails with an error naming its problem", "[onnx]") {
  // The valid models the others vary.
  REQUIRE(ImportCompileRun(kCorpus + "base.onnx").ok());
  REQUIRE(ImportCompileRun(kCorpus + "conv_valid.onnx").ok());
  REQUIRE(ImportCompileRun(kCorpus + "double_initializer.onnx").ok());  // DOUBLE is read as f32
  const std::vector<Expectation> cases = {
      {"truncated.onnx", StatusCode::kDataLoss, {"not a valid ONNX ModelProto"}},
      {"empty.onnx", StatusCode::kUnimplemented, {"IR version 0"}},
      {"not_onnx.onnx", StatusCode::kDataLoss, {"not a valid ONNX ModelProto"}},
      {"raw_data_short.onnx", StatusCode::kInvalidArgument,
       {"initializer: tensor 'fc.weight': raw_data has 44 bytes, dims [3, 4] of FLOAT need 48"}},
      {"raw_data_long.onnx", StatusCode::kInvalidArgument, {"tensor 'fc.bias': raw_data has 16 bytes"}},
      {"negative_dim.onnx", StatusCode::kInvalidArgument, {"tensor 'fc.bias'", "dimension 0 must be >= 0, got -3"}},
      {"huge_dims.onnx", StatusCode::kOutOfRange, {"tensor 'fc.weight'", "more than 2^48 elements"}},
      {"large_dims_little_data.onnx", StatusCode::kInvalidArgument,
       {"tensor 'fc.weight': raw_data has 48 bytes, dims [131072, 131072] of FLOAT need 68719476736"}},
      {"large_typed_little_data.onnx", StatusCode::kInvalidArgument,
       {"tensor 'fc.bias'", "float_data has 3 values, dims [17179869184] need 17179869184"}},
      {"float_data_count.onnx", StatusCode::kInvalidArgument, {"float_data has 2 values, dims [3] need 3"}},
      {"two_data_sources.onnx", StatusCode::kInvalidArgument, {"more than one of raw_data"}},
      {"input_negative_dim.onnx", StatusCode::kInvalidArgument, {"graph input 'x' has dimension -4"}},
      {"external_escape.onnx", StatusCode::kInvalidArgument, {"'../base.onnx' leaves the model's folder"}},
      {"external_absolute.onnx", StatusCode::kInvalidArgument, {"'/etc/hostname' is absolute"}},
      {"external_missing.onnx", StatusCode::kNotFound, {"'no_such_file.bin' cannot be opened"}},
      {"cycle.onnx", StatusCode::kInvalidArgument, {"cycle", "'fc'", "'relu'"}},
      {"missing_input.onnx", StatusCode::kInvalidArgument, {"node 'relu' (Relu) input 0 'nowhere' is not defined"}},
      {"undefined_output.onnx", StatusCode::kInvalidArgument, {"graph output 'ghost' is not defined"}},
      {"duplicate_value.onnx", StatusCode::kInvalidArgument,
       {"value 'h' is defined twice (again as an output of node 'relu')"}},
      {"duplicate_node_name.onnx", StatusCode::kInvalidArgument, {"two nodes are named 'fc'"}},
      {"unsupported_ops.onnx", StatusCode::kUnimplemented,
       {"3 unsupported node(s): 'relu' (Frobnicate), 'nms' (NonMaxSuppression), 'tail' (com.example.Relu)"}},
      {"subgraph_if.onnx", StatusCode::kInvalidArgument, {"node 'branch' (If)", "input 0 (cond) must have one element"}},
      {"attribute_wrong_field.onnx", StatusCode::kInvalidArgument,
       {"node 'fc' (Gemm): attribute 'transB' is declared INT but holds a value of another kind"}},
      {"attribute_duplicate.onnx", StatusCode::kInvalidArgument,
       {"node 'softmax' (Softmax) has two attributes named 'axis'"}},
      {"attribute_wrong_type.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'softmax' (Softmax): attribute 'axis' must be int, got float"}},
      {"bad_axis_softmax.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'softmax' (Softmax): axis must be in [-2, 2), got 4"}},
      {"bad_axis_concat.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'concat' (Concat): axis must be in [-2, 2), got -3"}},
      {"gemm_shape_mismatch.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'fc' (Gemm): inner dimensions differ"}},
      {"reshape_mismatch.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'reshape' (Reshape): cannot reshape [1, 3]"}},
      {"gather_out_of_range.onnx", StatusCode::kOutOfRange,
       {"failed to fold constant node 'gather' (Gather): index 7"}},
      {"bad_axis_flatten.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'flatten' (Flatten): axis must be in [-2, 2], got 3"}},
      {"gemm_bias_broadcast.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'fc' (Gemm): input C (bias) [2] does not broadcast to the output [1, 3]"}},
      {"transpose_bad_perm.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'transpose' (Transpose): perm [1, 1] is not a permutation of 0..1"}},
      {"split_sizes_sum.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'split' (Split): split sizes sum to 2, axis 1 has 3"}},
      {"conv_negative_pads.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'conv' (Conv): pads must be >= 0, got [-1, 0, 0, 0]"}},
      {"conv_pads_length.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'conv' (Conv): pads must have 4 values, got 2"}},
      {"conv_stride_zero.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'conv' (Conv): strides must be positive, got [0, 1]"}},
      {"conv_dilation_zero.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'conv' (Conv): dilations must be positive, got [1, 0]"}},
      {"conv_kernel_shape_mismatch.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'conv' (Conv): kernel_shape [2, 2] does not match the weight's spatial dims [3, 3]"}},
      {"conv_float_strides.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'conv' (Conv): attribute 'strides' must be ints, got floats"}},
      {"conv_group_not_dividing.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'conv' (Conv): group 3 must be positive and divide the input channels 2"}},
      {"conv_channel_mismatch.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'conv' (Conv): W [4, 3, 3, 3] expects 3 input channels (group 1), X [1, 2, 5, 5] "
        "has 2"}},
      {"conv_missing_weight.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'conv' (Conv): input W (the weight) is missing"}},
      {"maxpool_no_kernel_shape.onnx", StatusCode::kInvalidArgument,
       {"failed to compile node 'pool' (MaxPool): required attribute 'kernel_shape' is missing"}},
      {"training_domain.onnx", StatusCode::kUnimplemented,
       {"1 unsupported node(s): 'Adagrad_0' (ai.onnx.preview.training.Adagrad) (the model imports no opset of the "
        "default ONNX domain, only ai.onnx.preview.training 1; octet runs only default-domain operators)"}},
      {"opset_too_old.onnx", StatusCode::kUnimplemented,
       {"node 'fc' (Gemm) at opset 5: Gemm-1 is an older form than Gemm-7, the one octet reads from opset 7 on"}},
      {"opset_too_new.onnx", StatusCode::kUnimplemented, {"opset 22 is not supported (octet reads opsets 7 to 21"}},
      {"ir_version_2.onnx", StatusCode::kUnimplemented, {"IR version 2 is not supported"}},
      {"no_graph.onnx", StatusCode::kInvalidArgument, {"the model has no graph"}},
  };
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) files += entry.path().extension() == ".onnx";
  CHECK(files == cases.size() + 3);  // every file in the corpus has an expectation (plus the three valid ones)
  for (const Expectation& e : cases) {
    const std::string path = kCorpus + e.file;
    const Status st = ImportCompileRun(path);
    INFO(e.file << ": " << st.ToString());
    REQUIRE_FALSE(st.ok());
    CHECK(st.code() == e.code);
    for (const char* s : e.contains) CHECK_THAT(st.message(), Catch::Contains(s));
    // Import errors name the file; compile errors name the node.
    CHECK_THAT(st.message(), Catch::Contains(e.file) || Catch::Contains("node '"));
  }
}

TEST_CASE("Every truncation of a valid model fails cleanly", "[onnx]") {
  const std::string bytes = ReadFile(kCorpus + "base.onnx").value();
  int failures = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto g = ImportOnnxModel(std::as_bytes(std::span<const char>(bytes.data(), n)), "cut");
    failures += g.ok() ? 0 : 1;
  }
  // A prefix can still parse as a smaller valid message, but never as the whole model.
  CHECK(failures >= static_cast<int>(bytes.size()) * 9 / 10);
  auto whole = ImportOnnxModel(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), "whole");
  CHECK(whole.ok());
}

TEST_CASE("A single byte flipped anywhere never crashes the importer or compiler", "[onnx]") {
  const std::string bytes = ReadFile(kCorpus + "base.onnx").value();
  auto rng = testing::MakeRng("onnx-flip");
  static const OpRegistry registry = FloatOpRegistry();
  const Context context = Context::ForIsas(IsaSet::Of({Isa::kScalar}));
  for (int iter = 0; iter < 300; ++iter) {
    std::string mutated = bytes;
    mutated[rng() % mutated.size()] = static_cast<char>(rng());
    auto g = ImportOnnxModel(std::as_bytes(std::span<const char>(mutated.data(), mutated.size())), "flip");
    if (!g.ok()) continue;
    CompileOptions options;
    options.max_tensor_elements = 1 << 20;
    auto exec = Executor::Compile(*g, context, registry, options);
    (void)exec;
  }
  SUCCEED("no crash");
}

}  // namespace
}  // namespace octet

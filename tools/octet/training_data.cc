// Training data for `octet train` and `octet qat`.
#include "tools/octet/training_data.h"

#include "tools/octet/model_command.h"

namespace octet::cli {

Result<std::vector<int64_t>> ReadLabels(const std::string& path) {
  OCTET_ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(path));
  if (t.shape().rank() != 1) return InvalidArgument("failed to read labels '{}': must be [N], got {}", path, t.shape());
  std::vector<int64_t> out;
  switch (t.dtype()) {
    case DType::kS32:
      for (int32_t v : t.values<int32_t>()) out.push_back(v);
      break;
    case DType::kU8:
      for (uint8_t v : t.values<uint8_t>()) out.push_back(v);
      break;
    case DType::kS8:
      for (int8_t v : t.values<int8_t>()) out.push_back(v);
      break;
    default:
      return InvalidArgument("failed to read labels '{}': must be integers, got {}", path, DTypeName(t.dtype()));
  }
  return out;
}

Result<Tensor> ReadData(const std::string& path, const Graph& graph, const std::string& command) {
  OCTET_ASSIGN_OR_RETURN(Tensor x, ReadTensorFile(path));
  if (x.dtype() != DType::kF32 || x.shape().rank() < 1) {
    return InvalidArgument("failed to read data '{}': must be f32 [N, ...], got {} {}", path, DTypeName(x.dtype()),
                           x.shape());
  }
  if (graph.inputs().size() != 1) {
    return InvalidArgument("{} needs a model with one input, '{}' has {}", command, graph.name(),
                           graph.inputs().size());
  }
  const std::optional<Shape>& declared = graph.value(graph.inputs()[0]).shape;
  if (!declared.has_value() || declared->rank() < 1) return x;
  std::vector<int64_t> dims = declared->dims();
  dims[0] = x.shape().dim(0);
  for (size_t d = 1; d < dims.size(); ++d) {
    if (dims[d] == kUnknownDim) return x;
  }
  if (Shape(dims) == x.shape()) return x;
  const Shape target(dims);
  if (target.NumElements() != x.NumElements()) {
    return InvalidArgument("failed to read data '{}': {} does not fit the model input {} ({} per sample)", path,
                           x.shape(), *declared, target.Product(1, target.rank()));
  }
  return x.Reshaped(target);
}

Result<TrainingData> ReadTrainingData(const std::string& data, const std::string& labels, const std::string& test_data,
                                      const std::string& test_labels, const Graph& graph, const std::string& command) {
  TrainingData d;
  OCTET_ASSIGN_OR_RETURN(d.x, ReadData(data, graph, command));
  OCTET_ASSIGN_OR_RETURN(d.y, ReadLabels(labels));
  if (!test_data.empty()) {
    OCTET_ASSIGN_OR_RETURN(d.test_x, ReadData(test_data, graph, command));
    OCTET_ASSIGN_OR_RETURN(d.test_y, ReadLabels(test_labels));
  }
  return d;
}

}  // namespace octet::cli

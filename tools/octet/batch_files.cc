// Batches from NAME=FILE.npy options (see batch_files.h).
#include "tools/octet/batch_files.h"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "quant/calibrate.h"
#include "tools/octet/command.h"
#include "tools/octet/model_command.h"

namespace octet::cli {

Result<std::vector<std::vector<Tensor>>> BatchesFromFiles(const std::vector<std::string>& specs, const Graph& graph,
                                                          const std::string& model, int64_t batch_size,
                                                          const BatchFilesUse& use) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : specs) {
    OCTET_ASSIGN_OR_RETURN(auto kv, SplitAssignment(spec, use.option));
    if (!files.emplace(kv.first, kv.second).second) {
      return InvalidArgument("{} names '{}' twice", use.option, kv.first);
    }
  }
  std::vector<std::vector<Tensor>> per_input;
  for (ValueId id : graph.inputs()) {
    const std::string& name = graph.value(id).name;
    auto it = files.find(name);
    if (it == files.end()) {
      return InvalidArgument("{} for input '{}' ({} {}=FILE.npy)", use.purpose, name, use.option, name);
    }
    OCTET_ASSIGN_OR_RETURN(Tensor samples, ReadTensorFile(it->second));
    auto batches = SplitBatches(samples, batch_size);
    if (!batches.ok()) return batches.status().WithContext(fmt::format("{} file '{}'", use.option, it->second));
    per_input.push_back(std::move(*batches));
    files.erase(it);
  }
  if (!files.empty()) {
    return InvalidArgument("{} names '{}', which is not an input of '{}'", use.option, files.begin()->first, model);
  }
  std::vector<std::vector<Tensor>> batches(per_input.empty() ? 0 : per_input[0].size());
  for (size_t i = 0; i < per_input.size(); ++i) {
    if (per_input[i].size() != batches.size()) {
      return InvalidArgument("the {} files hold different numbers of samples ({} batches for input '{}', {} for '{}')",
                             use.option, per_input[i].size(), graph.value(graph.inputs()[i]).name, batches.size(),
                             graph.value(graph.inputs()[0]).name);
    }
    for (size_t b = 0; b < batches.size(); ++b) batches[b].push_back(std::move(per_input[i][b]));
  }
  return batches;
}

}  // namespace octet::cli

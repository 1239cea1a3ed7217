// Symbolic shapes by probing: how `octet inspect` shows "[batch, 10]" without a symbolic shape inference.
//
// Why probing: every operator's Prepare infers concrete int64 shapes (core/shape.h), and a second, symbolic copy of
// ~100 shape functions would drift from the real ones. Instead the graph is compiled with every dynamic dim = 1 (the
// base), once more per symbol with that symbol = kProbe (the others 1), and once with all of them = kProbe. A dim
// that is c in the base is printed as:
//  - c, when no compile changes it;
//  - c*s1*...*sk (c omitted when 1), when it changes exactly under symbols s1..sk, to c*kProbe under each alone and
//    to c*kProbe^k under all: the shape functions pass such dims through (elementwise ops, matmul rows, conv batch,
//    Reshape with 0 or -1, Flatten, Concat on another axis), and a product of symbols with a factor is what they
//    produce;
//  - "?", otherwise (a dim that depends on an unnamed input dim, a strided conv over a dynamic height, a sum).
// All unnamed dims are one symbol "?": they are usually the same batch (an LSTM's tokens and its initial states),
// which must agree for the model to compile. A model that compiles with 1 but not with kProbe gets the base shapes
// and a note, never a wrong symbol.
#include "tools/octet/symbolic_shapes.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace octet::cli {
namespace {

// Prime, so that a product or a pass-through is unlikely to meet it by chance; small, so compiles stay cheap.
constexpr int64_t kProbe = 7;
// Beyond this many symbols, no probing (kProbe^k must stay far from overflow; such models are rare).
constexpr size_t kMaxSymbols = 8;
// The label of an unnamed or unexpressible dim (a std::string: assigning the literal trips g++-12's -Wrestrict).
const std::string kUnknown = "?";

// A dim_param as printed: printable ASCII, at most 64 characters, never empty.
std::string PrintableSymbol(const std::string& name) {
  std::string s;
  for (char c : name.substr(0, 64)) s += (c > ' ' && c < 127 && c != ',') ? c : '_';
  return s.empty() ? "?" : s;
}

// The shape of input `v` as given (or declared when not given).
Shape GivenShape(const Value& v, const CompileOptions& given) {
  for (const auto& [name, shape] : given.input_shapes) {
    if (name == v.name) return shape;
  }
  return v.shape ? *v.shape : Shape();
}

}  // namespace

std::vector<DynamicDim> FindDynamicDims(const Graph& graph, const CompileOptions& given) {
  std::vector<DynamicDim> dims;
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    const Shape shape = GivenShape(v, given);
    for (int d = 0; d < shape.rank(); ++d) {
      if (shape.dim(d) != kUnknownDim) continue;
      const size_t k = static_cast<size_t>(d);
      const bool named = k < v.dim_names.size() && !v.dim_names[k].empty();
      dims.push_back(DynamicDim{v.name, d, named ? PrintableSymbol(v.dim_names[k]) : "?"});
    }
  }
  return dims;
}

CompileOptions BindDynamicDims(const Graph& graph, const CompileOptions& given,
                               const std::function<int64_t(const DynamicDim&)>& value) {
  CompileOptions options = given;
  std::vector<DynamicDim> dynamic = FindDynamicDims(graph, given);
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    std::vector<int64_t> dims = GivenShape(v, given).dims();
    bool bound = false;
    for (const DynamicDim& d : dynamic) {
      if (d.input != v.name) continue;
      dims[static_cast<size_t>(d.dim)] = value(d);
      bound = true;
    }
    if (!bound) continue;
    // An input given with unknown dims cannot be (ParseDims refuses -1), so this adds, never duplicates.
    options.input_shapes.emplace_back(v.name, Shape(std::move(dims)));
  }
  return options;
}

std::string InputShapeArgument(const Graph& graph, const std::string& input, const CompileOptions& given,
                               const std::function<int64_t(const DynamicDim&)>& value) {
  const CompileOptions bound = BindDynamicDims(graph, given, value);
  for (const auto& [name, shape] : bound.input_shapes) {
    if (name == input) return fmt::format("{}={}", input, fmt::join(shape.dims(), ","));
  }
  return input;
}

std::string FormatDims(const std::vector<std::string>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

SymbolicShapes InferSymbolicShapes(const Graph& graph, const Context& context, const OpRegistry& registry,
                                   const CompileOptions& given) {
  SymbolicShapes result;
  const std::vector<DynamicDim> dynamic = FindDynamicDims(graph, given);
  for (const DynamicDim& d : dynamic) {
    if (std::find(result.symbols.begin(), result.symbols.end(), d.symbol) == result.symbols.end()) {
      result.symbols.push_back(d.symbol);
    }
  }
  auto compile = [&](const std::function<int64_t(const std::string&)>& value_of) {
    return Executor::Compile(graph, context, registry,
                             BindDynamicDims(graph, given, [&](const DynamicDim& d) { return value_of(d.symbol); }));
  };
  result.exec = compile([](const std::string&) { return int64_t{1}; });
  if (!result.exec.ok()) return result;
  const Executor& base = *result.exec;
  const size_t num_values = static_cast<size_t>(graph.num_values());
  result.dims.resize(num_values);
  for (size_t id = 0; id < num_values; ++id) {
    for (int64_t dim : base.value_shape(static_cast<ValueId>(id)).dims()) {
      result.dims[id].push_back(fmt::format("{}", dim));
    }
  }
  if (result.symbols.empty()) return result;
  const std::string assumed = fmt::format("{} = 1", fmt::join(result.symbols, " = 1, "));
  if (result.symbols.size() > kMaxSymbols) {
    result.note = fmt::format("dims shown with {}: over {} dynamic dims are not told apart", assumed, kMaxSymbols);
    return result;
  }

  std::vector<Executor> single;  // per symbol: that symbol = kProbe, the others 1
  for (const std::string& s : result.symbols) {
    Result<Executor> e = compile([&](const std::string& t) { return t == s ? kProbe : int64_t{1}; });
    if (!e.ok()) {
      result.note = fmt::format("dims shown with {}: with {} = {} the model does not compile ({})", assumed, s, kProbe,
                                e.status().message());
      return result;
    }
    single.push_back(std::move(*e));
  }
  Result<Executor> all = compile([](const std::string&) { return kProbe; });
  if (!all.ok()) {
    result.note = fmt::format("dims shown with {}: with every dynamic dim = {} the model does not compile ({})",
                              assumed, kProbe, all.status().message());
    return result;
  }

  for (size_t id = 0; id < num_values; ++id) {
    const ValueId vid = static_cast<ValueId>(id);
    const Shape& shape0 = base.value_shape(vid);
    bool same_rank = all->value_shape(vid).rank() == shape0.rank();
    for (const Executor& e : single) same_rank = same_rank && e.value_shape(vid).rank() == shape0.rank();
    for (int d = 0; d < shape0.rank(); ++d) {
      std::string& label = result.dims[id][static_cast<size_t>(d)];
      if (!same_rank) {
        label = kUnknown;
        continue;
      }
      const int64_t c = shape0.dim(d);
      std::vector<std::string> deps;
      bool product = c > 0;
      for (size_t s = 0; s < single.size(); ++s) {
        const int64_t v = single[s].value_shape(vid).dim(d);
        if (v == c) continue;
        deps.push_back(result.symbols[s]);
        product = product && v / kProbe == c && v % kProbe == 0;
      }
      int64_t power = 1;
      for (size_t k = 0; k < deps.size(); ++k) power *= kProbe;
      const int64_t va = all->value_shape(vid).dim(d);
      product = product && va % power == 0 && va / power == c;
      if (deps.empty() && va == c) continue;  // a number
      const bool unnamed = std::find(deps.begin(), deps.end(), "?") != deps.end();
      if (!product || deps.empty() || unnamed) {
        label = kUnknown;
      } else {
        label = c == 1 ? fmt::format("{}", fmt::join(deps, "*")) : fmt::format("{}*{}", c, fmt::join(deps, "*"));
      }
    }
  }
  return result;
}

}  // namespace octet::cli

// Einsum by one walk over every letter's range: simple and exact for the shapes
// models use it on.
#include "ops/float/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "core/threading.h"
#include "ops/float/op_util.h"
#include "ops/float/registry.h"

namespace octet::float_ops {
namespace {

// Splits "a,b->c" into operand terms and the output term (implicit when there
// is no "->").
struct Equation {
  std::vector<std::string> inputs;
  std::string output;
  bool explicit_output = false;
};

Result<Equation> ParseEquation(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  Equation eq;
  const size_t arrow = text.find("->");
  std::string lhs = text.substr(0, arrow);
  if (arrow != std::string::npos) {
    eq.explicit_output = true;
    eq.output = text.substr(arrow + 2);
  }
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    eq.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return eq;
}

// Replaces "..." in `term` by the letters '0'.. for `count` dims (right-aligned
// broadcast dims).
Result<std::string> ExpandEllipsis(const std::string& term, int rank, int& ellipsis_rank, bool is_output) {
  const size_t at = term.find("...");
  std::string letters = term;
  if (at == std::string::npos) {
    for (char c : term) {
      if (!std::isalpha(static_cast<unsigned char>(c))) return InvalidArgument("term '{}' has character '{}'", term, c);
    }
    if (!is_output && static_cast<int>(term.size()) != rank) {
      return InvalidArgument("term '{}' names {} dims of an input of rank {}", term, term.size(), rank);
    }
    return letters;
  }
  const int named = static_cast<int>(term.size()) - 3;
  const int dims = is_output ? ellipsis_rank : rank - named;
  if (dims < 0) return InvalidArgument("term '{}' names more dims than its input's rank {}", term, rank);
  if (!is_output) ellipsis_rank = std::max(ellipsis_rank, dims);
  std::string fill;
  for (int k = 0; k < dims; ++k) fill.push_back(static_cast<char>('0' + (ellipsis_rank - dims) + k));
  letters = term.substr(0, at) + fill + term.substr(at + 3);
  return letters;
}

Result<PreparedOp> PrepareEinsum(const OpPrepareArgs& args) {
  OCTET_RETURN_IF_ERROR(CheckArity(args, 1, 8));
  OCTET_ASSIGN_OR_RETURN(std::string text, args.node.attributes.GetString("equation"));
  OCTET_ASSIGN_OR_RETURN(Equation eq, ParseEquation(text));
  if (eq.inputs.size() != args.inputs.size()) {
    return InvalidArgument("equation '{}' has {} terms for {} inputs", text, eq.inputs.size(), args.inputs.size());
  }
  const DType dtype = args.inputs[0].dtype;
  if (dtype != DType::kF32 && dtype != DType::kS32) return InvalidArgument("Einsum reads f32 or s32, got {}", dtype);
  // Ellipsis dims: the widest operand's count; first pass sizes it.
  int ellipsis_rank = 0;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    OCTET_RETURN_IF_ERROR(CheckInput(args, i, dtype));
    OCTET_RETURN_IF_ERROR(ExpandEllipsis(eq.inputs[i], args.inputs[i].shape.rank(), ellipsis_rank, false).status());
  }
  std::vector<std::string> terms;
  std::map<char, int64_t> sizes;  // letter -> dim; a broadcast (size 1) ellipsis
                                  // dim yields to a larger one
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    const Shape& s = args.inputs[i].shape;
    OCTET_ASSIGN_OR_RETURN(std::string term, ExpandEllipsis(eq.inputs[i], s.rank(), ellipsis_rank, false));
    for (int d = 0; d < s.rank(); ++d) {
      const char c = term[static_cast<size_t>(d)];
      auto [it, fresh] = sizes.emplace(c, s.dim(d));
      if (fresh || it->second == s.dim(d)) continue;
      if (std::isdigit(static_cast<unsigned char>(c)) && (it->second == 1 || s.dim(d) == 1)) {
        it->second = std::max(it->second, s.dim(d));
        continue;
      }
      return InvalidArgument("letter '{}' of equation '{}' is {} in one input and {} in another", c, text, it->second,
                             s.dim(d));
    }
    terms.push_back(std::move(term));
  }
  std::string out;
  if (eq.explicit_output) {
    OCTET_ASSIGN_OR_RETURN(out, ExpandEllipsis(eq.output, 0, ellipsis_rank, true));
  } else {
    // Implicit: the ellipsis dims, then the letters used exactly once,
    // alphabetically.
    std::map<char, int> uses;
    for (const std::string& t : terms) {
      for (char c : t) ++uses[c];
    }
    for (const auto& [c, n] : uses) {
      if (std::isdigit(static_cast<unsigned char>(c))) out.push_back(c);
    }
    for (const auto& [c, n] : uses) {
      if (n == 1 && !std::isdigit(static_cast<unsigned char>(c))) out.push_back(c);
    }
  }
  // Letters: the output's first (row-major), then the summed ones.
  std::string letters;
  std::vector<int64_t> out_dims;
  for (char c : out) {
    if (sizes.count(c) == 0) return InvalidArgument("output letter '{}' of equation '{}' is in no input", c, text);
    if (letters.find(c) != std::string::npos) return InvalidArgument("output letter '{}' repeats in '{}'", c, text);
    letters.push_back(c);
    out_dims.push_back(sizes[c]);
  }
  for (const auto& [c, n] : sizes) {
    if (letters.find(c) == std::string::npos) letters.push_back(c);
  }
  OCTET_RETURN_IF_ERROR(CheckOutputElements(args, out_dims));
  std::vector<int64_t> ranges;
  for (char c : letters) ranges.push_back(sizes[c]);
  const size_t n_out = out.size();
  OCTET_ASSIGN_OR_RETURN(int64_t out_count, CheckedProduct(std::span<const int64_t>(ranges).first(n_out)));
  OCTET_ASSIGN_OR_RETURN(int64_t sum_count, CheckedProduct(std::span<const int64_t>(ranges).subspan(n_out)));
  // Per input, per letter: the stride it advances that input by (0 when absent
  // or broadcast; repeated letters add).
  std::vector<std::vector<int64_t>> strides(terms.size(), std::vector<int64_t>(letters.size(), 0));
  for (size_t i = 0; i < terms.size(); ++i) {
    const Shape& s = args.inputs[i].shape;
    const std::vector<int64_t> row = RowMajorStrides(s);
    for (int d = 0; d < s.rank(); ++d) {
      if (s.dim(d) == 1 && sizes[terms[i][static_cast<size_t>(d)]] != 1) continue;  // broadcast
      strides[i][letters.find(terms[i][static_cast<size_t>(d)])] += row[static_cast<size_t>(d)];
    }
  }
  auto kernel = MakeKernel([=](const OpRunArgs& r) -> Status {
    const size_t n_in = strides.size(), n_letters = ranges.size();
    ParallelFor(r.context, out_count, std::max<int64_t>(1, 4096 / std::max<int64_t>(sum_count, 1)),
                [&](int64_t begin, int64_t end) {
                  std::vector<int64_t> idx(n_letters, 0);
                  for (int64_t o = begin; o < end; ++o) {
                    int64_t rest = o;
                    for (size_t k = n_out; k-- > 0;) idx[k] = rest % ranges[k], rest /= ranges[k];
                    std::vector<int64_t> base(n_in, 0);
                    for (size_t i = 0; i < n_in; ++i) {
                      for (size_t k = 0; k < n_out; ++k) base[i] += idx[k] * strides[i][k];
                    }
                    double acc = 0.0;
                    int64_t acc_int = 0;
                    for (int64_t s = 0; s < sum_count; ++s) {
                      int64_t rem = s;
                      std::vector<int64_t> off = base;
                      for (size_t k = n_letters; k-- > n_out;) {
                        const int64_t v = rem % ranges[k];
                        rem /= ranges[k];
                        for (size_t i = 0; i < n_in; ++i) off[i] += v * strides[i][k];
                      }
                      if (dtype == DType::kF32) {
                        double p = 1.0;
                        for (size_t i = 0; i < n_in; ++i) p *= r.inputs[i].data<float>()[off[i]];
                        acc += p;
                      } else {
                        int64_t p = 1;
                        for (size_t i = 0; i < n_in; ++i) p *= r.inputs[i].data<int32_t>()[off[i]];
                        acc_int += p;
                      }
                    }
                    if (dtype == DType::kF32) {
                      r.outputs[0].data<float>()[o] = static_cast<float>(acc);
                    } else {
                      r.outputs[0].data<int32_t>()[o] = static_cast<int32_t>(acc_int);
                    }
                  }
                });
    return OkStatus();
  });
  return MakePrepared({{dtype, Shape(out_dims)}}, std::move(kernel), fmt::format("einsum_{}", DTypeName(dtype)));
}

}  // namespace

Status RegisterEinsumOps(OpRegistry& registry) { return RegisterFloatOp(registry, FloatOp::kEinsum, PrepareEinsum); }

}  // namespace octet::float_ops

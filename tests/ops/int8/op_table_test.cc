// The int8 op table (core/op_table.h) against the libraries that provide what it declares: every entry has its
// Prepare registered, its replay rule where it declares a reference, and no int8 operator is registered outside it.
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <catch2/catch.hpp>

#include "core/op_table.h"
#include "io/vectors/vector_ops.h"
#include "ops/int8/int8_ops.h"

namespace octet {
namespace {

// What the table's entries lack: a field (Int8OpEntryProblem), the Prepare function in `registry`, or the replay
// rule `has_replay` reports for an entry that declares a reference (and the reverse); and registered int8
// operators the table does not declare.
std::vector<std::string> MissingPieces(const OpRegistry& registry, const std::function<bool(Int8Op)>& has_replay) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < kInt8OpTable.size(); ++i) {
    const Int8OpInfo& e = kInt8OpTable[i];
    if (std::string_view p = Int8OpEntryProblem(e, i); !p.empty()) problems.push_back(fmt::format("{}: {}", e.name, p));
    if (registry.Find(kInt8Domain, e.name) == nullptr) problems.push_back(fmt::format("{}: no Prepare", e.name));
    if (has_replay(e.id) != e.reference) {
      problems.push_back(
          fmt::format("{}: the table says reference = {}, the replay dispatcher disagrees", e.name, e.reference));
    }
  }
  const std::string prefix = fmt::format("{}.", kInt8Domain);
  for (const std::string& type : registry.OpTypes()) {
    if (type.rfind(prefix, 0) != 0) continue;
    const std::string op = type.substr(prefix.size());
    if (!FindInt8Op(kInt8Domain, op)) problems.push_back(fmt::format("{}: registered but not in kInt8OpTable", op));
  }
  return problems;
}

bool ReplayOf(Int8Op op) { return vectors::HasReference(std::string(kInt8Domain), std::string(Int8OpName(op))); }

OpRegistry OpTableRegistry() {
  OpRegistry registry;
  REQUIRE(RegisterInt8Ops(registry).ok());
  return registry;
}

TEST_CASE("op table: every int8 operator has its Prepare, its replay and its fields", "[int8_misc]") {
  const OpRegistry registry = OpTableRegistry();
  const std::vector<std::string> problems = MissingPieces(registry, ReplayOf);
  INFO(fmt::format("{}", fmt::join(problems, "\n")));
  CHECK(problems.empty());
  // The lookups agree with the table.
  for (const Int8OpInfo& e : kInt8OpTable) {
    INFO(e.name);
    CHECK(FindInt8Op(kInt8Domain, e.name) == e.id);
    CHECK(!FindInt8Op("", e.name).has_value());
    // MatMul gives QMatMul (constant weight); Convert picks QBatchMatMul itself when both inputs are activations.
    if (e.id == Int8Op::kQBatchMatMul) continue;
    for (FloatOp f : e.from) CHECK(Int8OpFrom(FloatOpName(f), e.convert == ConvertForm::kDynamic) == e.id);
  }
  CHECK(Int8OpFrom("Erf", false) == std::nullopt);
}

TEST_CASE("op table: the check fails when a piece is missing", "[int8_misc]") {
  const OpRegistry full = OpTableRegistry();
  SECTION("a Prepare not registered") {
    OpRegistry partial;
    for (const Int8OpInfo& e : kInt8OpTable) {
      if (e.id != Int8Op::kQConv) REQUIRE(partial.Register(kInt8Domain, e.name, *full.Find(kInt8Domain, e.name)).ok());
    }
    const std::vector<std::string> problems = MissingPieces(partial, ReplayOf);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == "QConv: no Prepare");
  }
  SECTION("a replay missing for an entry that declares a reference") {
    const auto lacks_qadd = [](Int8Op op) { return op != Int8Op::kQAdd && ReplayOf(op); };
    const std::vector<std::string> problems = MissingPieces(full, lacks_qadd);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].rfind("QAdd: the table says reference = true", 0) == 0);
  }
  SECTION("an int8 operator registered outside the table") {
    OpRegistry extra = OpTableRegistry();
    REQUIRE(extra.Register(kInt8Domain, "QHardmax", *full.Find(kInt8Domain, Int8OpName(Int8Op::kQLookup))).ok());
    const std::vector<std::string> problems = MissingPieces(extra, ReplayOf);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == "QHardmax: registered but not in kInt8OpTable");
  }
  SECTION("an entry without a field (also a compile error through the table's static_assert)") {
    constexpr Int8OpInfo kNoExport = [] {
      Int8OpInfo e = Int8OpInfoOf(Int8Op::kQConv);
      e.qdq = QdqPattern::kUnset;
      return e;
    }();
    static_assert(!Int8OpEntryProblem(kNoExport, static_cast<size_t>(Int8Op::kQConv)).empty());
    CHECK(Int8OpEntryProblem(kNoExport, static_cast<size_t>(Int8Op::kQConv)) == "no QDQ export pattern");
    Int8OpInfo no_reason = Int8OpInfoOf(Int8Op::kDynamicQGemm);
    no_reason.no_reference_why = "";
    CHECK(!Int8OpEntryProblem(no_reason, static_cast<size_t>(Int8Op::kDynamicQGemm)).empty());
    CHECK(!Int8OpEntryProblem(Int8OpInfoOf(Int8Op::kQGemm), static_cast<size_t>(Int8Op::kQConv)).empty());
  }
}

}  // namespace
}  // namespace octet

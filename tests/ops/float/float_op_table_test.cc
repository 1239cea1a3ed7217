// The float op table (core/float_op_table.h) against ops/float's registry: every entry has its Prepare registered,
// and no default-domain operator is registered outside the table.
#include "core/float_op_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ops/float/registry.h"

namespace octet {
namespace {

// What the table and `registry` disagree on: an entry's own problem (FloatOpEntryProblem), an entry without a
// registered Prepare, and a registered default-domain operator the table does not declare.
std::vector<std::string> FloatTableProblems(const OpRegistry& registry) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < kFloatOpTable.size(); ++i) {
    const FloatOpInfo& e = kFloatOpTable[i];
    if (std::string_view p = FloatOpEntryProblem(e, i); !p.empty()) {
      problems.push_back(fmt::format("{}: {}", e.name, p));
    }
    if (registry.Find(kFloatDomain, e.name) == nullptr) problems.push_back(fmt::format("{}: no Prepare", e.name));
  }
  for (const std::string& type : registry.OpTypes()) {
    if (type.find('.') != std::string::npos) continue;  // another domain ("<domain>.<op>")
    if (!FindFloatOp(kFloatDomain, type))
      problems.push_back(fmt::format("{}: registered but not in kFloatOpTable", type));
  }
  return problems;
}

TEST_CASE("float op table: every entry is registered and every registered float operator has an entry", "[float_ops]") {
  const OpRegistry registry = FloatOpRegistry();
  const std::vector<std::string> problems = FloatTableProblems(registry);
  INFO(fmt::format("{}", fmt::join(problems, "\n")));
  CHECK(problems.empty());
  CHECK(registry.OpTypes().size() == kNumFloatOps);
  for (const FloatOpInfo& e : kFloatOpTable) {
    INFO(e.name);
    CHECK(FindFloatOp(kFloatDomain, e.name) == e.id);
    CHECK(FloatOpName(e.id) == e.name);
    CHECK(!FindFloatOp("com.microsoft", e.name).has_value());
  }
  CHECK(!FindFloatOp(kFloatDomain, "QConv").has_value());
}

TEST_CASE("float op table: the check fails when a registration or an entry is missing", "[float_ops]") {
  const OpRegistry full = FloatOpRegistry();
  SECTION("an entry whose Prepare is not registered") {
    OpRegistry partial;
    for (const FloatOpInfo& e : kFloatOpTable) {
      if (e.id != FloatOp::kConv)
        REQUIRE(partial.Register(kFloatDomain, e.name, *full.Find(kFloatDomain, e.name)).ok());
    }
    const std::vector<std::string> problems = FloatTableProblems(partial);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == "Conv: no Prepare");
  }
  SECTION("a float operator registered outside the table") {
    OpRegistry extra = FloatOpRegistry();
    REQUIRE(extra.Register(kFloatDomain, "Swish", *full.Find(kFloatDomain, FloatOpName(FloatOp::kSigmoid))).ok());
    // Operators of other domains are not the float table's business.
    REQUIRE(extra.Register("com.example", "Swish", *full.Find(kFloatDomain, FloatOpName(FloatOp::kSigmoid))).ok());
    const std::vector<std::string> problems = FloatTableProblems(extra);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == "Swish: registered but not in kFloatOpTable");
  }
  SECTION("an entry out of order or without a name (also a compile error through the table's static_assert)") {
    constexpr FloatOpInfo kNoName{FloatOp::kConv, ""};
    static_assert(!FloatOpEntryProblem(kNoName, static_cast<size_t>(FloatOp::kConv)).empty());
    CHECK(FloatOpEntryProblem(kNoName, static_cast<size_t>(FloatOp::kConv)) == "no name");
    CHECK(FloatOpEntryProblem(kFloatOpTable[0], 1) == "its id is not its index in kFloatOpTable");
  }
}

}  // namespace
}  // namespace octet

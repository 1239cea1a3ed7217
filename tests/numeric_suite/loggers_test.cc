// Loggers: OutputLogger / ShadowLogger keep copies of every call (later changes to the caller's tensors do not leak
// in), refuse mismatched shapes naming the value, and RunningSqnrLogger's sums equal the metrics of everything it saw.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "numeric_suite/loggers.h"

namespace octet {
namespace {

Tensor F32(Shape shape, std::vector<float> v) { return Tensor::FromValues<float>(std::move(shape), v).value(); }

TEST_CASE("StoringLogger keeps a copy of every batch, in first-logged order", "[numeric_suite]") {
  ShadowLogger logger;
  Tensor f = F32({2, 2}, {1, 2, 3, 4});
  Tensor q = F32({2, 2}, {1, 2, 3, 5});
  REQUIRE(logger.OnValue("b", f, q).ok());
  REQUIRE(logger.OnValue("a", q, f).ok());
  f.data<float>()[0] = 100;  // the caller reuses its buffer
  REQUIRE(logger.OnValue("b", f, q).ok());
  CHECK(logger.names() == std::vector<std::string>{"b", "a"});
  const StoringLogger::Stats* b = logger.stats("b").value();
  REQUIRE(b->float_values.size() == 2);
  CHECK(b->float_values[0].data<float>()[0] == 1);
  CHECK(b->float_values[1].data<float>()[0] == 100);
  CHECK(b->quantized_values[1].shape() == Shape{2, 2});
  auto missing = logger.stats("c");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("'c'"));
  Status bad = logger.OnValue("d", F32({4}, {1, 2, 3, 4}), q);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.message(), Catch::Contains("'d'") && Catch::Contains("[4]") && Catch::Contains("[2, 2]"));
}

TEST_CASE("RunningSqnrLogger: running sums over batches equal the metrics of the concatenation", "[numeric_suite]") {
  RunningSqnrLogger logger;
  REQUIRE(logger.OnValue("x", F32({2}, {3, 0}), F32({2}, {3, 1})).ok());  // error 1, signal 9
  REQUIRE(logger.OnValue("x", F32({1}, {4}), F32({1}, {4})).ok());        // error 0, signal 16
  const ErrorSums s = logger.sums("x").value();
  CHECK(s.count == 3);
  CHECK(s.sum_x2 == 25);
  CHECK(s.sum_err2 == 1);
  CHECK(logger.Sqnr("x").value() == Approx(20 * std::log10(5.0)));
  const Tensor all_x = F32({3}, {3, 0, 4}), all_y = F32({3}, {3, 1, 4});
  CHECK(s.NormalizedL2() == Approx(NormalizedL2(all_x, all_y).value()));
  CHECK(s.CosineSimilarity() == Approx(CosineSimilarity(all_x, all_y).value()));
  Status bad = logger.OnValue("x", F32({2}, {1, 2}), F32({1}, {1}));
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.message(), Catch::Contains("'x'"));
  CHECK_FALSE(logger.Sqnr("y").ok());
}

}  // namespace
}  // namespace octet

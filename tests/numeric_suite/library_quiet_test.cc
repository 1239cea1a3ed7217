// The library draws no progress unless asked: Calibrate and AnalyzeSensitivity with default options write nothing to
// stderr even when stderr is a terminal (an application that embeds octet must not get output it did not ask for);
// a ProgressFn that is given is called. stderr is pointed at a pseudo-terminal for the test, so that
// TerminalProgress, were it still the default, would draw.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <pty.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/builder.h"
#include "numeric_suite/sensitivity.h"
#include "quant/calibrate.h"
#include "quant/prepare.h"
#include "quant/qconfig.h"
#include "quant/qconfig_mapping.h"
#include "tests/qconfig_test_util.h"
#include "tests/quant/quant_test_util.h"
#include "tests/test_util.h"

namespace octet {
namespace {

// Points fd 2 at a new pseudo-terminal for its lifetime; Drain() returns what was written there.
class StderrOnPty {
 public:
  StderrOnPty() {
    std::fflush(stderr);
    REQUIRE(openpty(&master_, &slave_, nullptr, nullptr, nullptr) == 0);
    saved_ = dup(2);
    REQUIRE(saved_ >= 0);
    REQUIRE(dup2(slave_, 2) == 2);
    REQUIRE(isatty(2) == 1);
  }
  ~StderrOnPty() {
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    close(slave_);
    close(master_);
  }
  StderrOnPty(const StderrOnPty&) = delete;
  StderrOnPty& operator=(const StderrOnPty&) = delete;

  std::string Drain() {
    std::fflush(stderr);
    const int flags = fcntl(master_, F_GETFL);
    fcntl(master_, F_SETFL, flags | O_NONBLOCK);
    std::string out;
    char buf[256];
    for (ssize_t n; (n = read(master_, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    fcntl(master_, F_SETFL, flags);
    return out;
  }

 private:
  int master_ = -1, slave_ = -1, saved_ = -1;
};

Graph SmallMlp(uint64_t seed) {
  GraphBuilder b("quiet_mlp", seed);
  ValueId x = b.Input("x", DType::kF32, Shape{kUnknownDim, 8});
  x = b.ReLU("relu1", b.Linear("fc1", x, 8, 8));
  x = b.Linear("fc2", x, 8, 3);
  b.Output(x);
  return std::move(b).Build().value();
}

TEST_CASE("Library calls draw no progress on a terminal stderr unless given a ProgressFn", "[sensitivity]") {
  std::mt19937_64 rng = testing::MakeRng("library_quiet");
  const Graph g = SmallMlp(rng());
  std::vector<std::vector<Tensor>> batches;
  for (int i = 0; i < 3; ++i) batches.push_back({testing::RandomTensor(rng, Shape{4, 8}, -1.0f, 1.0f)});
  const Context context = Context::Create().value();

  StderrOnPty pty;
  {
    auto prepared = Prepare(g, testing::QnnpackMinMaxMapping());
    REQUIRE(prepared.ok());
    REQUIRE(Calibrate(*prepared, context, batches).ok());
    CHECK(pty.Drain().empty());
  }
  {
    SensitivityOptions o;
    o.latency_runs = 0;
    auto report = AnalyzeSensitivity(g, testing::QnnpackMinMaxMapping(), batches, batches, o);
    REQUIRE(report.ok());
    CHECK(pty.Drain().empty());
  }
  {
    // Asked for, progress is reported through the given function, once per batch.
    auto prepared = Prepare(g, testing::QnnpackMinMaxMapping());
    REQUIRE(prepared.ok());
    std::vector<int64_t> seen;
    CalibrateOptions o;
    o.progress = [&seen](int64_t done, int64_t total) {
      CHECK(total == 3);
      seen.push_back(done);
    };
    REQUIRE(Calibrate(*prepared, context, batches, o).ok());
    CHECK(seen == std::vector<int64_t>{1, 2, 3});
    // TerminalProgress, the command's choice, draws on the terminal.
    TerminalProgress("calibrating")(3, 3);
    CHECK(pty.Drain().find("calibrating: 3/3") != std::string::npos);
  }
}

}  // namespace
}  // namespace octet

// octet's observers against PyTorch 1.13 (tests/data/observers, written by tests/data/observers/generate.py with
// Debian's python3-torch; torch is not needed here). Scales must be bit-identical, zero points equal, min_val /
// max_val (and HistogramObserver's histogram buffer) bit-identical, on every ISA with observer kernels and with one
// and two threads, for both HistogramObserver variants (upstream: upstream's rules on 1.13's operators, see the data's
// README). Construction errors must be errors here too.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/npy.h"
#include "observers/histogram_observer.h"
#include "observers/state_json.h"
#include "observers/torch_numerics.h"
#include "tests/data_manifest.h"
#include "tests/observers/observer_test_util.h"

namespace octet {
namespace {

using nlohmann::json;

const std::string kDataDir = std::string(OCTET_TEST_DATA_DIR) + "/observers";

const json& ObserverManifest() {
  static const json manifest = testing::ReadDataManifest(kDataDir, "tests/data/observers/generate.py");
  return manifest;
}

const std::vector<Tensor>& Batches(const std::string& input) {
  static std::map<std::string, std::vector<Tensor>> cache;
  auto it = cache.find(input);
  if (it != cache.end()) return it->second;
  std::vector<Tensor> batches;
  for (const json& f : ObserverManifest().at("inputs").at(input).at("files")) {
    auto t = ReadNpy(kDataDir + "/" + f.get<std::string>());
    if (!t.ok()) FAIL(t.status().ToString());
    batches.push_back(std::move(t).value());
  }
  return cache.emplace(input, std::move(batches)).first->second;
}

void CheckFloats(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!testing::SameFloat(got[i], want[i])) {
      FAIL_CHECK(what << "[" << i << "]: got " << testing::FloatText(got[i]) << ", PyTorch "
                      << testing::FloatText(want[i]));
      return;
    }
  }
}

// Runs one case; returns false for a construction-error case. `full`: also the qparams of HistogramObserver cases,
// whose range search does not depend on the ISA or the threads (only their histogram does), so one context does.
bool RunCase(const json& c, const Context& context, bool full) {
  const std::string name = c.at("name").get<std::string>();
  INFO("case " << name << " options " << c.at("options").dump());
  auto options = OptionsFromJson(c.at("options"));
  REQUIRE(options.ok());
  const json& expect = c.at("expect");
  auto made = MakeObserver(c.at("observer").get<std::string>(), *options);
  if (expect.contains("error")) {
    INFO("PyTorch raised " << expect.at("error").get<std::string>() << ": " << expect.at("message"));
    CHECK_FALSE(made.ok());
    if (!made.ok()) CHECK(made.status().code() == StatusCode::kInvalidArgument);
    return false;
  }
  if (!made.ok()) FAIL(made.status().ToString());
  Observer& o = **made;
  o.set_context(&context);
  for (const Tensor& b : Batches(c.at("input").get<std::string>())) {
    const Status s = o.Observe(b, name);
    if (!s.ok()) FAIL(s.ToString());
  }
  if (full || o.kind() != ObserverKind::kHistogram) {
    auto q = o.CalculateQParams();
    if (!q.ok()) FAIL(q.status().ToString());
    CheckFloats("scale", q->scales(), testing::JsonFloats(expect.at("scale")));
    const json& zps = expect.contains("octet_zero_point") ? expect.at("octet_zero_point") : expect.at("zero_point");
    REQUIRE(q->zero_points().size() == zps.size());
    for (size_t i = 0; i < zps.size(); ++i) {
      INFO("zero_point[" << i << "]");
      CHECK(q->zero_points()[i] == zps[i].get<int64_t>());
    }
  }
  CheckFloats("min_val", o.min_val(), testing::JsonFloats(expect.at("min_val")));
  CheckFloats("max_val", o.max_val(), testing::JsonFloats(expect.at("max_val")));
  if (expect.contains("histogram")) {
    const auto* h = dynamic_cast<const HistogramObserver*>(&o);
    REQUIRE(h != nullptr);
    auto want = ReadNpy(kDataDir + "/" + expect.at("histogram").get<std::string>());
    REQUIRE(want.ok());
    const auto v = want->values<float>();
    CheckFloats("histogram", h->histogram(), std::vector<float>(v.begin(), v.end()));
  }
  return true;
}

TEST_CASE("observers equal PyTorch 1.13 on the reference data", "[observers]") {
  const json& cases = ObserverManifest().at("cases");
  REQUIRE(cases.size() > 1000);
  bool first = true;
  for (Isa isa : testing::ObserverKernelIsas()) {
    for (int threads : {1, 2}) {
      const Context context = testing::ContextFor(isa, threads);
      INFO("isa " << IsaName(isa) << ", " << threads << " thread(s)");
      size_t run = 0, errors = 0;
      for (const json& c : cases) {
        if (RunCase(c, context, first)) {
          ++run;
        } else {
          ++errors;
        }
      }
      CHECK(run > 900);
      CHECK(errors > 10);
      first = false;
    }
  }
}

std::vector<float> NpyFloats(const std::string& file) {
  auto t = ReadNpy(kDataDir + "/" + file);
  if (!t.ok()) FAIL(t.status().ToString());
  const auto v = t->values<float>();
  return std::vector<float>(v.begin(), v.end());
}

TEST_CASE("torch_numerics reproduces torch.sum, torch.cumsum, floor division and linspace of PyTorch 1.13", "[observers]") {
  const json& p = ObserverManifest().at("primitives");
  const std::vector<float> x = NpyFloats(p.at("sum").at("x").get<std::string>());
  size_t offset = 0;
  const json& sizes = p.at("sum").at("sizes");
  const std::vector<float> sums = testing::JsonFloats(p.at("sum").at("expected"));
  for (size_t i = 0; i < sizes.size(); ++i) {
    const size_t n = sizes[i].get<size_t>();
    INFO("torch.sum of " << n << " values");
    CHECK(testing::SameFloat(torch_numerics::Sum(std::span<const float>(x).subspan(offset, n)), sums[i]));
    offset += n;
  }
  const size_t n = p.at("cumsum").at("n").get<size_t>();
  CheckFloats("cumsum", torch_numerics::Cumsum(std::span<const float>(x).first(n)),
              NpyFloats(p.at("cumsum").at("expected").get<std::string>()));
  auto ab = ReadNpy(kDataDir + "/" + p.at("div_floor").at("ab").get<std::string>());
  REQUIRE(ab.ok());
  const size_t m = static_cast<size_t>(ab->shape().dim(1));
  const float* a = ab->data<float>();
  std::vector<float> got(m);
  for (size_t i = 0; i < m; ++i) got[i] = torch_numerics::DivFloor(a[i], a[m + i]);
  CheckFloats("div_floor", got, NpyFloats(p.at("div_floor").at("expected").get<std::string>()));
  // torch.linspace, element by element (histc's right edge and the upstream re-binning read it).
  std::vector<float> lin;
  for (const json& c : p.at("linspace").at("cases")) {
    float start = 0.0f, end = 0.0f;
    REQUIRE(JsonToFloat(c.at("start"), &start));
    REQUIRE(JsonToFloat(c.at("end"), &end));
    const int64_t steps = c.at("steps").get<int64_t>();
    for (int64_t i = 0; i < steps; ++i) lin.push_back(torch_numerics::LinspaceAt(start, end, steps, i));
  }
  CheckFloats("linspace", lin, NpyFloats(p.at("linspace").at("expected").get<std::string>()));
}

}  // namespace
}  // namespace octet

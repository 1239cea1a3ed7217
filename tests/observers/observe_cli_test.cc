// `octet observe` end to end: runs the octet binary built beside this test program (../tools/octet/octet) on the
// observer reference data and checks its JSON against the library and PyTorch's numbers, and its exit statuses
// (0 ok, 1 runtime error, 2 bad usage). Skipped (and reported) where the binary is not built or cannot run here.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "io/npy.h"
#include "observers/state_json.h"
#include "tests/observers/observer_test_util.h"

namespace octet {
namespace {

namespace fs = std::filesystem;
const std::string kData = std::string(OCTET_TEST_DATA_DIR) + "/observers/";

[[maybe_unused]] std::string OctetBinary() {  // unused on aarch64 (OctetBinaryOrSkip)
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path octet = self.parent_path().parent_path() / "tools" / "octet" / "octet";
  return fs::exists(octet, ec) ? octet.string() : "";
}

// The octet binary for a CLI test, or "" after reporting the test skipped: it runs the binary natively only, and
// needs tools/octet/octet built.
std::string OctetBinaryOrSkip() {
#ifdef __aarch64__
  testing::Skip("octet observe CLI test (runs the octet binary natively only)");
  return "";
#else
  const std::string octet = OctetBinary();
  if (octet.empty()) testing::Skip("octet observe CLI test (tools/octet/octet is not built)");
  return octet;
#endif
}

struct Run {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Run Observe(const std::string& binary, const std::string& args) {
  const fs::path dir = fs::temp_directory_path();
  const std::string tag = std::to_string(::getpid());
  const fs::path out = dir / ("octet_observe_" + tag + ".out");
  const fs::path err = dir / ("octet_observe_" + tag + ".err");
  const std::string cmd = "'" + binary + "' observe " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  Run r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out);
  r.err = Slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

float JsonFloat(const nlohmann::json& v) {
  float f = 0.0f;
  REQUIRE(JsonToFloat(v, &f));
  return f;
}

TEST_CASE("octet observe prints the observer's qparams and range as JSON", "[observers]") {
  const std::string octet = OctetBinaryOrSkip();
  if (octet.empty()) return;
  // numerics.md 2.3: default quint8 affine over [-0.7, 0.9].
  Run r = Observe(octet, "--observer minmax " + kData + "in_doc_example_0.npy");
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::ordered_json::parse(r.out);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"observer", "dtype", "qscheme", "quant_min", "quant_max", "scale",
                                         "zero_point", "min_val", "max_val"});
  CHECK(j["observer"] == "minmax");
  CHECK(j["dtype"] == "quint8");
  CHECK(j["quant_max"] == 255);
  CHECK(testing::SameFloat(JsonFloat(j["scale"][0]), (0.9f + 0.7f) / 255.0f));
  CHECK(j["zero_point"].dump() == "[112]");

  // Multi-batch legacy histogram: PyTorch 1.13's numbers from the reference manifest.
  std::ifstream in(kData + "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  nlohmann::json want;
  for (const auto& c : manifest["cases"]) {
    if (c["name"] == "hist_hist_two_normals_qint8_symmetric") want = c["expect"];
  }
  REQUIRE_FALSE(want.is_null());
  r = Observe(octet, "--observer histogram --histogram-variant legacy_1_13 --dtype qint8 --qscheme "
                     "per_tensor_symmetric " + kData + "in_hist_two_normals_0.npy " + kData +
                     "in_hist_two_normals_1.npy");
  REQUIRE(r.rc == 0);
  const auto h = nlohmann::json::parse(r.out);
  CHECK(testing::SameFloat(JsonFloat(h["scale"][0]), JsonFloat(want["scale"][0])));
  CHECK(h["zero_point"] == want["zero_point"]);
  CHECK(testing::SameFloat(JsonFloat(h["min_val"][0]), JsonFloat(want["min_val"][0])));

  // Per channel, channels last with a negative axis; 4-bit symmetric.
  r = Observe(octet, "--observer per_channel_minmax --ch-axis -1 --dtype qint8 --qscheme per_channel_symmetric "
                     "--quant-min -8 --quant-max 7 " + kData + "in_activation_nhwc_0.npy");
  REQUIRE(r.rc == 0);
  const auto pc = nlohmann::json::parse(r.out);
  CHECK(pc["scale"].size() == 6);
  CHECK(pc["min_val"].size() == 6);
  CHECK(pc["quant_min"] == -8);

  // Placeholder: no static qparams.
  r = Observe(octet, "--observer placeholder " + kData + "in_normal_0.npy");
  REQUIRE(r.rc == 0);
  CHECK(nlohmann::json::parse(r.out)["scale"].empty());

  // Non-finite values: an error naming the file, or skipped and counted.
  r = Observe(octet, "--observer minmax " + kData + "in_nonfinite_mix_0.npy");
  CHECK(r.rc == 1);
  CHECK_THAT(r.err, Catch::Contains("in_nonfinite_mix_0.npy") && Catch::Contains("NaN"));
  r = Observe(octet, "--observer percentile --percentile 99.9 --skip-non-finite --state " + kData +
                         "in_nonfinite_mix_0.npy");
  REQUIRE(r.rc == 0);
  CHECK(nlohmann::json::parse(r.out)["state"]["state"]["num_skipped"] == 10);
}

TEST_CASE("octet observe exits 2 on bad usage and 1 on bad files", "[observers]") {
  const std::string octet = OctetBinaryOrSkip();
  if (octet.empty()) return;
  const std::string x = kData + "in_normal_0.npy";
  const std::pair<std::string, const char*> usage[] = {
      {"--observer bogus " + x, "failed to parse observer"},
      {"--observer minmax --qscheme per_channel_affine " + x, "per_tensor_affine or per_tensor_symmetric"},
      {"--observer minmax --dtype float64 " + x, "dtype"},
      {"--observer minmax --quant-min -8 " + x, "given together"},
      {"--observer minmax --dtype quint8 --qscheme per_tensor_symmetric --reduce-range " + x, "cannot reduce range"},
      {"--observer histogram --histogram-variant 1.13 " + x, "histogram variant"},
      {"--observer minmax --bins 100 " + x, "'bins' does not apply"},
      {"--observer minmax", "batches"},
      {"--observer minmax --isa nonsense " + x, "--isa"},
  };
  for (const auto& [args, message] : usage) {
    INFO(args);
    const Run r = Observe(octet, args);
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
  }
  Run r = Observe(octet, "--observer minmax /nonexistent/x.npy");
  CHECK(r.rc == 1);
  CHECK_THAT(r.err, Catch::Contains("/nonexistent/x.npy"));
  // An integer tensor is not something to observe.
  const std::string ints = std::string(OCTET_TEST_DATA_DIR) + "/pytorch/q_qint8_edges_0.q.npy";
  r = Observe(octet, "--observer minmax " + ints);
  CHECK(r.rc == 1);
  CHECK_THAT(r.err, Catch::Contains("must be f32"));
  CHECK(r.out.empty());
}

}  // namespace
}  // namespace octet

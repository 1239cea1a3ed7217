// Tests of report JSON validation (numeric_suite/report_validate.h): each broken key gives an error naming it, and
// RenderReportHtml passes the error on.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/file_util.h"
#include "numeric_suite/report_html.h"
#include "numeric_suite/report_validate.h"

namespace octet {
namespace {

using nlohmann::json;
using Catch::Matchers::Contains;

json ValidateSampleReport() {
  const auto text = ReadFile(std::string(OCTET_TEST_DATA_DIR) + "/numeric_suite/sample_report.json");
  REQUIRE(text.ok());
  return json::parse(*text);
}

TEST_CASE("the sample report and a minimal report are valid", "[report_html]") {
  const json sample = ValidateSampleReport();
  const Status status = ValidateReportJson(sample);
  INFO(status.ToString());
  CHECK(status.ok());
  CHECK(sample.contains("sensitivity"));  // the sample exercises every section
  CHECK(ValidateReportJson(json{{"schema_version", 1}, {"weights", json::array()}, {"activations", json::array()},
                                {"shadow", json::array()}})
            .ok());
}

TEST_CASE("validation names the missing or invalid key", "[report_html]") {
  struct Case {
    std::string what;
    std::function<void(json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"no schema_version", [](json& r) { r.erase("schema_version"); }, "'schema_version' is missing"},
      {"schema_version 2", [](json& r) { r["schema_version"] = 2; },
       "'schema_version' must be 1 (the version this octet reads), got 2"},
      {"schema_version as text", [](json& r) { r["schema_version"] = "1"; },
       "'schema_version' must be an integer, got string \"1\""},
      {"no weights", [](json& r) { r.erase("weights"); }, "'weights' is missing"},
      {"weights not an array", [](json& r) { r["weights"] = "conv1"; },
       "'weights' must be an array, got string \"conv1\""},
      {"no shadow", [](json& r) { r.erase("shadow"); }, "'shadow' is missing"},
      {"weight without a name", [](json& r) { r["weights"][0].erase("name"); }, "'weights[0].name' is missing"},
      {"weight entry not an object", [](json& r) { r["weights"][2] = 5; },
       "'weights[2]' must be an object, got number 5"},
      {"sqnr as text", [](json& r) { r["weights"][1]["sqnr_db"] = "43 dB"; },
       "'weights[1].sqnr_db' must be a number or null, got string \"43 dB\""},
      {"no sqnr", [](json& r) { r["activations"][3].erase("sqnr_db"); }, "'activations[3].sqnr_db' is missing"},
      {"cosine as text", [](json& r) { r["shadow"][2]["cosine"] = "high"; },
       "'shadow[2].cosine' must be a number or null"},
      {"exact not a bool", [](json& r) { r["shadow"][1]["exact"] = 1; }, "'shadow[1].exact' must be true or false"},
      {"histogram bins differ", [](json& r) { r["weights"][0]["histogram"]["quantized"].erase(0); },
       "'weights[0].histogram.quantized' must have as many bins as 'weights[0].histogram.float' (64), got 63"},
      {"negative count", [](json& r) { r["weights"][3]["histogram"]["float"][7] = -1; },
       "'weights[3].histogram.float[7]' must be a count >= 0, got -1"},
      {"count as text", [](json& r) { r["weights"][3]["histogram"]["quantized"][2] = "4"; },
       "'weights[3].histogram.quantized[2]' must be a finite number, got string \"4\""},
      {"infinite count", [](json& r) { r["weights"][0]["histogram"]["float"][0] = HUGE_VAL; },
       "'weights[0].histogram.float[0]' must be a finite number, got number inf"},
      {"NaN scale", [](json& r) { r["weights"][1]["channels"][2]["scale"] = std::nan(""); },
       "'weights[1].channels[2].scale' must be a finite number, got number nan"},
      {"infinite histogram max", [](json& r) { r["weights"][1]["histogram"]["max"] = HUGE_VAL; },
       "'weights[1].histogram.max' must be a finite number"},
      {"empty histogram",
       [](json& r) {
         r["weights"][0]["histogram"]["float"] = json::array();
         r["weights"][0]["histogram"]["quantized"] = json::array();
       },
       "'weights[0].histogram.float' must not be empty"},
      {"histogram min above max", [](json& r) { r["weights"][1]["histogram"]["min"] = 2.5; },
       "'weights[1].histogram.min' must not exceed 'weights[1].histogram.max'"},
      {"channel without scale", [](json& r) { r["weights"][2]["channels"][3].erase("scale"); },
       "'weights[2].channels[3].scale' is missing"},
      {"zero point not an integer", [](json& r) { r["weights"][2]["channels"][0]["zero_point"] = 0.5; },
       "'weights[2].channels[0].zero_point' must be an integer, got number 0.5"},
      {"activation shape of text", [](json& r) { r["activations"][0]["shape"][1] = "8"; },
       "'activations[0].shape[1]' must be an integer"},
      {"clipped fraction as text", [](json& r) { r["activations"][1]["clipped_fraction"] = "0.1%"; },
       "'activations[1].clipped_fraction' must be a number or null"},
      {"input without a name", [](json& r) { r["inputs"][0].erase("name"); }, "'inputs[0].name' is missing"},
      {"float_model not a string", [](json& r) { r["float_model"] = json::array(); },
       "'float_model' must be a string, got array []"},
      {"sensitivity without metric", [](json& r) { r["sensitivity"].erase("metric"); },
       "'sensitivity.metric' is missing"},
      {"rank not an integer", [](json& r) { r["sensitivity"]["nodes"][0]["rank"] = 1.5; },
       "'sensitivity.nodes[0].rank' must be an integer, got number 1.5"},
      {"keep_float of numbers", [](json& r) { r["sensitivity"]["keep_float"][0] = 3; },
       "'sensitivity.keep_float[0]' must be a string, got number 3"},
      {"long value shortened",
       [](json& r) {
         r["generator"] = json::array();
         for (int i = 1; i <= 20; ++i) r["generator"].push_back(i);
       },
       "'generator' must be a string, got array [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,..."},
  };
  for (const Case& c : cases) {
    SECTION(c.what) {
      json report = ValidateSampleReport();
      c.edit(report);
      const Status status = ValidateReportJson(report);
      REQUIRE_FALSE(status.ok());
      CHECK(status.code() == StatusCode::kInvalidArgument);
      CHECK_THAT(status.message(), Contains("invalid report: " + c.message));
      const auto html = RenderReportHtml(report);
      REQUIRE_FALSE(html.ok());
      CHECK(html.status().message() == status.message());
    }
  }
}

TEST_CASE("validation rejects a report that is not an object", "[report_html]") {
  for (const json& report : {json::array(), json(1), json(nullptr), json("report")}) {
    const Status status = ValidateReportJson(report);
    INFO(report.dump());
    REQUIRE_FALSE(status.ok());
    CHECK_THAT(status.message(), Contains("the report must be a JSON object"));
  }
}

}  // namespace
}  // namespace octet

// render_report REPORT.json OUT.html: renders a numeric-suite report JSON file to HTML with RenderReportHtml, for
// the Chromium screenshot test (tests/numeric_suite/render_report_test.sh) and docs/report.png. Exit status 0 on
// success, 1 on a failure (message on stderr naming the file), 2 on bad usage.
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/file_util.h"
#include "numeric_suite/report_html.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: render_report REPORT.json OUT.html\n");
    return 2;
  }
  const std::string in = argv[1], out = argv[2];
  const auto text = octet::ReadFile(in);
  if (!text.ok()) {
    fmt::print(stderr, "render_report: {}\n", text.status().message());
    return 1;
  }
  const nlohmann::json report = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded()) {
    fmt::print(stderr, "render_report: failed to parse '{}': not valid JSON\n", in);
    return 1;
  }
  const auto html = octet::RenderReportHtml(report);
  if (!html.ok()) {
    fmt::print(stderr, "render_report: failed to render '{}': {}\n", in, html.status().message());
    return 1;
  }
  if (const octet::Status status = octet::WriteFileAtomically(out, *html); !status.ok()) {
    fmt::print(stderr, "render_report: {}\n", status.message());
    return 1;
  }
  return 0;
}

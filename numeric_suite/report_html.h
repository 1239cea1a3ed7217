// The numeric-suite report as one self-contained HTML page: inline CSS and inline SVG charts, no scripts, no
// network, no external fonts, so it opens anywhere (an air-gapped lab, a CI artifact, an e-mail attachment).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace octet {

// Renders a schema-version-1 report (numeric_suite/report_validate.h; written by BuildReportJson) as HTML:
//  - summary: the models, the inputs and each model output's SQNR;
//  - the worst layers: the 10 with the lowest shadow SQNR (propagated without shadow entries), with their
//    propagated and weight SQNR and clipped fraction, so large models need no search by hand;
//  - per-layer SQNR bar charts for weights, propagated activations and shadow (each int8 node vs its float twin),
//    coloured by svg_charts.h's thresholds, each bar labelled in dB ("exact" for identical tensors);
//  - float vs int8 weight histograms and per-channel weight ranges (min/max whiskers and scales) per weight, or for
//    the 12 weights with the lowest SQNR when there are more (a 300-layer model stays a page of about 1 MB);
//  - (bar charts of more than 40 bars scroll in a box; tables of more than 40 rows start collapsed)
//  - tables of every metric (SQNR, normalized L2, cosine, max abs error in LSB, clipped fraction, accumulator
//    headroom);
//  - when present, the sensitivity analysis: ranking table, bars and the keep-float proposal.
// Every string from the report is escaped. An invalid report gives ValidateReportJson's InvalidArgument, which names
// the key.
Result<std::string> RenderReportHtml(const nlohmann::json& report);

}  // namespace octet

// Reading the manifest.json of a tests/data folder written by that folder's generate.py (PyTorch reference data): the
// file (a missing one fails the test naming the generator to rerun) and its float arrays.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "observers/state_json.h"

namespace octet::testing {

// Parses DIR/manifest.json; `generator` is the script that writes it (tests/data/observers/generate.py).
inline nlohmann::json ReadDataManifest(const std::string& dir, const std::string& generator) {
  const std::string path = dir + "/manifest.json";
  std::ifstream in(path);
  if (!in) FAIL("cannot open " << path << " (regenerate with /usr/bin/python3 " << generator << ")");
  return nlohmann::json::parse(in);
}

// The floats of a JSON array as the generators write them (JsonToFloat: numbers, or strings for NaN and infinities).
inline std::vector<float> JsonFloats(const nlohmann::json& j) {
  std::vector<float> out;
  for (const nlohmann::json& v : j) {
    float f = 0.0f;
    REQUIRE(JsonToFloat(v, &f));
    out.push_back(f);
  }
  return out;
}

}  // namespace octet::testing

// The one JSON writer of the subcommands' --json output: values are built as nlohmann JSON
// (nlohmann-json3-dev; keys keep their insertion order) and written in one style,
// `{"key": value, "key": [1, 2]}`, on one line; with `items_on_lines` every object of an array
// is put on a line of its own (lists of sessions, solvers, problems). Strings are written as
// UTF-8; bytes that are not UTF-8 become U+FFFD (the input of `problem parse` may be anything).
#pragma once

#include <cmath>
#include <string>

#include "nlohmann/json.hpp"

namespace tuna::cli {

using Json = nlohmann::ordered_json;

std::string JsonText(const Json& value, bool items_on_lines = false);

// A duration in seconds for --json output ("seconds": 2.345): milliseconds are enough.
inline double JsonSeconds(double seconds) { return std::round(seconds * 1000) / 1000; }

// A number rounded to `digits` decimals (percentages, rates).
inline double JsonRounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

}  // namespace tuna::cli

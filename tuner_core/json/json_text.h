// The one JSON writer of tuna's reports (`--json` of the subcommands, `tune --json FILE`, the
// benches): values are built as nlohmann JSON (nlohmann-json3-dev; keys keep their insertion
// order) and written in one style, `{"key": value, "key": [1, 2]}`, on one line; with
// `items_on_lines` every object of an array is put on a line of its own (lists of sessions,
// solvers, problems, results). Strings are written as UTF-8; bytes that are not UTF-8 become
// U+FFFD (the input of `problem parse` may be anything).
#pragma once

#include <cmath>
#include <string>

#include "nlohmann/json.hpp"

namespace tuna {

using Json = nlohmann::ordered_json;

std::string JsonText(const Json& value, bool items_on_lines = false);

// The rows as a JSON array, one to_json(row) each.
template <typename Rows, typename ToJson>
Json JsonList(const Rows& rows, ToJson to_json) {
  Json list = Json::array();
  for (const auto& row : rows) list.push_back(to_json(row));
  return list;
}

// A duration in seconds for --json output ("seconds": 2.345): milliseconds are enough.
inline double JsonSeconds(double seconds) { return std::round(seconds * 1000) / 1000; }

// A number rounded to `digits` decimals (percentages, rates).
inline double JsonRounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

// A measurement to 6 significant digits; null when not finite.
Json JsonMeasure(double v);

}  // namespace tuna

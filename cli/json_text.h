// The one JSON writer of the subcommands' --json output: values are built as nlohmann JSON
// (nlohmann-json3-dev; keys keep their insertion order) and written in one style,
// `{"key": value, "key": [1, 2]}`, on one line; with `items_on_lines` every object of an array
// is put on a line of its own (lists of sessions, solvers, problems). Strings are written as
// UTF-8; bytes that are not UTF-8 become U+FFFD (the input of `problem parse` may be anything).
#pragma once

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "cli/terminal_text.h"
#include "nlohmann/json.hpp"

namespace tuna::cli {

using Json = nlohmann::ordered_json;

std::string JsonText(const Json& value, bool items_on_lines = false);

// The rows as a JSON array, one to_json(row) each.
template <typename Rows, typename ToJson>
Json JsonList(const Rows& rows, ToJson to_json) {
  Json list = Json::array();
  for (const auto& row : rows) list.push_back(to_json(row));
  return list;
}

// A list command's output on stdout: with `json` the rows as one JSON array (to_json(row), one
// object per line), else a table: the header, then to_cells(row) per row, columns padded to
// `widths` (TableLine).
template <typename Rows, typename ToJson, typename ToCells>
void PrintRows(const Rows& rows, bool json, ToJson to_json, const std::vector<std::string>& header,
               const std::vector<int>& widths, ToCells to_cells) {
  if (json) {
    std::cout << JsonText(JsonList(rows, to_json), /*items_on_lines=*/true) << "\n";
    return;
  }
  std::cout << TableLine(header, widths) << "\n";
  for (const auto& row : rows) std::cout << TableLine(to_cells(row), widths) << "\n";
}

// A duration in seconds for --json output ("seconds": 2.345): milliseconds are enough.
inline double JsonSeconds(double seconds) { return std::round(seconds * 1000) / 1000; }

// A number rounded to `digits` decimals (percentages, rates).
inline double JsonRounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

}  // namespace tuna::cli

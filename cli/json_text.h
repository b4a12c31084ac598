// The CLI's side of the JSON writer (tuner_core/json/json_text.h): list commands' output as a
// JSON array or a table.
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include "cli/terminal_text.h"
#include "tuner_core/json/json_text.h"

namespace tuna::cli {

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

// A long subcommand's report on stdout once its work is done: with `json`, `fields` and then
// "seconds" (JsonSeconds of `seconds`) as one JSON object on a line; else `text()` writes the
// human-readable lines.
template <typename Text>
void PrintReport(bool json, Json fields, double seconds, Text text) {
  if (!json) {
    text();
    return;
  }
  fields["seconds"] = JsonSeconds(seconds);
  std::cout << JsonText(fields) << "\n";
}

}  // namespace tuna::cli

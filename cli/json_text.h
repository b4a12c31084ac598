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

}  // namespace tuna::cli

// MIOpenDriver command lines <-> Problems.
//
// Accepts `conv`, `convfp16`, `convbfp16`, `convint8`, with or without a leading
// `./bin/MIOpenDriver` (or any path ending in MIOpenDriver) and with a log prefix such as
// `miopenConvolutionForward:` or `MIOpen(HIP): Command [LogCmdConvolution]` before it; every
// convolution flag of MIOpen's driver/conv_driver.hpp in short and long form, with MIOpen's
// defaults. `-F` is expanded into one Problem per selected direction (0 = all three).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/problem/validate.h"

namespace tuna {

// One line -> the problems it selects (1 to 3), validated against `limits`.
// Errors are InvalidArgument naming the offending flag and value.
absl::StatusOr<std::vector<Problem>> ParseDriverLine(std::string_view line,
                                                     const ProblemLimits& limits = {});

// A parsed file line: its 1-based number, the original text and what it produced.
struct DriverFileLine {
  int line_number = 0;
  std::string text;
  std::vector<Problem> problems;
};

// A bad line of a file, kept so callers can report every bad line at once.
struct DriverFileError {
  int line_number = 0;
  std::string text;
  std::string reason;
};

struct DriverFile {
  std::vector<DriverFileLine> lines;    // comments and blank lines skipped
  std::vector<DriverFileError> errors;  // empty when every line parsed
};

// Parses whole file contents; never stops at the first bad line.
DriverFile ParseDriverText(std::string_view contents, const ProblemLimits& limits = {});
// Reads and parses a file; NotFound / PermissionDenied when it cannot be read.
absl::StatusOr<DriverFile> ParseDriverFile(const std::string& path,
                                           const ProblemLimits& limits = {});

// The canonical line: `./bin/MIOpenDriver <conv|convfp16|...> -n .. -F <1|2|4> ...` with
// every field spelled out. ParseDriverLine(ToDriverLine(p)) == {p}.
std::string ToDriverLine(const Problem& p);

}  // namespace tuna

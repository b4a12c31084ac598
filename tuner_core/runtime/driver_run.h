// One problem run the way MIOpenDriver's conv command runs it, over the runtime: choose the
// solution (immediate mode with -S, else Find), fill random inputs and poison the output, run,
// optionally time and verify against the CPU reference. Behind `tuna driver` (cli/cmd_driver.cc),
// which parses the command line and prints.
//
// Output, written to `out` as the run goes: "problem: ...", "solver: ...", then MIOpenDriver's
// own lines (driver_text.h: "GPU Kernel Time Forward Conv. Elapsed: X ms (average)", the two
// "stats:" lines, "Forward Convolution Verifies OK on CPU reference (e < t)" / "... FAILED: ..."),
// each followed by tuna's line ("Kernel time: ... (median of N) ...", "Verifies OK on CPU
// reference: <every metric>" / "Verification FAILED: ..."). Errors: NotFound for an unknown -S solution; otherwise the failing step's status
// with the step in the message ("find: ...", "run: ...", "time: ...", "verify: ..."). A
// verification failure is not an error: DriverRunReport::verified is false.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/runtime/handle.h"

namespace tuna::runtime {

// MIOpenDriver's run flags besides the problem.
struct DriverRunFlags {
  int verify = 1;              // -V/--verify: against the CPU reference
  int time = 0;                // -t/--time: print the kernel time
  int iter = 10;               // -i/--iter: timed iterations
  int search = 0;              // -s/--search: Find with exhaustive search
  std::string solution = "-1";  // -S/--solution: solver id or name; -1 = Find; 0 = immediate
                                // mode's first solution (find db, else heuristics, else fallback)
};

// Reads the run flags from a MIOpenDriver command line (args[0] is the command; problem flags
// are passed over). InvalidArgument for a flag whose value is not a number.
absl::Status ReadDriverRunFlags(const std::vector<std::string>& args, DriverRunFlags& flags);

struct DriverRunReport {
  bool verified = true;  // false: -V found a wrong output
};

// One problem as MIOpenDriver runs it (Find or -S, run, -t time, -V verify); a transposed one as
// its convolution (problem/transpose.h), printed as "runs as: LINE".
absl::StatusOr<DriverRunReport> RunDriverProblem(Handle& handle, const Problem& problem,
                                                 const DriverRunFlags& flags, std::ostream& out);

}  // namespace tuna::runtime

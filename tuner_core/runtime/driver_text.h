// MIOpenDriver's result lines, byte for byte (MIOpen driver/conv_driver.hpp: PrintForwardTime,
// PrintBackwardDataTime, the backward-weights printer, VerifyForward, VerifyBackward), so that
// scripts written for MIOpenDriver's output read `tuna driver`'s. Quirks are kept: the
// backward-data stats row lists x, y, k, ho, wo under a "ho, wo, x, y, k" header and counts
// n*c*k input bytes, its 3D row lacks a comma before flopCnt, backward weights reports 0 bytes.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner_core/problem/problem.h"

namespace tuna::runtime {

// MIOpenDriver's "average": the mean of the timed runs after the first (ComputeAverageTime with
// the first run's time taken out); one run: that run. 0 for none.
double MiopenAverageTime(const std::vector<double>& run_ms);

// "GPU Kernel Time Forward Conv. Elapsed: 0.123456 ms (average)\n" and the two "stats:" lines
// (header, row) of the problem's direction.
std::string MiopenTimeLines(const Problem& p, double average_ms);

// "Forward Convolution Verifies OK on CPU reference (1.2e-07 < 1.5e-06)\n" or
// "Forward Convolution FAILED: 0.5 > 1.5e-06\n" (Backward Convolution Data / Weights for B / W).
// `error` is MIOpen's rms_range and `tolerance` the RMS bound; when the result failed tuna's
// per-element check although the RMS error is within the bound, the FAILED line says so:
// "... FAILED: 12 elements outside tolerance (rms 1e-07 < 1.5e-06)".
std::string MiopenVerifyLine(const Problem& p, bool ok, double error, double tolerance,
                             int64_t mismatches);

}  // namespace tuna::runtime

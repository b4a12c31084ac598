// Checking a computed buffer (a GPU or CPU-kernel result) against the reference.
//
// Metrics, with ref the reference, got the result, scale = max |ref| over finite elements and
// L the reduction length (products summed per output element):
//   max_abs_error   max |got - ref| over elements where both are finite
//   max_rel_error   max_abs_error / (scale + tiny): error relative to the tensor's magnitude
//                   rather than the element's, so cancellation near zero is not punished
//   rms_error       MIOpen's rms_range: sqrt(sum (got-ref)^2) / (sqrt(count) *
//                   max(max|got|, max|ref|)); comparable with MIOpen's own tolerances
// Per element, got[i] passes when
//   |got - ref| <= element_rel * |ref| + element_abs * sqrt(L) * scale
// (the second term bounds accumulation error, which grows at most like sqrt(L) for sums in a
// different order); a non-finite got passes only where ref is the same infinity or also NaN.
// The result is ok when every element passes and
//   rms_error <= max(rms, rms_per_sqrt_l * sqrt(L)):
// a fixed RMS bound is right for short sums but not for a kernel that adds L = N*Ho*Wo (400k for
// a ResNet-50 backward-weights layer) products one after another in FP32, whose rounding error
// grows like sqrt(L) * eps/2 (random-walk model).
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/reference/element.h"

namespace tuna::reference {

struct Tolerance {
  double rms = 0;
  double element_rel = 0;
  double element_abs = 0;
  double rms_per_sqrt_l = 0;  // RMS bound growth with the reduction length
};

// For results whose inputs were the same storage values the reference used and that sum in
// at least FP32 (FP16/BF16 outputs rounded once): fp32 rms max(1.5e-6 (MIOpen's bound),
// 2^-25 * sqrt(L)), elements
// 1e-5 rel + 2e-6*sqrt(L)*scale; fp16 rms 8.2e-3 (MIOpen), 2^-10 rel + 5e-4*sqrt(L)*scale;
// bf16 rms 6.6e-2 (MIOpen's 8x), 2^-7 rel + 4e-3*sqrt(L)*scale; int8 (int32 output) exact.
// Solvers with transforms (Winograd, FFT) should pass a looser Tolerance explicitly.
Tolerance DefaultTolerance(DataType type);

struct VerifyReport {
  bool ok = false;
  int64_t count = 0;
  int64_t reduction_length = 1;
  double scale = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  double rms_error = 0;
  int64_t worst_index = -1;     // where max_abs_error occurs
  int64_t mismatches = 0;       // elements failing the per-element check
  int64_t first_mismatch = -1;  // lowest failing index (buffer element order), -1 if none
  double first_got = 0, first_expected = 0;
  std::string first_location;  // "n=.. c=.. d=.. h=.. w=.." when the desc is known
  int64_t got_nan = 0, got_inf = 0;  // non-finite elements in the result
  int64_t ref_nonfinite = 0;         // non-finite elements in the reference

  // One line for logs: ok/FAIL, the metrics and the first mismatch.
  std::string Summary() const;
};

// The sums a comparison is made of (what Compare accumulates, and what a device reduction
// returns: search/measure/device_compare.h). Defined as in the header comment above.
struct CompareSums {
  int64_t count = 0;
  double scale = 0;          // max |expected| over finite elements
  int64_t ref_nonfinite = 0;
  double max_got = 0;        // max |got| over finite elements
  int64_t got_nan = 0, got_inf = 0;
  double max_abs_error = 0;  // over elements where both are finite
  int64_t worst_index = -1;  // -1 when unknown
  double sum_sq = 0;         // of (got - expected) over elements where both are finite
  int64_t mismatches = 0;
  int64_t first_mismatch = -1;
  double first_got = 0, first_expected = 0;
};

// The per-element absolute bound: element_abs * sqrt(L) * scale.
double AbsBound(const Tolerance& tolerance, int64_t reduction_length, double scale);

// The report of those sums: metrics, and ok against the tolerance's RMS bound. `desc`, when
// given, names the first mismatch's coordinates.
VerifyReport FinishReport(const CompareSums& sums, int64_t reduction_length,
                          const Tolerance& tolerance, const TensorDesc* desc = nullptr);

// got and expected must have the same size.
VerifyReport Compare(std::span<const double> got, std::span<const double> expected,
                     int64_t reduction_length, const Tolerance& tolerance);

// A conv result for `direction` of p against the reference output of the same direction; both
// buffers are OutputType(p, direction) in OutputDesc(p, direction)'s layout. The reference
// may instead be FP64 (e.g. from ConvForwardF64): pass expected_is_f64 = true. Uses
// DefaultTolerance(p.data_type) unless a tolerance is given. InvalidArgument if p is malformed
// or a buffer is null.
absl::StatusOr<VerifyReport> VerifyConvOutput(const Problem& p, Direction direction,
                                              const void* got, const void* expected,
                                              bool expected_is_f64 = false,
                                              const Tolerance* tolerance = nullptr);

}  // namespace tuna::reference

#include "tuner_core/reference/verify.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_format.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"

namespace tuna::reference {
namespace {

constexpr double kTiny = std::numeric_limits<double>::min();

bool NonFiniteMatches(double got, double ref) {
  if (std::isnan(ref)) return std::isnan(got);
  return got == ref;  // same infinity
}

std::string Location(const TensorDesc& d, int64_t index) {
  // Find the logical coordinates whose offset is `index` (strides of a dense layout are a
  // permutation of a mixed-radix system: peel the largest stride first).
  std::array<int, 5> order{0, 1, 2, 3, 4};
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return d.strides[a] > d.strides[b]; });
  std::array<int64_t, 5> coord{};
  int64_t rest = index;
  for (int axis : order) {
    if (d.strides[axis] <= 0) continue;
    coord[axis] = rest / d.strides[axis];
    rest %= d.strides[axis];
  }
  return absl::StrFormat("n=%d c=%d d=%d h=%d w=%d", coord[0], coord[1], coord[2], coord[3],
                         coord[4]);
}

}  // namespace

Tolerance DefaultTolerance(DataType type) {
  switch (type) {
    case DataType::kFp32: return {1.5e-6, 1e-5, 2e-6, 0x1.0p-25};
    case DataType::kFp16: return {8.2e-3, 0x1.0p-10, 5e-4};
    case DataType::kBf16: return {8.2e-3 * 8, 0x1.0p-7, 4e-3};
    case DataType::kInt8: return {0, 0, 0};
  }
  return {};
}

std::string VerifyReport::Summary() const {
  std::string s = absl::StrFormat(
      "%s: %d elements, L=%d, scale=%g, max_abs=%g, max_rel=%g, rms=%g, mismatches=%d, "
      "nan=%d, inf=%d",
      ok ? "ok" : "FAIL", count, reduction_length, scale, max_abs_error, max_rel_error,
      rms_error, mismatches, got_nan, got_inf);
  if (ref_nonfinite > 0) s += absl::StrFormat(", ref_nonfinite=%d", ref_nonfinite);
  if (first_mismatch >= 0) {
    s += absl::StrFormat("; first mismatch at %d%s%s: got %.9g expected %.9g", first_mismatch,
                         first_location.empty() ? "" : " ", first_location, first_got,
                         first_expected);
  }
  return s;
}

double AbsBound(const Tolerance& tol, int64_t reduction_length, double scale) {
  return tol.element_abs * std::sqrt(double(std::max<int64_t>(1, reduction_length))) * scale;
}

VerifyReport FinishReport(const CompareSums& s, int64_t reduction_length, const Tolerance& tol,
                          const TensorDesc* desc) {
  VerifyReport r;
  r.reduction_length = std::max<int64_t>(1, reduction_length);
  r.count = s.count;
  r.scale = s.scale;
  r.ref_nonfinite = s.ref_nonfinite;
  r.got_nan = s.got_nan;
  r.got_inf = s.got_inf;
  r.max_abs_error = s.max_abs_error;
  r.worst_index = s.worst_index;
  r.mismatches = s.mismatches;
  r.first_mismatch = s.first_mismatch;
  r.first_got = s.first_got;
  r.first_expected = s.first_expected;
  r.max_rel_error = r.max_abs_error / (r.scale + kTiny);
  r.rms_error = std::sqrt(s.sum_sq) /
                (std::sqrt(double(std::max<int64_t>(1, r.count))) *
                 std::max({s.max_got, r.scale, kTiny}));
  const double rms_bound =
      std::max(tol.rms, tol.rms_per_sqrt_l * std::sqrt(double(r.reduction_length)));
  r.ok = r.mismatches == 0 && r.rms_error <= rms_bound;
  if (desc != nullptr && r.first_mismatch >= 0) r.first_location = Location(*desc, r.first_mismatch);
  return r;
}

VerifyReport Compare(std::span<const double> got, std::span<const double> expected,
                     int64_t reduction_length, const Tolerance& tol) {
  if (got.size() != expected.size()) {
    VerifyReport r;
    r.reduction_length = std::max<int64_t>(1, reduction_length);
    r.first_location = absl::StrFormat("size mismatch: got %d expected %d elements",
                                       got.size(), expected.size());
    return r;
  }
  CompareSums s;
  s.count = static_cast<int64_t>(got.size());
  for (int64_t i = 0; i < s.count; ++i) {
    if (std::isfinite(expected[i])) s.scale = std::max(s.scale, std::fabs(expected[i]));
    else ++s.ref_nonfinite;
    if (std::isnan(got[i])) ++s.got_nan;
    else if (std::isinf(got[i])) ++s.got_inf;
    else s.max_got = std::max(s.max_got, std::fabs(got[i]));
  }
  const double abs_bound = AbsBound(tol, reduction_length, s.scale);
  for (int64_t i = 0; i < s.count; ++i) {
    const double g = got[i], e = expected[i];
    bool pass;
    if (!std::isfinite(g) || !std::isfinite(e)) {
      pass = NonFiniteMatches(g, e);
    } else {
      const double d = std::fabs(g - e);
      s.sum_sq += d * d;
      if (d > s.max_abs_error) {
        s.max_abs_error = d;
        s.worst_index = i;
      }
      pass = d <= tol.element_rel * std::fabs(e) + abs_bound;
    }
    if (!pass && s.mismatches++ == 0) {
      s.first_mismatch = i;
      s.first_got = g;
      s.first_expected = e;
    }
  }
  return FinishReport(s, reduction_length, tol);
}

absl::StatusOr<VerifyReport> VerifyConvOutput(const Problem& p, Direction direction,
                                              const void* got, const void* expected,
                                              bool expected_is_f64, const Tolerance* tolerance) {
  if (absl::Status s = CheckProblem(p); !s.ok()) return s;
  if (got == nullptr || expected == nullptr) {
    return absl::InvalidArgumentError("VerifyConvOutput: null buffer");
  }
  const TensorDesc desc = OutputDesc(p, direction);
  const int64_t count = desc.ElementCount();
  const ElementType type = OutputType(p, direction);
  const std::vector<double> g = ToDoubles(type, got, count);
  const std::vector<double> e =
      ToDoubles(expected_is_f64 ? ElementType::kFp64 : type, expected, count);
  const Tolerance tol = tolerance ? *tolerance : DefaultTolerance(p.data_type);
  VerifyReport r = Compare(g, e, ReductionLength(p, direction), tol);
  if (r.first_mismatch >= 0) r.first_location = Location(desc, r.first_mismatch);
  return r;
}

}  // namespace tuna::reference

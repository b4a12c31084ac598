// Perf configs and search spaces, declared as data.
//
// A solver's tuning space is an ordered list of named integer axes, each with its domain
// (the values it may take). A PerfConfig is one value per axis. From that one declaration
// follow: the perf-db `params` string (values joined by ',' in axis order, like MIOpen's
// SerDes<','>), the kernel specialisation (-DTUNA_<AXIS>=value), exhaustive enumeration,
// random sampling and the features of model-guided search. Axis names are lower_snake_case
// and prefixed by level (tb_, warp_, thread_, ...) as in CUTLASS.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tuna::solver {

struct ParamAxis {
  std::string name;
  std::vector<int64_t> values;  // non-empty, distinct
};

struct PerfConfig {
  std::vector<int64_t> values;  // one per axis; empty for non-tunable solvers
  bool operator==(const PerfConfig&) const = default;
  // MIOpen's params string: "128,64,8,4"; "" for an empty config.
  std::string ToString() const;
};

class SearchSpace {
 public:
  SearchSpace() = default;
  explicit SearchSpace(std::vector<ParamAxis> axes) : axes_(std::move(axes)) {}

  const std::vector<ParamAxis>& axes() const { return axes_; }
  bool empty() const { return axes_.empty(); }
  // Number of points of the full cartesian product (before validity filtering), saturating.
  uint64_t Size() const;
  // The index-th point in odometer order (last axis fastest); index < Size().
  PerfConfig At(uint64_t index) const;
  // True when the config has one value per axis and each value is in its axis's domain.
  bool Contains(const PerfConfig& config) const;
  // Parses a params string; InvalidArgument naming the field when a value is missing,
  // malformed or outside its domain.
  absl::StatusOr<PerfConfig> Parse(std::string_view params) const;
  // -DTUNA_<UPPER_AXIS>=<value> per axis.
  std::vector<std::string> Defines(const PerfConfig& config) const;
  // "tb_m=128 tb_n=64 ..." for logs.
  std::string Describe(const PerfConfig& config) const;

 private:
  std::vector<ParamAxis> axes_;
};

// Domain helpers: {lo, lo*2, ..., hi} and {lo, lo+step, ..., hi}.
std::vector<int64_t> Pow2Range(int64_t lo, int64_t hi);
std::vector<int64_t> LinearRange(int64_t lo, int64_t hi, int64_t step = 1);

}  // namespace tuna::solver

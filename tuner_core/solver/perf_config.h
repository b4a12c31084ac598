// Perf configs and search spaces, declared as data.
//
// A solver's tuning space is an ordered list of named integer axes, each with its domain
// (the values it may take). A PerfConfig is one value per axis. From that one declaration
// follow: the perf-db `params` string (values joined by ',' in axis order, like MIOpen's
// SerDes<','>), the kernel specialisation (-D<AXIS>=value, the name verbatim), exhaustive
// enumeration, random sampling and the features of model-guided search.
//
// Axis names are the kernel's -D names, UPPER_CASE and named by CUTLASS level and GEMM
// dimension: TB_M/TB_N/TB_K (block tile), WARP_M/WARP_N, WG_M (warpgroups), THREAD_M/THREAD_N
// (register tile), STAGES, SPLIT_K. M, N, K are the dimensions of the solver's GEMM; each
// implicit-GEMM solver's header says what they are per direction. Solvers read values by name
// (Value) and write configs by name (Make); the position of an axis matters only to the params
// string, so the order of an existing solver's axes never changes (stored params stay readable).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tuna::solver {

// Who reads an axis.
enum class AxisUse {
  kDefine,  // the kernel: Defines() emits -D<name>=<value>
  kSolver,  // the solver only (launch shape, kernel arguments, derived options): no -D
};

struct ParamAxis {
  std::string name;             // UPPER_CASE; for kDefine, the macro the kernel reads
  std::vector<int64_t> values;  // non-empty, distinct
  AxisUse use = AxisUse::kDefine;
  // For an axis appended to an existing solver's space: the value that params strings written
  // before it existed (one field short per such trailing axis) stand for. Unset: required.
  std::optional<int64_t> absent;
  // False for an axis the search does not vary: a search holds it at values.front(), and only
  // the finishing step after the search sets another value (Solver::Specialize). Size, At and
  // the strategies' indices skip it; Parse, Contains and TryMake take every value of its domain
  // (TryMake: values.front() when not given).
  bool searched = true;
};

// A config written by name: {{"TB_M", 128}, {"TB_N", 64}, ...}, any order.
using NamedValues = std::vector<std::pair<std::string_view, int64_t>>;

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
  // Number of points of the cartesian product of the searched axes (before validity filtering),
  // saturating.
  uint64_t Size() const;
  // The index-th point in odometer order over the searched axes (last axis fastest), the others
  // at their first value; index < Size().
  PerfConfig At(uint64_t index) const;
  // The index of `config`'s searched values (At(*Index(c)) is c with the axes not searched at
  // their first value); nullopt when a value lies outside its domain or the size is wrong.
  std::optional<uint64_t> Index(const PerfConfig& config) const;
  // `config` with the axes not searched at their first value: the point a search times for it
  // (a winner that the finishing step specialised, read back as a warm start elsewhere).
  PerfConfig Searched(PerfConfig config) const;
  // True when the config has one value per axis and each value is in its axis's domain.
  bool Contains(const PerfConfig& config) const;
  // Parses a params string; InvalidArgument naming the field when a value is missing,
  // malformed or outside its domain. Trailing axes with an `absent` value may be missing (params
  // stored before those axes existed) and take that value.
  absl::StatusOr<PerfConfig> Parse(std::string_view params) const;
  // The position of `axis`, or -1 when the space has no such axis.
  int IndexOf(std::string_view axis) const;
  // The value of `axis` in `config`; InvalidArgument when the space has no such axis or the
  // config has no value for it.
  absl::StatusOr<int64_t> Find(const PerfConfig& config, std::string_view axis) const;
  // The value of `axis` in `config`, for a solver reading its own axes from a config of its own
  // space: an unknown axis or a short config is a programming error and aborts, naming the axis.
  int64_t Value(const PerfConfig& config, std::string_view axis) const;
  // The config with the given named values: every searched axis named exactly once (an axis not
  // searched may be left out: its first value), each value in its domain; else InvalidArgument
  // naming the axis (unknown, repeated, missing or out of domain).
  absl::StatusOr<PerfConfig> TryMake(const NamedValues& named) const;
  // TryMake for a solver's own constants (defaults, probes): a mismatch aborts with its message.
  PerfConfig Make(const NamedValues& named) const;
  // -D<AXIS>=<value> per kDefine axis, in axis order, the name verbatim.
  std::vector<std::string> Defines(const PerfConfig& config) const;
  // "TB_M=128 TB_N=64 ..." for logs (every axis).
  std::string Describe(const PerfConfig& config) const;

 private:
  std::string AxisNames() const;  // "TB_M,TB_N,..." for messages

  std::vector<ParamAxis> axes_;
};

// Domain helpers: {lo, lo*2, ..., hi} and {lo, lo+step, ..., hi}.
std::vector<int64_t> Pow2Range(int64_t lo, int64_t hi);
std::vector<int64_t> LinearRange(int64_t lo, int64_t hi, int64_t step = 1);

}  // namespace tuna::solver

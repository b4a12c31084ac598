// The solver contract (MIOpen's verbs, tuna's shape; see docs/ARCHITECTURE.md).
//
// A solver is a stateless const object with a stable name (its perf-db / find-db id). Every
// method is pure planning on the CPU: nothing here compiles, launches or times (search/ does).
//   IsApplicable   OK, or NotApplicable-style FailedPrecondition whose message says why
//                  ("requires NHWC", "groups > 1 not supported").
//   Space          the tuning axes for this problem (empty for non-tunable solvers).
//   DefaultConfig  constant-time heuristic choice; must be valid for any applicable problem.
//   IsValid        a config (e.g. read from a perf db) fits this problem and target.
//   GetSolution    kernels + launches + workspace for a valid config.
// Threads: all methods are const and safe to call concurrently.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/perf_config.h"
#include "tuner_core/solver/solution.h"
#include "tuner_core/solver/target.h"

namespace tuna::solver {

// MIOpen's algorithm families (the find db's third field is derived from them).
enum class Algorithm { kDirect, kGemm, kImplicitGemm, kWinograd, kFft };

class Solver {
 public:
  virtual ~Solver() = default;

  virtual std::string_view Name() const = 0;
  virtual Algorithm Algo() const = 0;
  virtual bool IsTunable() const = 0;
  // MIOpen's "dynamic": one compiled kernel serves every problem size (no -D of sizes).
  virtual bool IsDynamic() const { return false; }
  // A generic fallback for `problem` on `target` (any shape, no specialised data path, a data
  // path the target's own family supersedes, or one that wastes most of its work on this
  // problem): where a specialised tunable solver also applies to the problem, the tuner searches
  // it briefly (search::kGenericBudget), and its jobs come after the config's others (job_loader.h).
  virtual bool IsGeneric(const Target& target, const Problem& problem) const {
    (void)target, (void)problem;
    return false;
  }
  virtual std::vector<Direction> Directions() const = 0;

  virtual absl::Status IsApplicable(const Target& target, const Problem& problem) const = 0;
  virtual SearchSpace Space(const Target& target, const Problem& problem) const {
    (void)target, (void)problem;
    return {};
  }
  virtual PerfConfig DefaultConfig(const Target& target, const Problem& problem) const {
    (void)target, (void)problem;
    return {};
  }
  // Default: the config lies in Space(). Solvers add their own constraints (shared memory,
  // divisibility, register budget) by overriding and calling this first.
  virtual absl::Status IsValid(const Target& target, const Problem& problem,
                               const PerfConfig& config) const;
  virtual absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                               const PerfConfig& config) const = 0;
  // The finishing step of a search (search::Tuner): `config`, the search's winner for `problem`,
  // as a build for this problem alone (its sizes compiled in), given as a config of Space() that
  // sets an axis the search holds still (ParamAxis::searched false). nullopt where the solver
  // has none for this problem or `config` already is one. The tuner verifies it and times it
  // against `config`, interleaved, and keeps the faster. Offered only where it measurably pays.
  virtual std::optional<PerfConfig> Specialize(const Target& target, const Problem& problem,
                                               const PerfConfig& config) const {
    (void)target, (void)problem, (void)config;
    return std::nullopt;
  }

 protected:
  // How IsValid starts in a solver whose configs are valid only for the problems it handles
  // (GetSolution agrees): Solver::IsValid (the config lies in Space()), then IsApplicable's
  // refusal as InvalidArgument with its message. The solver's own constraints follow.
  absl::Status IsValidWhereApplicable(const Target& target, const Problem& problem,
                                      const PerfConfig& config) const;
};

// The planning verbs a tunable solver overrides (the contract above), declared in its class body:
//   class MySolver : public Solver { public: ... TUNA_TUNABLE_SOLVER_VERBS ... };
#define TUNA_TUNABLE_SOLVER_VERBS                                                                    \
  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;           \
  SearchSpace Space(const Target& target, const Problem& problem) const override;                   \
  PerfConfig DefaultConfig(const Target& target, const Problem& problem) const override;            \
  absl::Status IsValid(const Target& target, const Problem& problem, const PerfConfig& config)      \
      const override;                                                                               \
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,                \
                                       const PerfConfig& config) const override;

// "miopenConvolutionFwdAlgoImplicitGEMM" etc. (MIOpen src/conv_algo_name.cpp).
std::string_view FindDbAlgorithmName(Algorithm algo, Direction direction);

// FailedPrecondition("<solver>: <reason>") — the applicability "no" with its reason.
absl::Status NotApplicable(std::string_view solver, std::string_view reason);

// InvalidArgument("<solver>: params '<config>': <reason>") — a config IsValid refuses, and why.
absl::Status InvalidConfig(std::string_view solver, const PerfConfig& config, std::string_view reason);

}  // namespace tuna::solver

// Compile stage of a measurement (TVM's Builder; tuna's *_compile step): per candidate,
// GetSolution then CompileSolution, on a pool of CPU threads. Needs no device, so it also
// serves dry runs and compile-only workers.
//
// Errors are data: each candidate gets its own result (kPassed = compiled, kNotApplicable =
// IsValid refused the config, kCompileFailed = GetSolution or the compiler failed, with the
// message); a failure never aborts the batch.
//
// Identical kernel builds (same source, options, entries and arch) are compiled once per
// Compiler and shared: "dynamic" solvers build one kernel for every config and problem. With a
// pool, the candidates whose kernels are all at hand (this Compiler's or the backend's cache:
// Backend::Lookup) are resolved on the calling thread first and only the others wait for the
// pool's threads, so a job whose kernels are cached never queues behind other jobs' builds.
//
// Threads: Compile may be called from several threads; the Backend (and the pool, if any) must
// outlive the Compiler.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tuner_core/backend/backend.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/search/measure/compile_control.h"
#include "tuner_core/search/measure/compile_pool.h"
#include "tuner_core/search/measure/disposition.h"
#include "tuner_core/solver/perf_config.h"
#include "tuner_core/solver/solution.h"
#include "tuner_core/solver/solver.h"
#include "tuner_core/solver/target.h"

namespace tuna::search {

struct CompiledCandidate {
  solver::PerfConfig config;
  Disposition disposition = Disposition::kSkipped;  // kPassed when `code` is ready to load
  std::string error;
  solver::Solution solution;
  std::vector<backend::CodeObject> code;  // one per solution kernel (shared_ptr-free copies)
  double compile_ms = 0;                  // wall time of this candidate (0 on a cache hit)
};

struct CompilerOptions {
  int threads = 0;  // 0 = hardware concurrency; ignored with a pool
  // Threads shared with other Compilers (compile_pool.h): this Compiler's candidates are
  // served after those of Compilers made before it. Null: threads of its own per Compile.
  CompilePool* pool = nullptr;
};

class Compiler {
 public:
  Compiler(const backend::Backend& backend, solver::Target target, CompilerOptions options = {});

  // One result per config, in order. `control` (optional; compile_control.h): once cancelled,
  // candidates not started yet are not built (kSkipped, "cancelled"); those being built finish,
  // on this Compiler's own threads at the lower priority Cancel asks for.
  std::vector<CompiledCandidate> Compile(const solver::Solver& solver, const Problem& problem,
                                         const std::vector<solver::PerfConfig>& configs,
                                         CompileControl* control = nullptr);
  // A single candidate on the calling thread.
  CompiledCandidate CompileOne(const solver::Solver& solver, const Problem& problem,
                               const solver::PerfConfig& config);

  const solver::Target& target() const { return target_; }
  size_t cache_size() const;
  // Candidates compiled at once: the pool's threads, else the threads option resolved.
  int threads() const;

 private:
  // CompileOne's work; with `may_build` false, nullopt instead of running the compiler for a
  // kernel that neither this Compiler nor the backend (Backend::Lookup) has at hand.
  std::optional<CompiledCandidate> Resolve(const solver::Solver& solver, const Problem& problem,
                                           const solver::PerfConfig& config, bool may_build);

  const backend::Backend& backend_;
  solver::Target target_;
  CompilerOptions options_;
  uint64_t ticket_ = 0;  // this Compiler's place in the pool's order
  mutable std::mutex mu_;
  std::map<std::string, backend::CodeObject> cache_;  // guarded by mu_
};

}  // namespace tuna::search

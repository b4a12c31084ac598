#include "tuner_core/search/measure/compiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/backend/kernel_identity.h"
#include "tuner_core/solver/invoker.h"

namespace tuna::search {
Compiler::Compiler(const backend::Backend& backend, solver::Target target, CompilerOptions options)
    : backend_(backend),
      target_(std::move(target)),
      options_(options),
      ticket_(options.pool ? options.pool->NewTicket() : 0) {}

int Compiler::threads() const {
  if (options_.pool) return options_.pool->threads();
  return options_.threads > 0 ? options_.threads
                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

size_t Compiler::cache_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

CompiledCandidate Compiler::CompileOne(const solver::Solver& solver, const Problem& problem,
                                       const solver::PerfConfig& config) {
  return *Resolve(solver, problem, config, true);
}

std::optional<CompiledCandidate> Compiler::Resolve(const solver::Solver& solver, const Problem& problem,
                                                   const solver::PerfConfig& config, bool may_build) {
  CompiledCandidate out;
  out.config = config;
  const auto t0 = std::chrono::steady_clock::now();
  if (absl::Status valid = solver.IsValid(target_, problem, config); !valid.ok()) {
    out.disposition = Disposition::kNotApplicable;
    out.error = std::string(valid.message());
    return out;
  }
  absl::StatusOr<solver::Solution> solution = solver.GetSolution(target_, problem, config);
  if (!solution.ok()) {
    // A FailedPrecondition from GetSolution is the solver saying "not for this problem".
    out.disposition = absl::IsFailedPrecondition(solution.status()) ? Disposition::kNotApplicable
                                                                    : Disposition::kCompileFailed;
    out.error = absl::StrCat("GetSolution: ", solution.status().ToString());
    return out;
  }
  out.solution = *std::move(solution);
  bool compiled_any = false;
  for (const solver::KernelBuild& k : out.solution.kernels) {
    // Kernels are shared across candidates by identity (a source not embedded fails below).
    absl::StatusOr<backend::CompileRequest> request = solver::CompileRequestFor(k, target_.arch);
    const std::string key = request.ok() ? backend::KernelIdentity(backend_, *request) : "";
    if (request.ok()) {
      std::unique_lock<std::mutex> lock(mu_);
      auto it = cache_.find(key);
      if (it != cache_.end()) {
        out.code.push_back(it->second);
        continue;
      }
      lock.unlock();
      if (std::optional<backend::CodeObject> at_hand = backend_.Lookup(*request)) {
        lock.lock();
        cache_.emplace(key, *at_hand);
        out.code.push_back(*std::move(at_hand));
        continue;
      }
    }
    if (!may_build) return std::nullopt;
    solver::Solution one;
    one.kernels.push_back(k);
    absl::StatusOr<std::vector<backend::CodeObject>> code =
        solver::CompileSolution(backend_, one, target_.arch);
    if (!code.ok()) {
      out.disposition = Disposition::kCompileFailed;
      out.error = code.status().ToString();
      out.code.clear();
      out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return out;
    }
    compiled_any = true;
    std::lock_guard<std::mutex> lock(mu_);
    if (!key.empty()) cache_.emplace(key, code->front());
    out.code.push_back(std::move(code->front()));
  }
  out.disposition = Disposition::kPassed;
  if (compiled_any) {
    out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return out;
}

std::vector<CompiledCandidate> Compiler::Compile(const solver::Solver& solver, const Problem& problem,
                                                 const std::vector<solver::PerfConfig>& configs,
                                                 CompileControl* control) {
  std::vector<CompiledCandidate> out(configs.size());
  // `own`: on a thread this call started (a CompileControl may lower it).
  const auto one = [&](size_t i, bool own) {
    if (control != nullptr && !control->Enter(own)) {
      out[i].config = configs[i];
      out[i].disposition = Disposition::kSkipped;
      out[i].error = "cancelled";
      return;
    }
    out[i] = CompileOne(solver, problem, configs[i]);
    if (control != nullptr) control->Leave(own);
  };
  if (options_.pool) {
    std::vector<size_t> to_build;
    for (size_t i = 0; i < configs.size(); ++i) {
      if (control != nullptr && control->cancelled()) {
        to_build.push_back(i);  // skipped by `one` below, as the pool would
      } else if (std::optional<CompiledCandidate> at_hand = Resolve(solver, problem, configs[i], false)) {
        out[i] = *std::move(at_hand);
      } else {
        to_build.push_back(i);
      }
    }
    if (!to_build.empty()) options_.pool->Run(ticket_, to_build.size(), [&](size_t j) { one(to_build[j], false); });
    return out;
  }
  const int threads = std::min<int>(this->threads(), static_cast<int>(configs.size()));
  if (threads <= 1) {
    for (size_t i = 0; i < configs.size(); ++i) one(i, false);
    return out;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < configs.size(); i = next++) one(i, true);
    });
  }
  for (std::thread& t : pool) t.join();
  return out;
}

}  // namespace tuna::search

// The runtime handle (MIOpen's miopenHandle_t): one backend, one opened device, the
// configuration (RuntimeConfig, parsed once by the caller and passed in: no global state), the
// dbs (runtime_db.h), the kernel cache (kernel_cache.h) and the invokers prepared so far
// (MIOpen's invoker cache, keyed by problem + solver + perf config).
//
// Ownership: the Handle owns its backend, device, dbs, cache and invokers; buffers passed to
// the convolution calls stay the caller's. Threads: one thread at a time (MIOpen's handles are
// not thread-safe either). Errors: absl::Status, never exceptions.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tuner_core/backend/backend.h"
#include "tuner_core/backend/registry.h"
#include "tuner_core/heuristics/models.h"
#include "tuner_core/runtime/fallback.h"
#include "tuner_core/runtime/find_controls.h"
#include "tuner_core/runtime/kernel_cache.h"
#include "tuner_core/runtime/runtime_db.h"
#include "tuner_core/solver/invoker.h"
#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::runtime {

struct HandleOptions {
  RuntimeConfig config;
  int device = 0;
  // Receives each MIOPEN_ENABLE_LOGGING_CMD line (no newline); null = std::cerr.
  std::function<void(const std::string&)> log_sink;
  // Null = SolverRegistry::Builtin(). Must outlive the handle.
  const solver::SolverRegistry* registry = nullptr;
  backend::DetectOptions detect = backend::DetectOptions::FromEnv();
};

// A prepared solution: its perf config, plan and loaded kernels.
struct PreparedInvoker {
  uint64_t solver_id = 0;
  std::string params;
  std::string params_source;  // where the params came from ("user db", "heuristics model", ...)
  solver::Solution solution;
  std::unique_ptr<solver::Invoker> invoker;
};

class Handle {
 public:
  // Opens config.backend ("cpu", "cuda", "hip"), or when empty the first usable backend that
  // can both compile and run in the order cuda, hip, cpu. Unavailable when it cannot.
  static absl::StatusOr<std::unique_ptr<Handle>> Create(HandleOptions options);

  const RuntimeConfig& config() const { return options_.config; }
  const backend::Backend& backend() const { return *backend_; }
  backend::Device& device() { return *device_; }
  const solver::Target& target() const { return target_; }
  const solver::SolverRegistry& registry() const { return *registry_; }
  const DeviceModel& model() const { return model_; }
  RuntimeDb& db() { return *db_; }
  KernelCache& kernels() { return *kernels_; }
  // The learned heuristics of this device's db basename (heuristics/models.h), loaded once at
  // Create from the user db dir, else the system db dir; null when neither has them (or they do
  // not load: logged as a warning). `heuristics_origin()` says which dir ("user db", "system db").
  const std::shared_ptr<const heuristics::Models>& heuristics() const { return heuristics_; }
  const std::string& heuristics_origin() const { return heuristics_origin_; }
  // Params predicted per (problem, solver) key, kept so one problem is ranked once per handle.
  std::map<std::string, solver::PerfConfig>& predicted_params() { return predicted_params_; }

  // The LOGGING_CMD sink (only called when config().logging_cmd).
  void LogCommand(const std::string& line) const;

  // Invoker cache (MIOpen: per network config and solver).
  PreparedInvoker* FindInvoker(const std::string& key);
  PreparedInvoker* StoreInvoker(const std::string& key, PreparedInvoker prepared);
  // True when an invoker for (problem, solver) exists in this handle whatever its params.
  bool HasInvokerFor(const std::string& problem_key, uint64_t solver_id) const;

 private:
  Handle() = default;
  HandleOptions options_;
  const solver::SolverRegistry* registry_ = nullptr;
  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<backend::Device> device_;
  solver::Target target_;
  DeviceModel model_;
  std::unique_ptr<RuntimeDb> db_;
  std::unique_ptr<KernelCache> kernels_;
  std::shared_ptr<const heuristics::Models> heuristics_;
  std::string heuristics_origin_;
  std::map<std::string, solver::PerfConfig> predicted_params_;
  // Declared last: invokers reference device_ and are destroyed before it.
  std::map<std::string, PreparedInvoker> invokers_;
};

}  // namespace tuna::runtime

#include "tuner_core/runtime/handle.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/runtime/db_files.h"

namespace tuna::runtime {
namespace {

absl::StatusOr<std::unique_ptr<backend::Backend>> OpenConfiguredBackend(const std::string& name,
                                                                        const backend::DetectOptions& detect) {
  if (!name.empty()) {
    absl::StatusOr<backend::BackendKind> kind = backend::ParseBackendKind(name);
    if (!kind.ok()) return kind.status();
    return backend::OpenBackend(*kind, detect);
  }
  std::string why;
  for (backend::DetectedBackend& d : backend::DetectBackends(detect)) {
    const absl::Status c = d.backend->CompilerStatus(), r = d.backend->DriverStatus();
    if (c.ok() && r.ok()) return std::move(d.backend);
    absl::StrAppend(&why, " ", backend::BackendKindName(d.kind), ": ", (c.ok() ? r : c).message(), ";");
  }
  return absl::UnavailableError(absl::StrCat("no backend can compile and run here:", why));
}

// The heuristics of `basename`: the user dir's, else the system dir's (a dir without them is
// skipped; one whose files do not load is reported and skipped).
void LoadHeuristics(const RuntimeConfig& c, const std::string& basename, std::shared_ptr<const heuristics::Models>& out,
                    std::string& origin) {
  const std::pair<const std::string*, const char*> dirs[] = {{&c.user_db_dir, "user db"}, {&c.system_db_dir, "system db"}};
  for (const auto& [dir, name] : dirs) {
    if (dir->empty()) continue;
    absl::StatusOr<std::shared_ptr<const heuristics::Models>> m = heuristics::Models::Load(*dir, basename);
    if (m.ok()) {
      spdlog::debug("runtime: heuristics models of {} from {} ({})", basename, *dir, name);
      out = *std::move(m);
      origin = name;
      return;
    }
    if (!absl::IsNotFound(m.status())) spdlog::warn("heuristics models in {} not used: {}", *dir, m.status().ToString());
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Handle>> Handle::Create(HandleOptions options) {
  std::unique_ptr<Handle> h(new Handle());
  h->registry_ = options.registry != nullptr ? options.registry : &solver::SolverRegistry::Builtin();
  absl::StatusOr<std::unique_ptr<backend::Backend>> be = OpenConfiguredBackend(options.config.backend, options.detect);
  if (!be.ok()) return be.status();
  h->backend_ = *std::move(be);
  if (absl::Status st = h->backend_->CompilerStatus(); !st.ok()) {
    return absl::UnavailableError(absl::StrCat(h->backend_->Name(), " compiler: ", st.message()));
  }
  absl::StatusOr<std::unique_ptr<backend::Device>> dev = h->backend_->OpenDevice(options.device);
  if (!dev.ok()) return dev.status();
  h->device_ = *std::move(dev);
  const backend::DeviceInfo& info = h->device_->Info();
  h->target_ = solver::TargetForDevice(h->backend_->Kind(), info);
  h->model_ = ModelForDevice(h->backend_->Kind(), info);
  const int cu = options.config.device_cu > 0 ? options.config.device_cu : info.compute_units;
  DbFiles files = MakeDbFiles(h->backend_->Kind(), h->target_.arch, cu, options.config.system_db_dir,
                              options.config.user_db_dir);
  spdlog::debug("runtime: {} {} ({}), db basename {}, user find db '{}', system find db '{}'",
                h->backend_->Name(), info.name, h->target_.arch, files.basename, files.user_find_db,
                files.system_find_db);
  std::vector<std::string> kdbs = {files.system_kdb, files.system_kdb_arch};
  h->db_ = std::make_unique<RuntimeDb>(files, options.config.disable_find_db);
  h->kernels_ = std::make_unique<KernelCache>(
      *h->backend_, h->target_.arch,
      options.config.disable_kernel_cache ? std::string() : options.config.kernel_cache_dir, std::move(kdbs));
  LoadHeuristics(options.config, files.basename, h->heuristics_, h->heuristics_origin_);
  h->options_ = std::move(options);
  return h;
}

void Handle::LogCommand(const std::string& line) const {
  if (options_.log_sink) {
    options_.log_sink(line);
  } else {
    std::cerr << line << "\n";
  }
}

PreparedInvoker* Handle::FindInvoker(const std::string& key) {
  auto it = invokers_.find(key);
  return it == invokers_.end() ? nullptr : &it->second;
}

PreparedInvoker* Handle::StoreInvoker(const std::string& key, PreparedInvoker prepared) {
  return &(invokers_[key] = std::move(prepared));
}

bool Handle::HasInvokerFor(const std::string& problem_key, uint64_t solver_id) const {
  const std::string prefix = absl::StrCat(problem_key, "|", solver_id, "|");
  auto it = invokers_.lower_bound(prefix);
  return it != invokers_.end() && it->first.starts_with(prefix);
}

}  // namespace tuna::runtime

#include "admin/session_target.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tuner_core/backend/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::admin {
namespace {

std::string ColumnName(backend::BackendKind k) {
  return absl::AsciiStrToUpper(backend::BackendKindName(k));  // the session.backend ENUM
}

}  // namespace

absl::Status DetectSessionTarget(const DetectTargetOptions& options, schema::SessionRecord* s) {
  std::string why;
  for (const backend::DetectedBackend& d :
       backend::DetectBackends(backend::DetectOptions::FromEnv())) {
    if (!options.backend.empty() && options.backend != backend::BackendKindName(d.kind)) continue;
    auto devices = d.backend->ListDevices();
    const absl::Status compiler =
        options.require_compiler ? d.backend->CompilerStatus() : absl::OkStatus();
    if (!d.usable || !devices.ok() || devices->empty() || !compiler.ok()) {
      absl::StrAppend(&why, "\n  ", backend::BackendKindName(d.kind), ": ",
                      !devices.ok()       ? std::string(devices.status().message())
                      : devices->empty()  ? std::string("no device")
                      : !compiler.ok()    ? std::string(compiler.message())
                                          : std::string("not usable"));
      continue;
    }
    const backend::DeviceInfo& dev = (*devices)[0];
    s->arch = dev.arch;
    s->num_cu = dev.compute_units;
    s->backend = ColumnName(d.kind);
    s->compiler_versions = d.backend->CompilerVersion();
    return absl::OkStatus();
  }
  return absl::UnavailableError(absl::StrCat(
      "no usable device", options.backend.empty() ? "" : " for ", options.backend, ":", why));
}

absl::Status SessionTargetForArch(const std::string& arch, int num_cu, const std::string& backend,
                                  schema::SessionRecord* s) {
  auto target = solver::TargetForArch(arch, num_cu);  // validates the arch
  if (!target.ok()) return target.status();
  backend::BackendKind kind = target->backend;
  if (!backend.empty()) {
    auto parsed = backend::ParseBackendKind(absl::AsciiStrToLower(backend));
    if (!parsed.ok()) return parsed.status();
    if (*parsed != kind) {
      return absl::InvalidArgumentError("backend " + backend + " does not match arch " + arch);
    }
  }
  s->arch = arch;
  s->num_cu = target->num_cu;
  s->backend = ColumnName(kind);
  // The compiler's version when this host has it; a head node without it records none.
  auto b = backend::OpenBackend(kind, backend::DetectOptions::FromEnv());
  if (b.ok()) s->compiler_versions = (*b)->CompilerVersion();
  return absl::OkStatus();
}

}  // namespace tuna::admin

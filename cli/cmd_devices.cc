// `tuna devices [--json]`: what this host can compile for and run on, per backend.
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/json_text.h"
#include "tuner_core/backend/registry.h"

namespace tuna::cli {
namespace {

Json StatusJson(const absl::Status& st) { return st.ok() ? Json() : Json(st.ToString()); }

Json DeviceJson(const backend::DeviceInfo& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"arch", d.arch},
          {"compute_units", d.compute_units},
          {"global_memory_bytes", d.global_memory_bytes},
          {"clock_mhz", d.clock_mhz},
          {"warp_size", d.warp_size},
          {"shared_memory_per_block", d.shared_memory_per_block},
          {"shared_memory_per_block_optin", d.shared_memory_per_block_optin},
          {"l2_cache_bytes", d.l2_cache_bytes}};
}

// One backend of `devices --json`.
Json BackendJson(const backend::DetectedBackend& d,
                 const absl::StatusOr<std::vector<backend::DeviceInfo>>& devices,
                 const std::vector<std::string>& targets) {
  const backend::Backend& b = *d.backend;
  Json devs = Json::array();
  if (devices.ok()) {
    for (const auto& dev : *devices) devs.push_back(DeviceJson(dev));
  }
  return {{"backend", b.Name()},
          {"usable", d.usable},
          {"compiler", b.CompilerVersion()},
          {"compiler_error", StatusJson(b.CompilerStatus())},
          {"driver", b.DriverVersion()},
          {"driver_error", StatusJson(devices.status())},
          {"compile_targets", targets},
          {"devices", devs}};
}

int RunDevices(bool json, bool probe_targets) {
  std::vector<backend::DetectedBackend> found =
      backend::DetectBackends(backend::DetectOptions::FromEnv());
  Json json_backends = Json::array();
  for (const backend::DetectedBackend& d : found) {
    const backend::Backend& b = *d.backend;
    absl::StatusOr<std::vector<backend::DeviceInfo>> devices = b.ListDevices();
    std::vector<std::string> targets;
    if (probe_targets && b.CompilerStatus().ok()) targets = b.CompileTargets();
    if (json) {
      json_backends.push_back(BackendJson(d, devices, targets));
      continue;
    }
    std::cout << b.Name() << ": " << (d.usable ? "available" : "unavailable") << "\n";
    std::cout << "  compiler: "
              << (b.CompilerStatus().ok() ? b.CompilerVersion() : b.CompilerStatus().ToString())
              << "\n";
    if (probe_targets && b.CompilerStatus().ok()) {
      std::cout << "  compile targets: " << (targets.empty() ? "none" : absl::StrJoin(targets, " "))
                << "\n";
    }
    if (!devices.ok()) {
      std::cout << "  devices: none (" << devices.status().ToString() << ")\n";
      continue;
    }
    std::cout << "  driver: " << b.DriverVersion() << "\n";
    for (const backend::DeviceInfo& dev : *devices) {
      std::cout << "  [" << dev.index << "] " << dev.name << "  arch " << dev.arch << ", "
                << dev.compute_units << (d.kind == backend::BackendKind::kCpu ? " threads" : " CUs")
                << ", " << (dev.global_memory_bytes >> 20) << " MiB";
      if (dev.clock_mhz > 0) std::cout << ", " << dev.clock_mhz << " MHz";
      if (d.kind != backend::BackendKind::kCpu) {
        std::cout << ", warp " << dev.warp_size << ", shared/block "
                  << (dev.shared_memory_per_block >> 10) << " KiB";
        if (dev.shared_memory_per_block_optin > dev.shared_memory_per_block) {
          std::cout << " (opt-in " << (dev.shared_memory_per_block_optin >> 10) << " KiB)";
        }
      }
      if (dev.l2_cache_bytes > 0) std::cout << ", L2 " << (dev.l2_cache_bytes >> 10) << " KiB";
      std::cout << "\n";
    }
  }
  if (json) std::cout << JsonText(json_backends) << "\n";
  bool any = false;
  for (const auto& d : found) any = any || d.usable;
  return any ? 0 : 1;
}

}  // namespace

void AddDevicesCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand(
      "devices", "list backends (cuda, hip, cpu): compilers, compile targets and devices");
  auto json = std::make_shared<bool>(false);
  auto no_probe = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print one JSON array");
  cmd->add_flag("--no-probe", *no_probe,
                "skip probing the compile targets (hip tries each target once, ~1 s)");
  cmd->callback([ctx, json, no_probe] {
    *ctx.selected = [json, no_probe] { return RunDevices(*json, !*no_probe); };
  });
}

}  // namespace tuna::cli

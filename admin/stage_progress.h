// How the long admin steps report progress (import, import-db, applicability, jobs load); the CLI
// shows it (cli/progress.h). One callback takes every stage of a step, so the caller can show
// which part of a step is running: "configs written", "rows stored", ...
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "schema/store/config_store.h"

namespace tuna::admin {

// Stage name, work done and total (0: unknown). Called on the thread that runs the step.
using StageProgressFn = std::function<void(std::string_view stage, int64_t done, int64_t total)>;

// The store's (done, total) callback for one stage; empty when `progress` is.
inline schema::ProgressFn ForStage(const StageProgressFn& progress, std::string stage) {
  if (!progress) return nullptr;
  return [progress, stage = std::move(stage)](int64_t done, int64_t total) {
    progress(stage, done, total);
  };
}

}  // namespace tuna::admin

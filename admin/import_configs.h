// `tuna import`: MIOpenDriver command files -> conv_config + config_tag (DESIGN §1.1; MITuna's
// import_configs).
//
// The whole file is one transaction: either every line is imported or nothing is written.
// Lines are parsed first (all of them, so every bad line is reported at once); duplicates
// inside the file and configs already in the database merge by ConfigHash; only new
// (config, tag) pairs are added. A transposed line (`-m trans`) is stored as the convolution
// MIOpen runs it as (tuner_core/problem/transpose.h): same db keys, solved by every solver.
// Threads: safe to call concurrently (the database serialises conflicting imports).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "admin/stage_progress.h"
#include "schema/store/config_store.h"
#include "schema/store/database.h"

namespace tuna::admin {

struct ImportOptions {
  std::string tag;
  bool mark_recurrent = false;
  StageProgressFn progress;  // "lines parsed" (file only), "configs written", "configs tagged"
};

struct ImportReport {
  int64_t lines = 0;          // driver lines read (comments and blank lines not counted)
  int64_t problems = 0;       // problems they expand to (-F 0 gives three)
  int64_t unique_configs = 0; // distinct problems of the file
  int64_t configs_new = 0;
  int64_t configs_known = 0;  // unique_configs - configs_new
  int64_t tags_added = 0;     // (config, tag) rows added
  int64_t transposed = 0;     // problems of `-m trans` lines, stored as their convolutions
};

// Errors: InvalidArgument for a bad tag, an empty file, or bad lines — then the message lists
// every bad line as "line N: <reason>: <text>" and nothing was written; NotFound /
// PermissionDenied when the file cannot be read; the store's codes for database errors.
absl::StatusOr<ImportReport> ImportDriverText(schema::Database& db, const std::string& contents,
                                              const ImportOptions& options);
absl::StatusOr<ImportReport> ImportDriverFile(schema::Database& db, const std::string& path,
                                              const ImportOptions& options);

}  // namespace tuna::admin

// The exporter's format registry: one entry per file an export can write (perf db, find db,
// kernel db). ExportSession reads what the chosen formats need once (ExportInputs), then asks
// each chosen format, in registry order, to write its file as a temp; the temps are renamed
// together at the end (output_dir.h). A new format is one more entry here and one writer.
// Internal to //exporter; public for its tests.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "exporter/exporter.h"
#include "exporter/formats.h"
#include "schema/store/database.h"
#include "schema/store/result_store.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/problem/problem.h"

namespace tuna::exporter::internal {

// What the writers read, gathered once by ExportSession. Rows are read only when a chosen
// format needs them; `incoming_find` is folded when one needs find results.
struct ExportInputs {
  schema::Database* db = nullptr;
  const ExportOptions* options = nullptr;
  std::string basename;   // db::DbBasename of the (overridden) arch and CU count
  std::string backend;    // the session's backend: HIP, CUDA, CPU
  std::string bare_arch;  // -mcpu of the kdb keys
  std::vector<schema::FindResultRow> find_rows;
  std::vector<schema::PerfResultRow> perf_rows;
  std::map<int64_t, Problem> problems;        // of the configs the rows name
  std::optional<db::FindDb> existing_find;    // the merge dir's find db (it also times perf rows)
  IncomingFind incoming_find;
  // The file of `name` in the merge dir; nullopt without a merge.
  std::optional<std::string> MergePath(const std::string& name) const;
  void Progress(std::string_view stage, int64_t done, int64_t total) const;
};

struct FormatExporter {
  ExportFormat format;
  bool needs_find_results = false;  // reads the session's find results (and folds them)
  bool needs_perf_results = false;
  bool needs_merge_find_db = false;  // with a merge dir, reads its find db (existing_find)
  // The file's name for a basename and backend.
  std::string (*file_name)(const std::string& basename, const std::string& backend) = nullptr;
  // Writes the file as `path` (a temp that ExportSession renames later). May add to the
  // report's counters and warnings; the returned FileReport is stored in `report->*slot`.
  absl::StatusOr<FileReport> (*write)(const ExportInputs& in, const std::string& path,
                                      ExportReport* report) = nullptr;
  FileReport ExportReport::*slot = nullptr;
};

// Every format, in writing and commit order (perf db, text perf db, find db, kernel db).
const std::vector<FormatExporter>& FormatExporters();

// The registry entries of each file (perf_db_export.cc, find_db_export.cc, kernel_db_export.cc).
FormatExporter PerfDbExporter();
FormatExporter PerfDbTextExporter();
FormatExporter FindDbExporter();
FormatExporter KernelDbExporter();

}  // namespace tuna::exporter::internal

// ExportSession: reads the session's exportable results, then writes each requested file.
#include "exporter/exporter.h"

#include <filesystem>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exporter/formats.h"
#include "exporter/output_dir.h"
#include "jobs/job_state.h"
#include "spdlog/spdlog.h"
#include "tuner_core/db/db_basename.h"

namespace tuna::exporter {
namespace {

namespace fs = std::filesystem;

void Progress(const ExportOptions& o, std::string_view stage, int64_t done, int64_t total) {
  if (o.progress) o.progress(stage, done, total);
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return (fs::path(dir.empty() ? "." : dir) / name).string();
}

}  // namespace

std::string PerfDbFileName(const std::string& basename) { return basename + ".db"; }
std::string FindDbFileName(const std::string& basename, const std::string& backend) {
  return absl::StrCat(basename, ".", backend, ".fdb.txt");
}
std::string KernelDbFileName(const std::string& basename) { return basename + ".kdb"; }

std::string BareArch(std::string_view arch) {
  return std::string(arch.substr(0, arch.find(':')));
}

std::string DbArchId(std::string_view arch) {
  std::string id = BareArch(arch);
  if (arch.find(":xnack+") != std::string_view::npos) id += "_xnack";
  return id;
}

absl::StatusOr<ExportReport> ExportSession(schema::Database& db, const ExportOptions& o) {
  if (!o.perf_db && !o.find_db && !o.kernel_db) {
    return absl::InvalidArgumentError("nothing to export: no perf db, find db or kernel db chosen");
  }
  if ((o.find_db || o.kernel_db) && !o.algorithm_for) {
    return absl::InvalidArgumentError("exporting a find db or kernel db needs an algorithm resolver");
  }
  if (o.page_size <= 0) return absl::InvalidArgumentError("page_size must be positive");

  ExportReport report;
  auto session = schema::ReadSessionTarget(db, o.session_id);
  if (!session.ok()) return session.status();
  report.session = *session;

  // Completeness first, so that --require-complete refuses before any work.
  auto jobs = schema::CountSessionJobs(db, o.session_id);
  if (!jobs.ok()) return jobs.status();
  report.jobs = *jobs;
  std::vector<std::string> unfinished;
  for (const auto& j : report.jobs) {
    const std::optional<jobs::JobState> state = jobs::ParseJobState(j.state);
    if (!state || !jobs::IsUnfinished(*state)) continue;
    report.unfinished_jobs += j.count;
    unfinished.push_back(absl::StrCat(j.kind, " ", j.state, ": ", j.count));
  }
  if (o.require_complete && report.unfinished_jobs > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("session ", o.session_id, " has ", report.unfinished_jobs,
                     " unfinished jobs (", absl::StrJoin(unfinished, ", "), ")"));
  }

  const std::string arch = o.arch.value_or(report.session.arch);
  if (arch.empty()) return absl::InvalidArgumentError("empty arch");
  const int64_t num_cu = o.num_cu ? int64_t{*o.num_cu} : report.session.num_cu;
  if (num_cu <= 0 || num_cu > int64_t{UINT32_MAX}) {
    return absl::InvalidArgumentError(absl::StrCat("num_cu ", num_cu, " out of range"));
  }
  report.basename = db::DbBasename(DbArchId(arch), static_cast<uint32_t>(num_cu));
  std::optional<OutputDirLock> lock;
  if (o.lock_output_dir) {
    auto acquired = OutputDirLock::Acquire(o.output_dir);
    if (!acquired.ok()) return acquired.status();
    lock.emplace(*std::move(acquired));
  } else {
    std::error_code ec;
    fs::create_directories(o.output_dir.empty() ? "." : o.output_dir, ec);
    if (ec) {
      return absl::InternalError(absl::StrCat("cannot create ", o.output_dir, ": ", ec.message()));
    }
  }
  const std::string find_name = FindDbFileName(report.basename, report.session.backend);
  const std::string perf_path = JoinPath(o.output_dir, PerfDbFileName(report.basename));
  const std::string find_path = JoinPath(o.output_dir, find_name);
  const std::string kdb_path = JoinPath(o.output_dir, KernelDbFileName(report.basename));
  RemoveStaleTemps(o.output_dir, {PerfDbFileName(report.basename), find_name,
                                  KernelDbFileName(report.basename)});
  // The files written so far as `<path>.tuna-new`, renamed together at the end.
  std::vector<std::string> written_paths;
  auto discard = [&](absl::Status st) {
    DiscardNewFiles(written_paths);
    return st;
  };

  // Read the results (keyset pages), then the problems of the configs they name.
  auto find_counts = schema::CountFindResults(db, o.session_id);
  if (!find_counts.ok()) return find_counts.status();
  report.find_results = *find_counts;
  auto perf_counts = schema::CountPerfResults(db, o.session_id);
  if (!perf_counts.ok()) return perf_counts.status();
  report.perf_results = *perf_counts;

  std::vector<schema::FindResultRow> find_rows;
  std::vector<schema::PerfResultRow> perf_rows;
  std::vector<int64_t> config_ids;
  if (o.find_db || o.kernel_db) {
    find_rows.reserve(report.find_results.exportable);
    Progress(o, "read find results", 0, report.find_results.exportable);
    auto st = schema::ScanExportableFindResults(
        db, o.session_id, o.page_size, [&](const std::vector<schema::FindResultRow>& page) {
          for (const auto& r : page) {
            find_rows.push_back(r);
            config_ids.push_back(r.config_id);
          }
          Progress(o, "read find results", find_rows.size(), report.find_results.exportable);
          return absl::OkStatus();
        });
    if (!st.ok()) return st;
  }
  if (o.perf_db) {
    perf_rows.reserve(report.perf_results.exportable);
    Progress(o, "read perf results", 0, report.perf_results.exportable);
    auto st = schema::ScanExportablePerfResults(
        db, o.session_id, o.page_size, [&](const std::vector<schema::PerfResultRow>& page) {
          for (const auto& r : page) {
            perf_rows.push_back(r);
            config_ids.push_back(r.config_id);
          }
          Progress(o, "read perf results", perf_rows.size(), report.perf_results.exportable);
          return absl::OkStatus();
        });
    if (!st.ok()) return st;
  }
  Progress(o, "read configs", 0, 0);
  auto configs = schema::ReadConfigs(db, config_ids);
  if (!configs.ok()) return configs.status();
  Progress(o, "read configs", configs->problems.size() + configs->bad.size(),
           configs->problems.size() + configs->bad.size());
  for (const auto& [id, reason] : configs->bad) {
    report.warnings.push_back(
        absl::StrCat("conv_config ", id, " skipped (its results are not exported): ", reason));
  }

  // Merge sources. The existing find db also times existing perf-db rows.
  std::optional<std::string> merge_perf, merge_kdb;
  std::optional<db::FindDb> existing_find;
  if (!o.merge_dir.empty()) {
    merge_perf = JoinPath(o.merge_dir, PerfDbFileName(report.basename));
    merge_kdb = JoinPath(o.merge_dir, KernelDbFileName(report.basename));
    if (o.find_db || o.perf_db) {
      auto existing = internal::ReadExistingFindDb(JoinPath(o.merge_dir, find_name),
                                                   &report.find.warnings);
      if (!existing.ok()) return existing.status();
      existing_find = *std::move(existing);
    }
  }

  if (o.perf_db) {
    internal::FoldedPerf folded = internal::FoldPerfResults(perf_rows, configs->problems);
    report.skipped_bad_config += folded.skipped_bad_config;
    Progress(o, "write perf db", 0, 0);
    auto written = internal::WritePerfDbExport(folded.rows, merge_perf, existing_find,
                                               perf_path + kNewSuffix);
    if (!written.ok()) return discard(written.status());
    written_paths.push_back(perf_path);
    report.perf = *std::move(written);
    report.perf.path = perf_path;
    Progress(o, "write perf db", report.perf.entries, report.perf.entries);
  }

  internal::IncomingFind incoming_find;
  if (o.find_db || o.kernel_db) {
    incoming_find = internal::FoldFindResults(find_rows, configs->problems, o.algorithm_for);
    report.skipped_bad_config += incoming_find.skipped_bad_config;
    report.skipped_unknown_solver = incoming_find.skipped_unknown_solver;
    for (auto& w : incoming_find.warnings) report.warnings.push_back(std::move(w));
  }
  if (o.find_db) {
    Progress(o, "write find db", 0, 0);
    std::vector<std::string> merge_warnings = std::move(report.find.warnings);
    auto written = internal::WriteFindDbExport(incoming_find, existing_find,
                                               find_path + kNewSuffix, o.top_n);
    if (!written.ok()) return discard(written.status());
    written_paths.push_back(find_path);
    report.find = *std::move(written);
    report.find.path = find_path;
    report.find.warnings = std::move(merge_warnings);
    Progress(o, "write find db", report.find.keys, report.find.keys);
  }

  if (o.kernel_db) {
    std::set<int64_t> jobs_set;
    for (const auto& [key, job] : incoming_find.fastest_job) {
      if (job) jobs_set.insert(*job);
    }
    Progress(o, "read kernels", 0, static_cast<int64_t>(jobs_set.size()));
    auto kernels = schema::ReadJobKernels(db, {jobs_set.begin(), jobs_set.end()});
    if (!kernels.ok()) return discard(kernels.status());
    Progress(o, "read kernels", static_cast<int64_t>(jobs_set.size()),
             static_cast<int64_t>(jobs_set.size()));
    Progress(o, "write kernel db", 0, static_cast<int64_t>(kernels->size()));
    auto written = internal::WriteKernelDbExport(
        internal::KernelDbEntries(*kernels, BareArch(arch)), merge_kdb, kdb_path + kNewSuffix);
    if (!written.ok()) return discard(written.status());
    written_paths.push_back(kdb_path);
    report.kernel = *std::move(written);
    report.kernel.path = kdb_path;
    Progress(o, "write kernel db", report.kernel.entries, report.kernel.entries);
  }
  // Every file is written: replace the old set (renames only, in perf, find, kdb order).
  if (auto st = CommitNewFiles(written_paths); !st.ok()) return discard(st);
  spdlog::info("export session {}: {} ({} perf rows, {} find keys, {} kernels)", o.session_id,
               report.basename, report.perf.entries, report.find.keys, report.kernel.entries);
  return report;
}

}  // namespace tuna::exporter

// ExportSession in named stages: check the options, read the session and its jobs, name the
// files, take the output directory, read the inputs once, let each chosen format write its file.
#include "exporter/exporter.h"

#include <filesystem>
#include <utility>

#include "absl/time/clock.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exporter/format_registry.h"
#include "exporter/formats.h"
#include "exporter/output_dir.h"
#include "jobs/job_state.h"
#include "schema/store/golden_store.h"
#include "spdlog/spdlog.h"
#include "tuner_core/db/db_basename.h"

namespace tuna::exporter {
namespace {

namespace fs = std::filesystem;

std::string JoinPath(const std::string& dir, const std::string& name) {
  return (fs::path(dir.empty() ? "." : dir) / name).string();
}

}  // namespace

std::string PerfDbFileName(const std::string& basename) { return basename + ".db"; }
std::string PerfDbTextFileName(const std::string& basename) { return basename + ".db.txt"; }
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

namespace {

using internal::ExportInputs;
using internal::FormatExporter;

// The registry entries of the chosen formats, in registry order.
std::vector<const FormatExporter*> ChosenFormats(const ExportOptions& o) {
  std::vector<const FormatExporter*> chosen;
  for (const FormatExporter& f : internal::FormatExporters()) {
    if (o.formats.count(f.format)) chosen.push_back(&f);
  }
  return chosen;
}

bool AnyNeeds(const std::vector<const FormatExporter*>& chosen, bool FormatExporter::*need) {
  for (const FormatExporter* f : chosen) {
    if (f->*need) return true;
  }
  return false;
}

absl::Status CheckOptions(const ExportOptions& o, const std::vector<const FormatExporter*>& chosen) {
  if (chosen.empty()) {
    return absl::InvalidArgumentError("nothing to export: no perf db, find db or kernel db chosen");
  }
  if (AnyNeeds(chosen, &FormatExporter::needs_find_results) && !o.algorithm_for) {
    return absl::InvalidArgumentError("exporting a find db or kernel db needs an algorithm resolver");
  }
  if (o.page_size <= 0) return absl::InvalidArgumentError("page_size must be positive");
  return absl::OkStatus();
}

// The golden version's target the options pick (see ExportOptions::golden_v) as report->session.
absl::Status ReadGoldenTarget(schema::Database& db, const ExportOptions& o,
                              ExportReport* report) {
  auto targets = schema::ListGolden(db, *o.golden_v);
  if (!targets.ok()) return targets.status();
  if (targets->empty()) {
    return absl::NotFoundError(absl::StrCat("no golden version ", *o.golden_v));
  }
  std::vector<const schema::GoldenTargetRows*> picked;
  std::vector<std::string> names;
  for (const auto& t : *targets) {
    const std::string& arch = t.target.arch;
    names.push_back(absl::StrCat(arch, "/", t.target.num_cu, "/", t.target.backend));
    if (o.arch && *o.arch != arch && *o.arch != BareArch(arch) && *o.arch != DbArchId(arch)) {
      continue;
    }
    if (o.num_cu && int64_t{*o.num_cu} != t.target.num_cu) continue;
    picked.push_back(&t);
  }
  if (picked.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("golden version ", *o.golden_v, " holds ",
                     picked.empty() ? "no target matching" : "several targets matching",
                     " --arch/--num_cu; it has: ", absl::StrJoin(names, ", ")));
  }
  report->session = picked.front()->target;
  report->find_results = {picked.front()->find_rows, picked.front()->find_rows};
  report->perf_results = {picked.front()->perf_rows, picked.front()->perf_rows};
  return absl::OkStatus();
}

// The session and its jobs by state; FailedPrecondition under require_complete while a job is
// unfinished (before any other work).
absl::Status ReadSessionAndJobs(schema::Database& db, const ExportOptions& o,
                                ExportReport* report) {
  if (o.golden_v) return ReadGoldenTarget(db, o, report);
  auto session = schema::ReadSessionTarget(db, o.session_id);
  if (!session.ok()) return session.status();
  report->session = *session;
  auto jobs = schema::CountSessionJobs(db, o.session_id);
  if (!jobs.ok()) return jobs.status();
  report->jobs = *jobs;
  std::vector<std::string> unfinished;
  for (const auto& j : report->jobs) {
    const std::optional<jobs::JobState> state = jobs::ParseJobState(j.state);
    if (!state || !jobs::IsUnfinished(*state)) continue;
    report->unfinished_jobs += j.count;
    unfinished.push_back(absl::StrCat(j.kind, " ", j.state, ": ", j.count));
  }
  if (o.require_complete && report->unfinished_jobs > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("session ", o.session_id, " has ", report->unfinished_jobs,
                     " unfinished jobs (", absl::StrJoin(unfinished, ", "), ")"));
  }
  return absl::OkStatus();
}

// The arch the files are named for (the session's or the override); sets report->basename.
absl::StatusOr<std::string> ResolveBasename(const ExportOptions& o, ExportReport* report) {
  const std::string arch = o.arch.value_or(report->session.arch);
  if (arch.empty()) return absl::InvalidArgumentError("empty arch");
  const int64_t num_cu = o.num_cu ? int64_t{*o.num_cu} : report->session.num_cu;
  if (num_cu <= 0 || num_cu > int64_t{UINT32_MAX}) {
    return absl::InvalidArgumentError(absl::StrCat("num_cu ", num_cu, " out of range"));
  }
  report->basename = db::DbBasename(DbArchId(arch), static_cast<uint32_t>(num_cu));
  return arch;
}

// The output directory's lock (unless the caller holds it) and its stale temps removed.
absl::StatusOr<std::optional<OutputDirLock>> PrepareOutputDir(const ExportOptions& o,
                                                              const ExportInputs& in) {
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
  std::vector<std::string> names;
  for (const FormatExporter& f : internal::FormatExporters()) {
    names.push_back(f.file_name(in.basename, in.backend));
  }
  RemoveStaleTemps(o.output_dir, names);
  return lock;
}

// The exportable rows of the session, or the rows of the golden version's target.
template <typename Row>
using PageFn = std::function<absl::Status(const std::vector<Row>&)>;

absl::Status ScanFindRows(schema::Database& db, const ExportOptions& o,
                          const schema::SessionTarget& target,
                          const PageFn<schema::FindResultRow>& page) {
  if (o.golden_v) return schema::ScanGoldenFindResults(db, *o.golden_v, target, o.page_size, page);
  return schema::ScanExportableFindResults(db, o.session_id, o.page_size, page);
}

absl::Status ScanPerfRows(schema::Database& db, const ExportOptions& o,
                          const schema::SessionTarget& target,
                          const PageFn<schema::PerfResultRow>& page) {
  if (o.golden_v) return schema::ScanGoldenPerfResults(db, *o.golden_v, target, o.page_size, page);
  return schema::ScanExportablePerfResults(db, o.session_id, o.page_size, page);
}

// The exportable rows the chosen formats need (keyset pages), counted in the report.
absl::Status ReadResultRows(const std::vector<const FormatExporter*>& chosen, ExportInputs* in,
                            ExportReport* report, std::vector<int64_t>* config_ids) {
  const ExportOptions& o = *in->options;
  if (AnyNeeds(chosen, &FormatExporter::needs_find_results)) {
    in->find_rows.reserve(report->find_results.exportable);
    in->Progress("read find results", 0, report->find_results.exportable);
    auto st = ScanFindRows(
        *in->db, o, report->session, [&](const std::vector<schema::FindResultRow>& page) {
          for (const auto& r : page) {
            in->find_rows.push_back(r);
            config_ids->push_back(r.config_id);
          }
          in->Progress("read find results", in->find_rows.size(), report->find_results.exportable);
          return absl::OkStatus();
        });
    if (!st.ok()) return st;
  }
  if (AnyNeeds(chosen, &FormatExporter::needs_perf_results)) {
    in->perf_rows.reserve(report->perf_results.exportable);
    in->Progress("read perf results", 0, report->perf_results.exportable);
    auto st = ScanPerfRows(
        *in->db, o, report->session, [&](const std::vector<schema::PerfResultRow>& page) {
          for (const auto& r : page) {
            in->perf_rows.push_back(r);
            config_ids->push_back(r.config_id);
          }
          in->Progress("read perf results", in->perf_rows.size(), report->perf_results.exportable);
          return absl::OkStatus();
        });
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

// Everything the writers read: result counts and rows, the problems of their configs, the merge
// dir's find db, the find results folded per key.
absl::Status ReadInputs(const std::vector<const FormatExporter*>& chosen, ExportInputs* in,
                        ExportReport* report) {
  const ExportOptions& o = *in->options;
  if (!o.golden_v) {  // a golden version's counts came with its target
    auto find_counts = schema::CountFindResults(*in->db, o.session_id);
    if (!find_counts.ok()) return find_counts.status();
    report->find_results = *find_counts;
    auto perf_counts = schema::CountPerfResults(*in->db, o.session_id);
    if (!perf_counts.ok()) return perf_counts.status();
    report->perf_results = *perf_counts;
  }

  std::vector<int64_t> config_ids;
  if (auto st = ReadResultRows(chosen, in, report, &config_ids); !st.ok()) return st;
  in->Progress("read configs", 0, 0);
  auto configs = schema::ReadConfigs(*in->db, config_ids);
  if (!configs.ok()) return configs.status();
  const auto nconfigs = static_cast<int64_t>(configs->problems.size() + configs->bad.size());
  in->Progress("read configs", nconfigs, nconfigs);
  for (const auto& [id, reason] : configs->bad) {
    report->warnings.push_back(
        absl::StrCat("conv_config ", id, " skipped (its results are not exported): ", reason));
  }
  in->problems = std::move(configs->problems);

  if (!o.merge_dir.empty() && AnyNeeds(chosen, &FormatExporter::needs_merge_find_db)) {
    auto existing = internal::ReadExistingFindDb(
        JoinPath(o.merge_dir, FindDbFileName(in->basename, in->backend)), &report->find.warnings);
    if (!existing.ok()) return existing.status();
    in->existing_find = *std::move(existing);
  }
  if (AnyNeeds(chosen, &FormatExporter::needs_find_results)) {
    in->incoming_find = internal::FoldFindResults(in->find_rows, in->problems, o.algorithm_for);
    report->skipped_bad_config += in->incoming_find.skipped_bad_config;
    report->skipped_unknown_solver = in->incoming_find.skipped_unknown_solver;
    for (auto& w : in->incoming_find.warnings) report->warnings.push_back(std::move(w));
  }
  return absl::OkStatus();
}

// Each chosen format writes `<path>.tuna-new`; all are renamed together once all are written.
// On a failure the temps are removed and the old files stay.
absl::Status WriteFiles(const std::vector<const FormatExporter*>& chosen, const ExportInputs& in,
                        ExportReport* report) {
  std::vector<std::string> written_paths;
  for (const FormatExporter* f : chosen) {
    const std::string path =
        JoinPath(in.options->output_dir, f->file_name(in.basename, in.backend));
    auto written = f->write(in, path + kNewSuffix, report);
    if (!written.ok()) {
      DiscardNewFiles(written_paths);
      return written.status();
    }
    written_paths.push_back(path);
    report->*(f->slot) = *std::move(written);
    (report->*(f->slot)).path = path;
  }
  if (auto st = CommitNewFiles(written_paths); !st.ok()) {
    DiscardNewFiles(written_paths);
    return st;
  }
  return absl::OkStatus();
}

}  // namespace

namespace internal {

std::optional<std::string> ExportInputs::MergePath(const std::string& name) const {
  if (options->merge_dir.empty()) return std::nullopt;
  return JoinPath(options->merge_dir, name);
}

void ExportInputs::Progress(std::string_view stage, int64_t done, int64_t total) const {
  if (options->progress) options->progress(stage, done, total);
}

const std::vector<FormatExporter>& FormatExporters() {
  static const std::vector<FormatExporter> formats = {PerfDbExporter(), PerfDbTextExporter(),
                                                      FindDbExporter(), KernelDbExporter()};
  return formats;
}

}  // namespace internal

absl::StatusOr<ExportReport> ExportSession(schema::Database& db, const ExportOptions& o) {
  const absl::Time start = absl::Now();
  const std::vector<const FormatExporter*> chosen = ChosenFormats(o);
  if (auto st = CheckOptions(o, chosen); !st.ok()) return st;
  ExportReport report;
  if (auto st = ReadSessionAndJobs(db, o, &report); !st.ok()) return st;
  auto arch = ResolveBasename(o, &report);
  if (!arch.ok()) return arch.status();

  ExportInputs in;
  in.db = &db;
  in.options = &o;
  in.basename = report.basename;
  in.backend = report.session.backend;
  in.bare_arch = BareArch(*arch);
  auto lock = PrepareOutputDir(o, in);
  if (!lock.ok()) return lock.status();
  if (auto st = ReadInputs(chosen, &in, &report); !st.ok()) return st;
  const absl::Time read = absl::Now();
  if (auto st = WriteFiles(chosen, in, &report); !st.ok()) return st;
  spdlog::info("export {} {}: {} ({} perf rows, {} find keys, {} kernels; read in {:.2f} s, written in {:.2f} s)",
               o.golden_v ? "golden version" : "session", o.golden_v.value_or(o.session_id),
               report.basename, report.perf.entries, report.find.keys, report.kernel.entries,
               absl::ToDoubleSeconds(read - start), absl::ToDoubleSeconds(absl::Now() - read));
  return report;
}

}  // namespace tuna::exporter

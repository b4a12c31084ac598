// MergeDbFiles in stages: kinds and targets checked from the names, the inputs read, the
// exporter's writer of the kind merges and writes a temp, the temp renamed over the output.
#include "exporter/merge_files.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "exporter/formats.h"
#include "exporter/output_dir.h"
#include "tuner_core/db/db_basename.h"

namespace tuna::exporter {
namespace {

namespace fs = std::filesystem;

constexpr char kFindSuffix[] = ".fdb.txt";

// "<base>" and, for find dbs, "<BACKEND>" of a file name.
struct NameParts {
  std::string base;
  std::string backend;
};

NameParts SplitName(const std::string& path, DbFileKind kind) {
  std::string name = fs::path(path).filename().string();
  NameParts parts;
  switch (kind) {
    case DbFileKind::kPerfDb:
      parts.base = name.substr(0, name.size() - 3);
      break;
    case DbFileKind::kKernelDb:
      parts.base = name.substr(0, name.size() - 4);
      break;
    case DbFileKind::kFindDb: {
      name = name.substr(0, name.size() - (sizeof(kFindSuffix) - 1));
      const size_t dot = name.rfind('.');
      parts.base = dot == std::string::npos ? name : name.substr(0, dot);
      if (dot != std::string::npos) parts.backend = name.substr(dot + 1);
      break;
    }
  }
  return parts;
}

// Refuses files of different targets (see the header); names that do not parse give a warning.
absl::Status CheckTargets(const MergeFilesOptions& o, DbFileKind kind,
                          std::vector<std::string>* warnings) {
  const NameParts a = SplitName(o.into, kind), b = SplitName(o.from, kind);
  if (a.backend != b.backend) {
    return absl::InvalidArgumentError(absl::StrCat("backends differ: ", o.into, " is ", a.backend,
                                                   ", ", o.from, " is ", b.backend));
  }
  auto pa = db::ParseDbBasename(a.base), pb = db::ParseDbBasename(b.base);
  if (!pa.ok() || !pb.ok()) {
    warnings->push_back(absl::StrCat("cannot tell the targets of '", a.base, "' and '", b.base,
                                     "' from the names; merged without checking them"));
    return absl::OkStatus();
  }
  if (pa->arch != pb->arch) {
    return absl::InvalidArgumentError(absl::StrCat("architectures differ: ", a.base, " is ",
                                                   pa->arch, ", ", b.base, " is ", pb->arch));
  }
  if (pa->num_cu != pb->num_cu && !o.across_cu) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CU counts differ: ", a.base, " has ", pa->num_cu, ", ", b.base, " has ", pb->num_cu,
        " (pass --across-cu to merge a db of one CU count into another of the same arch)"));
  }
  return absl::OkStatus();
}

absl::Status RequireFile(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return absl::NotFoundError(absl::StrCat("no file ", path));
  return absl::OkStatus();
}

// The find db that times the rows of the perf db at `perf_path`: `named` when given, else the
// only (or first, with a warning) <base>.*.fdb.txt beside it; nullopt when there is none.
absl::StatusOr<std::optional<db::FindDb>> TimesFor(const std::string& perf_path,
                                                   const std::string& named,
                                                   std::vector<std::string>* warnings) {
  std::string path = named;
  if (path.empty()) {
    const fs::path dir = fs::path(perf_path).parent_path();
    const std::string prefix = SplitName(perf_path, DbFileKind::kPerfDb).base + ".";
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir.empty() ? "." : dir, ec)) {
      const std::string name = e.path().filename().string();
      if (absl::StartsWith(name, prefix) && absl::EndsWith(name, kFindSuffix)) {
        found.push_back(e.path().string());
      }
    }
    std::sort(found.begin(), found.end());
    if (found.empty()) {
      warnings->push_back(
          absl::StrCat("no find db beside ", perf_path, ": its rows have no times"));
      return std::optional<db::FindDb>();
    }
    if (found.size() > 1) {
      warnings->push_back(
          absl::StrCat("several find dbs beside ", perf_path, "; timed by ", found.front()));
    }
    path = found.front();
  } else if (auto st = RequireFile(path); !st.ok()) {
    return st;
  }
  return internal::ReadExistingFindDb(path, warnings);
}

absl::StatusOr<FileReport> MergeFind(const MergeFilesOptions& o, const std::string& tmp,
                                     std::vector<std::string>* warnings) {
  auto from = internal::ReadExistingFindDb(o.from, warnings);
  if (!from.ok()) return from.status();
  auto into = internal::ReadExistingFindDb(o.into, warnings);
  if (!into.ok()) return into.status();
  internal::IncomingFind incoming;
  incoming.db = std::move(**from);
  return internal::WriteFindDbExport(incoming, *into, tmp, o.top_n);
}

// The rows of `from` as incoming rows, timed by `times` (no time: +inf, which replaces only an
// untimed row).
internal::IncomingPerf IncomingFromFile(const std::vector<db::PerfDbRow>& rows,
                                        const std::optional<db::FindDb>& times) {
  internal::IncomingPerf out;
  for (const auto& r : rows) {
    internal::IncomingPerfEntry e{r.params, std::numeric_limits<float>::infinity(), ""};
    if (auto p = FromPerfDbConfig(r.config); p.ok()) e.find_key = FindDbKey(*p);
    if (times && !e.find_key.empty()) {
      if (auto it = times->find(e.find_key); it != times->end()) {
        for (const auto& f : it->second) {
          if (f.solver == r.solver) e.time_ms = f.time_ms;
        }
      }
    }
    out[r.config][r.solver] = std::move(e);
  }
  return out;
}

absl::StatusOr<FileReport> MergePerf(const MergeFilesOptions& o, const std::string& tmp,
                                     std::vector<std::string>* warnings) {
  FileReport scratch;
  auto from = internal::ReadExistingRows<db::PerfDbReader, db::PerfDbRow>(o.from, &scratch);
  if (!from.ok()) return from.status();
  auto from_times = TimesFor(o.from, o.from_find_db, warnings);
  if (!from_times.ok()) return from_times.status();
  auto into_times = TimesFor(o.into, o.into_find_db, warnings);
  if (!into_times.ok()) return into_times.status();
  return internal::WritePerfDbExport(IncomingFromFile(*from, *from_times), o.into, *into_times,
                                     tmp);
}

absl::StatusOr<FileReport> MergeKernels(const MergeFilesOptions& o, const std::string& tmp) {
  FileReport scratch;
  auto from = internal::ReadExistingRows<db::KernelDbReader, db::KernelDbEntry>(o.from, &scratch);
  if (!from.ok()) return from.status();
  return internal::WriteKernelDbExport(*from, o.into, tmp);
}

}  // namespace

absl::StatusOr<DbFileKind> DbFileKindOf(const std::string& path) {
  if (absl::EndsWith(path, kFindSuffix)) return DbFileKind::kFindDb;
  if (absl::EndsWith(path, ".kdb")) return DbFileKind::kKernelDb;
  if (absl::EndsWith(path, ".db")) return DbFileKind::kPerfDb;
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot tell the kind of ", path,
      ": expected <base>.db (perf db), <base>.<BACKEND>.fdb.txt (find db) or <base>.kdb"));
}

const char* DbFileKindName(DbFileKind kind) {
  switch (kind) {
    case DbFileKind::kPerfDb:
      return "perf db";
    case DbFileKind::kFindDb:
      return "find db";
    case DbFileKind::kKernelDb:
      return "kernel db";
  }
  return "?";
}

absl::StatusOr<MergeFilesReport> MergeDbFiles(const MergeFilesOptions& o) {
  auto kind = DbFileKindOf(o.into);
  if (!kind.ok()) return kind.status();
  auto from_kind = DbFileKindOf(o.from);
  if (!from_kind.ok()) return from_kind.status();
  if (*kind != *from_kind) {
    return absl::InvalidArgumentError(absl::StrCat(o.into, " is a ", DbFileKindName(*kind), ", ",
                                                   o.from, " a ", DbFileKindName(*from_kind)));
  }
  MergeFilesReport report;
  report.kind = *kind;
  if (auto st = CheckTargets(o, *kind, &report.warnings); !st.ok()) return st;
  if (auto st = RequireFile(o.from); !st.ok()) return st;
  const std::string output = o.output.empty() ? o.into : o.output;
  const std::string tmp = output + kNewSuffix;
  absl::StatusOr<FileReport> written = absl::InternalError("unreachable");
  switch (*kind) {
    case DbFileKind::kFindDb:
      written = MergeFind(o, tmp, &report.warnings);
      break;
    case DbFileKind::kPerfDb:
      written = MergePerf(o, tmp, &report.warnings);
      break;
    case DbFileKind::kKernelDb:
      written = MergeKernels(o, tmp);
      break;
  }
  if (!written.ok()) {
    DiscardNewFiles({output});
    return written.status();
  }
  if (auto st = CommitNewFiles({output}); !st.ok()) {
    DiscardNewFiles({output});
    return st;
  }
  report.file = *std::move(written);
  report.file.path = output;
  return report;
}

}  // namespace tuna::exporter

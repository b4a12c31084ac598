// The kernel db: `<base>.kdb` from the code objects of each key's fastest find result.
#include <filesystem>
#include <set>
#include <utility>

#include "absl/strings/str_split.h"
#include "exporter/format_registry.h"
#include "exporter/formats.h"

namespace tuna::exporter::internal {

std::vector<db::KernelDbEntry> KernelDbEntries(const std::vector<schema::KernelObject>& kernels,
                                               const std::string& bare_arch) {
  std::vector<db::KernelDbEntry> out;
  out.reserve(kernels.size());
  for (const auto& k : kernels) {
    // The compile step stores the options joined by single spaces (worker/kernel_cache.cc).
    const std::vector<std::string> options = absl::StrSplit(k.options, ' ', absl::SkipEmpty());
    out.push_back(db::MakeTunaKernelDbEntry(k.kernel_name, options, bare_arch, k.code_object));
  }
  return out;
}

absl::StatusOr<FileReport> WriteKernelDbExport(const std::vector<db::KernelDbEntry>& incoming,
                                               const std::optional<std::string>& existing_path,
                                               const std::string& path) {
  FileReport report;
  report.path = path;
  auto existing = ReadExistingRows<db::KernelDbReader, db::KernelDbEntry>(existing_path, &report);
  if (!existing.ok()) return existing.status();
  KernelMergeResult merged = MergeKernelDb(*existing, incoming);
  report.merge = merged.counts;
  db::KernelDbWriter writer;
  for (auto& e : merged.entries) writer.Add(std::move(e));
  if (auto st = writer.Write(path); !st.ok()) return st;
  report.keys = report.entries = static_cast<int64_t>(writer.size());
  report.written = true;
  return report;
}

namespace {

// The code objects of each key's fastest find result.
absl::StatusOr<FileReport> WriteKernelDb(const ExportInputs& in, const std::string& path,
                                         ExportReport*) {
  std::set<int64_t> jobs;
  for (const auto& [key, job] : in.incoming_find.fastest_job) {
    if (job) jobs.insert(*job);
  }
  const auto njobs = static_cast<int64_t>(jobs.size());
  in.Progress("read kernels", 0, njobs);
  auto kernels = schema::ReadJobKernels(*in.db, {jobs.begin(), jobs.end()});
  if (!kernels.ok()) return kernels.status();
  in.Progress("read kernels", njobs, njobs);
  in.Progress("write kernel db", 0, static_cast<int64_t>(kernels->size()));
  auto written = WriteKernelDbExport(KernelDbEntries(*kernels, in.bare_arch),
                                     in.MergePath(KernelDbFileName(in.basename)), path);
  if (!written.ok()) return written.status();
  in.Progress("write kernel db", written->entries, written->entries);
  return written;
}

std::string KernelName(const std::string& basename, const std::string&) {
  return KernelDbFileName(basename);
}

}  // namespace

FormatExporter KernelDbExporter() {
  FormatExporter e{ExportFormat::kKernelDb};
  e.needs_find_results = true;  // the kernels of each key's fastest find result
  e.file_name = &KernelName;
  e.write = &WriteKernelDb;
  e.slot = &ExportReport::kernel;
  return e;
}

}  // namespace tuna::exporter::internal

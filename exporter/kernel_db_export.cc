// The kernel db: `<base>.kdb` from the code objects of each key's fastest find result.
#include <filesystem>
#include <utility>

#include "absl/strings/str_split.h"
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
  std::vector<db::KernelDbEntry> existing;
  std::error_code ec;
  if (existing_path && std::filesystem::exists(*existing_path, ec)) {
    auto reader = db::KernelDbReader::Open(*existing_path);
    if (!reader.ok()) return reader.status();
    auto rows = reader->ReadAll();
    if (!rows.ok()) return rows.status();
    existing = *std::move(rows);
    report.merged = true;
  }
  KernelMergeResult merged = MergeKernelDb(existing, incoming);
  report.merge = merged.counts;
  db::KernelDbWriter writer;
  for (auto& e : merged.entries) writer.Add(std::move(e));
  if (auto st = writer.Write(path); !st.ok()) return st;
  report.keys = report.entries = static_cast<int64_t>(writer.size());
  report.written = true;
  return report;
}

}  // namespace tuna::exporter::internal

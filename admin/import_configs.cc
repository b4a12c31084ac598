#include "admin/import_configs.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/transpose.h"

namespace tuna::admin {
namespace {

absl::Status ValidateTag(const std::string& tag) {
  if (tag.empty()) return absl::InvalidArgumentError("a tag is required (-t TAG)");
  size_t chars = 0;
  for (unsigned char ch : tag) chars += (ch & 0xC0) != 0x80;
  if (chars > schema::kMaxTagChars) {
    return absl::InvalidArgumentError(absl::StrCat("tag is ", chars, " characters long; at most ",
                                                   schema::kMaxTagChars, " are stored"));
  }
  return absl::OkStatus();
}

// Transposed lines are stored as the convolutions MIOpen runs them as (problem/transpose.h).
absl::StatusOr<ImportReport> Import(schema::Database& db, DriverFile file, const std::string& source,
                                    const ImportOptions& options) {
  const int transposed = ConvertTransposed(file);
  if (!file.errors.empty()) {
    std::string msg = absl::StrCat(file.errors.size(), " bad line",
                                   file.errors.size() == 1 ? "" : "s", " in ", source,
                                   "; nothing was imported:");
    for (const DriverFileError& e : file.errors) {
      absl::StrAppend(&msg, "\n  line ", e.line_number, ": ", e.reason, ": ", e.text);
    }
    return absl::InvalidArgumentError(msg);
  }
  if (file.lines.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, " holds no driver lines"));
  }
  ImportReport report;
  report.transposed = transposed;
  std::vector<Problem> problems;
  for (const DriverFileLine& line : file.lines) {
    ++report.lines;
    for (const Problem& p : line.problems) problems.push_back(p);
  }
  report.problems = static_cast<int64_t>(problems.size());

  schema::ConfigStore store(db);
  absl::Status st = db.Transaction([&](schema::Connection& c) -> absl::Status {
    int64_t inserted = 0;
    // Each stage is announced before its first chunk, so its time counts from its start.
    if (options.progress) options.progress("configs written", 0, 0);
    auto ids = store.Upsert(c, problems, &inserted,
                            ForStage(options.progress, "configs written"));
    if (!ids.ok()) return ids.status();
    // Tagging is one more pass over every config: a stage of its own, so a bar at 100 % of
    // the inserts does not look stuck.
    if (options.progress) options.progress("configs tagged", 0, 0);
    auto tags = store.AddTag(c, *ids, options.tag, options.mark_recurrent);
    if (!tags.ok()) return tags.status();
    if (options.progress) options.progress("configs tagged", *tags, *tags);
    std::vector<int64_t> unique = *ids;
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    report.unique_configs = static_cast<int64_t>(unique.size());
    report.configs_new = inserted;
    report.configs_known = report.unique_configs - inserted;
    report.tags_added = *tags;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  spdlog::info("import {} tag={}: {} lines, {} configs new, {} known, {} tags added, {} transposed", source,
               options.tag, report.lines, report.configs_new, report.configs_known,
               report.tags_added, report.transposed);
  return report;
}

}  // namespace

absl::StatusOr<ImportReport> ImportDriverText(schema::Database& db, const std::string& contents,
                                              const ImportOptions& options) {
  if (auto st = ValidateTag(options.tag); !st.ok()) return st;
  return Import(db, ParseDriverText(contents), "input", options);
}

absl::StatusOr<ImportReport> ImportDriverFile(schema::Database& db, const std::string& path,
                                              const ImportOptions& options) {
  if (auto st = ValidateTag(options.tag); !st.ok()) return st;
  if (options.progress) options.progress("lines parsed", 0, 0);
  auto file = ParseDriverFile(path);
  if (!file.ok()) return file.status();
  if (options.progress) {
    const auto n = static_cast<int64_t>(file->lines.size() + file->errors.size());
    options.progress("lines parsed", n, n);
  }
  return Import(db, *std::move(file), path, options);
}

}  // namespace tuna::admin

#include "tuner_core/db/perf_db_text.h"

#include <charconv>

#include "tuner_core/db/str_util.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tuna::db {

PerfDbTextReadResult ParsePerfDbText(std::string_view text) {
  PerfDbTextReadResult result;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    std::optional<RawRecord> raw = ParseRecordLine(line, line_no, result.warnings);
    if (!raw) continue;
    auto [it, inserted] = result.records.try_emplace(std::string(raw->key));
    if (!inserted) {
      result.warnings.push_back(
          {line_no, internal::Cat("duplicate key ", internal::Quoted(raw->key), " ignored (first one wins)")});
      continue;
    }
    for (const RawEntry& e : raw->entries) {
      if (!it->second.try_emplace(std::string(e.id), std::string(e.values)).second) {
        result.warnings.push_back({line_no, internal::Cat("duplicate solver ", internal::Quoted(e.id), " ignored")});
      }
    }
  }
  result.lines = line_no;
  return result;
}

absl::StatusOr<PerfDbTextReadResult> ReadPerfDbTextFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParsePerfDbText(*text);
}

absl::StatusOr<std::string> SerializePerfDbText(const PerfDbText& db) {
  std::string out;
  for (const auto& [key, entries] : db) {
    if (entries.empty()) continue;
    if (absl::Status s = CheckRecordField("perf-db key", key); !s.ok()) return s;
    out.append(key);
    out.push_back('=');
    bool first = true;
    for (const auto& [solver, params] : entries) {
      if (absl::Status s = CheckRecordField("solver", solver); !s.ok()) return s;
      if (!params.empty()) {
        if (absl::Status s = CheckRecordField("params", params); !s.ok()) return s;
      }
      if (!first) out.push_back(';');
      first = false;
      internal::Append(&out, solver, ":", params);
    }
    out.push_back('\n');
  }
  return out;
}

absl::Status WritePerfDbTextFile(const std::string& path, const PerfDbText& db) {
  absl::StatusOr<std::string> text = SerializePerfDbText(db);
  if (!text.ok()) return text.status();
  return WriteFileAtomically(path, *text);
}

std::string PerfDbTextKey(const PerfDbConfig& c) {
  return absl::StrJoin(
      std::make_tuple(c.spatial_dim, c.in_channels, c.in_h, c.in_w, c.in_d, c.fil_h, c.fil_w,
                      c.fil_d, c.out_channels, c.batchsize, c.pad_h, c.pad_w, c.pad_d,
                      c.conv_stride_h, c.conv_stride_w, c.conv_stride_d, c.dilation_h,
                      c.dilation_w, c.dilation_d, c.bias, c.group_count, c.layout, c.data_type,
                      c.direction),
      "x");
}

absl::StatusOr<PerfDbConfig> ParsePerfDbTextKey(std::string_view key) {
  std::vector<std::string_view> f;
  for (std::string_view rest = key;;) {
    const size_t x = rest.find('x');
    f.push_back(rest.substr(0, x));
    if (x == std::string_view::npos) break;
    rest.remove_prefix(x + 1);
  }
  if (f.size() != 24) {
    return absl::InvalidArgumentError(internal::Cat("perf-db text key ", internal::Quoted(key), " has ", f.size(),
                                                    " 'x' fields, expected 24"));
  }
  static constexpr const char* kNames[21] = {
      "spatial_dim", "in_channels", "in_h",          "in_w",          "in_d",
      "fil_h",       "fil_w",       "fil_d",         "out_channels",  "batchsize",
      "pad_h",       "pad_w",       "pad_d",         "conv_stride_h", "conv_stride_w",
      "conv_stride_d", "dilation_h", "dilation_w",   "dilation_d",    "bias",
      "group_count"};
  PerfDbConfig c;
  int64_t* slots[21] = {&c.spatial_dim,   &c.in_channels,   &c.in_h,          &c.in_w,
                        &c.in_d,          &c.fil_h,         &c.fil_w,         &c.fil_d,
                        &c.out_channels,  &c.batchsize,     &c.pad_h,         &c.pad_w,
                        &c.pad_d,         &c.conv_stride_h, &c.conv_stride_w, &c.conv_stride_d,
                        &c.dilation_h,    &c.dilation_w,    &c.dilation_d,    &c.bias,
                        &c.group_count};
  for (int i = 0; i < 21; ++i) {
    const std::string_view v = f[i];
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), *slots[i], 10);
    if (v.empty() || ec != std::errc() || p != v.data() + v.size()) {
      return absl::InvalidArgumentError(
          internal::Cat("perf-db text key ", internal::Quoted(key), ": ", kNames[i], " ",
                        internal::Quoted(v), " is not a number"));
    }
  }
  c.layout = std::string(f[21]);
  c.data_type = std::string(f[22]);
  c.direction = std::string(f[23]);
  return c;
}

std::vector<PerfDbRow> PerfDbTextToRows(const PerfDbText& db, std::vector<std::string>* bad_keys) {
  std::vector<PerfDbRow> rows;
  for (const auto& [key, entries] : db) {
    absl::StatusOr<PerfDbConfig> c = ParsePerfDbTextKey(key);
    if (!c.ok()) {
      if (bad_keys) bad_keys->push_back(std::string(c.status().message()));
      continue;
    }
    for (const auto& [solver, params] : entries) rows.push_back({*c, solver, params});
  }
  return rows;
}

PerfDbText PerfDbRowsToText(const std::vector<PerfDbRow>& rows) {
  PerfDbText out;
  for (const PerfDbRow& r : rows) out[PerfDbTextKey(r.config)][r.solver] = r.params;
  return out;
}

}  // namespace tuna::db

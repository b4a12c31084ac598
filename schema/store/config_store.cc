#include "schema/store/config_store.h"


#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/hash/sha256.h"
#include "schema/store/sql_batch.h"
#include "tuner_core/problem/driver_line.h"

namespace tuna::schema {
namespace {

constexpr const char* kConfigColumns =
    "spatial_dim, batchsize, in_channels, in_d, in_h, in_w, out_channels, fil_d, fil_h, fil_w, "
    "pad_d, pad_h, pad_w, conv_stride_d, conv_stride_h, conv_stride_w, dilation_d, dilation_h, "
    "dilation_w, trans_output_pad_d, trans_output_pad_h, trans_output_pad_w, group_count, mode, "
    "pad_mode, direction, data_type, in_layout, fil_layout, out_layout, driver, config_hash";
constexpr int kConfigColumnCount = 32;
// 32 placeholders a row: 400 rows stay well under the protocol's 65,535 parameters and keep a
// statement around 100 KB.
constexpr size_t kInsertChunk = 400;
constexpr size_t kSelectChunk = 1000;

void AppendConfigValues(const Problem& p, const std::string& driver, const std::string& hash,
                        Params* out) {
  auto i = [out](int64_t v) { out->push_back(v); };
  i(p.spatial_dims);
  i(p.n);
  i(p.c);
  i(p.in[0]);
  i(p.in[1]);
  i(p.in[2]);
  i(p.k);
  for (const Dhw* v : {&p.fil, &p.pad, &p.stride, &p.dilation, &p.trans_output_pad}) {
    i((*v)[0]);
    i((*v)[1]);
    i((*v)[2]);
  }
  i(p.groups);
  out->push_back(std::string(p.mode == ConvMode::kTrans ? "trans" : "conv"));
  out->push_back(std::string(PadModeName(p.pad_mode)));
  out->push_back(std::string(DirectionName(p.direction)));
  out->push_back(std::string(DataTypeName(p.data_type)));
  out->push_back(std::string(LayoutName(p.in_layout)));
  out->push_back(std::string(LayoutName(p.fil_layout)));
  out->push_back(std::string(LayoutName(p.out_layout)));
  out->push_back(driver);
  out->push_back(hash);
}

// Number of Unicode code points of UTF-8 text (what VARCHAR(n) counts).
size_t Utf8Chars(const std::string& s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string ConfigHash(const Problem& p) { return hash::Sha256Hex(p.Canonical()); }

absl::StatusOr<Problem> ProblemFromDriver(const std::string& driver) {
  auto problems = ParseDriverLine(driver);
  if (!problems.ok()) return problems.status();
  if (problems->size() != 1) {
    return absl::InternalError(
        absl::StrCat("stored driver line selects ", problems->size(), " problems: ", driver));
  }
  return (*problems)[0];
}

absl::StatusOr<std::vector<int64_t>> ConfigStore::Upsert(Connection& c,
                                                         const std::vector<Problem>& problems,
                                                         int64_t* inserted,
                                                         const ProgressFn& progress) {
  *inserted = 0;
  // Unique problems by hash, in first-seen order (so ids follow file order).
  std::vector<std::string> hashes(problems.size());
  std::unordered_map<std::string, size_t> first;  // hash -> index of its first problem
  std::vector<size_t> unique;
  for (size_t k = 0; k < problems.size(); ++k) {
    hashes[k] = ConfigHash(problems[k]);
    if (first.emplace(hashes[k], k).second) unique.push_back(k);
  }

  std::unordered_map<std::string, int64_t> ids;
  auto select_ids = [&](const std::vector<size_t>& which) -> absl::Status {
    for (size_t begin = 0; begin < which.size(); begin += kSelectChunk) {
      const size_t end = std::min(which.size(), begin + kSelectChunk);
      Params params;
      for (size_t k = begin; k < end; ++k) params.push_back(hashes[which[k]]);
      auto rows = c.Query(absl::StrCat("SELECT id, config_hash FROM conv_config WHERE "
                                       "config_hash IN (",
                                       ListPlaceholders(end - begin), ")"),
                          params);
      if (!rows.ok()) return rows.status();
      for (const Row& r : *rows) ids[r.String(1)] = r.Int(0);
    }
    return absl::OkStatus();
  };
  if (auto st = select_ids(unique); !st.ok()) return st;

  std::vector<size_t> missing;
  for (size_t k : unique) {
    if (!ids.count(hashes[k])) missing.push_back(k);
  }
  const int64_t total = static_cast<int64_t>(missing.size());
  for (size_t begin = 0; begin < missing.size(); begin += kInsertChunk) {
    const size_t end = std::min(missing.size(), begin + kInsertChunk);
    Params params;
    params.reserve((end - begin) * kConfigColumnCount);
    for (size_t k = begin; k < end; ++k) {
      const Problem& p = problems[missing[k]];
      AppendConfigValues(p, p.Canonical(), hashes[missing[k]], &params);
    }
    // A concurrent importer may have inserted the same config since the SELECT: keep its row.
    auto n = c.Execute(absl::StrCat("INSERT INTO conv_config (", kConfigColumns, ") VALUES ",
                                    RowPlaceholders(end - begin, kConfigColumnCount),
                                    " ON DUPLICATE KEY UPDATE id = id"),
                       params);
    if (!n.ok()) return n.status();
    *inserted += static_cast<int64_t>(end - begin);
    if (progress) progress(static_cast<int64_t>(end), total);
  }
  if (!missing.empty()) {
    if (auto st = select_ids(missing); !st.ok()) return st;
  }

  std::vector<int64_t> out(problems.size());
  for (size_t k = 0; k < problems.size(); ++k) {
    auto it = ids.find(hashes[k]);
    if (it == ids.end()) {
      return absl::InternalError(
          absl::StrCat("config ", problems[k].Canonical(), " missing after insert"));
    }
    out[k] = it->second;
  }
  return out;
}

absl::StatusOr<int64_t> ConfigStore::AddTag(Connection& c, const std::vector<int64_t>& config_ids,
                                            const std::string& tag, bool recurrent) {
  if (tag.empty()) return absl::InvalidArgumentError("empty tag");
  if (Utf8Chars(tag) > kMaxTagChars) {
    return absl::InvalidArgumentError(
        absl::StrCat("tag is ", Utf8Chars(tag), " characters long; at most ", kMaxTagChars));
  }
  std::vector<int64_t> unique;
  std::unordered_set<int64_t> seen;
  for (int64_t id : config_ids) {
    if (seen.insert(id).second) unique.push_back(id);
  }
  // Rows added = count after - count before, both read in this transaction (its own inserts
  // are visible, other transactions' are not), so "tags added" is exact even with
  // ON DUPLICATE KEY UPDATE changing `recurrent` on existing rows.
  const std::string count_sql = "SELECT COUNT(*) FROM config_tag WHERE tag = ?";
  auto before = c.Query(count_sql, {tag});
  if (!before.ok()) return before.status();
  constexpr size_t kChunk = 1000;
  for (size_t begin = 0; begin < unique.size(); begin += kChunk) {
    const size_t end = std::min(unique.size(), begin + kChunk);
    Params params;
    for (size_t k = begin; k < end; ++k) {
      params.push_back(unique[k]);
      params.push_back(tag);
      params.push_back(int64_t{recurrent ? 1 : 0});
    }
    auto n = c.Execute(absl::StrCat("INSERT INTO config_tag (config_id, tag, recurrent) VALUES ",
                                    RowPlaceholders(end - begin, 3),
                                    " ON DUPLICATE KEY UPDATE recurrent = GREATEST(recurrent, "
                                    "VALUES(recurrent))"),
                       params);
    if (!n.ok()) return n.status();
  }
  auto after = c.Query(count_sql, {tag});
  if (!after.ok()) return after.status();
  return (*after)[0].Int(0) - (*before)[0].Int(0);
}

absl::StatusOr<std::vector<StoredConfig>> ConfigStore::List(const std::optional<std::string>& tag) {
  absl::StatusOr<Rows> rows =
      tag ? db_.Query("SELECT c.id, c.driver FROM conv_config c JOIN config_tag t ON "
                      "t.config_id = c.id WHERE t.tag = ? ORDER BY c.id",
                      {*tag})
          : db_.Query("SELECT id, driver FROM conv_config ORDER BY id");
  if (!rows.ok()) return rows.status();
  std::vector<StoredConfig> out;
  out.reserve(rows->size());
  for (const Row& r : *rows) {
    StoredConfig sc;
    sc.id = r.Int(0);
    sc.driver = r.String(1);
    auto p = ProblemFromDriver(sc.driver);
    if (!p.ok()) {
      return absl::InternalError(absl::StrCat("config ", sc.id, ": stored driver line does not "
                                              "parse: ",
                                              p.status().message()));
    }
    sc.problem = *p;
    out.push_back(std::move(sc));
  }
  return out;
}

absl::StatusOr<std::vector<TagCount>> ConfigStore::Tags() {
  auto rows = db_.Query(
      "SELECT tag, COUNT(*), SUM(recurrent) FROM config_tag GROUP BY tag ORDER BY tag");
  if (!rows.ok()) return rows.status();
  std::vector<TagCount> out;
  for (const Row& r : *rows) out.push_back({r.String(0), r.Int(1), r.Int(2)});
  return out;
}

absl::StatusOr<int64_t> ConfigStore::Count() {
  auto rows = db_.Query("SELECT COUNT(*) FROM conv_config");
  if (!rows.ok()) return rows.status();
  return (*rows)[0].Int(0);
}

}  // namespace tuna::schema

#include "schema/store/result_store.h"

#include <zstd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schema/store/config_store.h"
#include "schema/store/result_scan.h"
#include "tuner_core/hash/sha256.h"
#include "schema/store/sql_batch.h"
#include "tuner_core/problem/validate.h"

namespace tuna::schema {
namespace {

using internal::kExportableFind;
using internal::kExportablePerf;

// IN lists are chunked so that one statement stays small and its prepared text is reused.
constexpr size_t kInChunk = 500;

template <typename E, size_t N>
bool ParseEnum(std::string_view name, const std::array<E, N>& values,
               std::string_view (*to_name)(E), E* out) {
  for (E v : values) {
    if (to_name(v) == name) {
      *out = v;
      return true;
    }
  }
  return false;
}

constexpr std::array<Direction, 3> kDirections = {Direction::kForward, Direction::kBackwardData,
                                                  Direction::kBackwardWeights};
constexpr std::array<DataType, 4> kDataTypes = {DataType::kFp32, DataType::kFp16, DataType::kBf16,
                                                DataType::kInt8};
constexpr std::array<PadMode, 3> kPadModes = {PadMode::kDefault, PadMode::kSame,
                                              PadMode::kValid};
constexpr std::array<Layout, 4> kLayouts = {Layout::kNCHW, Layout::kNHWC, Layout::kNCDHW,
                                            Layout::kNDHWC};

constexpr char kConfigColumns[] =
    "id, spatial_dim, batchsize, in_channels, in_d, in_h, in_w, out_channels, fil_d, fil_h, "
    "fil_w, pad_d, pad_h, pad_w, conv_stride_d, conv_stride_h, conv_stride_w, dilation_d, "
    "dilation_h, dilation_w, trans_output_pad_d, trans_output_pad_h, trans_output_pad_w, "
    "group_count, mode, pad_mode, direction, data_type, in_layout, fil_layout, out_layout";


Value JobValue(const std::optional<int64_t>& job) {
  if (job) return *job;
  return nullptr;
}

}  // namespace

// ---- Reading ---------------------------------------------------------------------------------

absl::StatusOr<SessionTarget> ReadSessionTarget(Database& db, int64_t session_id) {
  auto rows = db.Query("SELECT id, arch, num_cu, backend FROM session WHERE id = ?", {session_id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return absl::NotFoundError(absl::StrCat("no session ", session_id));
  const Row& r = (*rows)[0];
  return SessionTarget{r.Int(0), r.String(1), r.Int(2), r.String(3)};
}

absl::StatusOr<std::vector<JobStateCount>> CountSessionJobs(Database& db, int64_t session_id) {
  auto rows = db.Query(
      "SELECT CAST(kind AS CHAR) AS kind, CAST(state AS CHAR) AS state, COUNT(*) AS n FROM job "
      "WHERE session_id = ? GROUP BY kind, state",
      {session_id});
  if (!rows.ok()) return rows.status();
  std::vector<JobStateCount> out;
  for (const Row& r : *rows) out.push_back({r.String(0), r.String(1), r.Int(2)});
  std::sort(out.begin(), out.end(), [](const JobStateCount& a, const JobStateCount& b) {
    return std::tie(a.kind, a.state) < std::tie(b.kind, b.state);
  });
  return out;
}

namespace {
absl::StatusOr<ResultCounts> CountResults(Database& db, int64_t session_id, const char* table,
                                          const char* exportable) {
  auto rows = db.Query(absl::StrCat("SELECT COUNT(*) AS total, COALESCE(SUM(", exportable,
                                    "), 0) AS ok FROM ", table,
                                    " r JOIN solver s ON s.id = r.solver_id WHERE r.session_id = ?"),
                       {session_id});
  if (!rows.ok()) return rows.status();
  return ResultCounts{(*rows)[0].Int(0), (*rows)[0].Int(1)};
}
}  // namespace

absl::StatusOr<ResultCounts> CountFindResults(Database& db, int64_t session_id) {
  return CountResults(db, session_id, "find_result", kExportableFind);
}
absl::StatusOr<ResultCounts> CountPerfResults(Database& db, int64_t session_id) {
  return CountResults(db, session_id, "perf_result", kExportablePerf);
}

absl::StatusOr<Problem> ProblemFromConfigRow(const Row& r) {
  Problem p;
  p.spatial_dims = static_cast<int>(r.Int("spatial_dim"));
  p.n = r.Int("batchsize");
  p.c = r.Int("in_channels");
  p.k = r.Int("out_channels");
  p.in = {r.Int("in_d"), r.Int("in_h"), r.Int("in_w")};
  p.fil = {r.Int("fil_d"), r.Int("fil_h"), r.Int("fil_w")};
  p.pad = {r.Int("pad_d"), r.Int("pad_h"), r.Int("pad_w")};
  p.stride = {r.Int("conv_stride_d"), r.Int("conv_stride_h"), r.Int("conv_stride_w")};
  p.dilation = {r.Int("dilation_d"), r.Int("dilation_h"), r.Int("dilation_w")};
  p.trans_output_pad = {r.Int("trans_output_pad_d"), r.Int("trans_output_pad_h"),
                        r.Int("trans_output_pad_w")};
  p.groups = r.Int("group_count");
  const std::string mode = r.String("mode");
  if (mode == "conv") {
    p.mode = ConvMode::kConv;
  } else if (mode == "trans") {
    p.mode = ConvMode::kTrans;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown mode '", mode, "'"));
  }
  const std::string pad_mode = r.String("pad_mode");
  if (!ParseEnum(pad_mode, kPadModes, &PadModeName, &p.pad_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown pad_mode '", pad_mode, "'"));
  }
  const std::string dir = r.String("direction"), type = r.String("data_type");
  if (!ParseEnum(dir, kDirections, &DirectionName, &p.direction)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown direction '", dir, "'"));
  }
  if (!ParseEnum(type, kDataTypes, &DataTypeName, &p.data_type)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown data_type '", type, "'"));
  }
  const std::pair<const char*, Layout*> layouts[] = {
      {"in_layout", &p.in_layout}, {"fil_layout", &p.fil_layout}, {"out_layout", &p.out_layout}};
  for (const auto& [column, field] : layouts) {
    const std::string name = r.String(column);
    if (!ParseEnum(name, kLayouts, &LayoutName, field)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown ", column, " '", name, "'"));
    }
  }
  if (p.spatial_dims != 2 && p.spatial_dims != 3) {
    return absl::InvalidArgumentError(absl::StrCat("spatial_dim ", p.spatial_dims));
  }
  if (auto st = ValidateProblem(p); !st.ok()) return st;
  return p;
}

absl::StatusOr<SessionConfigs> ReadConfigs(Database& db, const std::vector<int64_t>& ids) {
  std::vector<int64_t> sorted(ids);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  SessionConfigs out;
  for (size_t at = 0; at < sorted.size(); at += kInChunk) {
    const size_t n = std::min(kInChunk, sorted.size() - at);
    Params params(sorted.begin() + at, sorted.begin() + at + n);
    auto rows = db.Query(absl::StrCat("SELECT ", kConfigColumns, " FROM conv_config WHERE id IN (",
                                      ListPlaceholders(n), ")"),
                         params);
    if (!rows.ok()) return rows.status();
    for (const Row& r : *rows) {
      auto p = ProblemFromConfigRow(r);
      if (p.ok()) {
        out.problems.emplace(r.Int(0), *std::move(p));
      } else {
        out.bad.emplace(r.Int(0), std::string(p.status().message()));
      }
    }
  }
  for (int64_t id : sorted) {
    if (!out.problems.count(id) && !out.bad.count(id)) out.bad.emplace(id, "no such conv_config");
  }
  return out;
}

namespace internal {

FindResultRow DecodeFindResult(const Row& r) {
  return {r.Int(0), r.Int(1), r.String(2), r.Double(3), r.Int(4), r.OptInt(5)};
}

PerfResultRow DecodePerfResult(const Row& r) {
  return {r.Int(0), r.Int(1), r.String(2), r.String(3), r.Double(4), r.Int(5), r.OptInt(6)};
}

}  // namespace internal

absl::Status ScanExportableFindResults(
    Database& db, int64_t session_id, int page_size,
    const std::function<absl::Status(const std::vector<FindResultRow>&)>& page) {
  const std::string sql = absl::StrCat(
      "SELECT r.id, r.config_id, s.name, r.kernel_time, r.workspace, r.job_id "
      "FROM find_result r JOIN solver s ON s.id = r.solver_id "
      "WHERE r.session_id = ? AND r.id > ? AND ", kExportableFind, " ORDER BY r.id LIMIT ?");
  return internal::ScanPages(db, sql, {session_id}, page_size, &internal::DecodeFindResult, page);
}

absl::Status ScanExportablePerfResults(
    Database& db, int64_t session_id, int page_size,
    const std::function<absl::Status(const std::vector<PerfResultRow>&)>& page) {
  const std::string sql = absl::StrCat(
      "SELECT r.id, r.config_id, s.name, r.params, r.kernel_time, r.workspace, r.job_id "
      "FROM perf_result r JOIN solver s ON s.id = r.solver_id "
      "WHERE r.session_id = ? AND r.id > ? AND ", kExportablePerf, " ORDER BY r.id LIMIT ?");
  return internal::ScanPages(db, sql, {session_id}, page_size, &internal::DecodePerfResult, page);
}

absl::StatusOr<std::vector<KernelObject>> ReadJobKernels(Database& db,
                                                         const std::vector<int64_t>& job_ids) {
  std::vector<int64_t> sorted(job_ids);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<KernelObject> out;
  // Blobs can be large: fewer jobs per statement than for plain ids.
  constexpr size_t kJobsPerQuery = 100;
  for (size_t at = 0; at < sorted.size(); at += kJobsPerQuery) {
    const size_t n = std::min(kJobsPerQuery, sorted.size() - at);
    Params params(sorted.begin() + at, sorted.begin() + at + n);
    auto rows = db.Query(
        absl::StrCat("SELECT jk.job_id, k.id, k.arch, k.kernel_name, k.options, k.`blob`, "
                     "k.uncompressed_size FROM job_kernel jk JOIN kernel k ON k.id = jk.kernel_id "
                     "WHERE jk.job_id IN (",
                     ListPlaceholders(n), ") ORDER BY jk.job_id, k.id"),
        params);
    if (!rows.ok()) return rows.status();
    for (const Row& r : *rows) {
      KernelObject k{r.Int(0), r.Int(1), r.String(2), r.String(3), r.String(4), {}};
      const std::string blob = r.String(5);
      const int64_t size = r.Int(6);
      k.code_object.resize(static_cast<size_t>(std::max<int64_t>(size, 0)));
      const size_t got =
          ZSTD_decompress(k.code_object.data(), k.code_object.size(), blob.data(), blob.size());
      if (ZSTD_isError(got) || static_cast<int64_t>(got) != size) {
        return absl::DataLossError(absl::StrCat(
            "kernel ", k.kernel_id, " (", k.kernel_name, "): blob does not decompress to ", size,
            " bytes", ZSTD_isError(got) ? absl::StrCat(": ", ZSTD_getErrorName(got)) : ""));
      }
      out.push_back(std::move(k));
    }
  }
  return out;
}

// ---- Writing -----------------------------------------------------------------------------------

absl::StatusOr<int64_t> InsertSession(Database& db, const NewSession& s) {
  int64_t id = 0;
  auto st = db.WithConnection([&](Connection& c) -> absl::Status {
    auto n = c.Execute("INSERT INTO session (arch, num_cu, backend, label) VALUES (?, ?, ?, ?)",
                       {s.arch, s.num_cu, s.backend, s.label});
    if (!n.ok()) return n.status();
    auto last = c.LastInsertId();
    if (!last.ok()) return last.status();
    id = *last;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return id;
}

absl::Status UpsertSolver(Database& db, int64_t id, const std::string& name, bool tunable,
                          bool valid) {
  return db
      .Execute(
          "INSERT INTO solver (id, name, tunable, valid) VALUES (?, ?, ?, ?) "
          "ON DUPLICATE KEY UPDATE name = VALUES(name), tunable = VALUES(tunable), "
          "valid = VALUES(valid)",
          {id, name, int64_t{tunable}, int64_t{valid}})
      .status();
}

absl::StatusOr<std::vector<int64_t>> InsertConfigs(Database& db,
                                                   const std::vector<Problem>& problems) {
  std::vector<int64_t> ids;
  absl::Status st = db.Transaction([&](Connection& c) -> absl::Status {
    int64_t inserted = 0;
    absl::StatusOr<std::vector<int64_t>> upserted = ConfigStore(db).Upsert(c, problems, &inserted);
    if (!upserted.ok()) return upserted.status();
    ids = *std::move(upserted);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return ids;
}

absl::StatusOr<int64_t> InsertJob(Database& db, const NewJob& j) {
  int64_t id = 0;
  auto st = db.WithConnection([&](Connection& c) -> absl::Status {
    auto n = c.Execute(
        "INSERT INTO job (session_id, config_id, solver_id, kind, state) VALUES (?, ?, ?, ?, ?)",
        {j.session_id, j.config_id, j.solver_id, j.kind, j.state});
    if (!n.ok()) return n.status();
    auto last = c.LastInsertId();
    if (!last.ok()) return last.status();
    id = *last;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return id;
}

absl::Status InsertFindResults(Connection& c, const std::vector<NewFindResult>& rows) {
  Params params;
  params.reserve(rows.size() * 8);
  for (const NewFindResult& r : rows) {
    params.insert(params.end(), {r.session_id, r.config_id, r.solver_id, JobValue(r.job_id),
                                 r.kernel_time, r.workspace, r.params, int64_t{r.verified}});
  }
  return InsertRows(c,
                    "INSERT INTO find_result (session_id, config_id, solver_id, job_id, "
                    "kernel_time, workspace, params, verified) VALUES ",
                    " ON DUPLICATE KEY UPDATE job_id = VALUES(job_id), "
                    "kernel_time = VALUES(kernel_time), workspace = VALUES(workspace), "
                    "params = VALUES(params), verified = VALUES(verified)",
                    params, rows.size(), 8);
}

absl::Status InsertPerfResults(Connection& c, const std::vector<NewPerfResult>& rows) {
  Params params;
  params.reserve(rows.size() * 9);
  for (const NewPerfResult& r : rows) {
    params.insert(params.end(),
                  {r.session_id, r.config_id, r.solver_id, JobValue(r.job_id), r.params,
                   r.kernel_time, r.workspace, r.candidates_tried, int64_t{r.verified}});
  }
  return InsertRows(c,
                    "INSERT INTO perf_result (session_id, config_id, solver_id, job_id, "
                    "params, kernel_time, workspace, candidates_tried, verified) VALUES ",
                    " ON DUPLICATE KEY UPDATE job_id = VALUES(job_id), "
                    "params = VALUES(params), kernel_time = VALUES(kernel_time), "
                    "workspace = VALUES(workspace), "
                    "candidates_tried = VALUES(candidates_tried), verified = VALUES(verified)",
                    params, rows.size(), 9);
}

absl::Status InsertFindResults(Database& db, const std::vector<NewFindResult>& rows) {
  return db.Transaction([&](Connection& c) { return InsertFindResults(c, rows); });
}

absl::Status InsertPerfResults(Database& db, const std::vector<NewPerfResult>& rows) {
  return db.Transaction([&](Connection& c) { return InsertPerfResults(c, rows); });
}

absl::StatusOr<int64_t> InsertKernel(Database& db, const NewKernel& k) {
  std::string blob(ZSTD_compressBound(k.code_object.size()), '\0');
  const size_t size =
      ZSTD_compress(blob.data(), blob.size(), k.code_object.data(), k.code_object.size(), 3);
  if (ZSTD_isError(size)) {
    return absl::InternalError(absl::StrCat("zstd: ", ZSTD_getErrorName(size)));
  }
  blob.resize(size);
  int64_t id = 0;
  auto st = db.WithConnection([&](Connection& c) -> absl::Status {
    // LAST_INSERT_ID(id) makes the existing row's id the insert id on a duplicate.
    auto n = c.Execute(
        "INSERT INTO kernel (hash, arch, compiler, kernel_name, options, `blob`, "
        "uncompressed_size) VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)",
        {hash::Sha256Hex(k.code_object), k.arch, k.compiler, k.kernel_name, k.options, blob,
         static_cast<int64_t>(k.code_object.size())});
    if (!n.ok()) return n.status();
    auto last = c.LastInsertId();
    if (!last.ok()) return last.status();
    id = *last;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return id;
}

absl::Status LinkJobKernel(Database& db, int64_t job_id, int64_t kernel_id) {
  return db
      .Execute("INSERT INTO job_kernel (job_id, kernel_id) VALUES (?, ?) "
               "ON DUPLICATE KEY UPDATE job_id = job_id",
               {job_id, kernel_id})
      .status();
}

}  // namespace tuna::schema

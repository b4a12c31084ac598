// Sessions of the exporter tests: the solver table, three problems, and a session's find and
// perf results (with their jobs and kernels) inserted through result_store's helpers.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "schema/store/database.h"
#include "schema/store/result_store.h"
#include "tests/exporter/export_test_util.h"

namespace tuna::exporter::test {

using schema::Database;

struct FindSpec {
  int config;  // index into the session's problems
  int solver;  // solver id
  double time;
  int64_t workspace = 0;
  bool verified = true;
  std::string kernel_name = {};  // a kernel linked to the result's job when not empty
  std::string options = {};
  std::string code = {};
};
struct PerfSpec {
  int config;
  int solver;
  std::string params;
  double time;
  bool verified = true;
};
struct JobSpec {
  int config;
  int solver;
  std::string kind;
  std::string state;
};

// The solver table of every test: ids, names, tunable, valid.
inline void InsertSolvers(Database& db) {
  struct S {
    int id;
    const char* name;
    bool tunable;
    bool valid;
  };
  for (const S& s : {S{1, "ConvDirectNaiveConvFwd", false, true}, S{2, "TunaDirectTiled", true, true},
                     S{3, "TunaIgemm", true, true}, S{4, "TunaGhost", true, true},
                     S{5, "TunaRetired", true, false}, S{6, "TunaWinograd", true, true},
                     S{7, "TunaFft", false, true}}) {
    REQUIRE(schema::UpsertSolver(db, s.id, s.name, s.tunable, s.valid).ok());
  }
}

inline std::vector<Problem> Problems() {
  Problem wrw = Conv2d(4, 16, 32, 14, 1, 0, Direction::kBackwardWeights, DataType::kFp16);
  wrw.in_layout = wrw.fil_layout = wrw.out_layout = Layout::kNHWC;
  return {Conv2d(2, 64, 128, 28, 3, 1, Direction::kForward),
          Conv2d(2, 64, 128, 28, 3, 1, Direction::kBackwardData), wrw};
}

inline int64_t InsertSessionData(Database& db, const schema::NewSession& target,
                          std::vector<FindSpec> finds, std::vector<PerfSpec> perfs,
                          const std::vector<JobSpec>& extra_jobs = {}, bool reverse = false) {
  auto session = schema::InsertSession(db, target);
  REQUIRE(session.ok());
  auto configs = schema::InsertConfigs(db, Problems());
  REQUIRE(configs.ok());
  if (reverse) {
    std::reverse(finds.begin(), finds.end());
    std::reverse(perfs.begin(), perfs.end());
  }
  std::vector<schema::NewFindResult> find_rows;
  for (const auto& f : finds) {
    auto job = schema::InsertJob(db, {*session, (*configs)[f.config], f.solver, "find", "evaluated"});
    REQUIRE(job.ok());
    if (!f.kernel_name.empty()) {
      auto kernel = schema::InsertKernel(db, {target.arch, "hipcc 6.2", f.kernel_name, f.options, f.code});
      REQUIRE(kernel.ok());
      REQUIRE(schema::LinkJobKernel(db, *job, *kernel).ok());
    }
    find_rows.push_back({*session, (*configs)[f.config], f.solver, *job, f.time, f.workspace, "",
                         f.verified});
  }
  REQUIRE(schema::InsertFindResults(db, find_rows).ok());
  std::vector<schema::NewPerfResult> perf_rows;
  for (const auto& p : perfs) {
    auto job = schema::InsertJob(db, {*session, (*configs)[p.config], p.solver, "perf", "evaluated"});
    REQUIRE(job.ok());
    perf_rows.push_back({*session, (*configs)[p.config], p.solver, *job, p.params, p.time, 0, 10,
                         p.verified});
  }
  REQUIRE(schema::InsertPerfResults(db, perf_rows).ok());
  for (const auto& j : extra_jobs) {
    REQUIRE(schema::InsertJob(db, {*session, (*configs)[j.config], j.solver, j.kind, j.state}).ok());
  }
  return *session;
}

inline const std::string kBinaryCode("\x7f" "ELF\0\0\x01\x02 igemm code object", 26);

// Session A: what every test exports. Comments say what the export must do with each row.
inline std::vector<FindSpec> FindsA() {
  return {
      // config 0 (F): S2 fastest (its kernel goes to the kdb), S3, S1; the rest excluded.
      {0, 2, 0.12, 1024, true, "tuna_direct_tiled.cu", "-DTILE=8 -DN=2", "tiled code object"},
      {0, 3, 0.2, 0, true, "tuna_igemm.cu", "-DBLK=64", "not the fastest: not in the kdb"},
      {0, 1, 0.5},
      {0, 6, 0.001, 0, false},  // unverified: excluded although fastest
      {0, 4, 0.01},             // solver unknown to the resolver: skipped
      {0, 5, 0.02},             // solver no longer valid: excluded
      // config 1 (B): five verified entries, the slowest cut by top 4; S3's two kernels.
      {1, 1, 0.9},
      {1, 2, 0.3},
      {1, 3, 0.25, 4096, true, "tuna_igemm.cu", "-DBLK=32", kBinaryCode},
      {1, 6, 0.4},
      {1, 7, 0.35},
      // config 2 (W, FP16 NHWC): one entry; a failed timing (-1) is excluded.
      {2, 1, 1.5},
      {2, 3, -1},
  };
}
inline std::vector<PerfSpec> PerfsA() {
  return {
      {0, 2, "8,8,2", 0.12},
      {0, 3, "64,32", 0.2},
      {0, 1, "x", 0.5},           // non-tunable solver: excluded
      {0, 6, "1,1", 0.001, false},  // unverified: excluded
      {1, 3, "32,32", 0.25},
      {2, 6, "", 1.0},            // empty params: excluded
  };
}

inline const schema::NewSession kTarget{"gfx90a:sramecc+:xnack-", 104, "HIP", "export test"};

inline ExportOptions Options(int64_t session, const std::string& dir) {
  ExportOptions o;
  o.session_id = session;
  o.output_dir = dir;
  o.algorithm_for = TestResolver();
  return o;
}

}  // namespace tuna::exporter::test

// MITuna's table and column names over tuna's tables (migration 006) against a real MariaDB:
// the computed find-db key equals tuner_core's FindDbKey for every kind of problem, and the
// conv_* views read back what result_store wrote.
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "schema/store/golden_store.h"
#include "schema/store/result_store.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/problem/keys.h"
#include "tuner_core/problem/validate.h"

namespace tuna {
namespace {

using schema::Database;
using testing::MariadbTest;

Problem Conv(int64_t c, int64_t k, int64_t hw, int64_t f, int64_t pad, int64_t stride,
             Direction d) {
  Problem p;
  p.n = 3;
  p.c = c;
  p.k = k;
  p.in = {1, hw, hw + 2};
  p.fil = {1, f, f};
  p.pad = {0, pad, pad};
  p.stride = {1, stride, stride};
  p.direction = d;
  return p;
}

// Every direction in both modes, strides, dilations, output padding, groups, NHWC, mixed
// layouts, 3D, each data type.
std::vector<Problem> Problems() {
  std::vector<Problem> out;
  for (Direction d : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    out.push_back(Conv(16, 32, 14, 3, 1, 2, d));
    Problem t = Conv(16, 8, 7, 3, 1, 2, d);
    t.mode = ConvMode::kTrans;
    t.trans_output_pad = {0, 1, 1};
    out.push_back(t);
    Problem g = Conv(32, 64, 9, 3, 0, 1, d);
    g.groups = 4;
    g.dilation = {1, 2, 2};
    g.data_type = DataType::kFp16;
    out.push_back(g);
    Problem nhwc = Conv(8, 8, 6, 1, 0, 1, d);
    nhwc.in_layout = nhwc.fil_layout = nhwc.out_layout = Layout::kNHWC;
    nhwc.data_type = DataType::kBf16;
    out.push_back(nhwc);
    Problem mixed = Conv(8, 16, 6, 3, 1, 1, d);
    mixed.out_layout = Layout::kNHWC;
    mixed.data_type = DataType::kInt8;
    out.push_back(mixed);
    // An output MIOpen clamps to one row (a filter taller than the input).
    Problem clamped = Conv(8, 8, 2, 3, 0, 1, d);
    out.push_back(clamped);
    Problem v3 = Conv(4, 8, 10, 3, 1, 1, d);
    v3.spatial_dims = 3;
    v3.in = {5, 10, 12};
    v3.fil = {3, 3, 3};
    v3.pad = {1, 1, 1};
    v3.stride = {2, 1, 1};
    v3.in_layout = v3.fil_layout = v3.out_layout = Layout::kNCDHW;
    out.push_back(v3);
  }
  return out;
}

}  // namespace

TEST_CASE_METHOD(MariadbTest, "the views compute MIOpen's find-db key of every config",
                 "[mariadb][views]") {
  const std::vector<Problem> problems = Problems();
  for (const Problem& p : problems) REQUIRE(ValidateProblem(p).ok());
  auto ids = schema::InsertConfigs(db(), problems);
  REQUIRE(ids.ok());
  for (size_t i = 0; i < problems.size(); ++i) {
    auto rows =
        db().Query("SELECT fdb_key FROM tuna_config_fdb_key WHERE config_id = ?", {(*ids)[i]});
    REQUIRE(rows.ok());
    REQUIRE(rows->size() == 1);
    INFO(problems[i].Canonical());
    CHECK((*rows)[0].String(0) == FindDbKey(problems[i]));
  }
  // conv_config carries MITuna's columns; its tensors join the tensor view.
  auto cfg = db().Query(
      "SELECT c.md5 = CONVERT(MD5(c.driver) USING ascii), c.pad_mode, c.valid, i.dim1, i.dim3, "
      "i.dim4, w.dim0, w.dim1,"
      " w.dim3, w.layout, w.data_type FROM conv_config c JOIN tensor i ON i.id = c.input_tensor"
      " JOIN tensor w ON w.id = c.weight_tensor WHERE c.id = ?",
      {(*ids)[2]});  // the grouped FP16 forward problem
  REQUIRE(cfg.ok());
  REQUIRE(cfg->size() == 1);
  const schema::Row& r = (*cfg)[0];
  CHECK(r.Int(0) == 1);
  CHECK(r.String(1) == "default");
  CHECK(r.Int(2) == 1);
  CHECK(r.Int(3) == 32);  // C
  CHECK(r.Int(4) == 9);   // H
  CHECK(r.Int(5) == 11);  // W
  CHECK(r.Int(6) == 64);  // K
  CHECK(r.Int(7) == 8);   // C per group
  CHECK(r.Int(8) == 3);
  CHECK(r.String(9) == "NCHW");
  CHECK(r.String(10) == "FP16");
}

TEST_CASE_METHOD(MariadbTest, "conv_job, conv_find_db, conv_perf_db, applicability and golden",
                 "[mariadb][views]") {
  REQUIRE(schema::UpsertSolver(db(), 5, "TunaIgemm", true).ok());
  auto session = schema::InsertSession(db(), {"gfx90a", 104, "HIP", "views"});
  REQUIRE(session.ok());
  const Problem p = Conv(16, 32, 14, 3, 1, 1, Direction::kBackwardData);
  auto ids = schema::InsertConfigs(db(), {p});
  REQUIRE(ids.ok());
  const int64_t config = (*ids)[0];
  auto perf_job = schema::InsertJob(db(), {*session, config, 5, "perf", "failed"});
  auto find_job = schema::InsertJob(db(), {*session, config, 5, "find", "evaluated"});
  REQUIRE(perf_job.ok());
  REQUIRE(find_job.ok());
  REQUIRE(
      schema::InsertFindResults(db(), {{*session, config, 5, *find_job, 0.25, 64, "4,4"}}).ok());
  REQUIRE(schema::InsertPerfResults(db(), {{*session, config, 5, *perf_job, "4,4", 0.24, 0, 9,
                                            /*verified=*/false}})
              .ok());
  REQUIRE(db().Execute("INSERT INTO solver_applicability (session_id, config_id, solver_id,"
                       " applicable, reason) VALUES (?, ?, 5, FALSE, 'requires NHWC')",
                       {*session, config})
              .ok());

  auto jobs =
      db().Query("SELECT state, fin_step, solver, config, session FROM conv_job ORDER BY id");
  REQUIRE(jobs.ok());
  REQUIRE(jobs->size() == 2);
  CHECK((*jobs)[0].String(0) == "errored");
  CHECK((*jobs)[0].String(1) == "miopen_perf_compile,miopen_perf_eval");
  CHECK((*jobs)[1].String(0) == "evaluated");
  CHECK((*jobs)[1].String(2) == "TunaIgemm");
  CHECK((*jobs)[1].Int(3) == config);

  auto fdb = db().Query(
      "SELECT fdb_key, kernel_time, workspace_sz, valid, opencl, solver, params FROM conv_find_db"
      " WHERE session = ? AND config = ?",
      {*session, config});
  REQUIRE(fdb.ok());
  REQUIRE(fdb->size() == 1);
  CHECK((*fdb)[0].String(0) == FindDbKey(p));
  CHECK((*fdb)[0].Double(1) == Approx(0.25));
  CHECK((*fdb)[0].Int(2) == 64);
  CHECK((*fdb)[0].Int(3) == 1);
  CHECK((*fdb)[0].Int(4) == 0);
  CHECK((*fdb)[0].Int(5) == 5);

  auto pdb = db().Query(
      "SELECT d.valid, d.params, c.layout, c.data_type FROM conv_perf_db d"
      " JOIN conv_perf_config c ON c.id = d.miopen_config WHERE d.session = ?",
      {*session});
  REQUIRE(pdb.ok());
  REQUIRE(pdb->size() == 1);
  CHECK((*pdb)[0].Int(0) == 0);  // unverified
  CHECK((*pdb)[0].String(1) == "4,4");
  CHECK((*pdb)[0].String(3) == "FP32");

  auto app = db().Query(
      "SELECT a.applicable, s.solver, s.config_type FROM conv_solver_applicability a"
      " JOIN solver s ON s.id = a.solver WHERE a.session = ? AND a.config = ?",
      {*session, config});
  REQUIRE(app.ok());
  REQUIRE(app->size() == 1);
  CHECK((*app)[0].Int(0) == 0);
  CHECK((*app)[0].String(1) == "TunaIgemm");

  REQUIRE(schema::UpdateGolden(db(), {.golden_v = 7, .session_id = *session}).ok());
  auto golden =
      db().Query("SELECT golden_miopen_v, arch, num_cu, fdb_key, kernel_time FROM conv_golden");
  REQUIRE(golden.ok());
  REQUIRE(golden->size() == 1);  // the find row (the perf row is unverified)
  CHECK((*golden)[0].Int(0) == 7);
  CHECK((*golden)[0].String(1) == "gfx90a");
  CHECK((*golden)[0].String(3) == FindDbKey(p));

  // Read-only: the views reject writes.
  CHECK_FALSE(db().Execute("UPDATE conv_find_db SET kernel_time = 1").ok());
  CHECK_FALSE(db().Execute("UPDATE conv_job SET retries = 3").ok());
  CHECK_FALSE(db().Execute("DELETE FROM conv_golden").ok());
  auto kept = db().Query("SELECT kernel_time FROM find_result");
  REQUIRE(kept.ok());
  CHECK((*kept)[0].Double(0) == Approx(0.25));
}

}  // namespace tuna

#include "tests/distributed/seed.h"

#include "absl/strings/str_cat.h"

namespace tuna::testing {
namespace {

class TestSolver : public solver::Solver {
 public:
  TestSolver(std::string name, bool tunable) : name_(std::move(name)), tunable_(tunable) {}
  std::string_view Name() const override { return name_; }
  solver::Algorithm Algo() const override { return solver::Algorithm::kDirect; }
  bool IsTunable() const override { return tunable_; }
  std::vector<Direction> Directions() const override {
    return {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights};
  }
  absl::Status IsApplicable(const solver::Target&, const Problem&) const override {
    return absl::OkStatus();
  }
  solver::SearchSpace Space(const solver::Target&, const Problem&) const override {
    if (!tunable_) return {};
    return solver::SearchSpace({{"tile", {1, 2, 4}}});
  }
  absl::Status IsValid(const solver::Target& t, const Problem& p,
                       const solver::PerfConfig& c) const override {
    if (auto st = Solver::IsValid(t, p, c); !st.ok()) return st;
    if (tunable_ && c.values[0] == 4) return absl::InvalidArgumentError("tile 4 is too large");
    return absl::OkStatus();
  }
  absl::StatusOr<solver::Solution> GetSolution(const solver::Target&, const Problem&,
                                               const solver::PerfConfig&) const override {
    return absl::UnimplementedError("test solver");
  }

 private:
  std::string name_;
  bool tunable_;
};

}  // namespace

std::unique_ptr<solver::SolverRegistry> MakeTestRegistry() {
  std::vector<std::pair<uint64_t, std::unique_ptr<solver::Solver>>> v;
  v.emplace_back(9001, std::make_unique<TestSolver>("TestSolver9001", true));
  v.emplace_back(9002, std::make_unique<TestSolver>("TestSolver9002", false));
  return std::make_unique<solver::SolverRegistry>(std::move(v));
}

absl::StatusOr<Seeded> SeedQueue(schema::Database& db, int64_t configs, int solvers,
                                 const std::string& kind, const std::string& state,
                                 const std::string& arch, int num_cu, const std::string& backend,
                                 const std::vector<std::string>& solver_names) {
  Seeded s;
  auto n = db.Execute("INSERT INTO session (arch, num_cu, backend, label) VALUES (?, ?, ?, 'test')",
                      {arch, static_cast<int64_t>(num_cu), backend});
  if (!n.ok()) return n.status();
  auto id = db.Query("SELECT MAX(id) FROM session");
  if (!id.ok()) return id.status();
  s.session_id = (*id)[0].Int(0);
  const int count = solver_names.empty() ? solvers : static_cast<int>(solver_names.size());
  for (int k = 0; k < count; ++k) {
    const int64_t sid = 9001 + k;
    const std::string name =
        solver_names.empty() ? absl::StrCat("TestSolver", sid) : solver_names[k];
    auto u = db.Execute(
        "INSERT INTO solver (id, name, tunable) VALUES (?, ?, TRUE) "
        "ON DUPLICATE KEY UPDATE name = VALUES(name)",
        {sid, name});
    if (!u.ok()) return u.status();
    s.solver_ids.push_back(sid);
  }
  // Batch sizes offset by the session id keep configs of several seeded sessions distinct.
  const int64_t base = (s.session_id % 40) * 25000;  // batch stays under ProblemLimits::max_dim
  auto c = db.Execute(
      "INSERT IGNORE INTO conv_config (spatial_dim, batchsize, in_channels, in_h, in_w, "
      "out_channels, fil_h, fil_w, pad_h, pad_w, conv_stride_h, conv_stride_w, dilation_h, "
      "dilation_w, direction, data_type, driver, config_hash) "
      "SELECT 2, ? + seq, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 'F', 'FP32', "
      "CONCAT('./bin/MIOpenDriver conv -n ', ? + seq, ' -c 3 -H 8 -W 8 -k 4 -y 3 -x 3 -p 1 -q 1 "
      "-u 1 -v 1 -l 1 -j 1 -g 1 -F 1 -t 1'), SHA2(CONCAT('cfg', ? + seq), 256) "
      "FROM seq_1_to_" + std::to_string(configs),
      {base, base, base});
  if (!c.ok()) return c.status();
  s.configs = configs;
  for (int64_t sid : s.solver_ids) {
    auto j = db.Execute(
        "INSERT INTO job (session_id, config_id, solver_id, kind, state) "
        "SELECT ?, id, ?, ?, ? FROM conv_config WHERE batchsize > ? AND batchsize <= ?",
        {s.session_id, sid, kind, state, base, base + configs});
    if (!j.ok()) return j.status();
    s.jobs += *j;
  }
  return s;
}

}  // namespace tuna::testing

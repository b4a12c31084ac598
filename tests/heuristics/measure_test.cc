// `tuna heuristics eval --measure` on the CPU backend, real parts throughout (XGBoost models, the
// builtin GEMM solver, ConfigTimer over the tuner's Compiler and Evaluator, the host compiler): a
// predicted config the session never timed is built, verified and timed, and counted with that
// time — a hit or a miss by it, against the session's optimum; one that cannot be built is a miss
// with the reason; past the time limit it stays unmeasured; another arch is refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "tests/fixtures/skip.h"
#include "tuner_core/heuristics/config_scorer.h"
#include "tuner_core/heuristics/config_timer.h"
#include "tuner_core/heuristics/evaluation.h"
#include "tuner_core/heuristics/models.h"
#include "tuner_core/heuristics/training.h"
#include "tuner_core/runtime/fallback.h"

namespace tuna::heuristics {
namespace {

absl::StatusOr<std::unique_ptr<ConfigTimer>> OpenCpu(double limit_s = 0, const std::string& arch = "") {
  ConfigTimerOptions o;
  o.backend = backend::BackendKind::kCpu;
  o.arch = arch;
  o.time_limit_s = limit_s;
  o.evaluator.repetitions = 3;
  return ConfigTimer::Open(o);
}

Problem Fwd(int64_t c, int64_t hw) {
  Problem p;
  p.n = 2;
  p.c = c;
  p.k = 16;
  p.in = {1, hw, hw};
  p.fil = {1, 3, 3};
  p.pad = {0, 1, 1};
  return p;
}

const solver::Solver& Gemm() { return *solver::SolverRegistry::Builtin().ByName("TunaCpuGemmConv")->solver; }

// Synthetic session data on the local target: the GEMM solver's fastest config has TB_M = 32.
TrainingSet KnownSet(const solver::Target& target) {
  TrainingSet set;
  set.target = target;
  set.backend = "CPU";
  set.basename = "local";
  set.sessions = {7};
  int i = 0;
  for (int64_t c : {2, 3, 4, 5, 6, 12, 16, 24, 32, 48}) {
    for (int64_t hw : {8, 12, 16, 20}) {
      ProblemRecord r;
      r.problem = Fwd(c, hw);
      r.config_key = "key" + std::to_string(i++);
      r.solver_ms["ConvDirectNaiveConvFwd"] = c < 8 ? 1.0 : 3.0;
      r.solver_ms["TunaCpuGemmConv"] = c < 8 ? 2.0 : 1.0;
      const solver::SearchSpace space = Gemm().Space(target, r.problem);
      for (uint64_t k = 0; k < space.Size(); k += 7) {
        const solver::PerfConfig cfg = space.At(k);
        const double tb_m = static_cast<double>(space.Value(cfg, "TB_M"));
        r.samples["TunaCpuGemmConv"].push_back({cfg.ToString(), 1.0 + std::fabs(std::log2(tb_m / 32))});
      }
      set.problems.push_back(std::move(r));
    }
  }
  return set;
}

bool Noted(const EvalReport& r, const std::string& text) {
  for (const std::string& n : r.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("eval --measure times a never-timed predicted config on the device and counts it by that time") {
  absl::StatusOr<std::unique_ptr<ConfigTimer>> timer = OpenCpu();
  if (!timer.ok()) {
    testing::SkipUnlessCi("cpu backend cannot measure: " + timer.status().ToString());
    return;
  }
  const solver::Target target = (*timer)->target();
  TrainOptions o;
  o.holdout = 0;
  o.picker.rounds = o.predictor.rounds = 40;
  absl::StatusOr<std::shared_ptr<const Models>> m = TrainModels(KnownSet(target), o, nullptr);
  REQUIRE(m.ok());
  ProblemRecord r;
  r.config_key = "unseen";
  r.problem = Fwd(20, 14);
  r.solver_ms = {{"ConvDirectNaiveConvFwd", 3.0}, {"TunaCpuGemmConv", 1.0}};
  absl::StatusOr<ConfigScoreFn> score = MakeConfigScorer(*m, r.problem, target, Gemm());
  REQUIRE(score.ok());
  absl::StatusOr<std::vector<solver::PerfConfig>> top = TopPredicted(*score, r.problem, target, Gemm(), 1);
  REQUIRE(top.ok());
  REQUIRE(top->size() == 1);
  const std::string picked = top->front().ToString();
  const std::string other = Gemm().DefaultConfig(target, r.problem).ToString();
  REQUIRE(other != picked);
  // The pick's real time, measured once directly (built, verified, timed).
  absl::StatusOr<double> direct = (*timer)->Time(r.problem, Gemm(), top->front());
  INFO(direct.status().ToString());
  REQUIRE(direct.ok());
  REQUIRE(*direct > 0);
  backend::DeviceInfo info;
  info.arch = target.arch;
  info.compute_units = target.num_cu;
  const runtime::DeviceModel device = runtime::ModelForDevice(backend::BackendKind::kCpu, info);
  const MeasureFn measure = [&](const Problem& p, const solver::Solver& s, const solver::PerfConfig& c) {
    return (*timer)->Time(p, s, c);
  };
  const auto& registry = solver::SolverRegistry::Builtin();

  // The session timed only the default, 10x slower than the pick: measured now, a hit.
  r.samples["TunaCpuGemmConv"] = {{other, 10 * *direct}};
  absl::StatusOr<EvalReport> ev = Evaluate(**m, {&r}, target, device, registry, measure);
  REQUIRE(ev.ok());
  CHECK(ev->measure);
  CHECK(ev->measure_calls == 1);  // the pick only: the default was timed by the session
  CHECK(ev->predicted.cases == 1);
  CHECK(ev->predicted.measured == 1);
  CHECK(ev->predicted.unmeasured == 0);
  CHECK(ev->predicted.failed == 0);
  CHECK(ev->predicted.within15 == 1);
  CHECK(ev->predicted.median_ratio < 1.15);
  CHECK(std::isfinite(ev->predicted.mean_ratio));
  CHECK(ev->defaults.measured == 0);
  CHECK(ev->defaults.median_ratio == 1.0);
  CHECK(Noted(*ev, "predicted params '" + picked + "' never timed in the session, measured now: "));
  CHECK((*timer)->counts().timed == 2);

  // The session's optimum 10x faster than the pick: measured, and a miss by its measured time.
  r.samples["TunaCpuGemmConv"] = {{other, *direct / 10}};
  ev = Evaluate(**m, {&r}, target, device, registry, measure);
  REQUIRE(ev.ok());
  CHECK(ev->predicted.measured == 1);
  CHECK(ev->predicted.unmeasured == 0);
  CHECK(ev->predicted.within15 == 0);
  CHECK(std::isfinite(ev->predicted.median_ratio));
  CHECK(ev->predicted.median_ratio > 1.15);

  // Without --measure the same pick is a miss for want of a time (the old behaviour).
  ev = Evaluate(**m, {&r}, target, device, registry);
  REQUIRE(ev.ok());
  CHECK_FALSE(ev->measure);
  CHECK(ev->measure_calls == 0);
  CHECK(ev->predicted.unmeasured == 1);
  CHECK(ev->predicted.measured == 0);
  CHECK(std::isinf(ev->predicted.median_ratio));

  // A measurement that fails (here: a config the solver refuses, through the same timer) is a miss
  // with the reason noted.
  const solver::SearchSpace space = Gemm().Space(target, r.problem);
  std::optional<solver::PerfConfig> invalid;
  for (uint64_t k = 0; k < space.Size() && !invalid; ++k) {
    if (!Gemm().IsValid(target, r.problem, space.At(k)).ok()) invalid = space.At(k);
  }
  if (invalid) {
    const MeasureFn refused = [&](const Problem& p, const solver::Solver& s, const solver::PerfConfig&) {
      return (*timer)->Time(p, s, *invalid);
    };
    ev = Evaluate(**m, {&r}, target, device, registry, refused);
    REQUIRE(ev.ok());
    CHECK(ev->predicted.failed == 1);
    CHECK(ev->predicted.measured == 0);
    CHECK(ev->predicted.within15 == 0);
    CHECK(std::isinf(ev->predicted.median_ratio));
    CHECK(Noted(*ev, "measured now: FAILED (NotApplicable"));
    CHECK((*timer)->counts().failed == 1);
  } else {
    WARN("every TunaCpuGemmConv config is valid for the problem: the failure case is not run");
  }
}

TEST_CASE("eval --measure: past the time limit a pick stays unmeasured; another arch is refused") {
  absl::StatusOr<std::unique_ptr<ConfigTimer>> timer = OpenCpu(1e-9);
  if (!timer.ok()) {
    testing::SkipUnlessCi("cpu backend cannot measure: " + timer.status().ToString());
    return;
  }
  const solver::Target target = (*timer)->target();
  const Problem p = Fwd(20, 14);
  absl::StatusOr<double> ms = (*timer)->Time(p, Gemm(), Gemm().DefaultConfig(target, p));
  CHECK(absl::IsDeadlineExceeded(ms.status()));
  CHECK((*timer)->counts().over_time == 1);

  TrainOptions o;
  o.holdout = 0;
  o.picker.rounds = o.predictor.rounds = 20;
  absl::StatusOr<std::shared_ptr<const Models>> m = TrainModels(KnownSet(target), o, nullptr);
  REQUIRE(m.ok());
  ProblemRecord r;
  r.config_key = "unseen";
  r.problem = p;
  r.solver_ms = {{"ConvDirectNaiveConvFwd", 3.0}, {"TunaCpuGemmConv", 1.0}};
  r.samples["TunaCpuGemmConv"] = {{Gemm().DefaultConfig(target, p).ToString(), 1.0}};
  backend::DeviceInfo info;
  info.arch = target.arch;
  info.compute_units = target.num_cu;
  const MeasureFn measure = [&](const Problem& q, const solver::Solver& s, const solver::PerfConfig& c) {
    return (*timer)->Time(q, s, c);
  };
  absl::StatusOr<EvalReport> ev = Evaluate(**m, {&r}, target, runtime::ModelForDevice(backend::BackendKind::kCpu, info),
                                           solver::SolverRegistry::Builtin(), measure);
  REQUIRE(ev.ok());
  if (ev->measure_calls == 1) {  // the pick is not the default
    CHECK(ev->measure_unavailable == 1);
    CHECK(ev->predicted.unmeasured == 1);
    CHECK(ev->predicted.failed == 0);
    CHECK(Noted(*ev, "not measured (measure time limit"));
  }

  absl::StatusOr<std::unique_ptr<ConfigTimer>> other = OpenCpu(0, "sm_90");
  CHECK(absl::IsFailedPrecondition(other.status()));
  CHECK(other.status().message().find("its times would not compare") != std::string::npos);
}

}  // namespace
}  // namespace tuna::heuristics

// Load and predict times of the learned heuristics (issue #20; targets: load < 50 ms, predict <
// 100 us per problem). Times are printed, never asserted.
//
//   bazel run //bench/heuristics:heuristics_bench -- --model DIR --basename sm_9084   (exported models)
//   bazel run //bench/heuristics:heuristics_bench                 (synthetic: models of realistic
//       size trained on --problems generated problems of --arch with analytic times and noise)
//
// Measured (median over repetitions):
//   load        Models::Load of the metadata, picker and every predictor
//   pick        RankSolvers of one problem's applicable solvers (immediate mode's find-db miss)
//   score1      ScoreConfigs of one config (a search's cost-model query)
//   rank_space  MakeConfigScorer + TopPredicted over a tunable solver's valid space (the runtime's
//               predicted params on a perf-db miss, done once per problem and solver)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "tuner_core/heuristics/config_scorer.h"
#include "tuner_core/heuristics/features.h"
#include "tuner_core/heuristics/models.h"
#include "tuner_core/heuristics/training.h"
#include "tuner_core/json/json_text.h"
#include "tuner_core/runtime/fallback.h"
#include "tuner_core/solver/registry.h"

namespace {

using namespace tuna;
using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double MicrosSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

// Problems of ResNet-like shapes: channels, sizes and filters drawn from fixed lists.
std::vector<Problem> SyntheticProblems(int count) {
  const int64_t chans[] = {32, 64, 128, 256, 512}, sizes[] = {7, 14, 28, 56}, batches[] = {1, 8, 32};
  std::vector<Problem> out;
  for (int i = 0; i < count; ++i) {
    Problem p;
    const uint64_t h = Mix(i + 1);
    p.n = batches[h % 3];
    p.c = chans[(h >> 8) % 5];
    p.k = chans[(h >> 16) % 5];
    p.in = {1, sizes[(h >> 24) % 4], sizes[(h >> 24) % 4]};
    const bool three = (h >> 32) % 2;
    p.fil = {1, three ? 3 : 1, three ? 3 : 1};
    p.pad = {0, three ? 1 : 0, three ? 1 : 0};
    p.direction = static_cast<Direction>((h >> 40) % 3);
    p.data_type = DataType::kFp16;
    p.in_layout = p.fil_layout = p.out_layout = Layout::kNHWC;
    out.push_back(p);
  }
  return out;
}

// Analytic times with noise for every applicable solver; 200 configs per tunable solver.
heuristics::TrainingSet SyntheticSet(const solver::Target& target, int count) {
  heuristics::TrainingSet set;
  set.target = target;
  set.backend = "CUDA";
  set.basename = "synthetic";
  const runtime::DeviceModel dm = runtime::ModelForDevice(target.backend, backend::DeviceInfo{0, "", target.arch, target.num_cu});
  int i = 0;
  for (const Problem& p : SyntheticProblems(count)) {
    heuristics::ProblemRecord r;
    r.config_key = fmt::format("synthetic-{}", i++);
    r.problem = p;
    for (const solver::RegisteredSolver& s : solver::SolverRegistry::Builtin().Applicable(target, p)) {
      const double base = runtime::EstimateMs(dm, p, *s.solver, true);
      const std::string name(s.solver->Name());
      r.solver_ms[name] = base * (1 + 0.3 * static_cast<double>(Mix(s.id * 977 + i) % 100) / 100);
      if (!s.solver->IsTunable()) continue;
      const solver::SearchSpace space = s.solver->Space(target, p);
      for (uint64_t k = 0; k < space.Size() && r.samples[name].size() < 200; ++k) {
        const solver::PerfConfig c = space.At(k);
        if (!s.solver->IsValid(target, p, c).ok()) continue;
        r.samples[name].push_back({c.ToString(), base * (1 + static_cast<double>(Mix(k * 31 + i) % 1000) / 250)});
      }
    }
    set.problems.push_back(std::move(r));
  }
  return set;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"load and predict times of the learned heuristics"};
  std::string model_dir, basename, arch = "sm_90", json_path;
  int problems = 200, reps = 20;
  app.add_option("--model", model_dir, "directory of exported models (default: train synthetic ones)");
  app.add_option("--basename", basename, "their db basename (with --model)");
  app.add_option("--arch", arch, "target of the synthetic models and of the problems")->capture_default_str();
  app.add_option("--problems", problems, "synthetic training problems")->capture_default_str();
  app.add_option("--reps", reps, "load repetitions")->capture_default_str();
  app.add_option("--json", json_path, "also write the figures as JSON");
  CLI11_PARSE(app, argc, argv);

  absl::StatusOr<solver::Target> target = solver::TargetForArch(arch);
  if (!target.ok()) return std::cerr << target.status() << "\n", 2;
  if (model_dir.empty()) {
    model_dir = (std::filesystem::temp_directory_path() / fmt::format("heuristics_bench.{}", getpid())).string();
    basename = "synthetic";
    heuristics::TrainOptions o;
    o.holdout = 0;
    const auto t0 = Clock::now();
    auto m = heuristics::TrainModels(SyntheticSet(*target, problems), o, nullptr);
    if (!m.ok() || !(*m)->Write(model_dir).ok()) return std::cerr << "synthetic training failed\n", 1;
    std::cout << fmt::format("trained synthetic models on {} problems in {:.1f} s\n", problems, MicrosSince(t0) / 1e6);
  }
  std::vector<double> load_us;
  std::shared_ptr<const heuristics::Models> models;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    auto m = heuristics::Models::Load(model_dir, basename);
    load_us.push_back(MicrosSince(t0));
    if (!m.ok()) return std::cerr << m.status() << "\n", 1;
    models = *m;
  }
  solver::Target t = *target;
  t.num_cu = models->metadata().num_cu;
  std::vector<double> pick_us, score1_us, space_us;
  for (const Problem& p : SyntheticProblems(200)) {
    const std::vector<solver::RegisteredSolver> app_solvers = solver::SolverRegistry::Builtin().Applicable(t, p);
    if (app_solvers.empty() || !models->CheckRange(p, t).ok()) continue;
    auto t0 = Clock::now();
    auto ranked = models->RankSolvers(p, t, app_solvers);
    pick_us.push_back(MicrosSince(t0));
    for (const solver::RegisteredSolver& s : app_solvers) {
      if (!models->HasPredictor(std::string(s.solver->Name()))) continue;
      const solver::SearchSpace space = s.solver->Space(t, p);
      const std::vector<solver::PerfConfig> one_config = {s.solver->DefaultConfig(t, p)};
      t0 = Clock::now();
      auto one = models->ScoreConfigs(p, t, std::string(s.solver->Name()), space, one_config);
      score1_us.push_back(MicrosSince(t0));
      t0 = Clock::now();
      auto scorer = heuristics::MakeConfigScorer(models, p, t, *s.solver);
      if (scorer.ok()) (void)heuristics::TopPredicted(*scorer, p, t, *s.solver, 1);
      space_us.push_back(MicrosSince(t0));
    }
  }
  const double load_ms = Median(load_us) / 1000;
  std::cout << fmt::format("load        {:10.2f} ms  (median of {}; target < 50 ms)\n", load_ms, load_us.size());
  std::cout << fmt::format("pick        {:10.1f} us  per problem (median of {}; target < 100 us)\n", Median(pick_us), pick_us.size());
  std::cout << fmt::format("score1      {:10.1f} us  per config (median of {})\n", Median(score1_us), score1_us.size());
  std::cout << fmt::format("rank_space  {:10.1f} us  per (problem, solver) (median of {})\n", Median(space_us), space_us.size());
  if (!json_path.empty()) {
    Json j = {{"model_dir", model_dir}, {"basename", basename}, {"load_ms", JsonMeasure(load_ms)},
              {"pick_us", JsonMeasure(Median(pick_us))}, {"score1_us", JsonMeasure(Median(score1_us))},
              {"rank_space_us", JsonMeasure(Median(space_us))}, {"problems_in_range", pick_us.size()}};
    std::ofstream(json_path) << JsonText(j) << "\n";
  }
  return 0;
}

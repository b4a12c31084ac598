// `tuna heuristics train --session_id N [--session_id M ...] -o DIR` and
// `tuna heuristics eval --session_id N --model DIR`: the learned solver picker and perf-config
// predictors (heuristics/heuristics.h, tuner_core/heuristics). Train writes the model files and
// their metadata into DIR, named after the sessions' db basename; eval prints the held-out
// accuracy of the models next to the analytic fallback and the default params.
// `--measure`: a predicted (or default) config the session never timed is built, verified and
// timed on the local device (device --device, of the session's backend and arch) by the tuner's
// measure stage (tuner_core/heuristics/config_timer.h) and counted with that time; one that fails
// is a miss with the reason in the notes. --measure-seconds bounds the time spent measuring.
// `tuna heuristics dump --session_id N -o FILE`: the training data of sessions as JSON lines, one
// config a line: {"config": SHA-256 key, "driver": canonical line, "solver_ms": {solver: verified
// find time}, "samples": {solver: [[params, ms], ...]}} (passed candidates, fastest per params) —
// what train reads, kept as a file beside the exported dbs (bench/heuristics/data/).
// Exit codes: 0 done; 1 error; 2 bad arguments.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "cli/command.h"
#include "cli/json_text.h"
#include "cli/db_access.h"
#include "cli/progress.h"
#include "cli/terminal_text.h"
#include "cli/version.h"
#include "tuner_core/db/text_record.h"
#include "tuner_core/heuristics/config_timer.h"
#include "fmt/format.h"
#include "heuristics/heuristics.h"

namespace tuna::cli {
namespace {

struct TrainArgs {
  std::vector<int64_t> sessions;
  std::string output_dir;
  double holdout = 0.2;
  uint64_t seed = 1;
  int rounds = 200;
  int depth = 0;  // 0 = each model's default
};

struct DumpArgs {
  std::vector<int64_t> sessions;
  std::string output;
};

struct EvalArgs {
  int64_t session_id = 0;
  std::string model_dir;
  bool measure = false;       // time the never-timed picks on the local device
  double measure_seconds = 0;  // 0 = no limit
  int device = 0;
};

int Usage(const absl::Status& st) {
  std::cerr << "tuna heuristics: " << EscapeControlBytes(st.message()) << "\n";
  return absl::IsInvalidArgument(st) ? 2 : 1;
}

int RunTrain(const GlobalOptions& global, const TrainArgs& args) {
  auto db = OpenCommandDatabase(global, DbAccessOptions{.pool_size = 1, .migrate = false});
  if (!db.ok()) return Usage(db.status());
  heuristics_cli::TrainRequest req;
  req.sessions = args.sessions;
  req.output_dir = args.output_dir;
  req.options.holdout = args.holdout;
  req.options.seed = args.seed;
  req.options.picker.rounds = req.options.predictor.rounds = args.rounds;
  if (args.depth > 0) req.options.picker.max_depth = req.options.predictor.max_depth = args.depth;
  req.options.tuna_version = TunaVersion();
  absl::StatusOr<heuristics_cli::TrainOutcome> out = heuristics_cli::TrainFromSessions(**db, req);
  if (!out.ok()) return Usage(out.status());
  const heuristics::TrainReport& r = out->report;
  std::cout << fmt::format("trained {} on {} configs ({} held out), picker {} ({} rows), {} predictors\n",
                           out->basename, r.train_problems, r.held_out_problems, out->picker ? "yes" : "no",
                           r.picker_rows, out->predictors);
  for (const auto& [solver, rows] : r.predictor_rows) std::cout << fmt::format("  {}: {} rows\n", solver, rows);
  if (r.skipped_samples > 0) std::cerr << "warning: " << r.skipped_samples << " samples skipped (params do not parse)\n";
  for (const std::string& f : out->files) std::cout << "wrote " << f << "\n";
  return 0;
}

std::string Pct(int64_t n, int64_t d) { return d > 0 ? fmt::format("{:.1f} %", 100.0 * n / d) : "-"; }

std::string Ratio(double r) { return std::isfinite(r) ? fmt::format("{:.3f}", r) : "unmeasured"; }

// Predicted (the runtime's pick), ranked among the timed configs, default (evaluation.h).
void PrintParams(const heuristics::EvalReport& r) {
  const heuristics::ParamsScore* cols[] = {&r.predicted, &r.ranked, &r.defaults};
  auto row = [&](const char* label, auto cell) {
    std::cout << fmt::format("{:<22}{:>18}{:>18}{:>18}\n", label, cell(*cols[0]), cell(*cols[1]), cell(*cols[2]));
  };
  std::cout << fmt::format("{:<22}{:>18}{:>18}{:>18}\n", "perf params", "predicted", "ranked (timed)", "default");
  row("(problem, solver)", [](const auto& s) { return std::to_string(s.cases); });
  row("within 15 % of tuned", [](const auto& s) { return Pct(s.within15, s.cases); });
  row("median time / tuned", [](const auto& s) { return Ratio(s.median_ratio); });
  row("mean time / tuned", [](const auto& s) { return Ratio(s.mean_ratio); });
  row("never timed (miss)", [](const auto& s) { return std::to_string(s.unmeasured); });
  if (r.measure) {
    row("measured now", [](const auto& s) { return std::to_string(s.measured); });
    row("measure failed (miss)", [](const auto& s) { return std::to_string(s.failed); });
  }
  std::cout << "predicted: the runtime's pick over the valid space ("
            << (r.measure ? "one the session never timed is measured now on this device; one that fails to build or "
                            "verify, or is left unmeasured, counts as a miss"
                          : "a config the session never timed counts as a miss")
            << "); ranked: the best-scored of the timed configs\n";
  if (r.default_unmeasured > 0) {
    std::cout << r.default_unmeasured << " default configs were not among the measured candidates (not counted)\n";
  }
}

void PrintEval(const heuristics_cli::EvalOutcome& o) {
  const heuristics::EvalReport& r = o.report;
  std::cout << fmt::format("{}: {} held-out configs evaluated ({} of {} were trained on)\n", o.basename,
                           r.test_problems, o.trained_on, o.session_configs);
  std::cout << fmt::format("{:<22}{:>18}{:>18}\n", "solver choice", "heuristics model", "analytic fallback");
  std::cout << fmt::format("{:<22}{:>18}{:>18}\n", "problems", r.picker.cases, r.fallback.cases);
  std::cout << fmt::format("{:<22}{:>18}{:>18}\n", "picked the best", Pct(r.picker.best, r.picker.cases),
                           Pct(r.fallback.best, r.fallback.cases));
  std::cout << fmt::format("{:<22}{:>18}{:>18}\n", "within 10 % of best", Pct(r.picker.within10, r.picker.cases),
                           Pct(r.fallback.within10, r.fallback.cases));
  std::cout << fmt::format("{:<22}{:>16.2f} %{:>16.2f} %\n", "mean slowdown", 100 * r.picker.mean_slowdown,
                           100 * r.fallback.mean_slowdown);
  PrintParams(r);
  for (const std::string& n : r.notes) std::cerr << "note: " << EscapeControlBytes(n) << "\n";
}

// The MeasureFn of --measure: a ConfigTimer on the session's backend and arch, kept in `timer`.
heuristics_cli::MeasureFactory MeasureFactoryFor(const EvalArgs& args, std::shared_ptr<heuristics::ConfigTimer>& timer) {
  return [&args, &timer](const heuristics::TrainingSet& set) -> absl::StatusOr<heuristics::MeasureFn> {
    heuristics::ConfigTimerOptions o;
    o.backend = set.target.backend;
    o.device = args.device;
    o.arch = set.target.arch;
    o.time_limit_s = args.measure_seconds;
    absl::StatusOr<std::unique_ptr<heuristics::ConfigTimer>> t = heuristics::ConfigTimer::Open(o);
    if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat("--measure: ", t.status().message()));
    timer = *std::move(t);
    std::cerr << fmt::format("measuring never-timed picks on {} ({}){}\n", timer->device_name(), timer->target().arch,
                             args.measure_seconds > 0 ? fmt::format(", at most {} s", args.measure_seconds) : "");
    return [t = timer](const Problem& p, const solver::Solver& s, const solver::PerfConfig& c) { return t->Time(p, s, c); };
  };
}

void PrintMeasured(const heuristics::EvalReport& r, const heuristics::ConfigTimer& timer) {
  const heuristics::ConfigTimerCounts& c = timer.counts();
  std::cout << fmt::format("measured: {} picks timed now on {} ({} predicted, {} default), {} failed to build / run / "
                           "verify (misses), {} not measured (time limit or device unusable)\n",
                           c.timed, timer.device_name(), r.predicted.measured, r.defaults.measured, c.failed,
                           r.measure_unavailable);
}

int RunEval(const GlobalOptions& global, const EvalArgs& args) {
  auto db = OpenCommandDatabase(global, DbAccessOptions{.pool_size = 1, .migrate = false});
  if (!db.ok()) return Usage(db.status());
  std::shared_ptr<heuristics::ConfigTimer> timer;
  absl::StatusOr<heuristics_cli::EvalOutcome> out = heuristics_cli::EvaluateSession(
      **db, args.session_id, args.model_dir, args.measure ? MeasureFactoryFor(args, timer) : nullptr);
  if (!out.ok()) return Usage(out.status());
  PrintEval(*out);
  if (timer != nullptr) PrintMeasured(out->report, *timer);
  return 0;
}

Json RecordJson(const heuristics::ProblemRecord& r) {
  Json samples = Json::object();
  for (const auto& [solver, timed] : r.samples) {
    Json list = Json::array();
    for (const heuristics::TimedParams& t : timed) list.push_back(Json::array({t.params, t.ms}));
    samples[solver] = std::move(list);
  }
  return Json{{"config", r.config_key}, {"driver", r.problem.Canonical()}, {"solver_ms", r.solver_ms},
              {"samples", std::move(samples)}};
}

int RunDump(const GlobalOptions& global, const DumpArgs& args) {
  auto db = OpenCommandDatabase(global, DbAccessOptions{.pool_size = 1, .migrate = false});
  if (!db.ok()) return Usage(db.status());
  absl::StatusOr<heuristics::TrainingSet> set = heuristics_cli::ReadTrainingSet(**db, args.sessions);
  if (!set.ok()) return Usage(set.status());
  std::string text;
  int64_t samples = 0;
  for (const heuristics::ProblemRecord& r : set->problems) {
    absl::StrAppend(&text, JsonText(RecordJson(r)), "\n");
    for (const auto& [_, timed] : r.samples) samples += static_cast<int64_t>(timed.size());
  }
  // Written as a temp and renamed: a failed dump leaves no partial file under the name.
  if (absl::Status st = db::WriteFileAtomically(args.output, text); !st.ok()) {
    std::cerr << "tuna heuristics: cannot write " << EscapeControlBytes(args.output) << ": "
              << EscapeControlBytes(std::string(st.message())) << "\n";
    return 1;
  }
  std::cout << fmt::format("dumped {} configs ({} with a verified find result), {} samples of {} ({}) to {}\n",
                           set->problems.size(),
                           std::count_if(set->problems.begin(), set->problems.end(),
                                         [](const auto& r) { return !r.solver_ms.empty(); }),
                           samples, set->basename, set->backend, args.output);
  return 0;
}

}  // namespace

void AddHeuristicsCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("heuristics", "train and evaluate the learned solver picker and perf-config predictors");
  cmd->require_subcommand(1);
  const GlobalOptions* global = ctx.global;

  CLI::App* train = cmd->add_subcommand("train", "train the models from tuning sessions into DIR");
  auto targs = std::make_shared<TrainArgs>();
  train->add_option("--session_id,--session-id", targs->sessions, "session(s) to train from (repeat the flag)")
      ->required()
      ->check(CLI::PositiveNumber);
  train->add_option("-o,--output", targs->output_dir, "directory for the model files")->required();
  train->add_option("--holdout", targs->holdout, "share of configs held out for `heuristics eval` (0 = train on all)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.95));
  train->add_option("--seed", targs->seed, "seed of the held-out split")->capture_default_str();
  train->add_option("--rounds", targs->rounds, "boosting rounds per model")->capture_default_str()->check(CLI::Range(1, 100000));
  train->add_option("--depth", targs->depth, "tree depth (default: picker 6, predictors 8)")->check(CLI::Range(1, 32));
  train->callback([ctx, targs, global] { *ctx.selected = [targs, global] { return RunTrain(*global, *targs); }; });

  CLI::App* eval = cmd->add_subcommand("eval", "evaluate models on the session's configs they were not trained on");
  auto eargs = std::make_shared<EvalArgs>();
  AddSessionIdOption(eval, &eargs->session_id, "session to evaluate on");
  eval->add_option("--model", eargs->model_dir, "directory of the model files")->required();
  eval->add_flag("--measure", eargs->measure,
                 "build, verify and time on this machine's device the predicted / default params the session never timed");
  eval->add_option("--measure-seconds,--measure_seconds", eargs->measure_seconds,
                   "stop measuring after this many seconds (later picks stay unmeasured); 0 = no limit")
      ->check(CLI::NonNegativeNumber);
  eval->add_option("--device", eargs->device, "device index for --measure")->capture_default_str()->check(CLI::NonNegativeNumber);
  eval->callback([ctx, eargs, global] { *ctx.selected = [eargs, global] { return RunEval(*global, *eargs); }; });

  CLI::App* dump = cmd->add_subcommand("dump", "write the sessions' training data (find times, samples) as JSON lines");
  auto dargs = std::make_shared<DumpArgs>();
  dump->add_option("--session_id,--session-id", dargs->sessions, "session(s) to dump (repeat the flag)")
      ->required()
      ->check(CLI::PositiveNumber);
  dump->add_option("-o,--output", dargs->output, "the JSON-lines file")->required();
  dump->callback([ctx, dargs, global] { *ctx.selected = [dargs, global] { return RunDump(*global, *dargs); }; });
}

}  // namespace tuna::cli

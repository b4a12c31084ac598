// EvalJob in-process on the cpu backend: the executor's evaluator cache serves the jobs of one
// config from one preparation, a new config gets a new one, and every report says where the
// job's time went. The executor's arguments carry the search settings, the heuristics model
// directory included.
#include <algorithm>

#include "catch2/catch.hpp"
#include "tests/search/cpu_fixture.h"
#include "tests/search/test_solvers.h"
#include "worker/executor.h"
#include "worker/job_runner.h"

namespace tuna::worker {
namespace {

coordinator::LeasedJob Job(int64_t id, const std::string& kind, const std::string& driver,
                           const std::string& solver, const solver::Target& target) {
  coordinator::LeasedJob j;
  j.job_id = id;
  j.attempt = 1;
  j.step = jobs::JobStep::kEval;
  j.kind = kind;
  j.arch = target.arch;
  j.num_cu = target.num_cu;
  j.backend = "cpu";
  j.config_id = id;
  j.driver = driver;
  j.solver_name = solver;
  return j;
}

TEST_CASE("the executor's arguments carry --whole-space, --no-specialize and --heuristics-model; a directory without models is refused") {
  JobTuning t;
  t.strategy = search::StrategyKind::kModel;
  t.budget = 12;
  t.whole_space = 40;
  std::vector<std::string> args = JobTuningArgs(t);
  CHECK(std::find(args.begin(), args.end(), "--heuristics-model") == args.end());
  args.insert(args.begin(), {"--executor-fd", "3"});
  absl::StatusOr<ExecutorArgs> parsed = ParseExecutorArgs(args);
  REQUIRE(parsed.ok());
  CHECK(parsed->tuning.budget == 12);
  CHECK(parsed->tuning.whole_space == 40);
  CHECK(parsed->tuning.predictor == nullptr);
  CHECK(parsed->tuning.specialize);
  t.specialize = false;  // --no-specialize reaches the child
  args = JobTuningArgs(t);
  args.insert(args.begin(), {"--executor-fd", "3"});
  parsed = ParseExecutorArgs(args);
  REQUIRE(parsed.ok());
  CHECK_FALSE(parsed->tuning.specialize);
  t.specialize = true;

  t.heuristics_model = "/nonexistent/tuna-models";
  args = JobTuningArgs(t);
  auto at = std::find(args.begin(), args.end(), "--heuristics-model");
  REQUIRE(at != args.end());
  CHECK(*(at + 1) == "/nonexistent/tuna-models");
  args.insert(args.begin(), {"--executor-fd", "3"});
  parsed = ParseExecutorArgs(args);
  CHECK(absl::IsNotFound(parsed.status()));
  CHECK(parsed.status().message().find("/nonexistent/tuna-models") != std::string_view::npos);
}

TEST_CASE("the jobs of one config share one evaluator; reports carry timings") {
  search::testing::CpuFixture f;
  if (!f.ok) return;
  auto registry = search::testing::FaultRegistry({search::testing::kCorrect, search::testing::kSlow});
  JobTuning tuning;
  tuning.strategy = search::StrategyKind::kExhaustive;
  tuning.repetitions = 3;
  const std::string a = "conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 1";
  const std::string b = "conv -n 1 -c 3 -H 5 -W 5 -k 2 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -F 1";
  EvaluatorCache evaluators;
  bool wedged = true;

  const coordinator::Report first =
      EvalJob(Job(1, "perf", a, "TestFaultSolver", f.target), *f.backend, *f.device, *registry,
              tuning, evaluators, &wedged);
  REQUIRE(first.succeeded);
  CHECK_FALSE(wedged);
  CHECK(first.has_result);
  CHECK(first.candidates_tried == 2);
  CHECK(evaluators.reuses() == 0);
  CHECK(first.timings.wall_seconds > 0);
  CHECK(first.timings.device_seconds > 0);
  CHECK(first.timings.kernel_seconds > 0);
  CHECK(first.timings.device_seconds <= first.timings.wall_seconds);
  CHECK(first.timings.kernel_seconds <= first.timings.device_seconds);

  const coordinator::Report second =
      EvalJob(Job(2, "find", a, "ConvDirectNaiveConvFwd", f.target), *f.backend, *f.device,
              *registry, tuning, evaluators, &wedged);
  REQUIRE(second.succeeded);
  CHECK(second.has_result);
  CHECK(evaluators.reuses() == 1);
  CHECK(second.timings.kernel_seconds > 0);

  const coordinator::Report third =
      EvalJob(Job(3, "find", b, "ConvDirectNaiveConvFwd", f.target), *f.backend, *f.device,
              *registry, tuning, evaluators, &wedged);
  REQUIRE(third.succeeded);
  CHECK(third.has_result);
  CHECK(evaluators.reuses() == 1);  // another problem: prepared anew

  // Back to the first problem: still held (least recently used, not evicted).
  const coordinator::Report fourth =
      EvalJob(Job(4, "find", a, "TestFaultSolver", f.target), *f.backend, *f.device, *registry,
              tuning, evaluators, &wedged);
  REQUIRE(fourth.succeeded);
  CHECK(evaluators.reuses() == 2);

  // A find job times the tuned params the coordinator sent, the default without them, and
  // the default again when they are not valid for the problem.
  coordinator::LeasedJob find = Job(6, "find", a, "TestFaultSolver", f.target);
  find.tuned_params = std::to_string(search::testing::kSlow);
  coordinator::Report timed = EvalJob(find, *f.backend, *f.device, *registry, tuning, evaluators, &wedged);
  REQUIRE(timed.succeeded);
  CHECK(timed.params == find.tuned_params);
  find.tuned_params = "";
  timed = EvalJob(find, *f.backend, *f.device, *registry, tuning, evaluators, &wedged);
  CHECK(timed.params == std::to_string(search::testing::kCorrect));
  find.tuned_params = "9";  // not a value of the axis
  timed = EvalJob(find, *f.backend, *f.device, *registry, tuning, evaluators, &wedged);
  CHECK(timed.params == std::to_string(search::testing::kCorrect));

  // The next job's evaluator prepared on the host ahead of time serves it, with the same
  // verified results as one prepared in place.
  const std::string c = "conv -n 2 -c 8 -H 9 -W 9 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 1";
  EvaluatorCache ahead;
  const coordinator::LeasedJob next = Job(7, "perf", c, "TestFaultSolver", f.target);
  PrefetchEvaluator(next, *f.backend, *f.device, tuning, ahead);
  const coordinator::Report early = EvalJob(next, *f.backend, *f.device, *registry, tuning, ahead, &wedged);
  REQUIRE(early.succeeded);
  CHECK(ahead.prefetched() == 1);
  EvaluatorCache in_place;
  const coordinator::Report late = EvalJob(next, *f.backend, *f.device, *registry, tuning, in_place, &wedged);
  REQUIRE(late.succeeded);
  CHECK(in_place.prefetched() == 0);
  REQUIRE(early.samples.size() == late.samples.size());
  for (size_t i = 0; i < early.samples.size(); ++i) {
    CHECK(early.samples[i].status == late.samples[i].status);
  }
  PrefetchEvaluator(next, *f.backend, *f.device, tuning, ahead);  // already held: nothing to do
  CHECK(EvalJob(next, *f.backend, *f.device, *registry, tuning, ahead, &wedged).succeeded);
  CHECK(ahead.prefetched() == 1);

  // Several jobs ahead are prepared at once, each for its own job, whatever the order they run.
  EvaluatorCache several;
  const std::vector<coordinator::LeasedJob> upcoming = {
      Job(11, "find", a, "ConvDirectNaiveConvFwd", f.target),
      Job(12, "find", b, "ConvDirectNaiveConvFwd", f.target),
      Job(13, "find", c, "ConvDirectNaiveConvFwd", f.target)};
  for (const auto& j : upcoming) PrefetchEvaluator(j, *f.backend, *f.device, tuning, several);
  for (const auto& j : {upcoming[2], upcoming[0], upcoming[1]}) {
    CHECK(EvalJob(j, *f.backend, *f.device, *registry, tuning, several, &wedged).has_result);
  }
  CHECK(several.prefetched() == 3);

  // The next job's search planned ahead serves it, with the same candidates in the same order;
  // a plan for another job is not used.
  PlannedTuner planned;
  JobTuning random = tuning;
  random.strategy = search::StrategyKind::kRandom;
  random.budget = 2;
  const coordinator::LeasedJob perf = Job(8, "perf", c, "TestFaultSolver", f.target);
  planned.Start(perf, *f.backend, *f.device, *registry, random);
  const coordinator::Report with_plan =
      EvalJob(perf, *f.backend, *f.device, *registry, random, ahead, &wedged, &planned);
  const coordinator::Report without = EvalJob(perf, *f.backend, *f.device, *registry, random, ahead, &wedged);
  REQUIRE(with_plan.succeeded);
  REQUIRE(without.succeeded);
  REQUIRE(with_plan.samples.size() == 2);
  REQUIRE(with_plan.samples.size() == without.samples.size());
  for (size_t i = 0; i < without.samples.size(); ++i) {
    CHECK(with_plan.samples[i].params == without.samples[i].params);
  }
  CHECK(planned.Take(perf.job_id) == nullptr);  // taken by the job
  // The executor plans the job after next while the next one waits to be taken.
  coordinator::LeasedJob after = perf;
  after.job_id = 9;
  planned.Start(perf, *f.backend, *f.device, *registry, random);
  planned.Start(after, *f.backend, *f.device, *registry, random);
  CHECK(planned.Take(99) == nullptr);
  CHECK(planned.Take(perf.job_id) != nullptr);
  CHECK(planned.Take(after.job_id) != nullptr);
  planned.Start(Job(10, "find", c, "TestFaultSolver", f.target), *f.backend, *f.device, *registry, random);
  CHECK(planned.Take(10) == nullptr);  // find jobs time one config: nothing to plan

  // A cache of one evaluator prepares every change of problem anew.
  EvaluatorCache one(1);
  for (const std::string& line : {a, b, a}) {
    REQUIRE(EvalJob(Job(5, "find", line, "ConvDirectNaiveConvFwd", f.target), *f.backend,
                    *f.device, *registry, tuning, one, &wedged)
                .succeeded);
  }
  CHECK(one.reuses() == 0);
}

TEST_CASE("the finishing step runs in the find job that follows a perf job, not in the perf job") {
  search::testing::CpuFixture f;
  if (!f.ok) return;
  const std::string line = "conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 1";
  JobTuning tuning;
  tuning.strategy = search::StrategyKind::kExhaustive;
  tuning.repetitions = 3;
  bool wedged = true;
  EvaluatorCache evaluators;
  // "5,0": the slow kernel; its specialisation "5,1" runs `specialized`.
  auto run = [&](const coordinator::LeasedJob& job, int64_t specialized, const JobTuning& t) {
    auto registry = search::testing::SpecializingRegistry({search::testing::kSlow}, specialized);
    coordinator::Report r = EvalJob(job, *f.backend, *f.device, *registry, t, evaluators, &wedged);
    REQUIRE(r.succeeded);
    CHECK_FALSE(wedged);
    return r;
  };

  coordinator::LeasedJob perf = Job(1, "perf", line, "TestFaultSolver", f.target);
  perf.find_follows = true;
  coordinator::Report searched = run(perf, search::testing::kCorrect, tuning);
  CHECK(searched.params == "5,0");  // the perf job left the finishing step to the find job
  CHECK(searched.samples.size() == 1);
  perf.find_follows = false;  // no find job follows: the perf job finishes itself
  searched = run(perf, search::testing::kCorrect, tuning);
  REQUIRE(searched.samples.size() == 1);  // the finishing step's build is not a sample of the search
  CHECK((searched.params == "5,0" || searched.params == "5,1"));

  coordinator::LeasedJob find = Job(2, "find", line, "TestFaultSolver", f.target);
  find.tuned_params = "5,0";
  const coordinator::Report faster = run(find, search::testing::kCorrect, tuning);
  REQUIRE(faster.samples.size() == 2);
  CHECK(faster.samples[0].params == "5,0");
  CHECK(faster.samples[1].params == "5,1");
  CHECK(faster.samples[1].status == "Passed");
  CHECK(faster.candidates_tried == 2);
  REQUIRE(faster.has_result);
  // Which build is faster is timing (1 launch against 3): the report must follow it.
  CHECK(faster.finished == (faster.params == "5,1"));
  CHECK(faster.kernel_time_ms > 0);

  const coordinator::Report wrong = run(find, search::testing::kGarbage, tuning);
  REQUIRE(wrong.samples.size() == 2);
  CHECK(wrong.samples[1].status == "Incorrect");
  CHECK_FALSE(wrong.finished);
  CHECK(wrong.params == "5,0");

  const coordinator::Report broken = run(find, search::testing::kBrokenBuild, tuning);
  REQUIRE(broken.samples.size() == 2);
  CHECK(broken.samples[1].status == "CompileFailed");
  CHECK_FALSE(broken.finished);
  CHECK(broken.params == "5,0");

  JobTuning off = tuning;
  off.specialize = false;  // --no-specialize
  const coordinator::Report kept = run(find, search::testing::kCorrect, off);
  CHECK(kept.samples.size() == 1);
  CHECK_FALSE(kept.finished);
  find.tuned_params = "5,1";  // already the build for this problem (an earlier session's): timed alone
  const coordinator::Report again = run(find, search::testing::kCorrect, tuning);
  CHECK(again.samples.size() == 1);
  CHECK(again.params == "5,1");
  CHECK_FALSE(again.finished);
  find.tuned_params = "";  // no perf result: the default, not finished
  CHECK(run(find, search::testing::kCorrect, tuning).samples.size() == 1);
}

}  // namespace
}  // namespace tuna::worker

// Compiler + Evaluator on the cpu backend: correct candidates pass, faulty ones get the right
// Disposition without aborting the batch, slow ones are dropped early, a hung launch is a
// Timeout, and the device-reference path checks itself against the CPU reference.
#include <chrono>
#include <thread>

#include "catch2/catch.hpp"
#include "tests/search/cpu_fixture.h"
#include "tests/search/test_solvers.h"
#include "tuner_core/search/measure/compiler.h"
#include "tuner_core/search/measure/device_guard.h"
#include "tuner_core/search/measure/evaluator.h"

namespace tuna::search {
namespace {

using testing::CpuFixture;
using testing::ParseOne;

const char* kLines[] = {
    "conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -F 1",
    "convfp16 -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2",
    "convbfp16 -n 2 -c 4 -H 7 -W 7 -k 4 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -g 2 -F 4",
};

EvaluatorOptions FastOptions() {
  EvaluatorOptions o;
  o.repetitions = 5;
  o.early_repetitions = 2;
  o.retime_min_kernel_ms = 0;  // Retime runs exactly the rounds asked for (its own test case below)
  return o;
}

TEST_CASE("faulty candidates are classified, the batch is never aborted") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kGarbage, testing::kBrokenBuild,
                                          testing::kWritesNothing, testing::kSlow});
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  Compiler compiler(*f.backend, f.target);
  for (const char* line : kLines) {
    const Problem p = ParseOne(line);
    INFO(line);
    auto ev = Evaluator::Create(*f.device, p, FastOptions());
    REQUIRE(ev.ok());
    CHECK((*ev)->reference().source == "cpu");
    std::vector<solver::PerfConfig> configs;
    for (int64_t v : {0, 1, 2, 3, 5, 9}) configs.push_back(solver::PerfConfig{{v}});  // 9: not in space
    const auto compiled = compiler.Compile(faults, p, configs);
    REQUIRE(compiled.size() == configs.size());
    CHECK(compiled[2].disposition == Disposition::kCompileFailed);
    CHECK(compiled[2].error.find("TUNA_TESTONLY_BREAK") != std::string::npos);
    CHECK(compiled[5].disposition == Disposition::kNotApplicable);

    std::vector<Measurement> m;
    for (const auto& c : compiled) m.push_back((*ev)->Evaluate(c, 0));
    CHECK(m[0].disposition == Disposition::kPassed);
    CHECK(m[0].time_ms > 0);
    CHECK(m[0].samples_ms.size() >= 2);
    CHECK(m[1].disposition == Disposition::kIncorrect);
    CHECK(m[2].disposition == Disposition::kCompileFailed);
    CHECK(m[3].disposition == Disposition::kIncorrect);  // the poison was never overwritten
    CHECK(m[3].error.find("nan") != std::string::npos);
    CHECK(m[4].disposition == Disposition::kPassed);
    CHECK(m[5].disposition == Disposition::kNotApplicable);
    CHECK((*ev)->healthy());
  }
}

// A device-work guard that counts its scopes, checks they never nest (the real one, a device
// lock, is not re-entrant) and makes every acquisition wait 20 ms.
struct CountingGuard {
  int taken = 0;
  int held = 0;
  int max_held = 0;
  struct Scope : DeviceWorkScope {
    explicit Scope(CountingGuard& g) : g(g) { g.max_held = std::max(g.max_held, ++g.held); }
    ~Scope() override { --g.held; }
    CountingGuard& g;
  };
  DeviceWorkGuard Guard() {
    return [this]() -> std::unique_ptr<DeviceWorkScope> {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++taken;
      return std::make_unique<Scope>(*this);
    };
  }
};

TEST_CASE("the device guard is taken around device work, never nested, and its wait is counted") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kGarbage});
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  Compiler compiler(*f.backend, f.target);
  const Problem p = ParseOne(kLines[0]);
  CountingGuard g;
  EvaluatorOptions o = FastOptions();
  o.device_guard = g.Guard();
  auto ev = Evaluator::Create(*f.device, p, o);
  REQUIRE(ev.ok());
  const int at_create = g.taken;
  CHECK(at_create >= 1);  // the buffers and their uploads
  const auto good = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kCorrect}});
  const auto bad = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kGarbage}});
  CHECK((*ev)->Evaluate(good, 0).disposition == Disposition::kPassed);
  CHECK((*ev)->Evaluate(bad, 0).disposition == Disposition::kIncorrect);
  CHECK(g.taken == at_create + 2);  // once per candidate
  const std::vector<Measurement> again = (*ev)->Retime({&good, &good}, 2);
  REQUIRE(again.size() == 2);
  CHECK(again[0].disposition == Disposition::kPassed);
  CHECK(g.taken == at_create + 3);  // once for the whole re-timing
  CHECK(g.held == 0);
  CHECK(g.max_held == 1);
  // 20 ms per acquisition, none of it counted as setup or verification.
  const EvalTimings t = (*ev)->timings();
  CHECK(t.device_wait_ms >= 0.9 * 20 * g.taken);
  const EvalTimings d = t - EvalTimings{};
  CHECK(d.device_wait_ms == t.device_wait_ms);
}

TEST_CASE("a candidate much slower than the best so far is dropped early") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kSlow});
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  Compiler compiler(*f.backend, f.target);
  const Problem p = ParseOne(kLines[0]);
  auto ev = Evaluator::Create(*f.device, p, FastOptions());
  REQUIRE(ev.ok());
  const auto slow = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kSlow}});
  REQUIRE(slow.disposition == Disposition::kPassed);
  const Measurement full = (*ev)->Evaluate(slow, 0);
  REQUIRE(full.disposition == Disposition::kPassed);
  CHECK_FALSE(full.dropped_early);
  CHECK(full.samples_ms.size() == 5);
  // Pretend something 1000x faster was already found (on a loaded CI machine CPU timings of the
  // same kernel vary several-fold, so a 10x margin is not enough to be sure of the drop).
  const Measurement dropped = (*ev)->Evaluate(slow, full.time_ms / 1000);
  CHECK(dropped.disposition == Disposition::kPassed);
  CHECK(dropped.dropped_early);
  CHECK(dropped.samples_ms.size() == 2);
  // Re-timing interleaves and returns one median per candidate.
  const auto again = (*ev)->Retime({&slow, &slow}, 3);
  REQUIRE(again.size() == 2);
  CHECK(again[0].samples_ms.size() == 3);
  CHECK(again[1].time_ms > 0);
}

TEST_CASE("re-timing gives short kernels more rounds, up to the cap") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect});
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  Compiler compiler(*f.backend, f.target);
  const Problem p = ParseOne(kLines[0]);
  const auto good = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kCorrect}});
  REQUIRE(good.disposition == Disposition::kPassed);
  const auto rounds = [&](double min_kernel_ms, int cap) {
    EvaluatorOptions o = FastOptions();
    o.retime_min_kernel_ms = min_kernel_ms;
    o.retime_max_repetitions = cap;
    auto ev = Evaluator::Create(*f.device, p, o);
    REQUIRE(ev.ok());
    const auto again = (*ev)->Retime({&good, &good}, 3);
    REQUIRE(again.size() == 2);
    CHECK(again[0].samples_ms.size() == again[1].samples_ms.size());
    return again[0].samples_ms.size();
  };
  CHECK(rounds(0, 100) == 3);     // off: exactly the rounds asked for
  CHECK(rounds(1e9, 12) == 12);   // every kernel is short of a 1e9 ms minimum: the cap
  CHECK(rounds(1e9, 2) == 3);     // a cap below the rounds asked for does not lower them
}

TEST_CASE("a candidate that overwrites its inputs does not spoil the next one") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kClobbersInputs, testing::kCorrect});
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  Compiler compiler(*f.backend, f.target);
  for (const char* line : kLines) {
    INFO(line);
    const Problem p = ParseOne(line);
    auto ev = Evaluator::Create(*f.device, p, FastOptions());
    REQUIRE(ev.ok());
    const auto clobber = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kClobbersInputs}});
    const auto correct = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kCorrect}});
    REQUIRE(clobber.disposition == Disposition::kPassed);
    REQUIRE(correct.disposition == Disposition::kPassed);
    // Its output was computed before it clobbered the inputs; every timed run of it garbles
    // them again, and the next candidate must still see the original data.
    CHECK((*ev)->Evaluate(clobber, 0).disposition == Disposition::kPassed);
    const Measurement after = (*ev)->Evaluate(correct, 0);
    CHECK(after.disposition == Disposition::kPassed);
    INFO(after.error);
    CHECK((*ev)->Evaluate(clobber, 0).disposition == Disposition::kPassed);
  }
}

TEST_CASE("the evaluator accounts where its time went") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kGarbage});
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  Compiler compiler(*f.backend, f.target);
  const Problem p = ParseOne(kLines[0]);
  auto ev = Evaluator::Create(*f.device, p, FastOptions());
  REQUIRE(ev.ok());
  const EvalTimings created = (*ev)->timings();
  CHECK(created.setup_ms > 0);
  CHECK(created.reference_ms > 0);
  CHECK(created.candidates == 0);
  CHECK(created.kernel_ms == 0);

  const auto good = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kCorrect}});
  const auto bad = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kGarbage}});
  const Measurement m = (*ev)->Evaluate(good, 0);
  REQUIRE(m.disposition == Disposition::kPassed);
  const Measurement wrong = (*ev)->Evaluate(bad, 0);
  CHECK(wrong.disposition == Disposition::kIncorrect);
  CHECK(wrong.samples_ms.empty());  // timed while being compared, then discarded

  const EvalTimings d = (*ev)->timings() - created;
  CHECK(d.candidates == 2);
  CHECK(d.setup_ms == 0);
  CHECK(d.load_ms > 0);
  CHECK(d.verify_ms > 0);
  double sum = 0;
  for (double t : m.samples_ms) sum += t;
  CHECK(d.kernel_ms >= sum);           // the incorrect candidate's runs count too
  CHECK(d.timing_ms >= d.kernel_ms);   // timed batches contain their kernels
  CHECK(d.device_ms >= d.timing_ms);   // and are device work
}

TEST_CASE("candidates that share a kernel build load it once and are still verified each") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kSlow});
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  Compiler compiler(*f.backend, f.target);
  const Problem p = ParseOne(kLines[0]);
  EvaluatorOptions o = FastOptions();
  o.modules = std::make_shared<backend::ModuleCache>();
  auto ev = Evaluator::Create(*f.device, p, o);
  REQUIRE(ev.ok());
  // kCorrect and kSlow are the same naive build, launched once or three times.
  const auto good = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kCorrect}});
  const auto slow = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kSlow}});
  REQUIRE(good.code.size() == 1);
  REQUIRE(slow.code.size() == 1);
  REQUIRE(good.code[0].bytes == slow.code[0].bytes);
  CHECK((*ev)->Evaluate(good, 0).disposition == Disposition::kPassed);
  CHECK((*ev)->Evaluate(slow, 0).disposition == Disposition::kPassed);
  CHECK((*ev)->timings().modules_loaded == 1);
  CHECK((*ev)->timings().modules_reused == 1);

  // The module a correct candidate loaded does not make a wrong one with the same code pass:
  // with no launch at all, it leaves the poisoned output as it was.
  CompiledCandidate wrong = good;
  wrong.solution.launches.clear();
  const Measurement m = (*ev)->Evaluate(wrong, 0);
  CHECK(m.disposition == Disposition::kIncorrect);
  CHECK(m.samples_ms.empty());
  CHECK((*ev)->timings().modules_reused == 2);

  // The re-timing and a later evaluator of the same device (another job of the config, after
  // an eviction from a worker's evaluator cache) reuse it too.
  CHECK((*ev)->Retime({&good, &slow}, 2)[1].disposition == Disposition::kPassed);
  CHECK((*ev)->timings().modules_reused == 4);
  auto later = Evaluator::Create(*f.device, p, o);
  REQUIRE(later.ok());
  CHECK((*later)->Evaluate(good, 0).disposition == Disposition::kPassed);
  CHECK((*later)->timings().modules_loaded == 0);
  CHECK((*later)->timings().modules_reused == 1);
  CHECK(o.modules->loads() == 1);
  const EvalTimings d = (*ev)->timings() - EvalTimings{};
  CHECK(d.modules_reused == 4);

  // Without a shared cache each evaluator keeps its own.
  auto own = Evaluator::Create(*f.device, p, FastOptions());
  REQUIRE(own.ok());
  CHECK((*own)->Evaluate(good, 0).disposition == Disposition::kPassed);
  CHECK((*own)->Evaluate(slow, 0).disposition == Disposition::kPassed);
  CHECK((*own)->timings().modules_loaded == 1);
  CHECK((*own)->timings().modules_reused == 1);
}

TEST_CASE("a shared device buffer is allocated once, grown on demand and kept") {
  CpuFixture f;
  if (!f.ok) return;
  SharedDeviceBuffer shared;
  CHECK(shared.bytes() == 0);
  auto a = shared.Get(*f.device, 1000);
  REQUIRE(a.ok());
  CHECK((*a)->bytes() == 1000);
  auto b = shared.Get(*f.device, 10);  // smaller: the same buffer
  REQUIRE(b.ok());
  CHECK(*b == *a);
  CHECK((*b)->address() == (*a)->address());
  auto c = shared.Get(*f.device, 4000);  // larger: replaced, same holder
  REQUIRE(c.ok());
  CHECK(*c == *a);
  CHECK(shared.bytes() == 4000);
  CHECK((*a)->bytes() == 4000);
  // Evaluators given one keep working (the CPU backend flushes nothing, so it stays unused).
  EvaluatorOptions o = FastOptions();
  o.flush_buffer = std::make_shared<SharedDeviceBuffer>();
  auto ev = Evaluator::Create(*f.device, ParseOne(kLines[0]), o);
  REQUIRE(ev.ok());
  CHECK(o.flush_buffer->bytes() == 0);
}

TEST_CASE("identical kernel builds are compiled once per compiler") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect});
  const solver::Solver& naive = *registry->ByName("ConvDirectNaiveConvFwd")->solver;
  Compiler compiler(*f.backend, f.target);
  const Problem a = ParseOne(kLines[0]);
  const Problem b = ParseOne("conv -n 1 -c 3 -H 5 -W 5 -k 2 -y 1 -x 1 -F 1");
  const auto ca = compiler.CompileOne(naive, a, {});
  const auto cb = compiler.CompileOne(naive, b, {});
  REQUIRE(ca.disposition == Disposition::kPassed);
  REQUIRE(cb.disposition == Disposition::kPassed);
  CHECK(compiler.cache_size() == 1);  // the naive solver is dynamic: one kernel for both
  CHECK(cb.compile_ms == 0);
}

TEST_CASE("a hung launch is reported as Timeout, stops the evaluator and keeps the device") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kSpin, testing::kCorrect}, /*spin_ms=*/1500);
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  Compiler compiler(*f.backend, f.target);
  const Problem p = ParseOne(kLines[0]);
  EvaluatorOptions o = FastOptions();
  o.launch_timeout = absl::Milliseconds(200);
  CountingGuard g;
  o.device_guard = g.Guard();
  {
    auto ev = Evaluator::Create(*f.device, p, o);
    REQUIRE(ev.ok());
    CHECK(g.held == 0);
    const auto spin = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kSpin}});
    const auto good = compiler.CompileOne(faults, p, solver::PerfConfig{{testing::kCorrect}});
    REQUIRE(spin.disposition == Disposition::kPassed);
    const auto t0 = std::chrono::steady_clock::now();
    const Measurement m = (*ev)->Evaluate(spin, 0);
    const double waited = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(m.disposition == Disposition::kTimeout);
    CHECK(waited < 1200);  // the watchdog returned long before the launch ended
    CHECK_FALSE((*ev)->healthy());
    // The launch may still run: the device guard stays held while the evaluator lives.
    CHECK(g.held == 1);
    const Measurement after = (*ev)->Evaluate(good, 0);
    CHECK(after.disposition == Disposition::kSkipped);
    CHECK(g.max_held == 1);
  }  // the evaluator waits for the spinning launch (1.5 s < the 5 s grace) before freeing
  CHECK(g.held == 0);  // and gives the device back
}

TEST_CASE("the device reference is verified on batch 1 and then used") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kGarbage});
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  Compiler compiler(*f.backend, f.target);
  for (const char* line : kLines) {
    const Problem p = ParseOne(line);
    INFO(line);
    EvaluatorOptions o = FastOptions();
    o.cpu_reference_max_flops = 0;  // force the device reference
    auto ev = Evaluator::Create(*f.device, p, o, registry.get(), f.backend.get(), &f.target);
    REQUIRE(ev.ok());
    CHECK((*ev)->reference().source.rfind("ConvDirectNaiveConv", 0) == 0);
    CHECK((*ev)->reference().check.rfind("ok", 0) == 0);
    CHECK((*ev)->Evaluate(compiler.CompileOne(faults, p, solver::PerfConfig{{0}}), 0).disposition ==
          Disposition::kPassed);
    CHECK((*ev)->Evaluate(compiler.CompileOne(faults, p, solver::PerfConfig{{1}}), 0).disposition ==
          Disposition::kIncorrect);
  }
  // A "reference" solver that is wrong fails its own check.
  const Problem p = ParseOne(kLines[0]);
  EvaluatorOptions o = FastOptions();
  o.cpu_reference_max_flops = 0;
  {
    // Prepared on the host ahead (an executor's prefetch): the batch-1 check's CPU reference
    // comes from the preparation, and the device solver is still checked against it.
    absl::StatusOr<HostPreparation> prep = Evaluator::PrepareOnHost(p, o);
    REQUIRE(prep.ok());
    CHECK_FALSE(prep->has_expected);
    REQUIRE(prep->check != nullptr);
    CHECK(prep->check->has_expected);
    CHECK(prep->check->problem.n == 1);
    auto ev = Evaluator::Create(*f.device, p, o, registry.get(), f.backend.get(), &f.target, &*prep);
    REQUIRE(ev.ok());
    CHECK((*ev)->reference().check.rfind("ok", 0) == 0);
    CHECK((*ev)->Evaluate(compiler.CompileOne(faults, p, solver::PerfConfig{{1}}), 0).disposition ==
          Disposition::kIncorrect);
    absl::StatusOr<HostPreparation> wrong = Evaluator::PrepareOnHost(p, o);
    REQUIRE(wrong.ok());
    for (std::byte& b : wrong->check->expected) b = std::byte{0x3f};  // 0.75 everywhere
    auto refused = Evaluator::Create(*f.device, p, o, registry.get(), f.backend.get(), &f.target, &*wrong);
    CHECK(absl::IsFailedPrecondition(refused.status()));
  }
  o.reference_solver = "TestFaultSolver";  // default config = kCorrect: passes
  CHECK(Evaluator::Create(*f.device, p, o, registry.get(), f.backend.get(), &f.target).ok());
  auto bad_registry = testing::FaultRegistry({testing::kGarbage});
  auto bad = Evaluator::Create(*f.device, p, o, bad_registry.get(), f.backend.get(), &f.target);
  CHECK(absl::IsFailedPrecondition(bad.status()));
}

}  // namespace
}  // namespace tuna::search

// Kernels bench: tuna's GPU solvers against cuDNN at its best, side by side, same process, same
// buffers, one timing method (timing.h). For each problem of a MIOpenDriver file (directions
// from the file or --dirs), or each row of a perf db that `tuna tune -f` exported (--from-db):
//   1. the reference output: the naive GPU solver (ConvDirectNaiveConv*, itself cross-checked
//      against the CPU reference on the smallest problems, --cpu-check-gflop);
//   2. tuna: with --from-db, the db row's solver and params; otherwise every applicable tunable
//      GPU solver, its default config plus up to --configs valid configs sampled from its space
//      (fast solvers 1010+) or --other-configs (older ones); each candidate is compiled (NVRTC,
//      in parallel, cached by build), run on poisoned outputs, verified against the reference
//      (on the device with the tuner evaluator's comparer, which checks itself against the host
//      comparison when made; the host comparison when it cannot be made)
//      and screened (--screen-reps); the --finalists fastest are timed with the full method
//      and the fastest wins, its output verified again;
//   3. cuDNN best (cudnn_backend.h): every engine config of heuristics modes A, B and FALLBACK
//      that supports the problem, screened and timed the same way; the fastest whose output
//      verifies is kept;
//   4. cuDNN legacy (cudnn_shim.h, Find*AlgorithmEx's pick), for reference only.
// Prints a per-problem table and geomeans per direction; --json writes rows and meta (rewritten
// after every row). A screening, timing or output check that outlasts --hang-seconds (a kernel
// that never finishes) is named in the log and the bench exits with 4: the device is lost.
//
//   kernels_bench --driver bench/kernels/data/resnet50_n32_fwd_fp16_nhwc.txt --json out.json
//   kernels_bench --from-db /path/to/export --json out.json
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include "CLI/CLI.hpp"
#include "bench/kernels/cudnn_backend.h"
#include "bench/kernels/cudnn_shim.h"
#include "bench/kernels/from_db.h"
#include "bench/kernels/hang_guard.h"
#include "bench/kernels/timing.h"
#include "fmt/format.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"
#include "tuner_core/search/measure/device_compare.h"
#include "tuner_core/solver/conv/flattening_solver.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/invoker.h"
#include "tuner_core/solver/registry.h"

namespace tuna::bench {
namespace {

using backend::Device;
using backend::DeviceBuffer;
using solver::PerfConfig;
using solver::Solution;
using solver::Solver;
using solver::Target;

struct Options {
  std::string driver = "bench/kernels/data/resnet50_n32_fwd_fp16_nhwc.txt";
  std::string from_db;
  std::string dirs;  // "FBW" subset; empty: as in the file
  std::string cudnn = std::getenv("TUNA_CUDNN_PATH") ? std::getenv("TUNA_CUDNN_PATH") : "";
  std::string json;
  std::string only_solvers;  // comma-separated names; empty: all
  std::vector<std::string> params;  // exact configs of the --solvers solvers instead of sampled ones
  bool candidates = false;          // also the solvers not yet verified on a GPU (solver_sets.h)
  int configs = 16;
  int other_configs = 2;
  int reps = 25;
  int screen_reps = 5;
  bool print_screened = false;  // every tuna candidate's screening time in the log
  int hang_seconds = 60;         // a launch, check or timing that takes longer is reported as hung (0: off)
  int finalists = 3;
  int max_problems = 0;
  bool no_tuna = false;
  bool no_legacy = false;
  bool heuristics_only = false;  // cuDNN best from heuristics A, B, FALLBACK only (no all-engines sweep)
  bool no_specialize = false;    // skip the finishing step (the winner with its sizes compiled in)
  std::string variant_option;    // with the finishing step: a third build, the run-time one plus this option
  double cpu_check_gflop = 4;
  int cpu_check_max = 2;
  uint64_t seed = 7;
};

// One problem to bench: from a driver line, or from a perf db row (solver and params fixed).
struct Job {
  std::string label;
  std::string line;  // the driver line (as in the file; ToDriverLine for db rows)
  Problem problem;
  const Solver* fixed_solver = nullptr;
  PerfConfig fixed_config;
};

struct Row {
  std::string label, line, problem;
  char direction = 'F';
  std::string dtype, layout;
  double gflop = 0;
  std::string solver, params;
  int candidates = 0, tuna_verified_count = 0, failed = 0;
  double tuna_rel = -1;
  double tuna_ms = 0;
  bool tuna_verified = false;
  double cudnn_best_ms = 0;
  std::string cudnn_best_engine;
  bool cudnn_best_verified = false;
  double cudnn_best_rel = -1;
  int cudnn_engines = 0, cudnn_engines_timed = 0;
  std::string cudnn_stats;
  double cudnn_legacy_ms = 0;
  int cudnn_legacy_algo = -1, cudnn_legacy_math = 0;
  bool cudnn_legacy_verified = false;
  std::string note;
  // The finishing step: the winner with run-time size arguments and rebuilt with the same sizes
  // compiled in, timed interleaved (0: not priced, its solver offers no Specialize).
  double sizes_runtime_ms = 0, sizes_fixed_ms = 0;
  double variant_ms = 0;  // --variant-option: the run-time-size build plus that option
  bool verified() const {
    return (tuna_ms == 0 || tuna_verified) && (cudnn_best_ms == 0 || cudnn_best_verified) &&
           (cudnn_legacy_ms == 0 || cudnn_legacy_verified) && (tuna_ms > 0 || cudnn_best_ms > 0);
  }
};

std::string BuildKey(const Solution& s) {
  std::string k;
  for (const auto& b : s.kernels) {
    k += b.source;
    for (const auto& o : b.options) k += " " + o;
    k += ";";
  }
  return k;
}

void AppendNote(std::string* note, const std::string& s) {
  if (!note->empty()) *note += "; ";
  *note += s;
}

class Bench {
 public:
  Bench(const Options& o, backend::Backend& be, Device& dev, FlushedTimer& timer, HangGuard& guard)
      : opt_(o), be_(be), dev_(dev), timer_(timer), guard_(guard),
        target_(solver::TargetForDevice(backend::BackendKind::kCuda, dev.Info())) {
    if (opt_.candidates) {
      for (auto& entry : solver::Flattening(solver::CandidateGpuSolvers())) tunable_.push_back(std::move(entry));
    }
  }

  const Target& target() const { return target_; }

  absl::Status Init() {
    absl::StatusOr<DeviceBuffer> ws = dev_.Alloc(kCudnnWorkspace);
    if (!ws.ok()) return ws.status();
    cudnn_ws_ = *std::move(ws);
    return absl::OkStatus();
  }

  // Compiles the distinct builds of `sols` not yet cached, in parallel.
  void CompileAll(const std::vector<Solution>& sols) {
    std::vector<const Solution*> todo;
    std::set<std::string> seen;
    for (const Solution& s : sols) {
      const std::string k = BuildKey(s);
      if (code_.count(k) || compile_errors_.count(k) || !seen.insert(k).second) continue;
      todo.push_back(&s);
    }
    std::mutex mu;
    size_t next = 0;
    auto worker = [&] {
      for (;;) {
        const Solution* s;
        {
          std::lock_guard<std::mutex> l(mu);
          if (next >= todo.size()) return;
          s = todo[next++];
        }
        absl::StatusOr<std::vector<backend::CodeObject>> c = solver::CompileSolution(be_, *s, target_.arch);
        std::lock_guard<std::mutex> l(mu);
        if (c.ok()) {
          code_.emplace(BuildKey(*s), *std::move(c));
        } else {
          compile_errors_.emplace(BuildKey(*s), std::string(c.status().message()).substr(0, 2000));
        }
      }
    };
    const int n = std::max(1, std::min<int>(static_cast<int>(todo.size()), std::thread::hardware_concurrency()));
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
  }

  // The timer's median of `launch` (reps 0: the method's), watched by the hang guard as `what`.
  absl::StatusOr<double> GuardedMs(const std::string& what, const std::function<absl::Status()>& launch,
                                   int reps = 0) {
    guard_.Arm(what);
    absl::StatusOr<double> t = reps > 0 ? timer_.MedianMs(launch, reps) : timer_.MedianMs(launch);
    guard_.Disarm();
    return t;
  }

  // Screens `count` launchers with --screen-reps, re-times the --finalists fastest with the full
  // method and returns (index, ms) sorted by final time. Launchers whose launch fails are dropped.
  // With --print-screened and `name`, prints every screened candidate, fastest first.
  absl::StatusOr<std::vector<std::pair<size_t, double>>> Rank(size_t count,
                                                              const std::function<absl::Status(size_t)>& launch,
                                                              const std::function<std::string(size_t)>& name = {}) {
    auto label = [&](size_t i) { return name ? name(i) : "plan " + std::to_string(i); };
    std::vector<std::pair<double, size_t>> screened;
    for (size_t i = 0; i < count; ++i) {
      absl::StatusOr<double> t = GuardedMs("screening " + label(i), [&] { return launch(i); }, opt_.screen_reps);
      if (!t.ok()) {
        if (backend::IsContextLost(t.status())) return t.status();
        std::printf("    candidate %zu: %s\n", i, std::string(t.status().message()).substr(0, 200).c_str());
        continue;
      }
      screened.push_back({*t, i});
    }
    std::sort(screened.begin(), screened.end());
    if (opt_.print_screened && name) {
      for (const auto& [ms, i] : screened) std::printf("    screened %.4f ms %s\n", ms, name(i).c_str());
    }
    std::vector<std::pair<size_t, double>> final_times;
    for (size_t j = 0; j < screened.size() && static_cast<int>(j) < opt_.finalists; ++j) {
      const size_t i = screened[j].second;
      absl::StatusOr<double> t = GuardedMs("timing " + label(i), [&] { return launch(i); });
      if (!t.ok()) return t.status();
      final_times.push_back({i, *t});
    }
    std::sort(final_times.begin(), final_times.end(), [](auto& a, auto& b) { return a.second < b.second; });
    return final_times;
  }

  absl::StatusOr<Row> RunProblem(const Job& job) {
    const Problem& p = job.problem;
    Row row;
    row.label = job.label;
    row.line = job.line;
    row.problem = p.Canonical();
    row.direction = DirectionName(p.direction)[0];
    row.dtype = std::string(DataTypeName(p.data_type));
    row.layout = std::string(LayoutName(p.in_layout));
    row.gflop = p.Flops() / 1e9;
    const reference::ElementType et = reference::StorageType(p.data_type);
    const uint64_t seed = opt_.seed + std::hash<std::string>()(row.problem);
    std::vector<std::byte> hx = reference::RandomBuffer(et, p.XDesc().ElementCount(), seed + 1);
    std::vector<std::byte> hw = reference::RandomBuffer(et, p.WDesc().ElementCount(), seed + 2);
    std::vector<std::byte> hy = reference::RandomBuffer(et, p.YDesc().ElementCount(), seed + 3);
    absl::StatusOr<DeviceBuffer> x = dev_.Alloc(hx.size()), w = dev_.Alloc(hw.size()), y = dev_.Alloc(hy.size());
    if (!x.ok()) return x.status();
    if (!w.ok()) return w.status();
    if (!y.ok()) return y.status();
    // Inputs of the direction get random data; the output buffer is poisoned before each check.
    auto upload = [&]() -> absl::Status {
      absl::Status st = dev_.CopyToDevice(*x, hx.data(), hx.size());
      if (st.ok()) st = dev_.CopyToDevice(*w, hw.data(), hw.size());
      if (st.ok()) st = dev_.CopyToDevice(*y, hy.data(), hy.size());
      return st;
    };
    if (absl::Status st = upload(); !st.ok()) return st;
    DeviceBuffer* out = p.direction == Direction::kForward        ? &*y
                        : p.direction == Direction::kBackwardData ? &*x
                                                                   : &*w;
    const size_t out_bytes = out->bytes();

    // 1. Reference output from the naive GPU solver.
    std::vector<std::byte> expected(out_bytes);
    {
      const Solver* naive = nullptr;
      for (const auto& [id, s] : naive_) {
        if (s->IsApplicable(target_, p).ok()) naive = s.get();
      }
      if (naive == nullptr) return absl::NotFoundError("no naive GPU solver for " + row.problem);
      absl::StatusOr<Solution> sol = naive->GetSolution(target_, p, naive->DefaultConfig(target_, p));
      if (!sol.ok()) return sol.status();
      CompileAll({*sol});
      auto it = code_.find(BuildKey(*sol));
      if (it == code_.end()) return absl::InternalError("naive compile failed: " + compile_errors_[BuildKey(*sol)]);
      absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = solver::Invoker::Create(dev_, *sol, it->second);
      if (!inv.ok()) return inv.status();
      if (absl::Status st = dev_.Memset(*out, 0xff, out_bytes); !st.ok()) return st;
      guard_.Arm("the naive reference solver");
      absl::Status st = (*inv)->Run({&*x, &*w, &*y, nullptr});
      if (st.ok()) st = dev_.Synchronize();
      guard_.Disarm();
      if (st.ok()) st = dev_.CopyToHost(expected.data(), *out, out_bytes);
      if (!st.ok()) return st;
      if (row.gflop <= opt_.cpu_check_gflop && cpu_checks_ < opt_.cpu_check_max) {
        ++cpu_checks_;
        std::vector<std::byte> cpu(out_bytes);
        reference::ConvTensors t{hx.data(), hw.data(), hy.data(), cpu.data()};
        if (absl::Status rs = reference::RunConv(p, t); !rs.ok()) return rs;
        absl::StatusOr<reference::VerifyReport> rep = reference::VerifyConvOutput(p, p.direction, expected.data(), cpu.data());
        if (!rep.ok()) return rep.status();
        std::printf("  naive GPU vs CPU reference: %s\n", rep->Summary().c_str());
        if (!rep->ok) return absl::InternalError("naive GPU solver disagrees with the CPU reference");
      }
    }
    // Candidates are compared with the reference on the device (the evaluator's comparer: a
    // reduction kernel checked against the host comparison when made); at batch 64 a host copy
    // and compare per candidate took most of a problem's time. The host compare is the fallback.
    std::unique_ptr<search::DeviceComparer> comparer;
    if (absl::StatusOr<backend::CodeObject> code =
            compare_kernels_.Get(be_, target_.arch, reference::OutputType(p, p.direction));
        code.ok()) {
      auto c = search::DeviceComparer::Create(dev_, *code, p, expected, reference::DefaultTolerance(p.data_type), *out);
      if (c.ok()) comparer = *std::move(c);
      else std::printf("  device compare unavailable (%s): host compare\n", c.status().ToString().c_str());
    }
    auto verify = [&](double* rel) -> absl::StatusOr<bool> {
      absl::StatusOr<reference::VerifyReport> rep;
      if (comparer) {
        rep = comparer->Compare(*out);
      } else {
        std::vector<std::byte> got(out_bytes);
        if (absl::Status st = dev_.CopyToHost(got.data(), *out, out_bytes); !st.ok()) return st;
        rep = reference::VerifyConvOutput(p, p.direction, got.data(), expected.data());
      }
      if (!rep.ok()) return rep.status();
      *rel = rep->max_rel_error;
      if (!rep->ok) std::printf("    verify FAIL: %s\n", rep->Summary().c_str());
      return rep->ok;
    };
    // Poison the output, run once, verify what it wrote.
    auto check = [&](const std::string& what, const std::function<absl::Status()>& launch,
                     double* rel) -> absl::StatusOr<bool> {
      if (absl::Status st = dev_.Memset(*out, 0xff, out_bytes); !st.ok()) return st;
      guard_.Arm("the output check of " + what);
      absl::Status st = launch();
      if (st.ok()) st = dev_.Synchronize();
      guard_.Disarm();
      if (!st.ok()) return st;
      return verify(rel);
    };

    if (!opt_.no_tuna) {
      if (absl::Status st = RunTuna(job, row, *x, *w, *y, check); !st.ok()) return st;
    }
    if (!cudnn_disabled_) {
      if (absl::Status st = RunCudnnBest(p, row, upload, *x, *w, *y, check); !st.ok()) return st;
      if (!opt_.no_legacy) {
        if (absl::Status st = upload(); !st.ok()) return st;
        if (absl::Status st = RunCudnnLegacy(p, row, *x, *w, *y, *out, check); !st.ok()) return st;
      }
    }
    return row;
  }

  std::string cudnn_version_, cudnn_library_;

 private:
  // check(what, launch, &rel): poisons the output, runs `launch` once (watched by the hang guard as
  // `what`), verifies what it wrote.
  using CheckFn =
      std::function<absl::StatusOr<bool>(const std::string&, const std::function<absl::Status()>&, double*)>;

  // The solver's default, then up to budget - 1 other valid configs, shuffled: drawn from every
  // valid point of a space of <= 65536 points (a random sample of 4000 draws missed most valid
  // configs of TunaHopperTmaWrw's 27,648-point space, where splits are mostly invalid), or from a
  // random sample of a larger one.
  std::vector<PerfConfig> SampledConfigs(const Solver& s, const Problem& p, const PerfConfig& def, int budget,
                                         std::mt19937_64& rng) const {
    std::vector<PerfConfig> configs = {def};
    const solver::SearchSpace space = s.Space(target_, p);
    std::vector<PerfConfig> valid;
    if (space.Size() <= 65536) {
      for (uint64_t i = 0; i < space.Size(); ++i) {
        PerfConfig c = space.At(i);
        if (!(c == def) && s.IsValid(target_, p, c).ok()) valid.push_back(c);
      }
    } else {
      for (int t = 0; t < 4000 && static_cast<int>(valid.size()) < 4 * budget; ++t) {
        PerfConfig c = space.At(rng() % space.Size());
        if (!(c == def) && s.IsValid(target_, p, c).ok()) valid.push_back(c);
      }
    }
    std::shuffle(valid.begin(), valid.end(), rng);
    for (const PerfConfig& c : valid) {
      if (static_cast<int>(configs.size()) >= budget) break;
      if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
    }
    return configs;
  }

  // --params: the given configs that parse and are valid for `p`; the others reported on stderr.
  std::vector<PerfConfig> GivenConfigs(const Solver& s, const Problem& p) const {
    std::vector<PerfConfig> configs;
    const solver::SearchSpace space = s.Space(target_, p);
    for (const std::string& text : opt_.params) {
      absl::StatusOr<PerfConfig> c = space.Parse(text);
      absl::Status st = c.ok() ? s.IsValid(target_, p, *c) : c.status();
      if (!st.ok()) {
        std::fprintf(stderr, "--params %s skipped for %s: %s\n", text.c_str(), std::string(s.Name()).c_str(),
                     std::string(st.message()).c_str());
        continue;
      }
      if (std::find(configs.begin(), configs.end(), *c) == configs.end()) configs.push_back(*std::move(c));
    }
    return configs;
  }

  absl::Status RunTuna(const Job& job, Row& row, DeviceBuffer& x, DeviceBuffer& w, DeviceBuffer& y,
                       const CheckFn& check) {
    const Problem& p = job.problem;
    const uint64_t seed = opt_.seed + std::hash<std::string>()(row.problem);
    struct Cand {
      const Solver* s;
      PerfConfig c;
      Solution sol;
      bool is_default = false;  // the solver's DefaultConfig (marked in --print-screened lines)
      std::string Name() const { return std::string(s->Name()) + " " + c.ToString() + (is_default ? " (default)" : ""); }
    };
    std::vector<Cand> cands;
    if (job.fixed_solver != nullptr) {
      absl::StatusOr<Solution> sol = job.fixed_solver->GetSolution(target_, p, job.fixed_config);
      if (!sol.ok()) return sol.status();
      cands.push_back({job.fixed_solver, job.fixed_config, *std::move(sol)});
    } else {
      std::mt19937_64 rng(seed);
      for (const auto& [id, s] : tunable_) {
        if (!opt_.only_solvers.empty() &&
            ("," + opt_.only_solvers + ",").find("," + std::string(s->Name()) + ",") == std::string::npos) {
          continue;
        }
        if (!s->IsApplicable(target_, p).ok()) continue;
        const int budget = id >= 1010 ? opt_.configs : opt_.other_configs;
        const PerfConfig def = s->DefaultConfig(target_, p);
        const std::vector<PerfConfig> configs =
            opt_.params.empty() ? SampledConfigs(*s, p, def, budget, rng) : GivenConfigs(*s, p);
        for (const PerfConfig& c : configs) {
          absl::StatusOr<Solution> sol = s->GetSolution(target_, p, c);
          if (sol.ok()) cands.push_back({s.get(), c, *std::move(sol), c == def});
        }
      }
    }
    {
      std::vector<Solution> sols;
      for (const Cand& c : cands) sols.push_back(c.sol);
      CompileAll(sols);
    }
    // Load and verify every candidate; keep the verified ones with their invokers and workspaces.
    struct Ready {
      const Cand* cand;
      std::unique_ptr<solver::Invoker> inv;
      DeviceBuffer ws;
      double rel = 0;
    };
    std::vector<Ready> ready;
    for (const Cand& c : cands) {
      ++row.candidates;
      auto it = code_.find(BuildKey(c.sol));
      if (it == code_.end()) {
        std::printf("    compile failed %s: %s\n", c.Name().c_str(),
                    compile_errors_[BuildKey(c.sol)].substr(0, 300).c_str());
        ++row.failed;
        continue;
      }
      absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = solver::Invoker::Create(dev_, c.sol, it->second);
      if (!inv.ok()) return inv.status();
      Ready r{&c, *std::move(inv), {}, 0};
      if (c.sol.workspace_bytes > 0) {
        absl::StatusOr<DeviceBuffer> b = dev_.Alloc(c.sol.workspace_bytes);
        if (!b.ok()) return b.status();
        r.ws = *std::move(b);
      }
      solver::ConvBuffers bufs{&x, &w, &y, r.ws.valid() ? &r.ws : nullptr};
      absl::StatusOr<bool> ok = check(c.Name(), [&] { return r.inv->Run(bufs); }, &r.rel);
      if (!ok.ok()) return ok.status();  // a launch failure poisons the context: stop here
      if (!*ok) {
        std::printf("    %s FAILED verification\n", c.Name().c_str());
        ++row.failed;
        continue;
      }
      ++row.tuna_verified_count;
      ready.push_back(std::move(r));
    }
    if (ready.empty()) {
      AppendNote(&row.note, "no tuna candidate verified");
      return absl::OkStatus();
    }
    auto launch = [&](size_t i) {
      Ready& r = ready[i];
      solver::ConvBuffers bufs{&x, &w, &y, r.ws.valid() ? &r.ws : nullptr};
      return r.inv->Run(bufs);
    };
    absl::StatusOr<std::vector<std::pair<size_t, double>>> ranked =
        Rank(ready.size(), launch, [&](size_t i) { return ready[i].cand->Name(); });
    if (!ranked.ok()) return ranked.status();
    if (ranked->empty()) {
      AppendNote(&row.note, "no tuna candidate could be timed");
      return absl::OkStatus();
    }
    const auto [best, ms] = ranked->front();
    row.solver = std::string(ready[best].cand->s->Name());
    row.params = ready[best].cand->c.ToString();
    row.tuna_ms = ms;
    // The winner's output once more, after all the timed runs.
    absl::StatusOr<bool> ok =
        check("the winner " + ready[best].cand->Name(), [&] { return launch(best); }, &row.tuna_rel);
    if (!ok.ok()) return ok.status();
    row.tuna_verified = *ok;
    if (!*ok) AppendNote(&row.note, "tuna winner failed verification after timing");
    if (*ok && job.fixed_solver == nullptr && !opt_.no_specialize) {
      solver::ConvBuffers bufs{&x, &w, &y, ready[best].ws.valid() ? &ready[best].ws : nullptr};
      return Specialize(p, *ready[best].cand->s, ready[best].cand->c, ready[best].cand->sol, bufs,
                        [&] { return launch(best); }, row, check);
    }
    return absl::OkStatus();
  }

  // The tuner's finishing step (Solver::Specialize; issue #17), so the tuna column is what a
  // tuned user gets: the winner rebuilt for this problem alone (its sizes compiled in), verified,
  // and both builds timed with the same method, interleaved (run-time, constants, run-time,
  // constants) so that neither side gains from going second; the faster is the row's tuna time.
  // A --from-db row times the exported params as they are. --variant-option adds a third build:
  // the run-time one plus that option, with the problem's -DTUNA_FIX_* values (without
  // -DFIX_SIZES they are read only where the variant's option says so: a partial constants
  // experiment).
  absl::Status Specialize(const Problem& p, const Solver& s, const PerfConfig& won_config, const Solution& won,
                          const solver::ConvBuffers& bufs, const std::function<absl::Status()>& run_won, Row& row,
                          const CheckFn& check) {
    const std::optional<PerfConfig> spec = s.Specialize(target_, p, won_config);
    if (!spec) return absl::OkStatus();
    absl::StatusOr<Solution> spec_sol = s.GetSolution(target_, p, *spec);
    if (!spec_sol.ok()) return spec_sol.status();
    absl::StatusOr<std::unique_ptr<solver::Invoker>> fixed = BuildVerified(*spec_sol, "sizes compiled in", row, check, bufs);
    if (!fixed.ok() || *fixed == nullptr) return fixed.status();
    std::unique_ptr<solver::Invoker> variant;
    if (!opt_.variant_option.empty()) {
      Solution v = won;
      for (size_t k = 0; k < v.kernels.size() && k < spec_sol->kernels.size(); ++k) {
        for (const std::string& o : spec_sol->kernels[k].options) {
          if (o.rfind("-DTUNA_FIX_", 0) == 0) v.kernels[k].options.push_back(o);
        }
        if (k == 0) v.kernels[k].options.push_back(opt_.variant_option);
      }
      absl::StatusOr<std::unique_ptr<solver::Invoker>> built = BuildVerified(v, "variant", row, check, bufs);
      if (!built.ok()) return built.status();
      variant = *std::move(built);
    }
    auto run_fixed = [&] { return (*fixed)->Run(bufs); };
    auto run_variant = [&] { return variant->Run(bufs); };
    double rt = 0, fx = 0, va = 0;
    for (int round = 0; round < 2; ++round) {
      absl::StatusOr<double> a = GuardedMs("the finishing step's search build", run_won);
      absl::StatusOr<double> f = GuardedMs("the finishing step's specialised build", run_fixed);
      if (!a.ok()) return a.status();
      if (!f.ok()) return f.status();
      rt += *a / 2, fx += *f / 2;
      if (variant) {
        absl::StatusOr<double> v = GuardedMs("the --variant-option build", run_variant);
        if (!v.ok()) return v.status();
        va += *v / 2;
      }
    }
    row.sizes_runtime_ms = rt, row.sizes_fixed_ms = fx, row.variant_ms = va;
    if (fx < rt) row.tuna_ms = fx, row.params = spec->ToString();
    std::printf("    search build %.4f ms, specialised %s %.4f ms (%.1f %% faster): %s", rt, spec->ToString().c_str(), fx,
                100.0 * (rt - fx) / rt, fx < rt ? "kept" : "not kept");
    if (variant) std::printf("; %s %.4f ms (%.1f %% faster)", opt_.variant_option.c_str(), va, 100.0 * (rt - va) / rt);
    std::printf("\n");
    return absl::OkStatus();
  }

  // `sol` built and verified (nullptr, with a note, when it does not build or verify).
  absl::StatusOr<std::unique_ptr<solver::Invoker>> BuildVerified(const Solution& sol, const std::string& what, Row& row,
                                                                 const CheckFn& check, const solver::ConvBuffers& bufs) {
    CompileAll({sol});
    auto it = code_.find(BuildKey(sol));
    if (it == code_.end()) {
      AppendNote(&row.note, what + " build failed: " + compile_errors_[BuildKey(sol)].substr(0, 200));
      return nullptr;
    }
    absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = solver::Invoker::Create(dev_, sol, it->second);
    if (!inv.ok()) return inv.status();
    double rel = 0;
    absl::StatusOr<bool> ok = check("the " + what + " build", [&] { return (*inv)->Run(bufs); }, &rel);
    if (!ok.ok()) return ok.status();
    if (!*ok) {
      AppendNote(&row.note, what + " build failed verification");
      return nullptr;
    }
    return inv;
  }

  // cuDNN best for one problem, timed once: rows of the same problem (a perf db's solvers, or
  // several solvers of a driver line) reuse it instead of building and timing every plan again.
  // `upload` restores the inputs the tuna runs may have overwritten; only a timing needs them.
  absl::Status RunCudnnBest(const Problem& p, Row& row, const std::function<absl::Status()>& upload,
                            DeviceBuffer& x, DeviceBuffer& w, DeviceBuffer& y, const CheckFn& check) {
    const std::string key = ToDriverLine(p);
    auto fields = [](Row& r) {
      return std::tie(r.cudnn_best_ms, r.cudnn_best_engine, r.cudnn_best_verified, r.cudnn_best_rel, r.cudnn_engines,
                      r.cudnn_engines_timed, r.cudnn_stats);
    };
    if (auto hit = cudnn_best_.find(key); hit != cudnn_best_.end()) {
      fields(row) = fields(hit->second);
      AppendNote(&row.note, "cuDNN best timed once for this problem (row " + hit->second.label + ")");
      return absl::OkStatus();
    }
    absl::Status st = upload();
    if (st.ok()) st = TimeCudnnBest(p, row, x, w, y, check);
    if (st.ok() && row.cudnn_best_verified) cudnn_best_.emplace(key, row);
    return st;
  }

  absl::Status TimeCudnnBest(const Problem& p, Row& row, DeviceBuffer& x, DeviceBuffer& w, DeviceBuffer& y,
                             const CheckFn& check) {
    absl::StatusOr<std::unique_ptr<CudnnBackendConv>> cd = CudnnBackendConv::Create(opt_.cudnn, p);
    if (!cd.ok()) {
      std::printf("cuDNN backend unavailable: %s\n", std::string(cd.status().message()).c_str());
      if (absl::IsUnavailable(cd.status())) cudnn_disabled_ = true;
      AppendNote(&row.note, "cuDNN backend: " + std::string(cd.status().message()));
      return absl::OkStatus();
    }
    cudnn_version_ = (*cd)->version();
    cudnn_library_ = (*cd)->library_path();
    const auto t0 = std::chrono::steady_clock::now();
    absl::Status st = (*cd)->BuildPlans(kCudnnWorkspace, !opt_.heuristics_only);
    const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const CudnnPlanStats& s = (*cd)->stats();
    row.cudnn_stats = fmt::format(
        "{} from heuristics + {} all-engines, {} distinct, {} skipped (numerics: {}), {} (workspace), {} unsupported, "
        "plans built in {:.2f} s{}{}",
        s.heuristic_configs, s.all_engine_configs, s.distinct, s.skipped_numerics, s.skipped_engines,
        s.skipped_workspace, s.unsupported, build_s, s.mode_errors.empty() ? "" : "; ", s.mode_errors);
    if (!st.ok()) {
      AppendNote(&row.note, "cuDNN best: " + std::string(st.message()));
      return absl::OkStatus();
    }
    if (absl::Status bs = (*cd)->Bind(x.address(), w.address(), y.address(), cudnn_ws_.address()); !bs.ok()) {
      return bs;
    }
    row.cudnn_engines = static_cast<int>((*cd)->plans().size());
    absl::StatusOr<std::vector<std::pair<size_t, double>>> ranked =
        Rank((*cd)->plans().size(), [&](size_t i) { return (*cd)->Execute(i); });
    if (!ranked.ok()) return ranked.status();
    row.cudnn_engines_timed = static_cast<int>(ranked->size());
    // The fastest finalist whose output verifies.
    for (const auto& [i, ms] : *ranked) {
      double rel = 0;
      absl::StatusOr<bool> ok =
          check("cuDNN engine " + (*cd)->plans()[i].name, [&, i = i] { return (*cd)->Execute(i); }, &rel);
      if (!ok.ok()) return ok.status();
      if (!*ok) {
        AppendNote(&row.note, "cuDNN engine " + (*cd)->plans()[i].name + " failed verification");
        continue;
      }
      row.cudnn_best_ms = ms;
      row.cudnn_best_engine = (*cd)->plans()[i].name;
      row.cudnn_best_verified = true;
      row.cudnn_best_rel = rel;
      break;
    }
    return absl::OkStatus();
  }

  absl::Status RunCudnnLegacy(const Problem& p, Row& row, DeviceBuffer& x, DeviceBuffer& w, DeviceBuffer& y,
                              DeviceBuffer& out, const CheckFn& check) {
    absl::StatusOr<std::unique_ptr<CudnnConv>> cd = CudnnConv::Create(opt_.cudnn, p);
    if (!cd.ok()) {
      AppendNote(&row.note, "cuDNN legacy: " + std::string(cd.status().message()));
      return absl::OkStatus();
    }
    if (absl::Status st = dev_.Memset(out, 0xff, out.bytes()); !st.ok()) return st;
    absl::StatusOr<CudnnChoice> ch =
        (*cd)->Find(x.address(), w.address(), y.address(), cudnn_ws_.address(), kCudnnWorkspace);
    if (!ch.ok()) {
      AppendNote(&row.note, "cuDNN legacy: " + std::string(ch.status().message()));
      return absl::OkStatus();
    }
    row.cudnn_legacy_algo = ch->algo;
    row.cudnn_legacy_math = ch->math_type;
    auto run = [&] { return (*cd)->Run(*ch, x.address(), w.address(), y.address(), cudnn_ws_.address()); };
    double rel = 0;
    absl::StatusOr<bool> ok = check("cuDNN legacy find's algorithm", run, &rel);
    if (!ok.ok()) return ok.status();
    row.cudnn_legacy_verified = *ok;
    if (!*ok) AppendNote(&row.note, "cuDNN legacy output differs from the reference");
    absl::StatusOr<double> t = GuardedMs("cuDNN legacy find's algorithm", run);
    if (!t.ok()) return t.status();
    row.cudnn_legacy_ms = *t;
    return absl::OkStatus();
  }

  static constexpr size_t kCudnnWorkspace = size_t{4} << 30;
  const Options& opt_;
  backend::Backend& be_;
  Device& dev_;
  FlushedTimer& timer_;
  HangGuard& guard_;
  Target target_;
  DeviceBuffer cudnn_ws_;
  // As the builtin registry has them: the tunable solvers plan 3-D problems with identity
  // dimensions as 2-D ones; the naive reference computes every problem as it is written.
  solver::SolverList naive_ = solver::NaiveSolvers();
  solver::SolverList tunable_ = solver::Flattening(solver::GpuTunableSolvers());
  std::map<std::string, std::vector<backend::CodeObject>> code_;
  std::map<std::string, std::string> compile_errors_;
  search::CompareKernelCache compare_kernels_;
  std::map<std::string, Row> cudnn_best_;  // by ToDriverLine: the row that timed it
  int cpu_checks_ = 0;
  bool cudnn_disabled_ = false;
};

std::string JsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

std::string Str(const std::string& s) { return "\"" + JsonEscape(s) + "\""; }
std::string Ms(double v) { return v > 0 ? fmt::format("{:.5f}", v) : "null"; }

double Geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / v.size());
}

void AddOptions(CLI::App& app, Options& opt) {
  CLI::Option_group* what = app.add_option_group("Problems", "what is timed");
  what->add_option("--driver", opt.driver, "MIOpenDriver problem file");
  what->add_option("--from-db", opt.from_db,
                   "time the (solver, params) rows of the perf db <arch><cu>.db in this folder (a tune -f export) "
                   "instead of tuning problems of --driver");
  what->add_option("--dirs", opt.dirs, "directions to run (subset of FBW) for each forward problem; default: the file's");
  what->add_option("--solvers", opt.only_solvers, "comma-separated solver names to tune (default: all applicable)");
  what->add_option("--params", opt.params,
                   "time exactly these params (repeat the flag for several) of each --solvers solver instead of its "
                   "default and sampled configs; params invalid for a problem are reported and skipped");
  what->add_option("--max-problems", opt.max_problems, "stop after this many problems (0: all)");
  what->add_flag("--candidates", opt.candidates,
                 "also the GPU solvers not yet verified on a GPU (CandidateGpuSolvers; every timed kernel is verified)");
  what->add_flag("--no-tuna", opt.no_tuna, "time cuDNN only");

  CLI::Option_group* search = app.add_option_group("Search", "how tuna's side is tuned");
  search->add_option("--configs", opt.configs, "configs tried per fast solver (1010+) and problem");
  search->add_option("--other-configs", opt.other_configs, "configs tried per older solver and problem");
  search->add_flag("--no-specialize", opt.no_specialize,
                   "skip the tuner's finishing step (the winner rebuilt with its sizes compiled in where its solver "
                   "offers it, timed beside the run-time build, the faster kept): run-time sizes only");
  search->add_option("--variant-option", opt.variant_option,
                     "also time the run-time-size build plus this -D option, beside the finishing step (a kernel experiment)");

  CLI::Option_group* timing = app.add_option_group("Timing", "both sides timed alike, an L2 flush before each launch");
  timing->add_option("--reps", opt.reps, "timed launches per final timing, each after an L2 flush (median; >= 20)");
  timing->add_option("--screen-reps", opt.screen_reps, "timed launches per candidate when screening (tuna and cuDNN)");
  timing->add_option("--hang-seconds", opt.hang_seconds,
                     "a screening, timing or output check that takes longer is reported as hung: the bench names "
                     "it and exits with 4 (0: never)");
  timing->add_flag("--print-screened", opt.print_screened,
                   "print every tuna candidate's screening time, the solver's default marked \"(default)\"");
  timing->add_option("--finalists", opt.finalists, "fastest screened candidates re-timed with --reps (tuna and cuDNN)");

  CLI::Option_group* cudnn = app.add_option_group("cuDNN", "the baseline");
  cudnn->add_option("--cudnn", opt.cudnn, "libcudnn.so.9 or its directory (default $TUNA_CUDNN_PATH, then the loader)");
  cudnn->add_flag("--cudnn-heuristics-only", opt.heuristics_only,
                  "cuDNN best from heuristics A, B and FALLBACK only (default: also every engine with default knobs)");
  cudnn->add_flag("--no-legacy", opt.no_legacy, "skip the legacy-find cuDNN column");

  CLI::Option_group* out = app.add_option_group("Checks and output");
  out->add_option("--cpu-check-gflop", opt.cpu_check_gflop,
                  "cross-check the naive GPU output against the CPU reference up to this size");
  out->add_option("--cpu-check-max", opt.cpu_check_max, "at most this many CPU cross-checks");
  out->add_option("--json", opt.json, "write the results as JSON here");
}

int Main(int argc, char** argv) {
  Options opt;
  CLI::App app{"tuna kernels bench: tuned GPU solvers vs cuDNN at its best"};
  AddOptions(app, opt);
  CLI11_PARSE(app, argc, argv);
  if (opt.reps < 20) std::fprintf(stderr, "warning: --reps %d < 20: not a reportable figure\n", opt.reps);

  std::unique_ptr<backend::Backend> be = backend::NewCudaBackend(backend::CudaBackendOptions::FromEnv());
  if (absl::Status st = be->DriverStatus(); !st.ok()) {
    std::fprintf(stderr, "CUDA driver unavailable: %s\n", std::string(st.message()).c_str());
    return 3;
  }
  if (absl::Status st = be->CompilerStatus(); !st.ok()) {
    std::fprintf(stderr, "NVRTC unavailable: %s\n", std::string(st.message()).c_str());
    return 3;
  }
  absl::StatusOr<std::unique_ptr<Device>> dev = be->OpenDevice(0);
  if (!dev.ok()) {
    std::fprintf(stderr, "cannot open device: %s\n", std::string(dev.status().message()).c_str());
    return 3;
  }
  const auto& info = (*dev)->Info();
  TimingMethod method;
  method.reps = opt.reps;
  absl::StatusOr<FlushedTimer> timer = FlushedTimer::Create(**dev, method);
  if (!timer.ok()) {
    std::fprintf(stderr, "timer: %s\n", std::string(timer.status().message()).c_str());
    return 3;
  }
  // A kernel that never finishes would block the bench until a step's time limit kills it: name
  // it and stop (the device is lost; the JSON holds every finished row).
  HangGuard guard(absl::Seconds(opt.hang_seconds), [](const std::string& what, absl::Duration limit) {
    std::printf("    HUNG: %s did not finish within %.0f s; the device is lost: exiting with 4\n", what.c_str(),
                absl::ToDoubleSeconds(limit));
    std::fflush(stdout);
    std::_Exit(4);
  });
  Bench bench(opt, *be, **dev, *timer, guard);
  if (absl::Status st = bench.Init(); !st.ok()) {
    std::fprintf(stderr, "init: %s\n", std::string(st.message()).c_str());
    return 3;
  }

  std::vector<Job> jobs;
  std::string source = opt.driver;
  if (!opt.from_db.empty()) {
    absl::StatusOr<std::string> path = FindPerfDb(opt.from_db, bench.target());
    absl::StatusOr<DbJobs> dbj = path.ok() ? ReadDbJobs(*path, solver::SolverRegistry::Builtin(), bench.target())
                                           : absl::StatusOr<DbJobs>(path.status());
    if (!dbj.ok()) {
      std::fprintf(stderr, "--from-db %s: %s\n", opt.from_db.c_str(), std::string(dbj.status().message()).c_str());
      return 2;
    }
    source = dbj->path;
    for (const DbSkip& s : dbj->skipped) {
      std::printf("skipped db row %s [%s]: %s\n", s.solver.c_str(), s.params.c_str(), s.reason.c_str());
    }
    int i = 0;
    for (DbJob& j : dbj->jobs) {
      ++i;
      jobs.push_back({fmt::format("{:02d}{}", i, DirectionName(j.problem.direction)), ToDriverLine(j.problem),
                      j.problem, j.solver, j.config});
    }
  } else {
    absl::StatusOr<DriverFile> file = ParseDriverFile(opt.driver);
    if (!file.ok() || !file->errors.empty()) {
      std::fprintf(stderr, "cannot parse %s: %s\n", opt.driver.c_str(),
                   file.ok() ? file->errors[0].reason.c_str() : std::string(file.status().message()).c_str());
      return 2;
    }
    int line_index = 0;
    for (const DriverFileLine& line : file->lines) {
      ++line_index;
      for (const Problem& p : line.problems) {
        std::vector<Problem> expanded;
        if (opt.dirs.empty()) {
          expanded.push_back(p);
        } else if (p.direction == Direction::kForward) {
          for (char d : opt.dirs) {
            Problem q = p;
            q.direction =
                d == 'B' ? Direction::kBackwardData : d == 'W' ? Direction::kBackwardWeights : Direction::kForward;
            expanded.push_back(q);
          }
        }
        for (const Problem& q : expanded) {
          jobs.push_back({fmt::format("{:02d}{}", line_index, DirectionName(q.direction)), line.text, q, nullptr, {}});
        }
      }
    }
  }
  if (opt.max_problems > 0 && static_cast<int>(jobs.size()) > opt.max_problems) jobs.resize(opt.max_problems);
  std::printf("device %s (%s, %d SMs), %s, %zu problems from %s\n", info.name.c_str(), info.arch.c_str(),
              info.compute_units, be->CompilerVersion().c_str(), jobs.size(), source.c_str());

  const auto start = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  int errors = 0;
  // Table and JSON: the JSON is rewritten after every row (a run cut short keeps what it timed);
  // the table is printed once, at the end.
  auto report = [&](bool final, double seconds) {
    auto say = [&](const char* fmt_str, auto... a) {
      if (final) std::printf(fmt_str, a...);
    };
    // Table and geomeans per direction (ms over the rows where the column was timed; the ratio
    // over rows where both tuna and cuDNN best were).
    say("\n%-5s %8s %-16s %-22s %9s %10s %10s %7s  %s\n", "row", "GFLOP", "solver", "params", "tuna ms",
                "best ms", "legacy ms", "ratio", "cuDNN best engine");
    for (const Row& r : rows) {
      say("%-5s %8.2f %-16s %-22s %9.4f %10.4f %10.4f %7.3f  %s\n", r.label.c_str(), r.gflop, r.solver.c_str(),
                  r.params.c_str(), r.tuna_ms, r.cudnn_best_ms, r.cudnn_legacy_ms,
                  (r.tuna_ms > 0 && r.cudnn_best_ms > 0) ? r.cudnn_best_ms / r.tuna_ms : 0.0,
                  r.cudnn_best_engine.c_str());
    }
    struct Geo {
      int count = 0;
      double tuna = 0, best = 0, legacy = 0, ratio = 0, min_ratio = 0;
    };
    std::map<char, Geo> geo;
    for (char d : std::string("FBW")) {
      std::vector<double> t, b, l, ratio;
      for (const Row& r : rows) {
        if (r.direction != d) continue;
        if (r.tuna_ms > 0) t.push_back(r.tuna_ms);
        if (r.cudnn_best_ms > 0) b.push_back(r.cudnn_best_ms);
        if (r.cudnn_legacy_ms > 0) l.push_back(r.cudnn_legacy_ms);
        if (r.tuna_ms > 0 && r.cudnn_best_ms > 0) ratio.push_back(r.cudnn_best_ms / r.tuna_ms);
      }
      if (t.empty() && b.empty()) continue;
      Geo g{static_cast<int>(std::max(t.size(), b.size())), Geomean(t), Geomean(b), Geomean(l), Geomean(ratio),
            ratio.empty() ? 0 : *std::min_element(ratio.begin(), ratio.end())};
      geo[d] = g;
      say("geomean %c over %d: tuna %.5f ms, cuDNN best %.5f ms, legacy %.5f ms, ratio best/tuna %.3f (min %.3f)\n",
                  d, g.count, g.tuna, g.best, g.legacy, g.ratio, g.min_ratio);
    }
    if (!opt.from_db.empty()) {
      // A db holds a row per (config, solver): what a user gets is the fastest verified solver
      // of each config (the one the find db ranks first and the runtime picks).
      std::map<std::pair<std::string, char>, const Row*> fastest;
      for (const Row& r : rows) {
        if (r.tuna_ms <= 0 || !r.tuna_verified || r.cudnn_best_ms <= 0) continue;
        const Row*& f = fastest[{r.problem, r.direction}];
        if (f == nullptr || r.tuna_ms < f->tuna_ms) f = &r;
      }
      std::vector<double> t, b, ratio;
      for (const auto& [key, r] : fastest) {
        t.push_back(r->tuna_ms), b.push_back(r->cudnn_best_ms), ratio.push_back(r->cudnn_best_ms / r->tuna_ms);
      }
      if (!ratio.empty()) {
        say("fastest solver per config (what the runtime picks) over %zu configs: tuna %.5f ms, cuDNN best %.5f ms, "
            "ratio best/tuna %.3f (min %.3f)\n",
            ratio.size(), Geomean(t), Geomean(b), Geomean(ratio), *std::min_element(ratio.begin(), ratio.end()));
      }
    }
    {
      // The finishing step per solver: what its search build (run-time sizes or taps, rolled
      // loops) costs against the build Specialize makes for the problem alone.
      std::map<std::string, std::vector<const Row*>> by_solver;
      for (const Row& r : rows) {
        if (r.sizes_fixed_ms > 0) by_solver[r.solver].push_back(&r);
      }
      for (const auto& [solver, list] : by_solver) {
        std::vector<double> rt, fixed, va;
        for (const Row* r : list) {
          rt.push_back(r->sizes_runtime_ms), fixed.push_back(r->sizes_fixed_ms);
          if (r->variant_ms > 0) va.push_back(r->variant_ms);
        }
        say("finishing step, %s over %zu rows: search build vs specialised build %.5f vs %.5f ms (geomean): "
            "arguments cost %.1f %%\n",
            solver.c_str(), rt.size(), Geomean(rt), Geomean(fixed), 100.0 * (Geomean(rt) / Geomean(fixed) - 1.0));
        if (!va.empty() && va.size() == rt.size()) {
          say("variant %s over %zu rows: %.5f ms (geomean), %.1f %% faster than run-time sizes\n",
              opt.variant_option.c_str(), va.size(), Geomean(va), 100.0 * (1.0 - Geomean(va) / Geomean(rt)));
        }
      }
    }
    say("%zu rows, %d errors, %.0f s\n", rows.size(), errors, seconds);

    if (!opt.json.empty()) {
      const std::time_t now = std::time(nullptr);
      char date[32];
      std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
      std::ofstream js(opt.json);
      js << "{\n \"meta\": {\n  \"date\": " << Str(date) << ",\n  \"device\": " << Str(info.name)
         << ",\n  \"arch\": " << Str(info.arch) << ",\n  \"compiler\": " << Str(be->CompilerVersion())
         << ",\n  \"cudnn_version\": " << Str(bench.cudnn_version_)
         << ",\n  \"cudnn_library\": " << Str(bench.cudnn_library_) << ",\n  \"source\": " << Str(source)
         << ",\n  \"from_db\": " << (opt.from_db.empty() ? "false" : "true")
         << ",\n  \"method\": " << Str(timer->method().Describe()) << ",\n  \"reps\": " << opt.reps
         << ",\n  \"l2_flush_bytes\": " << method.flush_bytes << ",\n  \"selection\": "
         << Str(fmt::format("tuna and cuDNN alike: every candidate screened with {} flushed launches (median), the {} "
                            "fastest re-timed with the method above, the fastest kept, its output verified against the "
                            "naive GPU solver",
                            opt.screen_reps, opt.finalists))
         << ",\n  \"cudnn_best\": "
         << Str(std::string("backend (graph) API: every engine config of heuristics modes A, B and FALLBACK") +
                (opt.heuristics_only ? "" : ", plus every engine that accepts the graph with its default knobs,") +
                " that finalizes for the problem; compute type FP32; FP32 data excludes TENSOR_CORE (TF32) "
                "engines; DOWN_CONVERT_INPUTS engines excluded; workspace <= 4 GiB")
         << ",\n  \"cudnn_legacy\": "
         << Str("cudnnFind*AlgorithmEx's first algorithm (FMA math for FP32, tensor-op math for FP16/BF16); reference only")
         << ",\n  \"tuna\": "
         << Str(opt.from_db.empty()
                    ? fmt::format("best of each applicable tunable GPU solver's default config + up to {} sampled "
                                  "configs (solvers 1010+) / {} (older)",
                                  opt.configs, opt.other_configs)
                    : std::string("the perf db's (solver, params) per row"))
         << ",\n  \"torch_crosscheck\": null,\n  \"geomean\": {";
      bool first = true;
      for (const auto& [d, g] : geo) {
        js << (first ? "" : ",") << "\n   \"" << d << "\": {\"count\": " << g.count << ", \"tuna_ms\": " << Ms(g.tuna)
           << ", \"cudnn_best_ms\": " << Ms(g.best) << ", \"cudnn_legacy_ms\": " << Ms(g.legacy)
           << ", \"ratio\": " << (g.ratio > 0 ? fmt::format("{:.4f}", g.ratio) : "null")
           << ", \"min_ratio\": " << (g.min_ratio > 0 ? fmt::format("{:.4f}", g.min_ratio) : "null") << "}";
        first = false;
      }
      js << "\n  },\n  \"errors\": " << errors << ",\n  \"seconds\": " << fmt::format("{:.0f}", seconds)
         << "\n },\n \"rows\": [\n";
      for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        js << "  {\"label\": " << Str(r.label) << ", \"line\": " << Str(r.line) << ", \"problem\": " << Str(r.problem)
           << ", \"direction\": \"" << r.direction << "\", \"dtype\": " << Str(r.dtype) << ", \"layout\": "
           << Str(r.layout) << ", \"gflop\": " << fmt::format("{:.4f}", r.gflop) << ", \"solver\": " << Str(r.solver)
           << ", \"params\": " << Str(r.params) << ", \"tuna_ms\": " << Ms(r.tuna_ms)
           << ", \"cudnn_best_ms\": " << Ms(r.cudnn_best_ms) << ", \"cudnn_best_engine\": " << Str(r.cudnn_best_engine)
           << ", \"cudnn_legacy_ms\": " << Ms(r.cudnn_legacy_ms) << ", \"torch_ms\": null, \"ratio\": "
           << ((r.tuna_ms > 0 && r.cudnn_best_ms > 0) ? fmt::format("{:.4f}", r.cudnn_best_ms / r.tuna_ms) : "null")
           << ", \"verified\": " << (r.verified() ? "true" : "false")
           << ", \"tuna_verified\": " << (r.tuna_verified ? "true" : "false")
           << ", \"cudnn_best_verified\": " << (r.cudnn_best_verified ? "true" : "false")
           << ", \"cudnn_legacy_verified\": " << (r.cudnn_legacy_verified ? "true" : "false")
           << ", \"tuna_candidates\": " << r.candidates << ", \"tuna_candidates_verified\": " << r.tuna_verified_count
           << ", \"tuna_max_rel_error\": " << fmt::format("{:.3g}", r.tuna_rel)
           << ", \"cudnn_best_max_rel_error\": " << fmt::format("{:.3g}", r.cudnn_best_rel)
           << ", \"cudnn_plans\": " << r.cudnn_engines << ", \"cudnn_plans_stats\": " << Str(r.cudnn_stats)
           << ", \"cudnn_legacy_algo\": " << r.cudnn_legacy_algo << ", \"cudnn_legacy_math\": " << r.cudnn_legacy_math
           << ", \"sizes_runtime_ms\": " << Ms(r.sizes_runtime_ms) << ", \"sizes_fixed_ms\": " << Ms(r.sizes_fixed_ms)
           << ", \"variant_ms\": " << Ms(r.variant_ms)
           << ", \"note\": " << Str(r.note) << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
      }
      js << " ]\n}\n";
    }
  };
  for (const Job& job : jobs) {
    std::printf("[%s] %s\n", job.label.c_str(), job.problem.Canonical().c_str());
    std::fflush(stdout);
    absl::StatusOr<Row> r = bench.RunProblem(job);
    if (!r.ok()) {
      std::printf("  ERROR: %s\n", std::string(r.status().message()).c_str());
      ++errors;
      if (backend::IsContextLost(r.status())) break;
      continue;
    }
    const Row& row = *r;
    std::printf("  tuna %s [%s] %.4f ms (%d/%d verified) | cuDNN best %.4f ms %s (%d plans: %s) | legacy algo %d math %d %.4f ms | ratio %.3f %s\n",
                row.solver.c_str(), row.params.c_str(), row.tuna_ms, row.tuna_verified_count, row.candidates,
                row.cudnn_best_ms, row.cudnn_best_engine.c_str(), row.cudnn_engines, row.cudnn_stats.c_str(),
                row.cudnn_legacy_algo, row.cudnn_legacy_math, row.cudnn_legacy_ms,
                row.cudnn_best_ms > 0 && row.tuna_ms > 0 ? row.cudnn_best_ms / row.tuna_ms : 0.0, row.note.c_str());
    std::fflush(stdout);
    rows.push_back(*r);
    report(false, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report(true, seconds);
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tuna::bench

int main(int argc, char** argv) { return tuna::bench::Main(argc, argv); }

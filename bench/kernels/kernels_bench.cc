// Kernels bench: tuna's best GPU solver per problem against cuDNN, side by side, same process,
// same method. For each problem of a MIOpenDriver file (directions from the file or --dirs):
//   1. the reference output: the naive GPU solver (ConvDirectNaiveConv*, itself cross-checked
//      against the CPU reference on the smallest problems, --cpu-check-gflop);
//   2. tuning: every applicable tunable GPU solver, its default config plus up to
//      --configs valid configs sampled from its space (fast solvers 1010+) or --other-configs
//      (older ones); each candidate is compiled (NVRTC, in parallel, cached by build), run on
//      poisoned outputs, verified against the reference, then timed briefly; the fastest
//      verified candidate wins;
//   3. the winner and cuDNN (Find*AlgorithmEx's best algorithm, its output verified too) are
//      timed alike: warm-up, then --reps repetitions, each after an L2 flush (a 256 MiB memset),
//      of --inner back-to-back launches between two events; the median per launch.
// Prints a per-problem table (ms, TFLOPS, ratio to cuDNN) and geomeans; --json writes all.
//
//   kernels_bench --driver bench/kernels/data/resnet50_n32_fwd_fp16_nhwc.txt --json out.json
//   kernels_bench --driver bench/kernels/data/resnet50_n32.txt --dirs F --cudnn /path/to/cudnn/lib
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "CLI/CLI.hpp"
#include "bench/kernels/cudnn_shim.h"
#include "fmt/format.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/invoker.h"

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
  std::string dirs;  // "FBW" subset; empty: as in the file
  std::string cudnn = std::getenv("TUNA_CUDNN_PATH") ? std::getenv("TUNA_CUDNN_PATH") : "";
  std::string json;
  std::string only_solvers;  // comma-separated names; empty: all
  int configs = 16;
  int other_configs = 2;
  int inner = 10;
  int reps = 15;
  int max_problems = 0;
  double cpu_check_gflop = 4;
  int cpu_check_max = 2;
  uint64_t seed = 7;
};

struct Row {
  std::string label, problem;
  double gflop = 0;
  std::string solver, params;
  int candidates = 0, verified = 0, failed = 0;
  double verify_rel = 0;
  double tuna_ms = 0, cudnn_ms = 0;
  int cudnn_algo = -1;
  double cudnn_find_ms = 0;
  int cudnn_math = 0;
  double cudnn_rel = -1;
  std::string note;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string BuildKey(const Solution& s) {
  std::string k;
  for (const auto& b : s.kernels) {
    k += b.source;
    for (const auto& o : b.options) k += " " + o;
    k += ";";
  }
  return k;
}

class Bench {
 public:
  Bench(const Options& o, backend::Backend& be, Device& dev)
      : opt_(o), be_(be), dev_(dev), target_(solver::TargetForDevice(backend::BackendKind::kCuda, dev.Info())) {}

  absl::Status Init() {
    absl::StatusOr<DeviceBuffer> f = dev_.Alloc(kFlushBytes);
    if (!f.ok()) return f.status();
    flush_ = *std::move(f);
    absl::StatusOr<DeviceBuffer> ws = dev_.Alloc(kCudnnWorkspace);
    if (!ws.ok()) return ws.status();
    cudnn_ws_ = *std::move(ws);
    return absl::OkStatus();
  }

  // Median per-launch time of `fn`: warm-up, then reps x (L2 flush, `inner` launches).
  absl::StatusOr<double> Time(const std::function<absl::Status()>& fn, int inner, int reps) {
    for (int i = 0; i < 2; ++i) {
      if (absl::Status st = fn(); !st.ok()) return st;
    }
    if (absl::Status st = dev_.Synchronize(); !st.ok()) return st;
    std::vector<double> per;
    for (int r = 0; r < reps; ++r) {
      if (absl::Status st = dev_.Memset(flush_, static_cast<uint8_t>(r), kFlushBytes); !st.ok()) return st;
      absl::StatusOr<std::vector<double>> t = dev_.TimeLaunches(
          [&]() -> absl::Status {
            for (int i = 0; i < inner; ++i) {
              if (absl::Status st = fn(); !st.ok()) return st;
            }
            return absl::OkStatus();
          },
          1);
      if (!t.ok()) return t.status();
      per.push_back((*t)[0] / inner);
    }
    return Median(per);
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

  absl::StatusOr<Row> RunProblem(const Problem& p, const std::string& label) {
    Row row;
    row.label = label;
    row.problem = p.Canonical();
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
    // Inputs of the direction get random data; the output buffer is poisoned before each run.
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
      absl::Status st = (*inv)->Run({&*x, &*w, &*y, nullptr});
      if (st.ok()) st = dev_.Synchronize();
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
    auto verify = [&](double* rel) -> absl::StatusOr<bool> {
      std::vector<std::byte> got(out_bytes);
      if (absl::Status st = dev_.CopyToHost(got.data(), *out, out_bytes); !st.ok()) return st;
      absl::StatusOr<reference::VerifyReport> rep = reference::VerifyConvOutput(p, p.direction, got.data(), expected.data());
      if (!rep.ok()) return rep.status();
      *rel = rep->max_rel_error;
      if (!rep->ok) std::printf("    verify FAIL: %s\n", rep->Summary().c_str());
      return rep->ok;
    };

    // 2. Candidates.
    struct Cand {
      const Solver* s;
      PerfConfig c;
      Solution sol;
    };
    std::vector<Cand> cands;
    std::mt19937_64 rng(seed);
    for (const auto& [id, s] : tunable_) {
      if (!opt_.only_solvers.empty() &&
          ("," + opt_.only_solvers + ",").find("," + std::string(s->Name()) + ",") == std::string::npos) {
        continue;
      }
      if (!s->IsApplicable(target_, p).ok()) continue;
      const int budget = id >= 1010 ? opt_.configs : opt_.other_configs;
      std::vector<PerfConfig> configs = {s->DefaultConfig(target_, p)};
      const solver::SearchSpace space = s->Space(target_, p);
      std::vector<PerfConfig> valid;
      if (space.Size() <= 4096) {
        for (uint64_t i = 0; i < space.Size(); ++i) {
          PerfConfig c = space.At(i);
          if (!(c == configs[0]) && s->IsValid(target_, p, c).ok()) valid.push_back(c);
        }
      } else {
        for (int t = 0; t < 4000 && static_cast<int>(valid.size()) < 4 * budget; ++t) {
          PerfConfig c = space.At(rng() % space.Size());
          if (!(c == configs[0]) && s->IsValid(target_, p, c).ok()) valid.push_back(c);
        }
      }
      std::shuffle(valid.begin(), valid.end(), rng);
      for (const PerfConfig& c : valid) {
        if (static_cast<int>(configs.size()) >= budget) break;
        if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
      }
      for (const PerfConfig& c : configs) {
        absl::StatusOr<Solution> sol = s->GetSolution(target_, p, c);
        if (sol.ok()) cands.push_back({s.get(), c, *std::move(sol)});
      }
    }
    {
      std::vector<Solution> sols;
      for (const Cand& c : cands) sols.push_back(c.sol);
      CompileAll(sols);
    }
    double best_ms = 1e30;
    const Cand* best = nullptr;
    for (const Cand& c : cands) {
      ++row.candidates;
      auto it = code_.find(BuildKey(c.sol));
      if (it == code_.end()) {
        std::printf("    compile failed %s %s: %s\n", std::string(c.s->Name()).c_str(), c.c.ToString().c_str(),
                    compile_errors_[BuildKey(c.sol)].substr(0, 300).c_str());
        ++row.failed;
        continue;
      }
      absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = solver::Invoker::Create(dev_, c.sol, it->second);
      if (!inv.ok()) return inv.status();
      DeviceBuffer ws;
      if (c.sol.workspace_bytes > 0) {
        absl::StatusOr<DeviceBuffer> b = dev_.Alloc(c.sol.workspace_bytes);
        if (!b.ok()) return b.status();
        ws = *std::move(b);
      }
      solver::ConvBuffers bufs{&*x, &*w, &*y, ws.valid() ? &ws : nullptr};
      if (absl::Status st = dev_.Memset(*out, 0xff, out_bytes); !st.ok()) return st;
      absl::Status st = (*inv)->Run(bufs);
      if (st.ok()) st = dev_.Synchronize();
      if (!st.ok()) return st;  // a launch failure poisons the context: stop here
      double rel = 0;
      absl::StatusOr<bool> ok = verify(&rel);
      if (!ok.ok()) return ok.status();
      if (!*ok) {
        std::printf("    %s %s FAILED verification\n", std::string(c.s->Name()).c_str(), c.c.ToString().c_str());
        ++row.failed;
        continue;
      }
      ++row.verified;
      absl::StatusOr<double> t = Time([&] { return (*inv)->Run(bufs); }, 3, 3);
      if (!t.ok()) return t.status();
      if (*t < best_ms) {
        best_ms = *t;
        best = &c;
        row.verify_rel = rel;
      }
    }
    // 3. Final timing of the winner, then cuDNN.
    if (best != nullptr) {
      row.solver = std::string(best->s->Name());
      row.params = best->c.ToString();
      auto it = code_.find(BuildKey(best->sol));
      absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = solver::Invoker::Create(dev_, best->sol, it->second);
      if (!inv.ok()) return inv.status();
      DeviceBuffer ws;
      if (best->sol.workspace_bytes > 0) {
        absl::StatusOr<DeviceBuffer> b = dev_.Alloc(best->sol.workspace_bytes);
        if (!b.ok()) return b.status();
        ws = *std::move(b);
      }
      solver::ConvBuffers bufs{&*x, &*w, &*y, ws.valid() ? &ws : nullptr};
      absl::StatusOr<double> t = Time([&] { return (*inv)->Run(bufs); }, opt_.inner, opt_.reps);
      if (!t.ok()) return t.status();
      row.tuna_ms = *t;
      // The timed runs wrote the output again: verify what they left.
      double rel = 0;
      absl::StatusOr<bool> ok = verify(&rel);
      if (!ok.ok()) return ok.status();
      if (!*ok) return absl::InternalError("the winner's timed output failed verification");
    }
    if (!cudnn_disabled_) {
      absl::StatusOr<std::unique_ptr<CudnnConv>> cd = CudnnConv::Create(opt_.cudnn, p);
      if (!cd.ok()) {
        std::printf("cuDNN unavailable: %s\n", std::string(cd.status().message()).c_str());
        cudnn_disabled_ = true;
      } else {
        if (absl::Status st = upload(); !st.ok()) return st;  // Find may have scribbled on inputs? no: restore anyway
        if (absl::Status st = dev_.Memset(*out, 0xff, out_bytes); !st.ok()) return st;
        absl::StatusOr<CudnnChoice> ch = (*cd)->Find(x->address(), w->address(), y->address(), cudnn_ws_.address(),
                                                      kCudnnWorkspace);
        if (!ch.ok()) {
          row.note = std::string(ch.status().message());
        } else {
          row.cudnn_algo = ch->algo;
          row.cudnn_find_ms = ch->find_ms;
          row.cudnn_math = ch->math_type;
          if (absl::Status st = dev_.Memset(*out, 0xff, out_bytes); !st.ok()) return st;
          absl::Status st = (*cd)->Run(*ch, x->address(), w->address(), y->address(), cudnn_ws_.address());
          if (st.ok()) st = dev_.Synchronize();
          if (!st.ok()) return st;
          double rel = 0;
          absl::StatusOr<bool> ok = verify(&rel);
          if (!ok.ok()) return ok.status();
          row.cudnn_rel = rel;
          if (!*ok) row.note = "cuDNN output differs from the reference beyond tolerance";
          absl::StatusOr<double> t =
              Time([&] { return (*cd)->Run(*ch, x->address(), w->address(), y->address(), cudnn_ws_.address()); },
                   opt_.inner, opt_.reps);
          if (!t.ok()) return t.status();
          row.cudnn_ms = *t;
          cudnn_version_ = (*cd)->version();
        }
      }
    }
    return row;
  }

  std::string cudnn_version_;

 private:
  static constexpr size_t kFlushBytes = size_t{256} << 20;
  static constexpr size_t kCudnnWorkspace = size_t{1} << 30;
  const Options& opt_;
  backend::Backend& be_;
  Device& dev_;
  Target target_;
  DeviceBuffer flush_, cudnn_ws_;
  solver::SolverList naive_ = solver::NaiveSolvers();
  solver::SolverList tunable_ = solver::GpuTunableSolvers();
  std::map<std::string, std::vector<backend::CodeObject>> code_;
  std::map<std::string, std::string> compile_errors_;
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

int Main(int argc, char** argv) {
  Options opt;
  CLI::App app{"tuna kernels bench: tuned GPU solvers vs cuDNN"};
  app.add_option("--driver", opt.driver, "MIOpenDriver problem file");
  app.add_option("--dirs", opt.dirs, "directions to run (subset of FBW) for each forward problem; default: the file's");
  app.add_option("--cudnn", opt.cudnn, "libcudnn.so.9 or its directory (default $TUNA_CUDNN_PATH, then the loader)");
  app.add_option("--json", opt.json, "write the results as JSON here");
  app.add_option("--solvers", opt.only_solvers, "comma-separated solver names to tune (default: all applicable)");
  app.add_option("--configs", opt.configs, "configs tried per fast solver (1010+) and problem");
  app.add_option("--other-configs", opt.other_configs, "configs tried per older solver and problem");
  app.add_option("--inner", opt.inner, "launches between two events");
  app.add_option("--reps", opt.reps, "timed repetitions (each after an L2 flush); the median is reported");
  app.add_option("--max-problems", opt.max_problems, "stop after this many problems (0: all)");
  app.add_option("--cpu-check-gflop", opt.cpu_check_gflop, "cross-check the naive GPU output against the CPU reference up to this size");
  app.add_option("--cpu-check-max", opt.cpu_check_max, "at most this many CPU cross-checks");
  CLI11_PARSE(app, argc, argv);

  absl::StatusOr<DriverFile> file = ParseDriverFile(opt.driver);
  if (!file.ok() || !file->errors.empty()) {
    std::fprintf(stderr, "cannot parse %s: %s\n", opt.driver.c_str(),
                 file.ok() ? file->errors[0].reason.c_str() : std::string(file.status().message()).c_str());
    return 2;
  }
  std::vector<std::pair<std::string, Problem>> problems;
  int line_index = 0;
  for (const DriverFileLine& line : file->lines) {
    ++line_index;
    for (const Problem& p : line.problems) {
      if (opt.dirs.empty()) {
        problems.push_back({fmt::format("{:02d}", line_index), p});
      } else if (p.direction == Direction::kForward) {
        for (char d : opt.dirs) {
          Problem q = p;
          q.direction = d == 'B' ? Direction::kBackwardData : d == 'W' ? Direction::kBackwardWeights : Direction::kForward;
          problems.push_back({fmt::format("{:02d}", line_index), q});
        }
      }
    }
  }
  if (opt.max_problems > 0 && static_cast<int>(problems.size()) > opt.max_problems) problems.resize(opt.max_problems);

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
  std::printf("device %s (%s, %d SMs), %s, %zu problems from %s\n", info.name.c_str(), info.arch.c_str(),
              info.compute_units, be->CompilerVersion().c_str(), problems.size(), opt.driver.c_str());
  Bench bench(opt, *be, **dev);
  if (absl::Status st = bench.Init(); !st.ok()) {
    std::fprintf(stderr, "init: %s\n", std::string(st.message()).c_str());
    return 3;
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  int errors = 0;
  for (const auto& [label, p] : problems) {
    std::printf("[%s %s] %s\n", label.c_str(), std::string(DirectionName(p.direction)).c_str(), p.Canonical().c_str());
    std::fflush(stdout);
    absl::StatusOr<Row> r = bench.RunProblem(p, label + std::string(DirectionName(p.direction)));
    if (!r.ok()) {
      std::printf("  ERROR: %s\n", std::string(r.status().message()).c_str());
      ++errors;
      if (backend::IsContextLost(r.status())) break;
      continue;
    }
    const Row& row = *r;
    std::printf("  best %s [%s] %.4f ms (%d/%d verified) | cuDNN algo %d math %d (find %.4f ms) %.4f ms | ratio %.3f %s\n", row.solver.c_str(),
                row.params.c_str(), row.tuna_ms, row.verified, row.candidates, row.cudnn_algo, row.cudnn_math, row.cudnn_find_ms, row.cudnn_ms,
                row.cudnn_ms > 0 && row.tuna_ms > 0 ? row.cudnn_ms / row.tuna_ms : 0.0, row.note.c_str());
    std::fflush(stdout);
    rows.push_back(*r);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Table and geomeans (over problems where both sides were timed).
  std::printf("\n%-5s %-8s %-16s %-20s %9s %8s %9s %8s %7s\n", "layer", "GFLOP", "solver", "params", "tuna ms",
              "TFLOPS", "cuDNN ms", "TFLOPS", "ratio");
  double log_ratio = 0, log_t = 0, log_c = 0, min_ratio = 1e30;
  int n = 0;
  for (const Row& r : rows) {
    const double tt = r.tuna_ms > 0 ? r.gflop / r.tuna_ms : 0;
    const double ct = r.cudnn_ms > 0 ? r.gflop / r.cudnn_ms : 0;
    const double ratio = (r.tuna_ms > 0 && r.cudnn_ms > 0) ? r.cudnn_ms / r.tuna_ms : 0;
    std::printf("%-5s %8.2f %-16s %-20s %9.4f %8.2f %9.4f %8.2f %7.3f\n", r.label.c_str(), r.gflop, r.solver.c_str(),
                r.params.c_str(), r.tuna_ms, tt, r.cudnn_ms, ct, ratio);
    if (ratio > 0) {
      log_ratio += std::log(ratio), log_t += std::log(tt), log_c += std::log(ct);
      min_ratio = std::min(min_ratio, ratio);
      ++n;
    }
  }
  const double g_ratio = n ? std::exp(log_ratio / n) : 0, g_t = n ? std::exp(log_t / n) : 0,
               g_c = n ? std::exp(log_c / n) : 0;
  std::printf("geomean over %d: tuna %.2f TFLOPS, cuDNN %.2f TFLOPS, ratio %.3f (min %.3f); %d errors; %.0f s\n", n, g_t,
              g_c, g_ratio, n ? min_ratio : 0.0, errors, seconds);

  if (!opt.json.empty()) {
    std::ofstream js(opt.json);
    js << "{\n \"device\": \"" << JsonEscape(info.name) << "\",\n \"arch\": \"" << info.arch << "\",\n \"compiler\": \""
       << JsonEscape(be->CompilerVersion()) << "\",\n \"cudnn_version\": \"" << bench.cudnn_version_
       << "\",\n \"driver_file\": \"" << JsonEscape(opt.driver) << "\",\n \"method\": \"median of " << opt.reps
       << " repetitions, each after a 256 MiB L2 flush, of " << opt.inner
       << " back-to-back launches between CUDA events; same process, same buffers for tuna and cuDNN\",\n"
       << " \"geomean\": {\"count\": " << n << ", \"tuna_tflops\": " << g_t << ", \"cudnn_tflops\": " << g_c
       << ", \"ratio\": " << g_ratio << ", \"min_ratio\": " << (n ? min_ratio : 0.0) << "},\n \"errors\": " << errors
       << ",\n \"rows\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      js << fmt::format(
          "  {{\"layer\": \"{}\", \"problem\": \"{}\", \"gflop\": {:.4f}, \"solver\": \"{}\", \"params\": \"{}\", "
          "\"candidates\": {}, \"verified\": {}, \"failed\": {}, \"max_rel_error\": {:.3g}, \"tuna_ms\": {:.5f}, "
          "\"cudnn_algo\": {}, \"cudnn_math\": {}, \"cudnn_find_ms\": {:.5f}, \"cudnn_ms\": {:.5f}, \"cudnn_max_rel_error\": {:.3g}, \"ratio\": {:.4f}, \"note\": \"{}\"}}{}\n",
          r.label, JsonEscape(r.problem), r.gflop, r.solver, r.params, r.candidates, r.verified, r.failed, r.verify_rel,
          r.tuna_ms, r.cudnn_algo, r.cudnn_math, r.cudnn_find_ms, r.cudnn_ms, r.cudnn_rel,
          (r.tuna_ms > 0 && r.cudnn_ms > 0) ? r.cudnn_ms / r.tuna_ms : 0.0, JsonEscape(r.note),
          i + 1 < rows.size() ? "," : "");
    }
    js << " ]\n}\n";
  }
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tuna::bench

int main(int argc, char** argv) { return tuna::bench::Main(argc, argv); }

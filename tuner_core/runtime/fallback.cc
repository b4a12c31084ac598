#include "tuner_core/runtime/fallback.h"

#include <algorithm>

namespace tuna::runtime {

DeviceModel ModelForDevice(backend::BackendKind kind, const backend::DeviceInfo& info) {
  DeviceModel m;
  const bool gpu = kind != backend::BackendKind::kCpu;
  const double clock_hz = (info.clock_mhz > 0 ? info.clock_mhz : (gpu ? 1500 : 2000)) * 1e6;
  double lanes = 64;
  if (!gpu) {
    lanes = info.arch.find("avx512") != std::string::npos ? 16 : info.arch.find("avx2") != std::string::npos ? 8 : 4;
  }
  m.peak_flops = std::max(1, info.compute_units) * clock_hz * lanes * 2;
  m.bandwidth = gpu ? 1.5e12 : 2e10;
  m.matrix_cores = gpu && (info.arch.starts_with("sm_8") || info.arch.starts_with("sm_9") ||
                           info.arch.starts_with("sm_1") || info.arch.starts_with("gfx908") ||
                           info.arch.starts_with("gfx90a") || info.arch.starts_with("gfx94"));
  return m;
}

bool IsNaiveSolver(const solver::Solver& s) { return s.Name().starts_with("ConvDirectNaiveConv"); }

double SolverEfficiency(const solver::Solver& s, bool tuned) {
  const std::string_view n = s.Name();
  double e;
  if (IsNaiveSolver(s)) {
    e = 0.01;
  } else if (n == "TunaCpuGemmConv") {
    e = 0.35;
  } else if (n.starts_with("Tuna") && n.find("Igemm") != std::string_view::npos) {
    e = 0.5;
  } else if (n.starts_with("TunaDirectTiled")) {
    e = 0.3;
  } else {
    e = s.IsTunable() ? 0.25 : 0.1;
  }
  if (s.IsTunable() && !tuned) e *= 0.7;
  return e;
}

double EstimateMs(const DeviceModel& model, const Problem& problem, const solver::Solver& s, bool tuned) {
  double peak = model.peak_flops;
  if (model.matrix_cores && (problem.data_type == DataType::kFp16 || problem.data_type == DataType::kBf16)) {
    peak *= 2;
  }
  const double bytes = static_cast<double>(problem.XDesc().ElementCount() + problem.WDesc().ElementCount() +
                                           problem.YDesc().ElementCount()) *
                       static_cast<double>(DataTypeSize(problem.data_type));
  const double compute_s = problem.Flops() / (peak * SolverEfficiency(s, tuned));
  const double memory_s = bytes / model.bandwidth;
  return 1e3 * std::max(compute_s, memory_s);
}

std::vector<RankedSolver> RankFallback(const DeviceModel& model, const Problem& problem,
                                       const std::vector<solver::RegisteredSolver>& applicable,
                                       const std::function<bool(const solver::RegisteredSolver&)>& tuned) {
  std::vector<RankedSolver> out;
  for (const solver::RegisteredSolver& r : applicable) {
    out.push_back({r, EstimateMs(model, problem, *r.solver, tuned ? tuned(r) : false)});
  }
  std::stable_sort(out.begin(), out.end(), [](const RankedSolver& a, const RankedSolver& b) {
    const bool na = IsNaiveSolver(*a.solver.solver), nb = IsNaiveSolver(*b.solver.solver);
    if (na != nb) return nb;
    return a.estimate_ms < b.estimate_ms;
  });
  return out;
}

}  // namespace tuna::runtime

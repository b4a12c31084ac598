#include "tuner_core/runtime/fallback.h"

#include <algorithm>
#include <string_view>
#include <utility>

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
  // Measured on an H100 (docs/BENCHMARKS.md, 2026-11-24), as fractions of this model's peak
  // (64 FP32 lanes per SM, x2 for 16-bit types: tensor-core kernels exceed 1).
  static constexpr std::pair<std::string_view, double> kFamilies[] = {
      {"TunaHopperTma", 5.0}, {"TunaHopperFwd", 3.8}, {"TunaHopperWrw", 2.5}, {"TunaFastTc", 1.5},
      {"TunaMfma", 1.0},      {"TunaWinograd", 1.2},  {"TunaFastSimt", 0.9},  {"TunaThinBwd", 0.6},
      {"TunaDepthwise", 0.5}, {"TunaCpuGemmConv", 0.35}, {"TunaDirectTiled", 0.3},
  };
  double e = s.IsTunable() ? 0.25 : 0.1;
  if (IsNaiveSolver(s)) {
    e = 0.01;
  } else if (n.starts_with("Tuna") && n.find("Igemm") != std::string_view::npos) {
    e = 0.5;
  } else {
    for (const auto& [prefix, eff] : kFamilies) {
      if (n.starts_with(prefix)) {
        e = eff;
        break;
      }
    }
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
  double efficiency = SolverEfficiency(s, tuned);
  // GEMM-tiled families compute whole tile columns: a GEMM N (the output's channels per group)
  // below 16 wastes the rest (the RGB stem's backward data uses 3 of 8 to 64 columns).
  const std::string_view n = s.Name();
  const bool gemm_tiled = n.find("Igemm") != std::string_view::npos || n.starts_with("TunaFast") ||
                          n.starts_with("TunaHopper") || n.starts_with("TunaWinograd") || n.starts_with("TunaMfma");
  const int64_t gemm_n = problem.direction == Direction::kBackwardData ? problem.c / problem.groups
                                                                      : problem.k / problem.groups;
  if (gemm_tiled && problem.direction != Direction::kBackwardWeights && gemm_n < 16) efficiency *= gemm_n / 16.0;
  const double compute_s = problem.Flops() / (peak * efficiency);
  const double memory_s = bytes / model.bandwidth;
  // The bound term decides; a tenth of the other breaks ties between memory-bound solvers.
  return 1e3 * (std::max(compute_s, memory_s) + 0.1 * std::min(compute_s, memory_s));
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

// The fallback ranking used when the find db has no record for a problem (MIOpen's immediate-
// mode fallback, §5.3, with an analytic model in place of TunaNet/WTI).
//
// Model (a roofline with per-solver efficiency):
//   peak_flops = compute_units * clock * lanes * 2        (an FMA is 2 flops)
//                lanes: CPU 16 (avx512) / 8 (avx2) / 4 (other) FP32 lanes per core;
//                       GPU 64 FP32 lanes per CU/SM; x2 for FP16/BF16 on GPUs with matrix cores.
//                clock: DeviceInfo::clock_mhz, else 2000 MHz (CPU) / 1500 MHz (GPU).
//   bandwidth  = 1.5e12 B/s for GPUs, 2e10 B/s for the CPU (no portable way to read it).
//   bytes      = (|x| + |w| + |y|) * element size   (each tensor moved once: the ideal)
//   time_ms    = 1e3 * (max(compute, memory) + 0.1 * min(compute, memory)), compute =
//                flops / (peak_flops * efficiency), memory = bytes / bandwidth (the tenth breaks
//                ties between memory-bound solvers); GEMM-tiled families (Igemm, Fast*, Hopper*,
//                Winograd*, Mfma*) forward / backward data get efficiency x N/16 when the
//                output's channels per group N < 16 (tile columns computed for nothing)
//   efficiency: the fraction of this model's peak a solver family reaches on its best problems,
//     measured on an H100 (tensor-core families exceed 1: the model's 16-bit peak is only twice
//     the FP32 one): TunaHopperTma* 5.0, TunaHopperFwd 3.8, TunaHopperWrw 2.5, TunaFastTc* 1.5,
//     TunaMfma* 1.0 (unmeasured), TunaWinograd* 1.2, TunaFastSimt* 0.9, TunaThinBwd 0.6,
//     TunaDepthwise* 0.5 (memory-bound: the bandwidth term decides), Tuna*Igemm* 0.5,
//     TunaCpuGemmConv 0.35, TunaDirectTiled* 0.3, other tunable 0.25, other non-tunable 0.1,
//     ConvDirectNaiveConv* 0.01 (MIOpen gives naive solvers WTI 0.01 too); an untuned tunable
//     solver (no perf-db params) is charged x0.7.
// Naive solvers are always ranked after every other applicable solver, whatever the estimate,
// as MIOpen's WTI ranks them last resort. Ties keep registry (id) order.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tuner_core/backend/backend.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/registry.h"

namespace tuna::runtime {

struct DeviceModel {
  double peak_flops = 0;      // FP32 flop/s
  double bandwidth = 0;       // bytes/s
  bool matrix_cores = false;  // doubles peak for 16-bit types
};

DeviceModel ModelForDevice(backend::BackendKind kind, const backend::DeviceInfo& info);

double SolverEfficiency(const solver::Solver& s, bool tuned);
bool IsNaiveSolver(const solver::Solver& s);

// Estimated milliseconds of one run of `s` on `problem`.
double EstimateMs(const DeviceModel& model, const Problem& problem, const solver::Solver& s, bool tuned);

struct RankedSolver {
  solver::RegisteredSolver solver;
  double estimate_ms = 0;
};

// `applicable` in fallback order (naive last, then by estimate). `tuned(id)` says whether the
// perf db has params for the solver (null: all untuned).
std::vector<RankedSolver> RankFallback(const DeviceModel& model, const Problem& problem,
                                       const std::vector<solver::RegisteredSolver>& applicable,
                                       const std::function<bool(const solver::RegisteredSolver&)>& tuned);

}  // namespace tuna::runtime

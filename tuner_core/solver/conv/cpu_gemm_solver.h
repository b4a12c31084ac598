// TunaCpuGemmConv (id 2001): the tunable CPU convolution of kernels/cpu_conv/gemm_conv.cc.
// Every direction is one blocked GEMM per group with the im2col operand gathered while packing
// (implicit im2col, no workspace), FP32/FP16/BF16 with FP32 accumulation, every layout, groups,
// 2D and 3D. cpu backend only.
//
// The GEMM per group, by direction (Cg = C/G, Kg = K/G, T = filter taps). Unlike the GPU
// solvers, Fwd and Bwd are the transposed GEMM (the weights are operand A, so M is a channel
// dimension; the kernel vectorises along pixels, which are contiguous in NCHW):
//   Fwd  M = K/G   N = N*Do*Ho*Wo   K = C/G*T
//   Bwd  M = C/G   N = N*Di*Hi*Wi   K = K/G*T
//   Wrw  M = K/G   N = C/G*T        K = N*Do*Ho*Wo
//
// Tuning axes (perf-db params in this order; -D<AXIS> specialises the kernel):
//   TB_M, TB_N, TB_K    cache blocking of the GEMM (block tile and reduction chunk; were
//                       tile_m, tile_n, tile_k)
//   THREAD_M, THREAD_N  register tile of the inner loop (THREAD_N is the vector width; were
//                       micro_m, micro_n)
//   SPLIT_K             blocks per output tile along the reduction: with SPLIT_K > 1 the
//                       partial sums go to a float workspace and a second launch adds them
//                       (more parallel blocks for the thread pool when the output is small,
//                       e.g. backward weights).
// The launch grid (the blocks the cpu backend's pool runs) is tiles(N) x tiles(M) x G*split_k.
// IsValid prunes points that only repeat smaller ones (a tile at least twice the GEMM extent),
// register tiles over 64 floats, empty reduction splits and scratch above the target's limit.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

// The GEMM each group of the problem computes (see kernels/cpu_conv/gemm_conv.cc).
struct CpuGemmShape {
  int64_t m = 0, n = 0, k = 0, groups = 1;
};
CpuGemmShape CpuGemmShapeOf(const Problem& problem);

// The perf config decoded by name (tile_m = TB_M, ..., micro_n = THREAD_N, split_k = SPLIT_K).
// From() of a config with the wrong number of values gives the defaults below; ToConfig() needs
// every value in the space's domain (a value outside it aborts).
struct CpuGemmParams {
  int64_t tile_m = 32, tile_n = 64, tile_k = 64, micro_m = 4, micro_n = 8, split_k = 1;
  static CpuGemmParams From(const PerfConfig& config);
  PerfConfig ToConfig() const;
  // Bytes of block-private scratch (launch shared bytes) the kernel needs.
  uint64_t SharedBytes() const;
};

class CpuGemmConvSolver : public Solver {
 public:
  std::string_view Name() const override { return "TunaCpuGemmConv"; }
  // Implicit GEMM in MIOpen's terms: the im2col matrix is never materialised.
  Algorithm Algo() const override { return Algorithm::kImplicitGemm; }
  bool IsTunable() const override { return true; }
  std::vector<Direction> Directions() const override {
    return {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights};
  }

  TUNA_TUNABLE_SOLVER_VERBS
};

}  // namespace tuna::solver

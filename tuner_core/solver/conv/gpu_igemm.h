// TunaIgemm{Fwd,Bwd,Wrw}: implicit-GEMM convolution on GPUs (kernels/conv/tuna_igemm.cu), SIMT
// with shared-memory tiling, register micro-tiles, vector loads and double buffering.
//
// Covers: conv mode, FP32/FP16/BF16 (FP32 accumulate), 2D and 3D, any groups / padding /
// stride / dilation, each tensor in any layout (NCHW, NHWC, NCDHW, NDHWC: indexed by strides).
// Limits: GEMM sizes and image coordinates below 2^31 (offsets are 64-bit), grid.y/z <= 65535.
//
// The GEMM per group (G groups; grid.z), by direction:
//   Fwd  M = N*Do*Ho*Wo (output pixels)  N = K/G (output channels)  K = C/G*Z*Y*X
//   Bwd  M = N*Di*Hi*Wi / stride class   N = C/G (input channels)   K = K/G*Z*Y*X (reaching taps)
//   Wrw  M = K/G (output channels)       N = C/G*Z*Y*X              K = N*Do*Ho*Wo
//
// Axes (perf-db params in this order; the -D name of each is the axis name):
//   TB_M, TB_N, TB_K    block tile of the GEMM (-D)
//   THREAD_M, THREAD_N  register micro-tile per thread (-D)
//   VEC_K               elements per global load along GEMM K; solver only: it becomes
//                       -DTUNA_VEC_A/B per operand where the layout makes them contiguous and
//                       aligned, 1 elsewhere (the kernel never reads VEC_K itself)
//   STAGES              1 or 2 shared-memory buffers (-D)
//   SPLIT_K             Wrw only: the K = N*Do*Ho*Wo reduction split over blocks, summed with
//                       FP32 atomics; solver only: grid.z and a kernel argument, not a -D.
// Params written before the rename (tb_m,...,vec,stages[,split_k]) read unchanged: same order.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

// What an igemm config becomes for one problem: the GEMM shape and the derived kernel options.
// Exposed for tests; GetSolution is the only other user.
struct IgemmPlan {
  int64_t gm = 0, gn = 0, gk = 0;  // GEMM sizes per group (Bwd: per stride class)
  int64_t classes = 1;             // Bwd stride classes (sd*sh*sw), else 1
  int tb_m = 0, tb_n = 0, tb_k = 0, thread_m = 0, thread_n = 0, vec = 1, stages = 1, split_k = 1;
  int threads = 0;
  int korder = 0;             // see TUNA_KORDER in the kernel
  int vec_a = 1, vec_b = 1;   // per-operand vector width actually used
  bool kfast_a = false, kfast_b = false;
  int64_t k_tiles_per_split = 0;
  uint64_t shared_bytes = 0;
};

class IgemmSolver : public Solver {
 public:
  explicit IgemmSolver(Direction direction);

  std::string_view Name() const override { return name_; }
  Algorithm Algo() const override { return Algorithm::kImplicitGemm; }
  bool IsTunable() const override { return true; }
  bool IsGeneric(const Target&, const Problem&) const override { return true; }
  bool IsDynamic() const override { return true; }  // sizes are kernel arguments
  std::vector<Direction> Directions() const override { return {direction_}; }

  TUNA_TUNABLE_SOLVER_VERBS

  // The plan of a config that lies in Space() (no other validity checks).
  IgemmPlan Plan(const Target& target, const Problem& problem, const PerfConfig& config) const;

 private:
  Direction direction_;
  std::string name_;
};

}  // namespace tuna::solver

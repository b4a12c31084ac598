// TunaMfmaFwd (id 1024): MFMA implicit-GEMM forward convolution for FP16/BF16 NHWC on AMD CDNA
// gfx908 and gfx90a (kernels/conv/mfma_fwd.cu: v_mfma_f32_32x32x8f16, and for BF16
// v_mfma_f32_32x32x8bf16_1k on gfx90a / v_mfma_f32_32x32x4bf16 on gfx908, FP32 accumulate,
// wave64, register-staged LDS tiles, one or two stages). The structure of TunaFastTcFwd for AMD.
//
// COMPILE-ONLY, UNVERIFIED ON HARDWARE: no AMD GPU has run the kernel, so its results are
// unchecked. Checked without one (tests/solver/gpu_mfma_compile_test.cc): planning; hiprtc builds
// for gfx908 and gfx90a (defaults of ResNet-50 and edge problems, every valid config of one layer
// on gfx90a and a fourth of them in BF16 on both, no scratch); a CPU model of the kernel's index math against a direct convolution. Treat its
// outputs and timings as untested until a device check (reference comparison, as
// gpu_fast_correctness_test does for CUDA) has passed on an MI100 / MI200.
//
// Covers: conv mode, 2D, any groups / padding / stride / dilation / filter, x, w and y dense NHWC.
// C/G % 8 == 0 takes 16-byte vector loads (TUNA_VEC8=1); other C/G (the 3-channel stem) a scalar
// gather (TUNA_VEC8=0). Not applicable on CUDA, CPU or other AMD targets (no MFMA, or wave32).
// Sizes are kernel arguments (dynamic): one build per tile config, dtype and TUNA_VEC8.
//
// GEMM (forward only, per group; grid.z = G): M = N*Ho*Wo (output pixels), N = K/G (output
// channels), K = C/G*R*S. Axes (perf-db params in this order), each the kernel's -D name:
//   TB_M, TB_N, TB_K   block tile of the GEMM
//   WARP_M, WARP_N     wavefront tile (multiples of the 32x32 MFMA tile)
//   STAGES             LDS buffers: 1 (load, sync, compute) or 2 (double-buffered).
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class MfmaFwdSolver : public Solver {
 public:
  std::string_view Name() const override { return "TunaMfmaFwd"; }
  Algorithm Algo() const override { return Algorithm::kImplicitGemm; }
  bool IsTunable() const override { return true; }
  bool IsDynamic() const override { return true; }
  std::vector<Direction> Directions() const override { return {Direction::kForward}; }

  TUNA_TUNABLE_SOLVER_VERBS

  // True for the MFMA targets the kernel builds for ("gfx908", "gfx90a", with or without
  // ":feature" suffixes).
  static bool IsMfmaArch(std::string_view arch);
  // LDS bytes of a config: STAGES * (TB_M + TB_N) rows of TB_K + 4 16-bit elements.
  static uint64_t SharedBytes(int tb_m, int tb_n, int tb_k, int stages);
  // Estimated registers per lane: FP32 accumulators (16 per 32x32 MFMA tile; AGPRs on gfx908)
  // and the other VGPRs (staged 16-byte chunks, MFMA fragments, per-row gather state, ~32 fixed).
  struct Registers {
    int acc, other;
  };
  static Registers EstimateRegisters(int tb_m, int tb_n, int tb_k, int warp_m, int warp_n);
};

}  // namespace tuna::solver

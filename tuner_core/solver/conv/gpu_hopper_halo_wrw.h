// TunaHopperHaloWrw (id 1030): backward weights for stride-1 convolutions on Hopper's warpgroup
// tensor cores, FP16/BF16 NHWC, FP32 accumulation, on TunaHopperTmaWrw's kernel
// (kernels/conv/hopper_tma_wrw.cu) built with -DHALO=1. Where TunaHopperTmaWrw copies x once per
// filter tap through im2col boxes (the copy engine's slow path), this walk takes pixel tiles of
// TILE_H x TILE_W output pixels of one image and copies, per stage, x's halo for one filter column
// s — TILE_H + (R - 1) * dil_h rows of TILE_W pixels, one tiled box, zeros in the padding — and
// reads it for all R filter rows: row r's B operand starts r * dil_h * TILE_W pixel rows down
// (whole 8-row swizzle atoms, TILE_W % 8 == 0), which the wgmma descriptor's slab stride expresses,
// so one wgmma of N = R x 64 covers the R taps of a 64-channel chunk. dy comes as tiled boxes of
// TILE_W x TILE_H pixels (zeros past Wo and Ho, so a tile's padding pixels add nothing).
//
//   GEMM per group: M = K/G output channels, N = S x chunks N-tiles of R x 64 columns (filter
//   column s, 64 channels of C/G, all R filter rows), reduction over the pixel tiles.
//
// A 1x1 filter with a stride and no padding (ResNet's downsampling shortcuts) runs as the stride-1
// 1x1 problem on the view of x's every u-th row and v-th column: its tensor map's strides step
// the pixels (TunaHopperTmaWrw reads those layers through im2col boxes).
//
// Covers: conv mode, 2D, dense NHWC, stride 1 (or a 1x1 filter without padding), any padding and
// dilation the copy engine's box reaches, R <= 4 (TB_N = 64 R accumulator columns), groups with
// C/G % 8 == 0 and K/G % 8 == 0, sm_90 targets only. Deterministic split-K through the workspace as TunaHopperTmaWrw.
//
// Axes (perf-db params in this order): TB_M (64, 128, 256), WG_M (1, 2), STAGES (3..8), SPLIT_K
// (1..64, a kernel argument), TILE_W (8, 16, 32, 64; TILE_H = 64 / TILE_W). Derived: TB_N = 64 R,
// HALO_ROWS = TILE_H + (R - 1) dil_h. Thread-safe and stateless.
//
// Status (2026-12-04): compiles for sm_90a and plans; not yet run on a GPU, so a candidate
// (solver_sets.h: bench/kernels --candidates times it, tune jobs and the runtime never see it).
// Next, once it verifies: strided 3x3 layers by the copy engine's traversal stride. With element
// strides (1, u, u, 1) a box starting at any row and column reads every u-th pixel, so filter row
// r reads x rows u (ho + q_r) + rho_r (r dil_h - pad_h = u q_r + rho_r): the rows of one residue
// rho form one box of TILE_H + q_max - q_min rows, each row's view (q_r - q_min) TILE_W pixel rows
// down (3x3, stride 2, pad 1: rows 0 and 2 share the odd box, row 1 has the even one), one wgmma
// of N = 64 x (rows in the class) per class, the class pattern a -D option.
#pragma once

#include <cstdint>

#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class HopperHaloWrwSolver : public gpu::FastSolver {
 public:
  HopperHaloWrwSolver() : FastSolver("TunaHopperHaloWrw", Direction::kBackwardWeights, /*dynamic=*/true) {}

  TUNA_TUNABLE_SOLVER_VERBS

  // Dynamic shared memory: 1 KiB of alignment, per stage TB_M / 64 dy slabs of 8 KiB and the halo
  // copy (halo_rows x tile_w pixels of 128 bytes), two mbarriers per stage.
  static uint64_t SharedBytes(int tb_m, int tile_w, int halo_rows, int stages);
};

}  // namespace tuna::solver

// TunaHopperHaloWrw (id 1030): backward weights for stride-1 and -2 convolutions on Hopper's warpgroup
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
// Stride 2 (both directions): the copy engine's traversal stride (element strides 1, 2, 2, 1)
// reads every second pixel from any start, so filter row r reads x rows 2 (ho + q_r) + rho_r
// (r dil_h - pad_h = 2 q_r + rho_r): the rows of one residue rho form a class, copied as one box,
// each row viewed q_step box rows below the previous. With an odd dilation the even rows are one
// class and the odd rows another (3x3, pad 1: rows 0 and 2 share a box 9 rows tall for 8x8
// tiles, row 1 has its own), each class one wgmma (N = 64 x its rows; -DHALO_N0, -DHALO_N1);
// with an even dilation every row is in one class.
//
// A 1x1 filter with a stride and no padding (ResNet's downsampling shortcuts) runs as the stride-1
// 1x1 problem on the view of x's every u-th row and v-th column: its tensor map's strides step
// the pixels (TunaHopperTmaWrw reads those layers through im2col boxes).
//
// Covers: conv mode, 2D, dense NHWC, stride 1 or 2 (any stride for an unpadded 1x1 filter), any
// padding and dilation the copy engine's box reaches, R <= 4 (TB_N = 64 R accumulator columns),
// groups with C/G % 8 == 0 and K/G % 8 == 0, sm_90 targets only. Deterministic split-K through the
// workspace as TunaHopperTmaWrw.
//
// Axes (perf-db params in this order): TB_M (64, 128, 256), WG_M (1, 2), STAGES (3..8), SPLIT_K
// (1..64, a kernel argument), TILE_W (8, 16, 32, 64; TILE_H = 64 / TILE_W). Derived: TB_N = 64 R,
// HALO_ROWS = TILE_H + (rows in class 0 - 1) q_step (stride 1: TILE_H + (R - 1) dil_h).
// Thread-safe and stateless.
//
// Status (2026-12-04): compiles for sm_90a (no spills) and plans; not yet run on a GPU, so a
// candidate (solver_sets.h: bench/kernels --candidates times it, tune jobs and the runtime never see it).
#pragma once

#include <cstdint>

#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class HopperHaloWrwSolver : public gpu::FastSolver {
 public:
  HopperHaloWrwSolver() : FastSolver("TunaHopperHaloWrw", Direction::kBackwardWeights, /*dynamic=*/true) {}

  TUNA_TUNABLE_SOLVER_VERBS

  // Dynamic shared memory: 1 KiB of alignment, per stage TB_M / 64 dy slabs of 8 KiB and one halo
  // copy per row class (halo_rows x tile_w pixels of 128 bytes), two mbarriers per stage.
  static uint64_t SharedBytes(int tb_m, int tile_w, int halo_rows, int classes, int stages);
};

}  // namespace tuna::solver

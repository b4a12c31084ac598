// Winograd F(4x4, 3x3) transforms for FP32 NCHW 3x3 stride-1 convolutions (solver
// TunaWinogradF4x3, tuner_core/solver/conv/gpu_winograd.cc), strict FP32 arithmetic:
//
//   U[xi][ko][ci] = (G g G^T)[xi]          filter, 6x6 per (ko, ci)          tuna_wino_filter
//   V[xi][ci][t]  = (B^T d B)[xi]          6x6 input tile t (stride 4)       tuna_wino_input
//   M[xi][ko][t]  = sum_ci U[xi][ko][ci] V[xi][ci][t]   36 GEMMs on fast_simt_fwd.cu's kernel
//   y             = A^T M A                4x4 outputs per tile              tuna_wino_output
//
// with the matrices of WinoF4x3 (conv/winograd_math.h: points 0, 1, -1, 2, -1/2, infinity; why
// there); tiles, workspace layout and the backward-data rotation as F(2x2, 3x3)'s
// (conv/winograd_tiles.h). 4x fewer multiplies than direct in the GEMMs (2.25x for F(2x2)), at a
// larger rounding error (docs/BENCHMARKS.md, tests/solver/winograd_error_test.cc).
#include "common/portability.h"
#include "conv/winograd_tiles.h"

TUNA_WINO_ENTRIES(WinoF4x3)

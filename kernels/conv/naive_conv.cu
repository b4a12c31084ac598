// Naive direct convolution for CUDA and HIP: the ConvDirectNaiveConv{Fwd,Bwd,Wrw} solvers, and
// the GPU reference for problems too large for the CPU reference.
//
// One thread per element of the written tensor (y forward, dx backward data, dw backward
// weights), each summing its whole reduction (conv/naive_conv_impl.h); a grid-stride loop keeps
// any problem within the grid limits. Consecutive threads take consecutive addresses of the
// written tensor in its own layout. No -D of sizes: one code object per (data type, arch)
// serves every problem; sizes and strides are the 37 geometry arguments.
//
// Options: -DTUNA_DTYPE_FP32 | FP16 | BF16 | INT8 (INT8: forward only, int32 output).
// Arguments (all three entries): x, w, y buffers, then TUNA_CONV_GEOM_PARAMS.
#include "common/portability.h"
#include "conv/naive_conv_geom.h"
#include "conv/naive_conv_impl.h"

#define TUNA_NAIVE_GRID_STRIDE_LOOP(i, total)                                         \
  for (tuna_i64 i = (tuna_i64)blockIdx.x * blockDim.x + threadIdx.x; i < (total); \
       i += (tuna_i64)gridDim.x * blockDim.x)

TUNA_GLOBAL void naive_conv_fwd(const tuna_conv_in_t* x, const tuna_conv_in_t* w,
                                tuna_conv_out_t* y, TUNA_CONV_GEOM_PARAMS) {
  TunaConvGeom g;
  TUNA_CONV_GEOM_INIT(g);
  const tuna_i64 total = tuna_naive_fwd_count(g);
  TUNA_NAIVE_GRID_STRIDE_LOOP(i, total) { tuna_naive_fwd_one(g, x, w, y, i); }
}

TUNA_GLOBAL void naive_conv_bwd(tuna_conv_out_t* x, const tuna_conv_in_t* w,
                                const tuna_conv_in_t* y, TUNA_CONV_GEOM_PARAMS) {
  TunaConvGeom g;
  TUNA_CONV_GEOM_INIT(g);
  const tuna_i64 total = tuna_naive_bwd_count(g);
  TUNA_NAIVE_GRID_STRIDE_LOOP(i, total) { tuna_naive_bwd_one(g, x, w, y, i); }
}

TUNA_GLOBAL void naive_conv_wrw(const tuna_conv_in_t* x, tuna_conv_out_t* w,
                                const tuna_conv_in_t* y, TUNA_CONV_GEOM_PARAMS) {
  TunaConvGeom g;
  TUNA_CONV_GEOM_INIT(g);
  const tuna_i64 total = tuna_naive_wrw_count(g);
  TUNA_NAIVE_GRID_STRIDE_LOOP(i, total) { tuna_naive_wrw_one(g, x, w, y, i); }
}

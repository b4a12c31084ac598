// Naive direct convolution for CUDA and HIP: the ConvDirectNaiveConv{Fwd,Bwd,Wrw} solvers, and
// the GPU reference for problems too large for the CPU reference.
//
// One thread per element of the written tensor (y forward, dx backward data, dw backward
// weights), each summing its whole reduction (conv/naive_conv_impl.h); a grid-stride loop keeps
// any problem within the grid limits. Consecutive threads take consecutive addresses of the
// written tensor in its own layout. No -D of sizes or types: one code object per (direction, arch)
// serves every problem and data type, so a session of another type starts without compiling
// them (on an H100 host the first build of a session held its first device work back ~1 s;
// building every direction in one object took 1.5 s here against 0.5 s for one); sizes and
// strides are the 37 geometry arguments.
//
// Options: -DTUNA_NAIVE_DIR=0 (forward) | 1 (backward data) | 2 (backward weights).
// Entries: naive_conv_<fwd|bwd|wrw>_<fp32|fp16|bf16>, and naive_conv_fwd_int8 (int32 output).
// Arguments (every entry): x, w, y buffers, then TUNA_CONV_GEOM_PARAMS.
#define TUNA_DTYPE_ALL 1
#include "common/portability.h"
#include "conv/naive_conv_geom.h"
#include "conv/naive_conv_impl.h"

#define TUNA_NAIVE_GRID_STRIDE_LOOP(i, total)                                         \
  for (tuna_i64 i = (tuna_i64)blockIdx.x * blockDim.x + threadIdx.x; i < (total); \
       i += (tuna_i64)gridDim.x * blockDim.x)

// The entry of direction DIR (fwd, bwd, wrw) for inputs of type T, named naive_conv_DIR_SUFFIX;
// X, W, Y: the qualified pointer types of its three buffers.
#define TUNA_NAIVE_ENTRY(DIR, SUFFIX, T, X, W, Y)                                           \
  TUNA_GLOBAL void naive_conv_##DIR##_##SUFFIX(X* x, W* w, Y* y, TUNA_CONV_GEOM_PARAMS) {   \
    TunaConvGeom g;                                                                         \
    TUNA_CONV_GEOM_INIT(g);                                                                 \
    const tuna_i64 total = tuna_naive_##DIR##_count(g);                                     \
    TUNA_NAIVE_GRID_STRIDE_LOOP(i, total) { tuna_naive_##DIR##_one<T>(g, x, w, y, i); }     \
  }

// Forward reads x and w and writes y, backward data writes x, backward weights writes w.
#define TUNA_NAIVE_FWD(SUFFIX, T, OUT) TUNA_NAIVE_ENTRY(fwd, SUFFIX, T, const T, const T, OUT)
#define TUNA_NAIVE_BWD(SUFFIX, T) TUNA_NAIVE_ENTRY(bwd, SUFFIX, T, T, const T, const T)
#define TUNA_NAIVE_WRW(SUFFIX, T) TUNA_NAIVE_ENTRY(wrw, SUFFIX, T, const T, T, const T)

#if !defined(TUNA_NAIVE_DIR)
#error "define TUNA_NAIVE_DIR (0 forward, 1 backward data, 2 backward weights)"
#elif TUNA_NAIVE_DIR == 0
TUNA_NAIVE_FWD(fp32, float, float)
TUNA_NAIVE_FWD(fp16, tuna_half, tuna_half)
TUNA_NAIVE_FWD(bf16, tuna_bf16, tuna_bf16)
TUNA_NAIVE_FWD(int8, tuna_i8, tuna_i32)
#elif TUNA_NAIVE_DIR == 1
TUNA_NAIVE_BWD(fp32, float)
TUNA_NAIVE_BWD(fp16, tuna_half)
TUNA_NAIVE_BWD(bf16, tuna_bf16)
#else
TUNA_NAIVE_WRW(fp32, float)
TUNA_NAIVE_WRW(fp16, tuna_half)
TUNA_NAIVE_WRW(bf16, tuna_bf16)
#endif

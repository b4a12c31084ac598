// Direct forward convolution for thin inputs (C/G <= 8: RGB stems, thin grouped layers), the GPU
// kernel of TunaSmallCFwd (tuner_core/solver/conv/gpu_small_c_fwd.cc). Such problems are GEMMs with a
// reduction of only C/G x R x S and, as tensor-core tiles, mostly padding; here a block stages its
// input patch and filter slice as FP32 in shared memory once and every thread keeps PIX x
// K_PER_THREAD FP32 accumulators in registers. The body (tiling, thread order, options) is
// conv/small_c_fwd_impl.h, shared with the cpu backend's twin cpu_conv/small_c_fwd.cc.
//
// Entry tuna_small_c_fwd(x, w, y, hi, wi, ho, wo, kg, k_tiles, xs0, xs1, xs3, xs4, ws0, ws1, ws3,
// ws4, ys0, ys1, ys3, ys4): grid.x = N * ceil(Ho/TB_H) * ceil(Wo/TB_W), grid.y = G * k_tiles
// (k_tiles = ceil(K/G / TB_K)), block = (TB_K / K_PER_THREAD) * (TB_H * TB_W / PIX) threads.
#include "conv/tuna_conv_common.h"
#include "conv/small_c_fwd_impl.h"

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kScThreads) void tuna_small_c_fwd(
    const tuna_elem* x, const tuna_elem* w, tuna_elem* y, int hi, int wi, int ho, int wo, int kg, int k_tiles,
    tuna_i64 xs0, tuna_i64 xs1, tuna_i64 xs3, tuna_i64 xs4, tuna_i64 ws0, tuna_i64 ws1, tuna_i64 ws3, tuna_i64 ws4,
    tuna_i64 ys0, tuna_i64 ys1, tuna_i64 ys3, tuna_i64 ys4) {
  TUNA_SHARED __align__(16) float sx[kScXFloats];
  TUNA_SHARED __align__(16) float sw[kScWFloats];
  const ScArgs a = {x, w, y, hi, wi, ho, wo, kg, k_tiles, xs0, xs1, xs3, xs4, ws0, ws1, ws3, ws4, ys0, ys1, ys3, ys4};
  const ScBlock b = sc_block(a, TUNA_BID_X, TUNA_BID_Y);
  for (int i = TUNA_TID_X; i < kScXStaged; i += kScThreads) sc_stage_x(a, b, i, sx);
  for (int i = TUNA_TID_X; i < kScWFloats; i += kScThreads) sc_stage_w(a, b, i, sw);
  TUNA_SYNC();
  sc_compute(a, b, TUNA_TID_X, sx, sw);
}

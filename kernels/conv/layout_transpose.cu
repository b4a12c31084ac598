// Layout kernels of the channels-last adapter solvers (tuner_core/solver/conv/channels_last_adapter.h):
// a batched transpose (NCHW <-> NHWC) and a zero fill of a workspace region. The body and the
// launch geometry are conv/layout_transpose_impl.h, shared with the cpu backend's twin
// cpu_conv/layout_transpose.cc.
//
// Entry tuna_batched_transpose(src, dst, batches, rows, cols, tiles_cols): block kLtThreadsX x
//   kLtThreadsY, grid.x = ceil(rows / kLtTile) * tiles_cols, grid.y <= batches.
// Entry tuna_fill_zero(p, words): block kLtFillThreads, any grid.x (a grid-stride loop).
#include "common/portability.h"
#include "conv/layout_transpose_impl.h"

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kLtThreads) void tuna_batched_transpose(const tuna_lt_elem* src, tuna_lt_elem* dst,
                                                                      tuna_i64 batches, int rows, int cols,
                                                                      int tiles_cols) {
  TUNA_SHARED tuna_u32 tile[kLtTileSlots];
  const LtArgs a = {src, dst, batches, rows, cols, tiles_cols};
  for (tuna_i64 batch = TUNA_BID_Y; batch < batches; batch += TUNA_GDIM_Y) {
    const LtTile t = lt_tile(a, TUNA_BID_X, batch);
    lt_load(a, t, TUNA_TID_X, TUNA_TID_Y, tile);
    TUNA_SYNC();
    lt_store(a, t, TUNA_TID_X, TUNA_TID_Y, tile);
    TUNA_SYNC();
  }
}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kLtFillThreads) void tuna_fill_zero(tuna_u32* p, tuna_i64 words) {
  lt_fill_zero(p, words, (tuna_i64)TUNA_BID_X * kLtFillThreads + TUNA_TID_X, (tuna_i64)TUNA_GDIM_X * kLtFillThreads);
}

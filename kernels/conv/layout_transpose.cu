// Layout kernels of the channels-last adapter solvers (tuner_core/solver/conv/channels_last_adapter.h):
// a batched transpose (NCHW <-> NHWC) and a zero fill of a workspace region. The body and the
// launch geometry are conv/layout_transpose_impl.h, shared with the cpu backend's twin
// cpu_conv/layout_transpose.cc.
//
// Entries tuna_batched_transpose (element words) and tuna_batched_transpose_packed (32-bit words;
//   rows and cols multiples of 4 / TUNA_ELEM_BYTES) (src, dst, batches, rows, cols, tiles_cols):
//   block kLtThreadsX x kLtThreadsY, grid.x = ceil(rows / kTile) * tiles_cols, grid.y <= batches.
// Entries tuna_transpose_runs (element words) and tuna_transpose_runs_packed (32-bit words; run
//   * TUNA_ELEM_BYTES a multiple of 4) (src, dst, batches, rows, cols, run in words): block
//   kLtRunThreads, grid.x = rows * cols, grid.y <= batches.
// Entry tuna_pad_rows(src, dst, rows, src_cols, dst_cols): block kLtFillThreads, any grid.x (a
//   grid-stride loop); pads (dst_cols > src_cols) or drops (dst_cols < src_cols) each row's tail.
// Entries tuna_lattice_rows (element words) and tuna_lattice_rows_packed (32-bit words; inner > 1
//   only) (src, dst, rows, full D, H, W, lattice D, H, W, strides D, H, W, inner, gather): block
//   32 x kLtLatticeWarps, any grid.x; warp w of block b takes dst rows b * kLtLatticeWarps + w,
//   then + grid.x * kLtLatticeWarps, ...
// Entry tuna_fill_zero(p, words): block kLtFillThreads, any grid.x (a grid-stride loop).
#include "common/portability.h"
#include "conv/layout_transpose_impl.h"

template <typename W>
TUNA_DEVICE void lt_transpose_blocks(const LtArgs& a) {
  TUNA_SHARED tuna_u32 tile[LtWord<W>::kSlots];
  for (tuna_i64 batch = TUNA_BID_Y; batch < a.batches; batch += TUNA_GDIM_Y) {
    const LtTile t = lt_tile<W>(a, TUNA_BID_X, batch);
    lt_load<W>(a, t, TUNA_TID_X, TUNA_TID_Y, tile);
    TUNA_SYNC();
    lt_store<W>(a, t, TUNA_TID_X, TUNA_TID_Y, tile);
    TUNA_SYNC();
  }
}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kLtThreads) void tuna_batched_transpose(const tuna_lt_elem* src, tuna_lt_elem* dst,
                                                                      tuna_i64 batches, int rows, int cols,
                                                                      int tiles_cols) {
  lt_transpose_blocks<tuna_lt_elem>({src, dst, batches, rows, cols, tiles_cols});
}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kLtThreads) void tuna_batched_transpose_packed(const tuna_lt_elem* src, tuna_lt_elem* dst,
                                                                             tuna_i64 batches, int rows, int cols,
                                                                             int tiles_cols) {
  lt_transpose_blocks<tuna_u32>({src, dst, batches, rows, cols, tiles_cols});
}

template <typename W>
TUNA_DEVICE void lt_move_runs(const W* src, W* dst, tuna_i64 batches, int rows, int cols, tuna_i64 run) {
  for (tuna_i64 batch = TUNA_BID_Y; batch < batches; batch += TUNA_GDIM_Y) {
    lt_move_run<W>(src, dst, batch, rows, cols, run, TUNA_BID_X, TUNA_TID_X, kLtRunThreads);
  }
}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kLtRunThreads) void tuna_transpose_runs(const tuna_lt_elem* src, tuna_lt_elem* dst,
                                                                      tuna_i64 batches, int rows, int cols,
                                                                      tuna_i64 run) {
  lt_move_runs<tuna_lt_elem>(src, dst, batches, rows, cols, run);
}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kLtRunThreads) void tuna_transpose_runs_packed(const tuna_u32* src, tuna_u32* dst,
                                                                             tuna_i64 batches, int rows, int cols,
                                                                             tuna_i64 run) {
  lt_move_runs<tuna_u32>(src, dst, batches, rows, cols, run);
}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kLtFillThreads) void tuna_pad_rows(const tuna_lt_elem* src, tuna_lt_elem* dst,
                                                                    tuna_i64 rows, int src_cols, int dst_cols) {
  lt_pad_rows(src, dst, rows, src_cols, dst_cols, (tuna_i64)TUNA_BID_X * kLtFillThreads + TUNA_TID_X,
              (tuna_i64)TUNA_GDIM_X * kLtFillThreads);
}

template <typename W>
TUNA_DEVICE void lt_lattice_rows(const W* src, W* dst, int rows, const LtLattice& g, int gather) {
  const int warp = TUNA_TID_X / 32, lane = TUNA_TID_X % 32;
  for (int row = TUNA_BID_X * kLtLatticeWarps + warp; row < rows; row += TUNA_GDIM_X * kLtLatticeWarps) {
    lt_lattice_row<W>(src, dst, g, gather, row, lane, 32);
  }
}

#define TUNA_LT_LATTICE_ARGS                                                                                  \
  int rows, int full_d, int full_h, int full_w, int lat_d, int lat_h, int lat_w, int sd, int sh, int sw, int inner, \
      int gather
#define TUNA_LT_LATTICE {{full_d, full_h, full_w}, {lat_d, lat_h, lat_w}, {sd, sh, sw}, inner}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(32 * kLtLatticeWarps) void tuna_lattice_rows(const tuna_lt_elem* src, tuna_lt_elem* dst,
                                                                           TUNA_LT_LATTICE_ARGS) {
  lt_lattice_rows<tuna_lt_elem>(src, dst, rows, TUNA_LT_LATTICE, gather);
}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(32 * kLtLatticeWarps) void tuna_lattice_rows_packed(const tuna_u32* src, tuna_u32* dst,
                                                                                  TUNA_LT_LATTICE_ARGS) {
  lt_lattice_rows<tuna_u32>(src, dst, rows, TUNA_LT_LATTICE, gather);
}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kLtFillThreads) void tuna_fill_zero(tuna_u32* p, tuna_i64 words) {
  lt_fill_zero(p, words, (tuna_i64)TUNA_BID_X * kLtFillThreads + TUNA_TID_X, (tuna_i64)TUNA_GDIM_X * kLtFillThreads);
}

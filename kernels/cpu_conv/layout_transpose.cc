// The cpu backend's twin of conv/layout_transpose.cu: the same body (conv/layout_transpose_impl.h),
// entries, arguments and grid. A call runs one block: every thread's loads into the block's tile,
// then every thread's stores (the body's one barrier lies between the two).
#include "cpu/cpu_kernel.h"
#include "cpu_conv/cpu_portability.h"

#include "conv/layout_transpose_impl.h"

template <typename W>
static void lt_transpose_block(const TunaCpuLaunch* launch, void** args) {
  LtArgs a;
  a.src = tuna_arg<const tuna_lt_elem*>(args, 0);
  a.dst = tuna_arg<tuna_lt_elem*>(args, 1);
  a.batches = tuna_arg<tuna_i64>(args, 2);
  a.rows = tuna_arg<int>(args, 3);
  a.cols = tuna_arg<int>(args, 4);
  a.tiles_cols = tuna_arg<int>(args, 5);
  tuna_u32 tile[LtWord<W>::kSlots];
  for (tuna_i64 batch = launch->block_idx.y; batch < a.batches; batch += launch->grid.y) {
    const LtTile t = lt_tile<W>(a, (int)launch->block_idx.x, batch);
    for (int ty = 0; ty < kLtThreadsY; ++ty)
      for (int tx = 0; tx < kLtThreadsX; ++tx) lt_load<W>(a, t, tx, ty, tile);
    for (int ty = 0; ty < kLtThreadsY; ++ty)
      for (int tx = 0; tx < kLtThreadsX; ++tx) lt_store<W>(a, t, tx, ty, tile);
  }
}

TUNA_CPU_KERNEL(tuna_batched_transpose) { lt_transpose_block<tuna_lt_elem>(launch, args); }
TUNA_CPU_KERNEL(tuna_batched_transpose_packed) { lt_transpose_block<tuna_u32>(launch, args); }

template <typename W>
static void lt_move_runs_block(const TunaCpuLaunch* launch, void** args) {
  const W* src = tuna_arg<const W*>(args, 0);
  W* dst = tuna_arg<W*>(args, 1);
  const tuna_i64 batches = tuna_arg<tuna_i64>(args, 2);
  const int rows = tuna_arg<int>(args, 3), cols = tuna_arg<int>(args, 4);
  const tuna_i64 run = tuna_arg<tuna_i64>(args, 5);
  for (tuna_i64 batch = launch->block_idx.y; batch < batches; batch += launch->grid.y) {
    for (int tid = 0; tid < kLtRunThreads; ++tid) {
      lt_move_run<W>(src, dst, batch, rows, cols, run, (int)launch->block_idx.x, tid, kLtRunThreads);
    }
  }
}

TUNA_CPU_KERNEL(tuna_transpose_runs) { lt_move_runs_block<tuna_lt_elem>(launch, args); }
TUNA_CPU_KERNEL(tuna_transpose_runs_packed) { lt_move_runs_block<tuna_u32>(launch, args); }

TUNA_CPU_KERNEL(tuna_pad_rows) {
  const tuna_lt_elem* src = tuna_arg<const tuna_lt_elem*>(args, 0);
  tuna_lt_elem* dst = tuna_arg<tuna_lt_elem*>(args, 1);
  const tuna_i64 rows = tuna_arg<tuna_i64>(args, 2);
  const int src_cols = tuna_arg<int>(args, 3), dst_cols = tuna_arg<int>(args, 4);
  const tuna_i64 step = (tuna_i64)launch->grid.x * kLtFillThreads;
  for (int tid = 0; tid < kLtFillThreads; ++tid) {
    lt_pad_rows(src, dst, rows, src_cols, dst_cols, (tuna_i64)launch->block_idx.x * kLtFillThreads + tid, step);
  }
}

template <typename W>
static void lt_lattice_block(const TunaCpuLaunch* launch, void** args) {
  const W* src = tuna_arg<const W*>(args, 0);
  W* dst = tuna_arg<W*>(args, 1);
  const int rows = tuna_arg<int>(args, 2);
  LtLattice g;
  for (int i = 0; i < 3; ++i) {
    g.full[i] = tuna_arg<int>(args, 3 + i);
    g.lat[i] = tuna_arg<int>(args, 6 + i);
    g.stride[i] = tuna_arg<int>(args, 9 + i);
  }
  g.inner = tuna_arg<int>(args, 12);
  const int gather = tuna_arg<int>(args, 13);
  for (int row = (int)launch->block_idx.x * kLtLatticeWarps; row < rows; row += (int)launch->grid.x * kLtLatticeWarps) {
    for (int warp = 0; warp < kLtLatticeWarps && row + warp < rows; ++warp) {
      for (int lane = 0; lane < 32; ++lane) lt_lattice_row<W>(src, dst, g, gather, row + warp, lane, 32);
    }
  }
}

TUNA_CPU_KERNEL(tuna_lattice_rows) { lt_lattice_block<tuna_lt_elem>(launch, args); }
TUNA_CPU_KERNEL(tuna_lattice_rows_packed) { lt_lattice_block<tuna_u32>(launch, args); }

TUNA_CPU_KERNEL(tuna_fill_zero) {
  tuna_u32* p = tuna_arg<tuna_u32*>(args, 0);
  const tuna_i64 words = tuna_arg<tuna_i64>(args, 1);
  const tuna_i64 step = (tuna_i64)launch->grid.x * kLtFillThreads;
  for (int tid = 0; tid < kLtFillThreads; ++tid) {
    lt_fill_zero(p, words, (tuna_i64)launch->block_idx.x * kLtFillThreads + tid, step);
  }
}

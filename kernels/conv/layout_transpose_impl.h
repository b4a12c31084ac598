// The body of the layout kernels (conv/layout_transpose.cu for CUDA and HIP, its cpu-backend twin
// cpu_conv/layout_transpose.cc), used by the channels-last adapter solvers
// (tuner_core/solver/conv/channels_last_adapter.h) to move a tensor between NCHW and NHWC.
//
// A batched transpose: `src` holds `batches` row-major matrices of `rows` x `cols` elements, `dst`
// receives their transposes (cols x rows), batch after batch. NCHW -> NHWC is rows = channels,
// cols = pixels; NHWC -> NCHW the reverse. Elements are moved as raw bits of TUNA_ELEM_BYTES
// (1, 2 or 4) bytes: one build serves every data type of that width.
//
// A block moves one square tile of kLtTile x kLtTile elements of one matrix: kLtThreadsX x
// kLtThreadsY threads read the tile's source rows (coalesced along `cols`) into shared memory, then
// write the destination's rows (coalesced along `rows`). The tile is staged in 32-bit slots with one
// slot of padding per row, so both phases are free of bank conflicts for every element width.
// Grid: x = tiles of the matrix (ceil(rows / kLtTile) x ceil(cols / kLtTile), column tiles fastest),
// y = the batches, each block looping over batches y, y + grid.y, ...
// Include after the portability header of the build (common/portability.h or
// cpu_conv/cpu_portability.h).
#pragma once

#ifndef TUNA_ELEM_BYTES
#error "TUNA_ELEM_BYTES must be defined (1, 2 or 4)"
#endif

#if TUNA_ELEM_BYTES == 1
typedef tuna_u8 tuna_lt_elem;
#elif TUNA_ELEM_BYTES == 2
typedef tuna_u16 tuna_lt_elem;
#elif TUNA_ELEM_BYTES == 4
typedef tuna_u32 tuna_lt_elem;
#else
#error "unsupported TUNA_ELEM_BYTES"
#endif

enum { kLtTile = 32, kLtThreadsX = 32, kLtThreadsY = 8, kLtThreads = kLtThreadsX * kLtThreadsY };
enum { kLtTileSlots = kLtTile * (kLtTile + 1) };  // 32-bit slots of the staged tile
enum { kLtFillThreads = 256 };

struct LtArgs {
  const tuna_lt_elem* src;
  tuna_lt_elem* dst;
  tuna_i64 batches;
  int rows, cols;
  int tiles_cols;  // ceil(cols / kLtTile)
};

struct LtTile {
  const tuna_lt_elem* src;  // the batch's source matrix
  tuna_lt_elem* dst;        // the batch's destination matrix
  int row0, col0;           // the tile's first source row and column
};

TUNA_DEVICE LtTile lt_tile(const LtArgs& a, int tile, tuna_i64 batch) {
  const tuna_i64 matrix = batch * (tuna_i64)a.rows * a.cols;
  LtTile t;
  t.src = a.src + matrix;
  t.dst = a.dst + matrix;
  t.row0 = (tile / a.tiles_cols) * kLtTile;
  t.col0 = (tile % a.tiles_cols) * kLtTile;
  return t;
}

// Thread (tx, ty) reads source rows row0 + ty, row0 + ty + kLtThreadsY, ... at column col0 + tx.
TUNA_DEVICE void lt_load(const LtArgs& a, const LtTile& t, int tx, int ty, tuna_u32* tile) {
  const int col = t.col0 + tx;
  if (col >= a.cols) return;
  for (int j = ty; j < kLtTile; j += kLtThreadsY) {
    const int row = t.row0 + j;
    if (row < a.rows) tile[j * (kLtTile + 1) + tx] = (tuna_u32)t.src[(tuna_i64)row * a.cols + col];
  }
}

// Thread (tx, ty) writes destination rows col0 + ty, col0 + ty + kLtThreadsY, ... (source columns) at
// destination column row0 + tx (a source row).
TUNA_DEVICE void lt_store(const LtArgs& a, const LtTile& t, int tx, int ty, const tuna_u32* tile) {
  const int row = t.row0 + tx;
  if (row >= a.rows) return;
  for (int j = ty; j < kLtTile; j += kLtThreadsY) {
    const int col = t.col0 + j;
    if (col < a.cols) t.dst[(tuna_i64)col * a.rows + row] = (tuna_lt_elem)tile[tx * (kLtTile + 1) + j];
  }
}

// Zeroes words first, first + step, ... below `words` of `p` (a grid-stride loop's share).
TUNA_DEVICE void lt_fill_zero(tuna_u32* p, tuna_i64 words, tuna_i64 first, tuna_i64 step) {
  for (tuna_i64 i = first; i < words; i += step) p[i] = 0;
}

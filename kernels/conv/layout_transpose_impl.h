// The body of the layout kernels (conv/layout_transpose.cu for CUDA and HIP, its cpu-backend twin
// cpu_conv/layout_transpose.cc), used by the channels-last adapter solvers
// (tuner_core/solver/conv/channel_order_adapter.h) to move a tensor between NCHW and NHWC, and by
// the depth-as-batch adapters to move NCDHW tensors to (N, D, C, H, W) and back, and by the strided
// adapters to copy a strided 1x1 layer's lattice of x out and back.
//
// A batched transpose: `src` holds `batches` row-major matrices of `rows` x `cols` elements, `dst`
// receives their transposes (cols x rows), batch after batch. NCHW -> NHWC is rows = channels,
// cols = pixels; NHWC -> NCHW the reverse. Elements are moved as raw bits of TUNA_ELEM_BYTES
// (1, 2 or 4) bytes: one build serves every data type of that width.
//
// Memory is accessed in words of type W: the element itself, or (the packed variant, where rows
// and cols are multiples of LtWord<W>::kPack) a 32-bit word of kPack elements, so that a warp
// instruction moves 128 bytes and a thread keeps more bytes in flight. A block moves one square
// tile of LtWord<W>::kTile (kLtTile words) elements of one matrix: kLtThreadsX x kLtThreadsY
// threads read source word tx of the tile's rows ty, ty + kLtThreadsY, ... (coalesced along
// `cols`) into shared memory, then write destination word tx — kPack consecutive source rows —
// of the destination rows ty, ty + kLtThreadsY, ... (coalesced along `rows`). The tile is staged
// in 32-bit slots, one word per slot and one slot of padding per row: the load phase is free of
// bank conflicts, the store phase has kPack-way conflicts at most.
// Grid: x = tiles of the matrix (row tiles x tiles_cols, column tiles fastest), y = the batches,
// each block looping over batches y, y + grid.y, ...
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

#if TUNA_ELEM_BYTES == 4
#define TUNA_LT_ELEM_MASK 0xffffffffu
#else
#define TUNA_LT_ELEM_MASK ((1u << (8 * TUNA_ELEM_BYTES)) - 1u)
#endif

enum { kLtTile = 32, kLtThreadsX = 32, kLtThreadsY = 8, kLtThreads = kLtThreadsX * kLtThreadsY };
enum { kLtFillThreads = 256, kLtRunThreads = 256, kLtLatticeWarps = 8 };

// Elements per memory word W, and a tile's side in elements.
template <typename W>
struct LtWord {
  enum { kPack = sizeof(W) / TUNA_ELEM_BYTES, kTile = kLtTile * kPack, kSlots = kTile * (kLtTile + 1) };
};

struct LtArgs {
  const tuna_lt_elem* src;
  tuna_lt_elem* dst;
  tuna_i64 batches;
  int rows, cols;
  int tiles_cols;  // ceil(cols / LtWord<W>::kTile)
};

struct LtTile {
  const tuna_lt_elem* src;  // the batch's source matrix
  tuna_lt_elem* dst;        // the batch's destination matrix
  int row0, col0;           // the tile's first source row and column
};

template <typename W>
TUNA_DEVICE LtTile lt_tile(const LtArgs& a, int tile, tuna_i64 batch) {
  const tuna_i64 matrix = batch * (tuna_i64)a.rows * a.cols;
  LtTile t;
  t.src = a.src + matrix;
  t.dst = a.dst + matrix;
  t.row0 = (tile / a.tiles_cols) * LtWord<W>::kTile;
  t.col0 = (tile % a.tiles_cols) * LtWord<W>::kTile;
  return t;
}

template <typename W>
TUNA_DEVICE void lt_load(const LtArgs& a, const LtTile& t, int tx, int ty, tuna_u32* tile) {
  const int col = t.col0 + tx * LtWord<W>::kPack;
  if (col >= a.cols) return;
  const W* src = (const W*)t.src;
  const int words_per_row = a.cols / LtWord<W>::kPack;
  for (int j = ty; j < LtWord<W>::kTile; j += kLtThreadsY) {
    const int row = t.row0 + j;
    if (row < a.rows) tile[j * (kLtTile + 1) + tx] = (tuna_u32)src[(tuna_i64)row * words_per_row + col / LtWord<W>::kPack];
  }
}

template <typename W>
TUNA_DEVICE void lt_store(const LtArgs& a, const LtTile& t, int tx, int ty, const tuna_u32* tile) {
  enum { kPack = LtWord<W>::kPack };
  const int row = t.row0 + tx * kPack;  // the first of the word's source rows
  if (row >= a.rows) return;
  W* dst = (W*)t.dst;
  const int words_per_row = a.rows / kPack;
  for (int j = ty; j < LtWord<W>::kTile; j += kLtThreadsY) {
    const int col = t.col0 + j;
    if (col >= a.cols) continue;
    tuna_u32 word = 0;
    for (int q = 0; q < kPack; ++q) {  // element j of source row tx * kPack + q, little-endian
      const tuna_u32 w = tile[(tx * kPack + q) * (kLtTile + 1) + j / kPack];
      word |= ((w >> (8 * TUNA_ELEM_BYTES * (j % kPack))) & TUNA_LT_ELEM_MASK) << (8 * TUNA_ELEM_BYTES * q);
    }
    dst[(tuna_i64)col * words_per_row + row / kPack] = (W)word;
  }
}

// A batched transpose of runs (the depth-as-batch adapter, tuner_core/solver/conv/depth_batch_adapter.h):
// `src` holds `batches` row-major matrices of rows x cols runs of `run` words W each (a run: one
// channel's H*W pixels); `dst` receives them as cols x rows matrices of the same runs. NCDHW ->
// (N, D, C, H, W) is rows = C, cols = D; back, rows = D, cols = C. Block x of a batch moves run
// x = (row, col), its threads striding over the run's words.
template <typename W>
TUNA_DEVICE void lt_move_run(const W* src, W* dst, tuna_i64 batch, int rows, int cols, tuna_i64 run, int rc,
                             int first, int step) {
  const int row = rc / cols, col = rc - row * cols;
  const tuna_i64 matrix = batch * (tuna_i64)rows * cols;
  const W* from = src + (matrix + (tuna_i64)row * cols + col) * run;
  W* to = dst + (matrix + (tuna_i64)col * rows + row) * run;
  for (tuna_i64 i = first; i < run; i += step) to[i] = from[i];
}

// Rows of channels padded and unpadded (the channel-pad adapters, tuner_core/solver/conv/channel_pad_adapter.h):
// element i of dst's rows x dst_cols, for i = first, first + step, ...: src[row][col] where col <
// src_cols, else zero (pad: dst_cols > src_cols; unpad: dst_cols < src_cols drops the tail).
TUNA_DEVICE void lt_pad_rows(const tuna_lt_elem* src, tuna_lt_elem* dst, tuna_i64 rows, int src_cols, int dst_cols,
                             tuna_i64 first, tuna_i64 step) {
  const tuna_i64 n = rows * dst_cols;
  for (tuna_i64 i = first; i < n; i += step) {
    const tuna_i64 row = i / dst_cols;
    const int col = (int)(i - row * dst_cols);
    dst[i] = col < src_cols ? src[row * src_cols + col] : (tuna_lt_elem)0;
  }
}

// Strided 1x1 layers (the strided adapters, tuner_core/solver/conv/strided_adapter.h): a tensor
// seen as [outer][D][H][W][inner] words (channels-first: outer = N*C, inner = one element;
// channels-last: outer = N, inner = the C elements, or their 32-bit words) and its lattice, the
// frames, rows and columns at multiples of the strides ([outer][Dl][Hl][Wl][inner]).
struct LtLattice {
  int full[3], lat[3], stride[3], inner;
};

// Row `row` of dst, words first, first + step, ... of the row (inner == 1: its columns; else each
// column's inner words). Gather: dst is the lattice (rows outer x Dl x Hl of Wl columns), read from
// the tensor src. Scatter: dst is the tensor (rows outer x D x H of W columns), the lattice src's
// words on the lattice and zero elsewhere.
template <typename W>
TUNA_DEVICE void lt_lattice_row(const W* src, W* dst, const LtLattice& g, int gather, int row, int first, int step) {
  const int* rows = gather ? g.lat : g.full;
  const int h = row % rows[1], t = row / rows[1];
  const int d = t % rows[0], outer = t / rows[0];
  const int cols = gather ? g.lat[2] : g.full[2], inner = g.inner;
  W* to = dst + (tuna_i64)row * cols * inner;
  tuna_i64 from = 0;  // the source row's first word
  int on = 1;         // scatter: this row of the tensor is on the lattice
  if (gather) {
    from = (((tuna_i64)outer * g.full[0] + d * g.stride[0]) * g.full[1] + h * g.stride[1]) * g.full[2] * inner;
  } else {
    on = d % g.stride[0] == 0 && h % g.stride[1] == 0;
    from = (((tuna_i64)outer * g.lat[0] + d / g.stride[0]) * g.lat[1] + h / g.stride[1]) * g.lat[2] * inner;
  }
  if (inner == 1) {
    for (int w = first; w < cols; w += step) {
      if (gather) {
        to[w] = src[from + (tuna_i64)w * g.stride[2]];
      } else {
        to[w] = on && w % g.stride[2] == 0 ? src[from + w / g.stride[2]] : (W)0;
      }
    }
    return;
  }
  for (int w = 0; w < cols; ++w) {
    const int keep = gather || (on && w % g.stride[2] == 0);
    const tuna_i64 col = from + (tuna_i64)(gather ? w * g.stride[2] : w / g.stride[2]) * inner;
    for (int i = first; i < inner; i += step) to[w * inner + i] = keep ? src[col + i] : (W)0;
  }
}

// Zeroes words first, first + step, ... below `words` of `p` (a grid-stride loop's share).
TUNA_DEVICE void lt_fill_zero(tuna_u32* p, tuna_i64 words, tuna_i64 first, tuna_i64 step) {
  for (tuna_i64 i = first; i < words; i += step) p[i] = 0;
}

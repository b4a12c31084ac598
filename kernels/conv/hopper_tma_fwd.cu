// Hopper (sm_90a) warp-specialised, persistent implicit-GEMM forward convolution fed by the
// tensor memory accelerator, FP16/BF16, NHWC, grouped, for the solver TunaHopperTmaFwd
// (tuner_core/solver/conv/gpu_hopper_tma_fwd.cc).
//
//   GEMM per group g:  M = N*Ho*Wo (pixels)   N = K/G (output channels)   K = R*S*C/G (c fastest)
//
// The grid is persistent: block b computes output tiles b, b + gridDim.x, ... of the
// groups x M-tiles x N-tiles sequence (N-tiles fastest, so the blocks resident at one time share
// their A rows and every B row through L2). A block is one producer warpgroup and WG_M consumer
// warpgroups:
//   * one producer thread (its warpgroup's registers handed to the consumers by setmaxnreg)
//     issues, per k-tile, an im2col TMA copy of A (TB_M output pixels x TB_K channels of one
//     filter tap, gathered from x with padding, strides and dilation by the copy engine) and a
//     tiled TMA copy of B (TB_N rows x TB_K of w), into a STAGES-deep ring of shared tiles
//     swizzled by their row width (TB_K 64: 128-byte rows, 128-byte swizzle; TB_K 32: 64-byte
//     rows, 64-byte swizzle), both completing on the slot's `full` mbarrier; it runs ahead across
//     tile boundaries, bounded by the slots' `empty` mbarriers;
//   * each consumer warpgroup owns TB_M/WG_M rows of the tile: it waits on `full`, issues the
//     k-tile's wgmmas, and once the wgmmas of the previous k-tile have retired (wait_group 1)
//     arrives on that slot's `empty` mbarrier (TB_K / 16 k16 steps per k-tile). After a tile's
//     last k-tile each warp writes its 16 rows through a private shared staging slab as 16-byte
//     coalesced stores, while the producer already fills the ring for the next tile.
// No block-wide barrier after the start; no workspace; each output element is written once by
// one thread, so results are deterministic.
// Split-K (SPLIT_K 2): the two blocks of a thread-block cluster take the same tiles (cluster c:
// tiles c, c + clusters, ...), block `rank` the k-tiles [k_tiles * rank / 2, k_tiles * (rank + 1)
// / 2) of each. After its wgmmas each consumer thread stores the accumulators of the peer's half
// of the columns into the peer's receive slot (distributed shared memory, 16-byte stores in
// fragment order) and arrives on the peer's `recv_full` mbarrier; it then waits on its own,
// adds the peer's partials to its half (one fixed order: deterministic), arrives on the peer's
// `recv_free` and writes its half of the columns. For layers whose unsplit tiles leave SMs idle
// and whose k-loop is long (the solver offers it from 64 k-tiles: the exchange costs ~1-2 us).
//
// Needs C/G % 8 == 0 (a k-tile is TB_K channels of one filter tap; a tap's last chunk may be
// partial: the copy engine fills zeros past C/G in w's box); other shapes go to hopper_fwd.cu.
// Sizes are run-time arguments: one build serves every problem with the same options.
// Options: TB_M (64, 128, 256), TB_N (a multiple of 32 up to 256; also the wgmma N: 96, 160, 192,
//          224 for K/G they tile with less padding or fewer N-tiles), TB_K (64 when left out;
//          32: half the bytes and wgmmas per k-tile where C/G % 64 is 1..32, e.g. C/G = 32, and
//          the solver passes -DTB_K only then), WG_M (1, 2), STAGES (3..8), PINGPONG (0; 1 with
//          WG_M 1: two consumer warpgroups take alternate tiles of the block's sequence, each its
//          whole tile, so one's epilogue overlaps the other's wgmmas), TUNA_DTYPE (1 fp16,
//          2 bf16), PHASED (0: one output phase whose y pixel is the GEMM row — forward, stride-1
//          backward data — with no phase table lookups; 1: up to four sub-pixel phases), VEC_OUT
//          (1: K and K/G are multiples of 8, the epilogue stores whole 16-byte chunks only).
//          SPLIT_K (1; 2: see above; not with PINGPONG; the launch groups blocks in clusters of 2),
//          PARTIAL_K (0; 1 where C/G % TB_K != 0: a tap's last chunk issues only the k16 steps that
//          hold channels, e.g. C = 80 with TB_K 64: 5 k16 steps per tap instead of 8),
//          FIX_SIZES (0; 1 with PHASED 0 and TUNA_FIX_{N,CG,K,HY,WY,R,S,G,KG} and TUNA_FIX_PHASE, the
//          28 words of the one phase): the sizes as constants instead of the arguments, a build
//          for one problem (the tuner's finishing step keeps it where it is faster; kernels_bench
//          --fixed-sizes prices one build serving every problem). No divide
//          instruction decodes a tile: the phase table carries the divisors' magic numbers.
//          LAST_K (16, 32; with TB_K 64, PHASED 0, where C/G % 64 is 1..32: a tap's last chunk
//          copied as LAST_K channels in 32- or 64-byte rows through two more tensor maps, e.g.
//          C = 80 copies 64 + 16 channels per tap instead of 128; TUNA_NO_LAST_K: off, maps kept).
//          FLIP_W (0; 1: backward data reading the problem's own filter in place, no rotated copy:
//          w (C, R, S, K/G) as the kernel calls the sizes — dy's channels C are the filter's
//          rows, dx's channels K its columns — is read with its taps rotated (tap t of the
//          kernel's filter is w's tap R*S-1-t) and transposed: B arrives N-major, per
//          kBSlabN-column slab of the tile (64 columns where TB_N % 64 == 0, else 32) a box of
//          TB_K filter rows x kBSlabN columns in the swizzle of that width, and wgmma reads it
//          with imm-trans-b = 1).
//          NCHW_1X1 (0; 1: a 1x1, stride-1, unpadded, ungrouped convolution of NCHW tensors as one
//          GEMM per image, y_n (K x P) = w (K x C) x_n (C x P), P = H*W pixels: the kernel's
//          "groups" are the images, its GEMM rows the output channels, its columns the pixels.
//          A is w through a tiled map (rows of TB_K channels, as B is otherwise), B is x_n read
//          N-major as FLIP_W reads the filter (boxes of kBSlabN pixels x TB_K channels of one
//          image), and each output row is a run of P pixels of y_n. Backward data runs the same
//          with w transposed (tuna_flip_filter) and dy as x. The sizes as the kernel takes them:
//          n_img 1, C/G = C, Wy = K (rows per image), G = images, K/G = P.)
//          SPATIAL3 (0; 1: a 3-D forward convolution of NDHWC tensors, one phase: the phase's rows
//          n_i are the output's depth x height rows (Do * Ho), its taps_h / taps_w the filter's
//          R / S, and the phase table's depth words (TunaPhases) give the filter's depth taps T,
//          their dilation, the box origin and stride in depth and Ho's magic number; x through a
//          5-D im2col map (dims C, W, H, D, N; offsets w, h, d), w (K, T, R, S, C/G) with its taps
//          in that order; with FLIP_W (stride-1 backward data) all T x R x S taps rotated. No
//          SPLIT_K, LAST_K, NCHW_1X1 or FIX_SIZES.)
//          TRANS_A (0; 1 with NCHW_1X1: A is w read transposed, M-major: per 64-row slab of the tile
//          a box of 64 rows x TB_K reduction rows in the 128-byte swizzle, read with imm-trans-a = 1;
//          backward data's dx_n = w^T dy_n without a transposed copy of w.)
// Arguments: the tensor maps (see tuna_hopper_tma_fwd), the phase table, y, then the sizes as
// int32: N, C/G, K, Hy, Wy, R, S, G, K/G.
// Launch: gridDim.x = SPLIT_K * min(tiles, multiprocessors / SPLIT_K), blockDim.x = 128 * (WG_M +
// PINGPONG + 1); dynamic shared memory = 1024 (alignment) + STAGES * (TB_M + TB_N) * TB_K * 2 (ring)
// + (WG_M + PINGPONG) * 4 * 16 * (kEpiCols + 8) * 2 (epilogue slabs; kEpiCols: the largest of 64,
// 32, 16 dividing TB_N / SPLIT_K) + (SPLIT_K - 1)
// * TB_M * TB_N / SPLIT_K * 4 + 16 (split-K receive slot and its mbarriers, SPLIT_K 2 only) + 16 *
// STAGES (mbarriers).
#include "common/portability.h"
#include "conv/async_copy.h"  // tuna_smem_u32
#include "conv/fast_div.h"

#if !defined(TUNA_BACKEND_CUDA)
#error "hopper_tma_fwd.cu needs CUDA sm_90a (wgmma, TMA, mbarrier, setmaxnreg)"
#endif

#include "conv/wgmma_ops.h"
#include "conv/hopper_ops.h"

#ifndef PHASED
#define PHASED 1
#endif
#ifndef FIX_SIZES
#define FIX_SIZES 0
#endif
#ifndef PINGPONG
#define PINGPONG 0
#endif
#ifndef VEC_OUT
#define VEC_OUT 0
#endif
#ifndef TB_K
#define TB_K 64
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef PARTIAL_K
#define PARTIAL_K 0
#endif
#ifndef FLIP_W
#define FLIP_W 0
#endif
#ifndef NCHW_1X1
#define NCHW_1X1 0
#endif
#define TUNA_B_NMAJOR (FLIP_W || NCHW_1X1)  // B arrives N-major in kBSlabN-column slabs
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef SPATIAL3
#define SPATIAL3 0
#endif
#define TUNA_TWO_CONSUMERS (WG_M == 2 || PINGPONG)
// LAST_K (16 or 32; the solver defines it where C/G % 64 is 1..32 with TB_K 64, one phase): a
// tap's last chunk is copied as LAST_K channels through the kernel's second pair of tensor maps,
// in 32- or 64-byte swizzle rows, instead of 64 mostly zero channels. TUNA_NO_LAST_K keeps the
// arguments and copies 64 (an A/B switch).
#if defined(LAST_K) && !defined(TUNA_NO_LAST_K)
#define TUNA_LAST_K LAST_K
#else
#define TUNA_LAST_K 0
#endif


constexpr int kTbM = TB_M;
constexpr int kTbN = TB_N;
constexpr int kTbK = TB_K;  // halves per row: one 128-byte (64) or 64-byte (32) swizzle row
constexpr int kWgM = WG_M;
constexpr int kStages = STAGES;
constexpr int kConsumers = kWgM + PINGPONG;  // consumer warpgroups
constexpr int kThreads = 128 * (kConsumers + 1);
constexpr int kWgRows = kTbM / kWgM;
constexpr int kMRep = kWgRows / 64;
constexpr int kAcc = kTbN / 2;  // FP32 accumulators per thread of one m64 wgmma
constexpr int kSplitK = SPLIT_K;
constexpr int kBandCols = kTbN / kSplitK;  // the columns of a tile each block of a cluster writes
constexpr int kRecvSlotBytes = kTbM * kBandCols * 4;  // one peer's FP32 partials of a band
constexpr int kRecvBytes = kSplitK > 1 ? (kSplitK - 1) * kRecvSlotBytes : 0;
constexpr int kRowBytes = kTbK * 2;
constexpr int kStageA = kTbM * kRowBytes;
constexpr int kStageBytes = kStageA + kTbN * kRowBytes;
constexpr int kRingBytes = kStages * kStageBytes;
#if TUNA_LAST_K
constexpr int kLastRowBytes = TUNA_LAST_K * 2;  // a narrow last chunk's row
constexpr int kStageBytesLast = (kTbM + kTbN) * kLastRowBytes;
#endif
#if TUNA_B_NMAJOR
// B's N-major slabs, kBSlabN columns each (a 128- or 64-byte swizzle row).
constexpr int kBSlabN = kTbN % 64 == 0 ? 64 : 32;
constexpr int kBSlabs = kTbN / kBSlabN;
#else
constexpr int kBSlabN = 0;  // B K-major (tuna_ktile_wgmmas)
#endif
// Columns a warp stages at a time: the largest of 64, 32, 16 that divides a band (TB_N 96, 160,
// 224: 32; with SPLIT_K 2 down to 16).
constexpr int kEpiCols = kBandCols % 64 == 0 ? 64 : kBandCols % 32 == 0 ? 32 : 16;
constexpr int kEpiPitch = kEpiCols + 8;  // halves per staged row: conflict-free pair writes
constexpr int kEpiChunks = kEpiCols / 8;           // 16-byte chunks per staged row: 8, 4 or 2
constexpr int kEpiRowsPerPass = 32 / kEpiChunks;  // rows the warp's lanes store at once: 4, 8 or 16
constexpr int kEpiPasses = 16 / kEpiRowsPerPass;
constexpr int kEpiWarpBytes = 16 * kEpiPitch * 2;
constexpr int kEpiBytes = kConsumers * 4 * kEpiWarpBytes;
// Register split (setmaxnreg) for two consumers: 384 threads x 168 at entry = 128 x 40 + 256 x 232.
#if TUNA_TWO_CONSUMERS
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;
#endif
static_assert(kWgRows % 64 == 0, "each consumer warpgroup owns whole m64 slabs");
static_assert(!PINGPONG || kWgM == 1, "ping-pong: each consumer warpgroup owns whole tiles");
static_assert(kTbN % 32 == 0 && kTbN <= 256, "wgmma N: 32, 64, 96, ..., 256");
static_assert(kTbK == 32 || kTbK == 64, "a k-tile is one 64- or 128-byte swizzle row");
static_assert(kTbN % kEpiCols == 0, "epilogue slabs");
static_assert(kStages >= 3, "one slot in the tensor cores, one released late, one filling");
static_assert(kSplitK == 1 || kSplitK == 2, "split-K over a cluster of 1 or 2 blocks");
static_assert(kSplitK == 1 || !PINGPONG, "split-K takes whole tiles in both blocks of a cluster");
static_assert(kBandCols % 16 == 0, "each block writes whole 16-column groups of a tile");
static_assert(TUNA_LAST_K == 0 || ((TUNA_LAST_K == 16 || TUNA_LAST_K == 32) && kTbK == 64 && !PHASED),
              "LAST_K: 16 or 32 channels after 64-channel chunks, one phase");
static_assert(!NCHW_1X1 || (!PHASED && !FLIP_W && TUNA_LAST_K == 0 && kSplitK == 1),
              "NCHW_1X1: one phase, its own B, whole chunks, no split");
static_assert(!TRANS_A || NCHW_1X1, "TRANS_A: the NCHW GEMMs' A only");
static_assert(!SPATIAL3 || (!PHASED && kSplitK == 1 && TUNA_LAST_K == 0 && !NCHW_1X1 && !FIX_SIZES),
              "SPATIAL3: one phase, whole tiles, 64- or 32-channel chunks");


// Shared-memory map of a block: the ring, the consumers' epilogue slabs, the split-K receive slot,
// the mbarriers.
struct TunaWsSmem {
  unsigned ring, epi, recv, full, empty, recv_full, recv_free;
  unsigned char* raw;
  unsigned raw_addr;
};
TUNA_DEVICE TunaWsSmem tuna_ws_smem(unsigned char* smem_raw) {
  TunaWsSmem m;
  m.raw = smem_raw;
  m.raw_addr = tuna_smem_u32(smem_raw);
  m.ring = m.raw_addr + ((1024 - (m.raw_addr & 1023)) & 1023);  // the 128-byte swizzle repeats every 1024 B (64: 512)
  m.epi = m.ring + kRingBytes;
  m.recv = m.epi + kEpiBytes;
  m.full = m.recv + kRecvBytes;
  m.empty = m.full + kStages * 8;
  m.recv_full = m.empty + kStages * 8;  // split-K only
  m.recv_free = m.recv_full + 8;
  return m;
}

// One output phase of a launch: forward convolution and stride-1 backward data have one; strided
// backward data has stride_h x stride_w sub-pixel phases. Output pixel (img, i, j) of the phase
// (i < n_i, j < n_j) is y pixel (img, out_h0 + out_step_h * i, out_w0 + out_step_w * j). Its
// im2col base in x is (lower_h + estride_h * i, lower_w + estride_w * j) (the copy engine walks
// these inside the phase's tensor map), and filter tap (th, tw) (th < taps_h, tw < taps_w) reads x
// at base + (off0_h + offstep_h * th, off0_w + offstep_w * tw) against tap
// (r0 + rstep * th) * S + (s0 + sstep * tw) of w (K, R, S, C/G). A phase without taps writes zeros.
// The host also sends the magic numbers of the tile decode's divisions (gpu::MakeFastDiv): by
// n_i * n_j (pix), by n_j (nj), by the phase's tiles per group (mn) and by the N-tiles (nt).
struct TunaPhase {
  int n_i, n_j, taps_h, taps_w;
  int r0, s0, rstep, sstep;
  int off0_h, off0_w, offstep_h, offstep_w;
  int lower_h, lower_w, estride_h, estride_w;
  int out_h0, out_w0, out_step_h, out_step_w;
  int pix_mul, pix_shr, nj_mul, nj_shr, mn_mul, mn_shr, nt_mul, nt_shr;  // as int32 words
};
// The phase table the kernel receives: four slots when PHASED, else one (a smaller parameter
// block for the common case).
constexpr int kMaxPhases = PHASED ? 4 : 1;
struct TunaPhases {
  TunaPhase ph[kMaxPhases];
  int count;
#if SPATIAL3
  // The depth of a 3-D forward: filter taps T, their dilation (box offset step), x's box origin and
  // stride in depth, the output height Ho and its magic number (a phase row i is depth i / Ho,
  // height i % Ho).
  int taps_d, offstep_d, lower_d, estride_d, ho, ho_mul, ho_shr;
#endif
};

// Phase p of the table in registers (a run-time index into the parameter would copy the
// table to local memory).
TUNA_DEVICE TunaPhase tuna_phase(const TunaPhases& ph, int p) {
  TunaPhase r = ph.ph[0];
#if PHASED
#pragma unroll
  for (int i = 1; i < kMaxPhases; ++i) {
    if (p == i) r = ph.ph[i];
  }
#else
  (void)p;
#endif
  return r;
}

// The output tiles of one launch: phases x groups x M-tiles x N-tiles, N-tiles fastest.
struct TunaTile {
  int phase, g, m0, n0, k_tiles;
};
struct TunaTileGrid {
  int groups, Kpg, c_chunks, n_tiles, tiles;
  int end[kMaxPhases];       // one past each phase's last tile
  int mn_tiles[kMaxPhases];  // each phase's tiles per group
  int last_k16;  // k16 steps of a tap's last chunk that hold channels (PARTIAL_K)
  TUNA_DEVICE TunaTileGrid(const TunaPhases& ph, int n_img, int Cg, int Kg, int groups_) {
    groups = groups_;
    Kpg = Kg;
    c_chunks = (Cg + kTbK - 1) / kTbK;  // a last partial chunk reads zeros past C/G
    last_k16 = (Cg - (c_chunks - 1) * kTbK + 15) / 16;
    n_tiles = (Kpg + kTbN - 1) / kTbN;
    tiles = 0;
#pragma unroll
    for (int p = 0; p < kMaxPhases; ++p) {
      mn_tiles[p] = 0;
      if (p < ph.count) {
        const int m = n_img * ph.ph[p].n_i * ph.ph[p].n_j;
        mn_tiles[p] = ((m + kTbM - 1) / kTbM) * n_tiles;
        tiles += mn_tiles[p] * groups;
      }
      end[p] = tiles;
    }
  }
  // No divide instruction: the divisions by run-time extents use the host's magic numbers.
  TUNA_DEVICE TunaTile Decode(const TunaPhases& ph, int tile) const {
    TunaTile t;
    t.phase = 0;
    int begin = 0, mn_per_g = mn_tiles[0];
#if PHASED
#pragma unroll
    for (int p = 0; p < kMaxPhases - 1; ++p) {
      if (tile >= end[p]) t.phase = p + 1, begin = end[p], mn_per_g = mn_tiles[p + 1];
    }
#endif
    const TunaPhase q = tuna_phase(ph, t.phase);
    const int rel = tile - begin;
    t.g = tuna_fast_div(rel, q.mn_mul, q.mn_shr);
    const int mn = rel - t.g * mn_per_g;
    const int mt = tuna_fast_div(mn, q.nt_mul, q.nt_shr);
    t.m0 = mt * kTbM;
    t.n0 = (mn - mt * n_tiles) * kTbN;
    t.k_tiles = q.taps_h * q.taps_w * c_chunks;
#if SPATIAL3
    t.k_tiles *= ph.taps_d;
#endif
    return t;
  }
};

TUNA_DEVICE void tuna_ws_init_barriers(const TunaWsSmem& sm, unsigned full_count) {
  if (TUNA_TID_X == 0) {
    for (int s = 0; s < kStages; ++s) {
      tuna_mbar_init(sm.full + 8 * s, full_count);
      tuna_mbar_init(sm.empty + 8 * s, 128 * kWgM);  // every thread of the warpgroups reading a slot, once per use
    }
#if SPLIT_K > 1
    // Every consumer thread of each peer, once per tile: after its stores (full), after its reads (free).
    tuna_mbar_init(sm.recv_full, (kSplitK - 1) * 128 * kWgM);
    tuna_mbar_init(sm.recv_free, (kSplitK - 1) * 128 * kWgM);
#endif
    tuna_fence_mbar_init();
  }
#if SPLIT_K > 1
  tuna_cluster_sync();  // the peers' mbarriers are initialised before any remote arrival
#else
  TUNA_SYNC();
#endif
}


// This block's share of the schedule: cluster `first` of `step` clusters takes tiles first, first +
// step, ...; block `rank` of the cluster the k-tiles [KBegin, KEnd) of each.
struct TunaSched {
  int first, step, rank;
  TUNA_DEVICE int KBegin(int k_tiles) const { return kSplitK > 1 ? k_tiles * rank / kSplitK : 0; }
  TUNA_DEVICE int KEnd(int k_tiles) const { return kSplitK > 1 ? k_tiles * (rank + 1) / kSplitK : k_tiles; }
};
TUNA_DEVICE TunaSched tuna_sched() {
#if SPLIT_K > 1
  return {TUNA_BID_X / kSplitK, TUNA_GDIM_X / kSplitK, static_cast<int>(tuna_cluster_rank())};
#else
  return {TUNA_BID_X, TUNA_GDIM_X, 0};
#endif
}

#if SPLIT_K > 1
constexpr int kBandJ = kBandCols / 8;  // a band's 8-column accumulator groups

// Split-K exchange of the n-th tile of consumer thread (cw, tid_wg): its accumulators of the
// peers' column bands go to their receive slots, then the peers' partials of its own band are
// added to acc. A float4 of 8-column group jb of a band sits at ((cw * kMRep + mr) * kBandJ + jb)
// * 128 + tid_wg (16-byte units) of the slot, so both sides use the same index. Band b's owner
// keeps slot (src < b ? src : src - 1) for peer src.
TUNA_DEVICE void tuna_split_exchange(const TunaWsSmem& sm, float (&acc)[kMRep][kAcc], int rank, int n, int cw,
                                     int tid_wg) {
  if (n > 0) tuna_mbar_wait_cluster(sm.recv_free, (n - 1) & 1);  // the peers have read the previous tile's
  unsigned remote[kSplitK];
#pragma unroll
  for (int b = 0; b < kSplitK; ++b) {
    remote[b] = b == rank ? 0u : tuna_map_rank(sm.recv + (rank < b ? rank : rank - 1) * kRecvSlotBytes, b);
  }
#pragma unroll
  for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
    for (int j = 0; j < kTbN / 8; ++j) {
      const int b = j / kBandJ;
      if (b == rank) continue;
      const unsigned off = static_cast<unsigned>((((cw * kMRep + mr) * kBandJ + j % kBandJ) * 128 + tid_wg) * 16);
      tuna_st_cluster_v4(remote[b] + off, acc[mr][4 * j], acc[mr][4 * j + 1], acc[mr][4 * j + 2], acc[mr][4 * j + 3]);
    }
  }
#pragma unroll
  for (int b = 0; b < kSplitK; ++b) {
    if (b != rank) tuna_mbar_arrive_cluster(tuna_map_rank(sm.recv_full, b));
  }
  tuna_mbar_wait_cluster(sm.recv_full, n & 1);
#pragma unroll
  for (int slot = 0; slot < kSplitK - 1; ++slot) {
    const float4* part = reinterpret_cast<const float4*>(sm.raw + (sm.recv + slot * kRecvSlotBytes - sm.raw_addr));
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
      for (int j = 0; j < kTbN / 8; ++j) {
        if (j / kBandJ != rank) continue;
        const float4 v = part[((cw * kMRep + mr) * kBandJ + j % kBandJ) * 128 + tid_wg];
        acc[mr][4 * j] += v.x, acc[mr][4 * j + 1] += v.y, acc[mr][4 * j + 2] += v.z, acc[mr][4 * j + 3] += v.w;
      }
    }
    tuna_mbar_arrive_cluster(tuna_map_rank(sm.recv_free, slot < rank ? slot : slot + 1));
  }
}
#endif

// y's geometry as the epilogue writes it: n_img x Hy x Wy pixels of K channels.
struct TunaOut {
  int n_img, Hy, Wy, K;
};

// Consumer warpgroup cw + 1 (cw < WG_M + PINGPONG): its rows of every tile of this block (with
// PINGPONG, every other tile, whole), each followed by its epilogue.
TUNA_DEVICE void tuna_ws_consume(const TunaWsSmem& sm, const TunaPhases& ph, const TunaTileGrid& tg,
                                 const TunaOut& out, tuna_u16* TUNA_RESTRICT y) {
#if TUNA_TWO_CONSUMERS
  tuna_setmaxnreg_inc<kConsumerRegs>();
#endif
  const int tid = TUNA_TID_X;
  const int cw = (tid >> 7) - 1;
  const int row_wg = PINGPONG ? 0 : cw;  // this warpgroup's row slab of a tile
  const int warp_in_wg = (tid >> 5) & 3;
  const int lane = tid & 31;
  const unsigned epi = sm.epi + ((cw * 4 + warp_in_wg) * kEpiWarpBytes);
  tuna_u16* epi_ptr = reinterpret_cast<tuna_u16*>(sm.raw + (epi - sm.raw_addr));
#if VEC_OUT  // the solver's promise: K % 8 == 0 and K/G % 8 == 0
  constexpr bool vec_out = true;
#else
  const bool vec_out = (out.K & 7) == 0 && (tg.Kpg & 7) == 0;
#endif
  float acc[kMRep][kAcc];
  int it = 0;  // ring position: the producer fills the ring with the block's tiles in sequence
  const TunaSched sc = tuna_sched();
  int tile = sc.first;
  int n_done = 0;  // tiles finished (split-K's exchange phases)
#if PINGPONG
  // Ping-pong: consumer 1 takes the block's odd tiles, consumer 0 the even ones, so one's epilogue
  // overlaps the other's wgmmas; each skips the other's k-tiles in the ring. Their main loops run
  // in tile order (named barrier 1 + cw: "the other consumer's previous tile has all its k-tiles"),
  // so neither waits on a ring slot more than one fill ahead of the producer (an mbarrier's parity
  // cannot tell the phase after next from the one before).
  if (cw == 1) {
    if (tile < tg.tiles) it += tg.Decode(ph, tile).k_tiles;
    tile += sc.step;
  }
  const int tile_step = 2 * sc.step;
#else
  const int tile_step = sc.step;
#endif
  for (; tile < tg.tiles; tile += tile_step, ++n_done) {
    const TunaTile t = tg.Decode(ph, tile);
    const int kb = sc.KBegin(t.k_tiles), ke = sc.KEnd(t.k_tiles);
#if PINGPONG
    if (tile != sc.first) tuna_named_sync(2 - cw, 256);  // the other's previous tile is consumed
#endif
    // No zeroing: the tile's first wgmma of each slab writes acc = A * B (scale-d 0), as the
    // constants build's ptxas folds it, instead of 128 moves per slab on the path between tiles.
#if PARTIAL_K || TUNA_LAST_K
    int cc = kb % tg.c_chunks;  // the k-tile's chunk of its filter tap
#endif
    for (int kt = kb; kt < ke; ++kt, ++it) {
      const int slot = it % kStages;
      tuna_mbar_wait(sm.full + 8 * slot, (it / kStages) & 1);
      const unsigned a_tile = sm.ring + slot * kStageBytes + row_wg * kWgRows * kRowBytes;
      const unsigned b_tile = sm.ring + slot * kStageBytes + kStageA;
#if PARTIAL_K || TUNA_LAST_K
      const bool last_chunk = cc == tg.c_chunks - 1;
      if (++cc == tg.c_chunks) cc = 0;
#endif
#if PARTIAL_K
      // A tap's last chunk holds C/G % TB_K channels: its k16 steps past them multiply zeros.
      const int n16 = last_chunk ? tg.last_k16 : kTbK / 16;
#else
      constexpr int n16 = kTbK / 16;
#endif
#pragma unroll
      for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
      tuna_wgmma_fence();
#if TUNA_LAST_K
      if (last_chunk) {  // LAST_K channels in narrow rows: every k16 step holds channels
        tuna_ktile_wgmmas<kLastRowBytes, kBSlabN>(acc, sm.ring + slot * kStageBytes + row_wg * kWgRows * kLastRowBytes,
                                             b_tile, kt > kb, TUNA_LAST_K / 16);
      } else
#endif
      {
        tuna_ktile_wgmmas<kRowBytes, kBSlabN, TRANS_A>(acc, a_tile, b_tile, kt > kb, n16);
      }
      tuna_wgmma_commit();
      tuna_wgmma_wait<1>();  // the previous k-tile's wgmmas have retired: release its slot
#pragma unroll
      for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
      if (kt > kb) tuna_mbar_arrive(sm.empty + 8 * ((it - 1) % kStages));
    }
#if PINGPONG
    if (tile + sc.step < tg.tiles) tuna_named_arrive(1 + cw, 256);  // the other's next tile may start
#endif
    // Unconditional: on a path where ptxas cannot see that the wgmmas have retired it inserts its
    // own wait and serialises every wgmma of the loop (C7514), 4-23 % slower with run-time sizes.
    tuna_wgmma_wait<0>();
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
    if (ke > kb) tuna_mbar_arrive(sm.empty + 8 * ((it - 1) % kStages));
#if SPLIT_K > 1
    if (ke == kb) {  // no k-tile in this block's share: its partials are zeros
#pragma unroll
      for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
        for (int i = 0; i < kAcc; ++i) acc[mr][i] = 0.f;
      }
    }
    tuna_split_exchange(sm, acc, sc.rank, n_done, cw, tid & 127);
#endif

    // Epilogue: accumulator layout of wgmma m64nN: warp w of the warpgroup holds rows
    // 16w + lane/4 (+8); pair j covers columns 8j + 2*(lane%4) + {0, 1}. Each warp stages
    // 16 rows x kEpiCols (min(TB_N, 64)) columns at a time and stores them as 16-byte chunks
    // (kEpiChunks lanes per row); lane stores rows lane / kEpiChunks + kEpiRowsPerPass * q
    // (q < kEpiPasses), whose y pixels are found once per tile.
    const TunaPhase q = tuna_phase(ph, t.phase);
    const int m_phase = out.n_img * q.n_i * q.n_j;
#if NCHW_1X1
    // Image g's rows (output channels) of P = K/G pixels each.
    const long long y_group = static_cast<long long>(t.g) * m_phase * tg.Kpg;
    const long long y_pitch = tg.Kpg;
#else
    const long long y_group = static_cast<long long>(t.g) * tg.Kpg;
    const long long y_pitch = out.K;
#endif
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) {
      const int row0 = t.m0 + row_wg * kWgRows + mr * 64 + warp_in_wg * 16;
      long long pix[kEpiPasses];
#pragma unroll
      for (int qq = 0; qq < kEpiPasses; ++qq) {
        const int m = row0 + lane / kEpiChunks + kEpiRowsPerPass * qq;
#if !PHASED
        pix[qq] = m < m_phase ? m : -1;  // one phase, y pixel = GEMM row
        continue;
#endif
        const int img = tuna_fast_div(m, q.pix_mul, q.pix_shr);
        const int rem = m - img * q.n_i * q.n_j;
        const int i = tuna_fast_div(rem, q.nj_mul, q.nj_shr);
        const int j = rem - i * q.n_j;
        pix[qq] = m < m_phase ? (static_cast<long long>(img) * out.Hy + q.out_h0 + q.out_step_h * i) * out.Wy +
                                    q.out_w0 + q.out_step_w * j
                              : -1;
      }
#pragma unroll
      for (int cb = 0; cb < kTbN / kEpiCols; ++cb) {
        if (kSplitK > 1 && cb * kEpiCols / kBandCols != sc.rank) continue;  // the peer's columns
#pragma unroll
        for (int jj = 0; jj < kEpiCols / 8; ++jj) {
          const int j = cb * (kEpiCols / 8) + jj;
          const int col = 8 * jj + 2 * (lane & 3);
          const int r = lane >> 2;
          unsigned lo = tuna_pack2(acc[mr][4 * j], acc[mr][4 * j + 1]);
          unsigned hi = tuna_pack2(acc[mr][4 * j + 2], acc[mr][4 * j + 3]);
#if PHASED
          if (t.k_tiles == 0) lo = hi = 0;  // a phase without taps: zeros (acc was never written)
#endif
          *reinterpret_cast<unsigned*>(epi_ptr + r * kEpiPitch + col) = lo;
          *reinterpret_cast<unsigned*>(epi_ptr + (r + 8) * kEpiPitch + col) = hi;
        }
        __syncwarp();
#pragma unroll
        for (int qq = 0; qq < kEpiPasses; ++qq) {
          const int row = lane / kEpiChunks + kEpiRowsPerPass * qq;
          const int ch = lane % kEpiChunks;
          const int n = t.n0 + cb * kEpiCols + ch * 8;
          if (pix[qq] >= 0 && n < tg.Kpg) {
            tuna_u16* dst = y + pix[qq] * y_pitch + y_group + n;
            const tuna_u16* src = epi_ptr + row * kEpiPitch + ch * 8;
            if (vec_out && (VEC_OUT || n + 8 <= tg.Kpg)) {
              *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
            } else {
              for (int e = 0; e < 8 && n + e < tg.Kpg; ++e) dst[e] = src[e];
            }
          }
        }
        __syncwarp();
      }
    }
#if PINGPONG
    if (tile + sc.step < tg.tiles) it += tg.Decode(ph, tile + sc.step).k_tiles;  // the other's tile
#endif
  }
#if SPLIT_K > 1
  // No block leaves while a peer may still arrive on its mbarriers: the peers have read the
  // last tile's partials.
  if (n_done > 0) tuna_mbar_wait_cluster(sm.recv_free, (n_done - 1) & 1);
#endif
}

// The producer thread: per k-tile of the block's tiles (its share of each with SPLIT_K), an
// im2col copy of A and a tiled copy of B into the next ring slot, once every consumer that read
// the slot released it.
TUNA_DEVICE void tuna_ws_produce(const TunaWsSmem& sm, const TunaPhases& ph, const TunaTileGrid& tg,
                                 const TunaSched& sc, const TunaTensorMap* tmap_x0, const TunaTensorMap* tmap_x1,
                                 const TunaTensorMap* tmap_x2, const TunaTensorMap* tmap_x3,
                                 const TunaTensorMap* tmap_w, const TunaTensorMap* tmap_xl,
                                 const TunaTensorMap* tmap_wl, int R, int S, int Cg) {
  tuna_prefetch_tmap(tmap_x0);
#if TUNA_LAST_K
  tuna_prefetch_tmap(tmap_xl);
  tuna_prefetch_tmap(tmap_wl);
#else
  (void)tmap_xl, (void)tmap_wl;
#endif
#if PHASED
  if (ph.count > 1) tuna_prefetch_tmap(tmap_x1);
  if (ph.count > 2) tuna_prefetch_tmap(tmap_x2);
  if (ph.count > 3) tuna_prefetch_tmap(tmap_x3);
#else
  (void)tmap_x1, (void)tmap_x2, (void)tmap_x3;
#endif
  tuna_prefetch_tmap(tmap_w);
  int it = 0;
  for (int tile = sc.first; tile < tg.tiles; tile += sc.step) {
    const TunaTile t = tg.Decode(ph, tile);
    const int kb = sc.KBegin(t.k_tiles), ke = sc.KEnd(t.k_tiles);
    const TunaPhase q = tuna_phase(ph, t.phase);
#if PHASED
    const TunaTensorMap* map = t.phase == 0 ? tmap_x0 : t.phase == 1 ? tmap_x1 : t.phase == 2 ? tmap_x2 : tmap_x3;
#else
    const TunaTensorMap* map = tmap_x0;
#endif
    const int img = tuna_fast_div(t.m0, q.pix_mul, q.pix_shr);
    const int rem = t.m0 - img * q.n_i * q.n_j;
    const int i = tuna_fast_div(rem, q.nj_mul, q.nj_shr);
    const int w0 = q.lower_w + q.estride_w * (rem - i * q.n_j);
#if SPATIAL3
    const int od = tuna_fast_div(i, ph.ho_mul, ph.ho_shr);  // row i: output depth od, height i - od * Ho
    const int h0 = q.lower_h + q.estride_h * (i - od * ph.ho);
    const int d0 = ph.lower_d + ph.estride_d * od;
    int off_d = 0, th_count = 0;
#else
    const int h0 = q.lower_h + q.estride_h * i;
#endif
    // Tap (th, tw) and chunk cc of k-tile kb: their offsets and w column, stepped as the taps advance.
    int cc = 0, tw = 0, th = 0;
    if (kSplitK > 1 && kb > 0) {
      const int tap_i = kb / tg.c_chunks;
      cc = kb - tap_i * tg.c_chunks;
      th = tap_i / q.taps_w;
      tw = tap_i - th * q.taps_w;
    }
    int off_h = q.off0_h + q.offstep_h * th, off_w = q.off0_w + q.offstep_w * tw;
    int row_tap = (q.r0 + q.rstep * th) * S, tap = row_tap + q.s0 + q.sstep * tw;
    const int c_base = t.g * Cg, n_row = t.g * tg.Kpg + t.n0;
    for (int kt = kb; kt < ke; ++kt, ++it) {
      const int slot = it % kStages;
      const unsigned bar = sm.full + 8 * slot;
      const unsigned dst = sm.ring + slot * kStageBytes;
      if (it >= kStages) tuna_mbar_wait(sm.empty + 8 * slot, ((it / kStages) - 1) & 1);
      const TunaTensorMap* map_a = map;
      const TunaTensorMap* map_b = tmap_w;
      unsigned bytes = kStageBytes;
#if TUNA_LAST_K
      if (cc == tg.c_chunks - 1) map_a = tmap_xl, map_b = tmap_wl, bytes = kStageBytesLast;  // narrow rows
#endif
      tuna_mbar_expect_tx(bar, bytes);
#if NCHW_1X1
      (void)c_base, (void)img, (void)h0, (void)w0;
      // A: rows m0.. of w (K x C), TB_K channels (TRANS_A: w's columns m0.. of TB_K rows, one
      // 64-column box per slab).
#if TRANS_A
#pragma unroll
      for (int j = 0; j < kTbM / 64; ++j) tuna_tma_tile_2d(dst + j * 64 * kRowBytes, map_a, t.m0 + j * 64, cc * kTbK, bar);
#else
      tuna_tma_tile_2d(dst, map_a, cc * kTbK, t.m0, bar);
#endif
#elif SPATIAL3
      tuna_tma_im2col_5d(dst, map_a, c_base + cc * kTbK, w0, h0, d0, img, static_cast<unsigned short>(off_w),
                         static_cast<unsigned short>(off_h), static_cast<unsigned short>(off_d), bar);
#else
      tuna_tma_im2col_4d(dst, map_a, c_base + cc * kTbK, w0, h0, img, static_cast<unsigned short>(off_w),
                         static_cast<unsigned short>(off_h), bar);
#endif
#if NCHW_1X1
      (void)n_row, (void)R;
      // B: pixels n0.. of image g's C x P matrix, one box per column slab.
#pragma unroll
      for (int j = 0; j < kBSlabs; ++j) {
        tuna_tma_tile_3d(dst + kStageA + j * kTbK * kBSlabN * 2, map_b, t.n0 + j * kBSlabN, cc * kTbK, t.g, bar);
      }
#elif FLIP_W
      (void)n_row;
#if SPATIAL3
      const int taps_all = R * S * ph.taps_d;  // w's T x R x S taps, rotated together
#else
      const int taps_all = R * S;
#endif
      // w's own filter: rows cc * TB_K.. of group g at the rotated tap, one box per column slab.
      const int b_rows = TUNA_LAST_K && cc == tg.c_chunks - 1 ? TUNA_LAST_K : kTbK;
#pragma unroll
      for (int j = 0; j < kBSlabs; ++j) {
        tuna_tma_tile_4d(dst + kStageA + j * b_rows * kBSlabN * 2, map_b, t.n0 + j * kBSlabN, taps_all - 1 - tap,
                         cc * kTbK, t.g, bar);
      }
#else
      (void)R;
      tuna_tma_tile_3d(dst + kStageA, map_b, cc * kTbK, tap, n_row, bar);
#endif
      if (++cc == tg.c_chunks) {  // next filter tap
        cc = 0;
        off_w += q.offstep_w;
        tap += q.sstep;
        if (++tw == q.taps_w) {
          tw = 0;
          off_w = q.off0_w;
          off_h += q.offstep_h;
          row_tap += q.rstep * S;
          tap = row_tap + q.s0;
#if SPATIAL3
          if (++th_count == q.taps_h) {  // next depth tap: w's taps continue in (T, R, S) order
            th_count = 0;
            off_h = q.off0_h;
            off_d += ph.offstep_d;
          }
#endif
        }
      }
    }
  }
}

// tmap_x<p>: im2col map of x for phase p (dims C, W, H, N; the bounding box of the phase's
// im2col bases; element strides {1, estride_w, estride_h, 1}; TB_K channels x TB_M pixels; the
// swizzle of TB_K); four when PHASED (maps of phases >= count are not read), else tmap_x0 alone. tmap_w: tiled map of w (dims C/G, R*S, K; box
// TB_K x 1 x TB_N; the swizzle of TB_K; with FLIP_W dims K/G, R*S, C/G, G, box kBSlabN x 1 x TB_K x 1,
// the swizzle of kBSlabN). NCHW_1X1: tmap_x0 is w's tiled map (dims C, K; box TB_K x TB_M, the
// swizzle of TB_K; TRANS_A: the rows inner, box 64 x TB_K, the 128-byte swizzle) and tmap_w x's (dims P, C, N; box kBSlabN x TB_K x 1, the swizzle of kBSlabN).
// Cg: x's channels per group; K, Hy, Wy: y's channels and extent;
// R, S: w's; Kg: K per group (the host divides, so the prologue has no divide before the first copy).
#if PHASED
#define TUNA_X_MAPS                                                                                           \
  const __grid_constant__ TunaTensorMap tmap_x0, const __grid_constant__ TunaTensorMap tmap_x1,               \
      const __grid_constant__ TunaTensorMap tmap_x2, const __grid_constant__ TunaTensorMap tmap_x3
#else
#define TUNA_X_MAPS const __grid_constant__ TunaTensorMap tmap_x0
#endif
// With LAST_K: the maps of a tap's narrow last chunk, x's im2col map and w's tiled map with boxes
// of LAST_K channels (32- or 64-byte swizzle).
#ifdef LAST_K
#define TUNA_LAST_MAPS , const __grid_constant__ TunaTensorMap tmap_xl, const __grid_constant__ TunaTensorMap tmap_wl
#else
#define TUNA_LAST_MAPS
#endif
#if SPLIT_K > 1
#define TUNA_CLUSTER __cluster_dims__(SPLIT_K, 1, 1)
#else
#define TUNA_CLUSTER
#endif
TUNA_GLOBAL void __launch_bounds__(kThreads, 1) TUNA_CLUSTER
    tuna_hopper_tma_fwd(TUNA_X_MAPS, const __grid_constant__ TunaTensorMap tmap_w TUNA_LAST_MAPS,
                        const __grid_constant__ TunaPhases ph_arg, tuna_u16* TUNA_RESTRICT y, int n_img, int Cg, int K,
                        int Hy, int Wy, int R, int S, int groups, int Kg) {
#if FIX_SIZES && !PHASED
  // A build for one problem (the solvers' FIX_SIZES, issue #17): its sizes and phase as
  // compile-time constants; the arguments are ignored.
  n_img = TUNA_FIX_N, Cg = TUNA_FIX_CG, K = TUNA_FIX_K, Hy = TUNA_FIX_HY, Wy = TUNA_FIX_WY, R = TUNA_FIX_R,
  S = TUNA_FIX_S, groups = TUNA_FIX_G, Kg = TUNA_FIX_KG;
  constexpr TunaPhases kFixedPhases = {{{TUNA_FIX_PHASE}}, 1};
  const TunaPhases& ph = kFixedPhases;
#else
  const TunaPhases& ph = ph_arg;
#endif
  TUNA_DYNAMIC_SHARED(unsigned char, smem_raw);
  const TunaWsSmem sm = tuna_ws_smem(smem_raw);
  const TunaSched sc = tuna_sched();
  const TunaTileGrid tg(ph, n_img, Cg, Kg, groups);
  tuna_ws_init_barriers(sm, 1);
  if (TUNA_TID_X >= 128) {
    tuna_ws_consume(sm, ph, tg, TunaOut{n_img, Hy, Wy, K}, y);
  } else {
#if TUNA_TWO_CONSUMERS
    tuna_setmaxnreg_dec<kProducerRegs>();
#endif
    if (TUNA_TID_X == 0) {
      tuna_ws_produce(sm, ph, tg, sc, &tmap_x0,
#if PHASED
                      &tmap_x1, &tmap_x2, &tmap_x3,
#else
                      nullptr, nullptr, nullptr,
#endif
                      &tmap_w,
#ifdef LAST_K
                      &tmap_xl, &tmap_wl,
#else
                      nullptr, nullptr,
#endif
                      R, S, Cg);
    }
  }
}

// Backward data as a forward convolution (TunaHopperTmaBwd): the filter with its taps rotated
// by 180 degrees and K and C/G swapped, w'[g*C/G + c][R-1-r][S-1-s][k] = w[g*K/G + k][r][s][c],
// written `out_offset` elements into `out`. 32 x 32 tiles through shared memory so reads and
// writes are both coalesced. Launch: grid (ceil(C/G / 32), ceil(K/G / 32), G*R*S), block (32, 8).
TUNA_GLOBAL void __launch_bounds__(256)
    tuna_flip_filter(const tuna_u16* TUNA_RESTRICT w, tuna_u16* TUNA_RESTRICT out, long long out_offset, int K, int C,
                     int R, int S, int groups) {
  __shared__ tuna_u16 tile[32][33];
  const int kpg = K / groups, cg = C / groups, taps = R * S;
  const int g = TUNA_BID_Z / taps, tap = TUNA_BID_Z - g * taps;
  const int r = tap / S, s = tap - r * S;
  const int flipped = (R - 1 - r) * S + (S - 1 - s);
  const int c0 = TUNA_BID_X * 32, k0 = TUNA_BID_Y * 32;
  for (int j = TUNA_TID_Y; j < 32; j += 8) {
    const int k = k0 + j, c = c0 + TUNA_TID_X;
    if (k < kpg && c < cg) tile[j][TUNA_TID_X] = w[(static_cast<long long>(g * kpg + k) * taps + tap) * cg + c];
  }
  TUNA_SYNC();
  for (int j = TUNA_TID_Y; j < 32; j += 8) {
    const int c = c0 + j, k = k0 + TUNA_TID_X;
    if (k < kpg && c < cg) {
      out[out_offset + (static_cast<long long>(g * cg + c) * taps + flipped) * kpg + k] = tile[TUNA_TID_X][j];
    }
  }
}

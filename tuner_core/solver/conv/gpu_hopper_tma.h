// The plan shared by the solvers that run kernels/conv/hopper_tma_fwd.cu (TunaHopperTmaFwd,
// TunaHopperTmaBwd): a convolution as the kernel sees it — y (n, Hy, Wy, K) from x (n, Hx, Wx, C)
// and w (K, R, S, C/G), all NHWC — in one or more output phases (the kernel's TunaPhase: forward
// and stride-1 backward data have one; strided backward data a sub-pixel phase per output
// residue), plus its tile axes, validity, default, shared memory, tensor maps and launch.
// Stateless; internal to the conv solvers. The two solvers follow (one per direction).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver::hopper_tma {

// The axes by name (the one place a config is decoded); Space() lists them in params order.
// WG_M consumer warpgroups split a tile's rows (cooperative); PINGPONG 1 (with WG_M 1) runs two
// consumer warpgroups on alternate tiles instead, so one's epilogue overlaps the other's wgmmas.
// TB_K: channels of a k-tile (one filter tap), 64 (128-byte swizzle rows) or 32 (64-byte rows,
// for C/G % 64 in 1..32, where a 64-channel tile would be mostly zeros). FIX_SIZES 1: the
// problem's sizes and its one output phase compiled in (not searched: Specialize sets it).
struct TmaParams {
  int tb_m, tb_n, wg_m, stages, pingpong = 0, tb_k = 64, fix_sizes = 0, split_k = 1;
  static TmaParams Of(const SearchSpace& s, const PerfConfig& c);
  PerfConfig Config(const SearchSpace& s) const;
  int Consumers() const { return wg_m + pingpong; }
  int Threads() const { return 128 * (Consumers() + 1); }
};

SearchSpace Space();

// Dynamic shared memory of a config: 1 KiB of alignment, the ring ((TB_M + TB_N) x TB_K halves per
// stage), the consumer warpgroups' epilogue slabs (16 x (E + 8) halves per warp, E the largest of
// 64, 32, 16 dividing TB_N / SPLIT_K), with SPLIT_K 2 the FP32 receive slot of the peer's partial
// columns (TB_M x TB_N / 2) and its two mbarriers, and two mbarriers per stage.
uint64_t SharedBytes(const TmaParams& t);

// One output phase, field for field the kernel's TunaPhase (see hopper_tma_fwd.cu); `upper_h/w`
// close the im2col bounding box (offsets from x's last row / column).
struct Phase {
  int64_t n_i = 0, n_j = 0, taps_h = 0, taps_w = 0;
  int64_t r0 = 0, s0 = 0, rstep = 1, sstep = 1;
  int64_t off0_h = 0, off0_w = 0, offstep_h = 1, offstep_w = 1;
  int64_t lower_h = 0, lower_w = 0, estride_h = 1, estride_w = 1;
  int64_t out_h0 = 0, out_w0 = 0, out_step_h = 1, out_step_w = 1;
  int64_t upper_h = 0, upper_w = 0;
};

// What the kernel computes. Roles: the buffers x, w and y are read from / written to.
// flip_w (backward data, the kernel's -DFLIP_W=1): w is the problem's own filter, (c, r, s, k/G)
// in the plan's names, which the kernel reads in place with its taps rotated and transposed;
// false: w is in the kernel's (k, r, s, c/G) layout (forward; backward data through
// tuna_flip_filter where the problem's C/G % 8 != 0, which the in-place copy cannot address).
// nchw (the kernel's -DNCHW_1X1=1): a 1x1, stride-1, unpadded, ungrouped convolution of NCHW
// tensors (NchwGemm) as one GEMM per image, in the kernel's terms: n 1, groups = the images,
// c = C * images and k = P * images (C/G the channels summed, K/G the P = H*W pixels of an image),
// hy 1 and wy the output channels (the GEMM rows of an image), r = s = 1; w is the (rows x C/G)
// matrix the kernel reads through a tiled map (forward: w itself; backward data, trans_a: w read
// transposed, M-major, -DTRANS_A=1), x the images' (C/G x P) matrices read N-major.
// spatial3 (the kernel's -DSPATIAL3=1): a 3-D forward convolution of NDHWC tensors, one phase
// whose n_i counts the output's depth x height rows (depth.d_out * hy) and whose taps_h / taps_w are
// R / S; `depth` holds the rest (x's depth, the filter's depth taps, dilation, the im2col box's
// origin, stride and upper offset in depth).
struct Depth {
  int64_t d_in = 1, d_out = 1, taps = 1, dil = 1, lower = 0, stride = 1, upper = 0;
};
struct ConvPlan {
  int64_t n = 0, c = 0, k = 0, hx = 0, wx = 0, hy = 0, wy = 0, r = 0, s = 0, groups = 1;
  DataType data_type = DataType::kFp16;
  std::vector<Phase> phases;
  bool flip_w = false;
  bool nchw = false;
  bool trans_a = false;
  bool spatial3 = false;
  Depth depth;
  int64_t Rows() const;  // GEMM rows over all phases (of one image when nchw)
  int64_t Taps() const { return depth.taps * r * s; }  // w's taps per output channel
};

// A 2D 1x1 convolution with stride 1, no padding and one group whose x and y are NCHW (w's bytes
// are the same in either layout): ForwardPlan and BackwardDataPlan plan it as per-image GEMMs
// (ConvPlan::nchw), with no layout copies. CheckApplicable then asks for dense tensors and
// 16-byte rows (H*W and the summed channels multiples of 8).
bool NchwGemm(const Problem& p);

inline constexpr int kMaxPhases = 4;

// y = x (*) w for a forward problem (per-image GEMMs where NchwGemm; spatial3 for 3-D problems).
ConvPlan ForwardPlan(const Problem& p);
// dx = dy (*) w' for a backward-data problem, w' = the filter rotated with K and C/G swapped
// (read so in place, flip_w, where C/G % 8 == 0; else tuna_flip_filter's copy), one phase per
// output residue of the stride (stride 1: one phase; strides above 1 need dilation 1). Where
// NchwGemm, per-image GEMMs dx_n = w^T dy_n, w read transposed in place (trans_a).
ConvPlan BackwardDataPlan(const Problem& p);

// The im2col map of x for one phase: dims (C, W, H, N), the phase's bounding box of bases and
// element strides; boxes of `channels` (64 or 32) channels x `pixels` output pixels, in the
// swizzle of that row width (128 or 64 bytes).
backend::TensorMapSpec XMap(const ConvPlan& p, const Phase& q, int pixels, int channels = 64);

// 1x1 filters, stride 1, no padding, one phase: x is the (C, P) matrix, which a tiled map
// (MatrixMap) reads faster than im2col rows where a stage's copies are small: TunaHopperTmaWrw's
// 1x1 layers 12-28 % faster (its -DX_TILED=1; ResNet-50 FP16 N=32, H200, 2026-12-04).
// TunaHopperTmaFwd/Bwd keep im2col: their 1x1 layers timed the same within 2 % with the tiled map
// (same call).
bool XTiled(const ConvPlan& p);

// A dense NHWC tensor of `channels` channels and `pixels` pixels (N*H*W) as its (channels, pixels)
// matrix: a tiled map with boxes of `box_channels` x `box_pixels`, in the swizzle of that row width.
backend::TensorMapSpec MatrixMap(int64_t channels, int64_t pixels, int box_pixels, int box_channels);

// A dense NCHW tensor of `images` images of `rows` channels x `pixels` pixels as its (pixels, rows,
// images) view: a tiled map with boxes of `box_pixels` x `box_rows` x 1 image, in the swizzle of
// the box's pixel row (the NCHW GEMMs' B, TunaHopperTmaWrw's NCHW dy and x).
backend::TensorMapSpec NchwMap(int64_t images, int64_t rows, int64_t pixels, int box_pixels, int box_rows);

// The target and the original problem `p` (of any direction: type, layout, density), then the
// plan (C/G % 64, phases, the copy engine's bounding boxes, sizes).
absl::Status CheckApplicable(std::string_view solver, const Target& target, const Problem& p, const ConvPlan& plan);

// Analytic validity of `config` for `plan` (applicability checked by the caller).
absl::Status CheckValid(std::string_view solver, const Target& target, const ConvPlan& plan, const PerfConfig& config);

// The largest tile that still gives most SMs a block, with the deepest ring that fits.
PerfConfig Default(const Target& target, const ConvPlan& plan);

// The kernel build of `config` (sm_90a; entries: the convolution, then tuna_flip_filter). With
// FIX_SIZES 1, the plan's sizes and phase as -DTUNA_FIX_* constants: a build for this problem
// alone; with flip_w, -DFLIP_W=1.
KernelBuild Build(const ConvPlan& plan, const PerfConfig& config);

// `config` with FIX_SIZES 1 where the plan has one output phase (forward, stride-1 backward
// data) and `config` has 0; else nullopt. Sizes as run-time arguments cost 5.8-5.9 % on
// ResNet-50's FP16 forward layers (H200, 2026-12-02; #17's bar for one build serving every
// problem is < 3 %), so the tuner's finishing step rebuilds the winner with them compiled in.
std::optional<PerfConfig> Specialize(const ConvPlan& plan, const PerfConfig& config);

// The persistent launch of kernel 0: x from role `x`, w from role `w` (`w_offset` bytes in),
// y into role `y`.
Launch ConvLaunch(const Target& target, const ConvPlan& plan, const PerfConfig& config, BufferRole x, BufferRole w,
                  int64_t w_offset, BufferRole y);

// What TunaHopperTmaFwd and TunaHopperTmaBwd share: the verbs above on the plan of their
// direction (`plan`: ForwardPlan, BackwardDataPlan), after their own conditions (Admits). Each
// adds its solution. Thread-safe and stateless.
class TmaSolver : public gpu::FastSolver {
 public:
  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;
  SearchSpace Space(const Target& target, const Problem& problem) const override;
  PerfConfig DefaultConfig(const Target& target, const Problem& problem) const override;
  absl::Status IsValid(const Target& target, const Problem& problem, const PerfConfig& config) const override;
  // The winner with its sizes compiled in (Specialize above).
  std::optional<PerfConfig> Specialize(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 protected:
  TmaSolver(std::string_view name, Direction direction, ConvPlan (*plan)(const Problem&))
      : FastSolver(name, direction, /*dynamic=*/true), plan_(plan) {}
  ConvPlan PlanOf(const Problem& problem) const { return plan_(problem); }
  // OK, or NotApplicable's status: the direction's own conditions, checked before the plan's.
  virtual absl::Status Admits(const Problem& problem) const = 0;

 private:
  ConvPlan (*plan_)(const Problem&);
};

}  // namespace tuna::solver::hopper_tma

namespace tuna::solver {

// TunaHopperTmaFwd (id 1013): forward convolution on Hopper's warpgroup tensor cores fed by the
// tensor memory accelerator (kernels/conv/hopper_tma_fwd.cu, built for sm_90a): implicit GEMM,
// FP16/BF16 in, FP32 accumulate; a persistent, warp-specialised kernel in which one producer
// thread issues im2col TMA copies of x (padding, strides and dilation done by the copy engine)
// and tiled TMA copies of w into an mbarrier-synchronised ring, and WG_M consumer warpgroups
// issue wgmma and write y. Deterministic (no reduction across blocks).
//
// Covers: conv mode, 2D, x, w and y dense NHWC, any N, H, W, K (tails masked or zero-filled by
// the copy engine), groups, asymmetric filters and padding, dilation, with C/G % 8 == 0 (one
// filter tap per TB_K-channel k-tile; a last partial chunk reads zeros past C/G), strides <= 8, padding and dilation*(filter-1) - padding
// within the copy engine's -128..127 bounding box, every extent below 2^31 elements. sm_90
// targets only; other shapes fall to TunaHopperFwd (1012). Problem sizes are kernel arguments
// and the tensor maps are encoded at launch: one build serves every problem with the same config.
//
// Axes (perf-db params in this order), each equal to the kernel's -D name:
//   TB_M    block tile rows (GEMM M = N*Ho*Wo output pixels, the im2col column): 64, 128, 256
//   TB_N    block tile columns (GEMM N = K/G output channels), also the wgmma N: 32 (K/G <= 32
//           only), 64, 128, 256, and 96, 160, 192, 224 only where they tile K/G with fewer padded
//           columns, or as few and fewer N-tiles, than every other TB_N from the power of two
//           below to the one above (K/G = 192: one 192 instead of a 256 or two 128s; K/G = 160:
//           160, not 192)
//   WG_M    consumer warpgroups splitting TB_M (each owns TB_M/WG_M rows, a multiple of 64)
//   STAGES  depth of the shared-memory ring (one k-tile per stage): 3..8
//   PINGPONG 1: two consumer warpgroups on alternate whole tiles (WG_M 1); absent in old params: 0
//   TB_K    channels of a k-tile (one filter tap): 64 (128-byte swizzle rows) or 32 (64-byte rows,
//           only where C/G % 64 is 1..32, e.g. Inception-v3's C = 32 layers); absent in old
//           params: 64. A solver axis: -DTB_K=32 is passed for 32 only, so TB_K 64 builds keep
//           their options.
//   FIX_SIZES 1: the problem's sizes compiled in (a build for this problem alone). Not searched:
//           the tuner's finishing step (Specialize) times the winner so and keeps the faster
//           (run-time sizes cost ~6 % here). A solver axis; absent in old params: 0.
//   SPLIT_K 2: each tile's k-tiles split between the two blocks of a thread-block cluster; each
//           block sums half the tile's columns from its own and its peer's FP32 partials
//           (distributed shared memory, fixed order: deterministic) and writes them. Only where
//           the unsplit tiles are fewer than two waves and a tile has 64 or more k-tiles (late
//           3x3 layers with C >= 512; the exchange costs ~1-2 us per tile). A solver axis; absent
//           in old params: 1.
// Validity is analytic: shared memory, at most 128 FP32 accumulators per thread, no tile twice
// the GEMM extent, rings no shallower than two below the deepest that fits, TB_K 32 and TB_N 32
// only where they move fewer bytes, SPLIT_K 2 only with fewer than two waves of tiles and 64 or
// more k-tiles. Where C/G % TB_K != 0 the build adds -DPARTIAL_K (a tap's last chunk issues only
// the k16 steps that hold channels); where, with TB_K 64 and one output phase, that chunk holds
// 32 channels or fewer, also -DLAST_K=16|32: it is copied as 16 or 32 channels through two more
// tensor maps (C = 80: 64 + 16 channels per tap instead of 128). Thread-safe and stateless.
class HopperTmaFwdSolver : public hopper_tma::TmaSolver {
 public:
  HopperTmaFwdSolver() : HopperTmaFwdSolver("TunaHopperTmaFwd") {}
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 protected:
  explicit HopperTmaFwdSolver(std::string_view name)
      : TmaSolver(name, Direction::kForward, hopper_tma::ForwardPlan) {}
  absl::Status Admits(const Problem& problem) const override;  // 2D forward
};

// TunaHopperTmaFwd3d (id 1040, a candidate: built and compile-tested, not yet run on a GPU):
// TunaHopperTmaFwd's kernel on 3-D forward problems of dense NDHWC tensors (-DSPATIAL3=1): x through
// a 5-D im2col map (padding, strides and dilation in all three dimensions by the copy engine, its
// bounding box within -16..15 per dimension), w (K, T, R, S, C/G) walked tap by tap, GEMM rows the
// N*Do*Ho*Wo output pixels. Axes, validity and defaults those of TunaHopperTmaFwd without SPLIT_K
// 2, LAST_K and FIX_SIZES. Thread-safe and stateless.
class HopperTmaFwd3dSolver : public HopperTmaFwdSolver {
 public:
  HopperTmaFwd3dSolver() : HopperTmaFwdSolver("TunaHopperTmaFwd3d") {}

 protected:
  absl::Status Admits(const Problem& problem) const override;  // 3-D forward
};

// TunaHopperTmaBwd (id 1014): backward data on Hopper's tensor cores, FP16/BF16 NHWC, as
// convolutions dx = dy (*) w' that TunaHopperTmaFwd's kernel runs (kernels/conv/hopper_tma_fwd.cu):
// w' is w with its taps rotated by 180 degrees and K and C/G swapped, which the kernel reads so
// from w in place (FLIP_W: wgmma takes the filter's rows N-major) where C/G % 8 == 0, else
// tuna_flip_filter writes it into the workspace as part of every run. Stride 1 is one forward convolution over dy (padding
// dilation*(filter-1) - padding). Stride 2 (per dimension) is split into its sub-pixel phases
// in the same launch: the dx pixels of one residue (a, b) mod the stride receive only the filter
// taps congruent to a + pad, b + pad, so each phase is a dense convolution over dy with its own
// taps and im2col box and no zero is multiplied; a phase that no tap reaches is written as zeros.
// FP32 accumulation; each dx element is written once (deterministic).
//
// Covers: strides 1 and 2 (2 with dilation 1), any padding within the copy engine's box,
// dilation, asymmetric filters, groups with K/G % 8 == 0 and C/G >= 8 when grouped, tails.
// sm_90 targets only. Axes, validity and defaults: those of TunaHopperTmaFwd (TB_M over dx
// pixels, TB_N over C/G), on BackwardDataPlan above. Workspace: none, or where C/G % 8 != 0
// C * R * S * K/G halves (w'). Thread-safe and stateless.
class HopperTmaBwdSolver : public hopper_tma::TmaSolver {
 public:
  HopperTmaBwdSolver() : HopperTmaBwdSolver("TunaHopperTmaBwd") {}
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 protected:
  explicit HopperTmaBwdSolver(std::string_view name)
      : TmaSolver(name, Direction::kBackwardData, hopper_tma::BackwardDataPlan) {}
  absl::Status Admits(const Problem& problem) const override;  // 2D backward data
};

// TunaHopperTmaBwd3d (id 1041, a candidate like TunaHopperTmaFwd3d): stride-1 backward data of 3-D
// NDHWC problems as TunaHopperTmaFwd3d's forward over dy with all T x R x S filter taps rotated (read
// so in place where C/G % 8 == 0, else tuna_flip_filter's copy). Thread-safe and stateless.
class HopperTmaBwd3dSolver : public HopperTmaBwdSolver {
 public:
  HopperTmaBwd3dSolver() : HopperTmaBwdSolver("TunaHopperTmaBwd3d") {}

 protected:
  absl::Status Admits(const Problem& problem) const override;  // 3-D, stride 1
};

}  // namespace tuna::solver

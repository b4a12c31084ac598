// The plan shared by the solvers that run kernels/conv/fast_simt_fwd.cu (TunaFastSimtFwd,
// TunaFastSimtBwd): a convolution as the kernel sees it — y (n, K, ...) from x (n, C, H, W) and
// w (K, C*taps) — in one or more output phases, plus its tile axes, validity, default, kernel
// builds and launches. Forward has one phase (the problem itself). Backward data is dx = dy (*) w'
// with w' the filter rotated and K, C swapped (tuna_simt_bwd_filter writes it into the
// workspace); a strided dimension splits into its sub-pixel phases: the dx rows of residue a mod
// the stride receive only the taps r = a + pad (mod stride), so each phase is a dense stride-1
// convolution over dy with its own sub-filter, written to every stride-th dx row from row a, and
// no zero is multiplied. Rows of a phase that no tap reaches are zeroed (Solution::zero_first).
// Stateless; internal to the conv solvers. The two solvers follow (one per direction).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver::fast_simt {

// The axes by name (the one place a config is decoded). GEMM M = pixels, N = output channels.
struct SimtParams {
  int tb_m, tb_n, tb_k, stages;
  static SimtParams Of(const SearchSpace& s, const PerfConfig& c);
};

// TB_N, TB_M, TB_K, STAGES (params order of the old tb_m = channels, tb_n = pixels naming);
// TB_M 32 only where 64-pixel tiles leave SMs idle (7x7 and 14x14 layers); the thin tile TB_N 8 x
// TB_M 256 (one warp) only for outputs of at most 8 channels (the stem's backward data). The
// GEMM axes: TunaWinograd* search them too.
SearchSpace Space();


// Dynamic shared memory of a config: STAGES * TB_K * (TB_M + (TB_N + 4)) floats.
uint64_t SharedBytes(int tb_m, int tb_n, int tb_k, int stages);

// One launch: output rows (i, j) of `rows` x `cols` land at y rows out_a + out_sh * i, columns
// out_b + out_sw * j; taps_h x taps_w filter taps at w_offset floats into w.
struct Phase {
  int64_t taps_h = 0, taps_w = 0;
  int64_t pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  int64_t rows = 0, cols = 0;
  int64_t out_a = 0, out_b = 0;
  int64_t w_offset = 0;
};

struct Plan {
  int64_t n = 0, c = 0, h = 0, w = 0;  // x (the reduction's channels)
  int64_t k = 0, out_h = 0, out_w = 0;  // y (all of it)
  int64_t stride_h = 1, stride_w = 1;    // the convolution's stride (1 for backward data)
  int64_t out_sh = 1, out_sw = 1;        // the phases' output step (1 for forward)
  std::vector<Phase> phases;
  bool Phased() const { return out_sh > 1 || out_sw > 1; }
  int64_t MaxTaps() const;
  int64_t MaxPixels() const;  // GEMM rows of the largest phase
};

Plan ForwardPlan(const Problem& p);
// y (rows, cols) = w (rows, depth) x (depth, cols), all dense: a 1x1 convolution of one image.
Plan GemmPlan(int64_t rows, int64_t depth, int64_t cols);
Plan BackwardDataPlan(const Problem& p);  // strided dimensions need dilation 1 there

// Filters up to this size are served (larger ones are not worth the SIMT kernels).
inline constexpr int64_t kMaxFilter = 11;

// A filter's (or a backward-data phase's) taps as kernels/conv/filter_taps.h takes them: a 1x1
// filter compiled in (-DTUNA_FR=1: the index split vanishes), any other as run-time arguments
// (-DTUNA_FR=0, R*S and S with their magic numbers), so one build per tile config serves every
// filter size and phase (issue #19). Compiling the taps in as well did not pay (H200,
// 2026-12-02, the finishing step over 7 winners: run-time taps 1.1 % / 3.1 % faster, geomean;
// docs/BENCHMARKS.md). The arguments go after the sizes in every launch.
std::vector<std::string> TapsOptions(int64_t taps_h, int64_t taps_w);
void AppendTapsArgs(int64_t taps_h, int64_t taps_w, std::vector<KernelArg>& args);

// Validity of `config` for `plan` (applicability checked by the caller).
absl::Status CheckValid(std::string_view solver, const Target& target, const Plan& plan, const PerfConfig& config);

// A large tile when it still gives most SMs two blocks, else a small one; always valid.
PerfConfig Default(const Target& target, const Plan& plan);

// `count` convolutions of one plan in one launch (grid.z): the z-th reads x at x_off + z * zx,
// w at w_off + z * zw and writes y at y_off + z * zy (floats into their buffers).
struct Batch {
  int64_t count = 1;
  int64_t x_off = 0, w_off = 0, y_off = 0;
  int64_t zx = 0, zw = 0, zy = 0;
};

// Appends the kernel builds (one per distinct taps option set and vector flag: at most run-time
// taps and 1x1) and one launch per phase: x from role `x`, w from role `w`, y into role `y`. The
// solution's kernel 0 also exports tuna_simt_bwd_filter.
void AppendConv(const Plan& plan, const PerfConfig& config, BufferRole x, BufferRole w, BufferRole y,
                Solution& sol, const Batch& batch = {});

// What TunaFastSimtFwd and TunaFastSimtBwd share: the axes, validity and default above on the
// plan of their direction (`plan`: ForwardPlan, BackwardDataPlan); IsValid accepts a config only
// for a problem IsApplicable admits (GetSolution agrees). Each adds its applicability and
// solution. Thread-safe and stateless.
class SimtSolver : public gpu::FastSolver {
 public:
  SearchSpace Space(const Target& target, const Problem& problem) const override;
  PerfConfig DefaultConfig(const Target& target, const Problem& problem) const override;
  absl::Status IsValid(const Target& target, const Problem& problem, const PerfConfig& config) const override;

 protected:
  SimtSolver(std::string_view name, Direction direction, Plan (*plan)(const Problem&))
      : FastSolver(name, direction, /*dynamic=*/false), plan_(plan) {}
  Plan PlanOf(const Problem& problem) const { return plan_(problem); }

 private:
  Plan (*plan_)(const Problem&);
};

}  // namespace tuna::solver::fast_simt

namespace tuna::solver {

// TunaFastSimtFwd (id 1011): FP32 NCHW forward convolution as a register-blocked SIMT implicit
// GEMM on NVIDIA sm_80+ (kernels/conv/fast_simt_fwd.cu), computed transposed so NCHW needs no
// transform (the kernel's rows are output channels); 8x8 micro-tiles, 128-bit shared reads,
// cp.async multi-stage pipeline; 1x1 / stride 1 / pad 0 layers with H*W % 4 == 0 load four
// pixels per 16-byte copy (a plain GEMM over the channels).
//
// Covers: conv mode, FP32, 2D, groups 1, any padding / stride / dilation, x, w, y dense NCHW.
// Not applicable on HIP targets (inline PTX). A 1x1 filter is compiled in (-DTUNA_FR/FS=1); any
// other size is a run-time argument, so one build per tile config serves every filter
// (TapsOptions above).
//
// GEMM (forward only), as in every tuna forward solver: M = N*Ho*Wo (output pixels),
// N = K (output channels), K = C*R*S.
// Axes (perf-db params in this order), each the kernel's -D name (SimtParams above):
//   TB_N    output channels per block (GEMM N; was tb_m, which is why it comes first)
//   TB_M    output pixels per block (GEMM M; was tb_n)
//   TB_K    reduction step
//   STAGES  cp.async ring depth.
class FastSimtFwdSolver : public fast_simt::SimtSolver {
 public:
  FastSimtFwdSolver() : SimtSolver("TunaFastSimtFwd", Direction::kForward, fast_simt::ForwardPlan) {}
  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;
};

// TunaFastSimtBwd (id 1015): FP32 NCHW backward data on TunaFastSimtFwd's kernel
// (kernels/conv/fast_simt_fwd.cu) as dx = dy (*) w': tuna_simt_bwd_filter writes w' (taps rotated,
// K and C swapped; per sub-pixel phase of a strided dimension, only that phase's taps) into the
// workspace, part of every run; then one launch per phase (Plan above): stride 1 is a single
// convolution over dy, stride s splits dx into s x s residues that each take their own taps, so
// no multiply by an inserted zero is done. Each dx element is written once (deterministic).
//
// Covers: FP32, 2D, groups 1, x, w, y dense NCHW, any padding, dilation in unstrided dimensions,
// strides up to 4 (dilation 1 in a strided dimension), filters up to 11x11, tails. CUDA sm_80+.
// Axes, validity and defaults: TunaFastSimtFwd's (TB_M over dx pixels, TB_N over C).
// Workspace: K * C * R * S floats (w'). Thread-safe and stateless.
class FastSimtBwdSolver : public fast_simt::SimtSolver {
 public:
  FastSimtBwdSolver() : SimtSolver("TunaFastSimtBwd", Direction::kBackwardData, fast_simt::BackwardDataPlan) {}
  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;
};

}  // namespace tuna::solver

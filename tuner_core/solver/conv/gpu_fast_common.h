// Helpers of tuna's fast CUDA solvers (gpu_fast_tc.cc, gpu_fast_simt*.cc, gpu_hopper*.cc): the
// checks they share (CUDA sm_80+, dense 2D tensors, 32-bit indices) and their class shape
// (FastSolver). Pure functions and stateless classes, thread-safe.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/perf_config.h"
#include "tuner_core/solver/solution.h"
#include "tuner_core/solver/solver.h"
#include "tuner_core/solver/target.h"

namespace tuna::solver::gpu {

// What every fast CUDA solver is: a tunable implicit GEMM of one direction. Its name and
// direction are data, and `dynamic` (Solver::IsDynamic) where one build serves every problem
// size; each solver adds the planning verbs. Stateless; `name` is a string literal.
class FastSolver : public Solver {
 public:
  std::string_view Name() const override { return name_; }
  Algorithm Algo() const override { return Algorithm::kImplicitGemm; }
  bool IsTunable() const override { return true; }
  bool IsDynamic() const override { return dynamic_; }
  std::vector<Direction> Directions() const override { return {direction_}; }

 protected:
  FastSolver(std::string_view name, Direction direction, bool dynamic)
      : name_(name), direction_(direction), dynamic_(dynamic) {}

 private:
  std::string_view name_;
  Direction direction_;
  bool dynamic_;
};

// OK for a 2D, ungrouped (unless rules.groups), undilated-or-dilated convolution of `type` in
// rules.direction whose x, w and y are all `layout` (NCHW or NHWC) with dense strides, on a CUDA
// target of rules.min_sm or newer (the kernels use cp.async / mma.sync inline PTX: HIP targets
// are not applicable), with every index the kernels form below 2^31. Else NotApplicable naming
// `solver` and the reason.
struct FastConvRules {
  int min_sm = 80;      // the oldest NVIDIA arch the kernel builds for
  bool groups = false;  // grouped convolutions allowed (the kernel indexes by group)
  Direction direction = Direction::kForward;
};
absl::Status CheckFastConv(std::string_view solver, const Target& target, const Problem& problem,
                           DataType type_a, DataType type_b, Layout layout, FastConvRules rules = {});

// True when `desc` has the dense strides of `layout` for its dims.
bool IsDense(const TensorDesc& desc, Layout layout);

// The copy engine's shared-memory swizzle for rows of `channels` 16-bit elements, each row one
// swizzle span: 16 -> 32 bytes, 32 -> 64, 64 -> 128.
backend::TensorMapSpec::Swizzle RowSwizzle(int channels);

// OK for a CUDA sm_90 target (the sm_90a builds) and an FP16/BF16 convolution of `direction` that
// passes CheckCommon; else NotApplicable naming `solver`. The layouts are the caller's.
absl::Status CheckSm90a16(std::string_view solver, const Target& target, const Problem& problem, Direction direction);

// OK for what the TMA + wgmma kernels (sm_90a) take: CheckSm90a16, and a 2D convolution with
// dense NHWC x, w and y; else NotApplicable naming `solver`.
absl::Status CheckSm90aNhwc16(std::string_view solver, const Target& target, const Problem& problem,
                              Direction direction);

// The axes of the cp.async wgmma solvers (TunaHopperFwd, TunaHopperWrw) by name: the one place
// their configs are decoded; their spaces list them in this order.
struct HopperTile {
  int tb_m, tb_n, wg_m, stages, split_k = 1;
  static HopperTile Of(const SearchSpace& s, const PerfConfig& c);
  PerfConfig Config(const SearchSpace& s) const;
};

// Fraction of the persistent blocks' rounds that do work: `blocks` units over `num_cu` SMs.
double WaveEfficiency(int64_t blocks, int num_cu);

// Whether `split` pixel ranges of `tile_units` output tiles pay in the TMA backward-weights
// kernels: one split always; more while they fill the GPU and, past one wave, fill >= 3/4 of every
// round (8 rounds at most), each with 4+ of the `pixel_tiles` pixel tiles.
bool WrwSplitsPay(int64_t tile_units, int split, int64_t pixel_tiles, int num_cu);

// The launch of tuna_hopper_wrw_reduce (kernels/conv/wrw_reduce.h, built into kernel 0 of
// TunaHopperWrw and TunaHopperTmaWrw): dw (K*R*S rows of C/G channels) from `split_k` FP32
// workspace slices of `cp` >= C/G channels per row, `ws_offset` floats into the workspace.
Launch HopperWrwReduceLaunch(const Problem& p, int64_t cp, int split_k, int64_t ws_offset);

// Channels per pixel of x that the 16-byte-chunk Hopper kernels read: C/G itself when a multiple
// of 8; else (ungrouped only) C padded to 4 (two 8-byte taps per chunk, CHUNK 8) or to a multiple
// of 8, in a copy the solver makes in its workspace (tuna_pad_channels).
int64_t ChunkChannels(const Problem& p);
inline bool PadsChannels(const Problem& p) { return ChunkChannels(p) != p.c / p.groups; }

}  // namespace tuna::solver::gpu

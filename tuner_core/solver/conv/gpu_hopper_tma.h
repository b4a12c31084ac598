// The plan shared by the solvers that run kernels/conv/hopper_tma_fwd.cu (TunaHopperTmaFwd,
// TunaHopperTmaBwd): a forward convolution as the kernel sees it (x, w as (K, R, S, C/G), y, all
// NHWC), its tile axes, validity, default, shared memory, tensor maps and launch. A backward
// solver maps its problem to the equivalent forward one (`fwd`) and its buffers to roles.
// Stateless; internal to the conv solvers.
#pragma once

#include <cstdint>
#include <string_view>

#include "tuner_core/solver/solver.h"

namespace tuna::solver::hopper_tma {

// The axes by name (the one place a config is decoded); Space() lists them in params order.
struct TmaParams {
  int tb_m, tb_n, wg_m, stages;
  static TmaParams Of(const SearchSpace& s, const PerfConfig& c);
  PerfConfig Config(const SearchSpace& s) const;
  int Threads() const { return 128 * (wg_m + 1); }
};

SearchSpace Space();

// Dynamic shared memory of a config: 1 KiB of alignment, the ring, the consumers' epilogue
// slabs (16 x 72 halves per warp) and two mbarriers per stage.
uint64_t SharedBytes(int tb_m, int tb_n, int wg_m, int stages);

// The target and the original problem `p` (of any direction: type, layout, density), then the
// forward problem `fwd` the kernel runs (C/G % 64, strides, the copy engine's bounding box, sizes).
absl::Status CheckApplicable(std::string_view solver, const Target& target, const Problem& p, const Problem& fwd);

// Analytic validity of `config` for `fwd` (applicability checked by the caller).
absl::Status CheckValid(std::string_view solver, const Target& target, const Problem& fwd, const PerfConfig& config);

// The largest tile that still gives most SMs a block, with the deepest ring that fits.
PerfConfig Default(const Target& target, const Problem& fwd);

// The kernel build of `config` (sm_90a; entries: the convolution, then tuna_flip_filter).
KernelBuild Build(const Problem& fwd, const PerfConfig& config);

// The persistent launch of kernel 0 over `fwd`: x' from role `x`, w' from role `w` (`w_offset`
// bytes in), y' into role `y`.
Launch ConvLaunch(const Target& target, const Problem& fwd, const PerfConfig& config, BufferRole x, BufferRole w,
                  int64_t w_offset, BufferRole y);

}  // namespace tuna::solver::hopper_tma

// A channels-last solver run on a problem whose tensors are not all channels-last (MIOpen's own
// path for its NHWC implicit-GEMM solvers on NCHW problems: transpose in, solve, transpose out).
//
// ChannelsLastAdapter wraps one solver that handles NHWC / NDHWC tensors (`inner`, e.g.
// TunaHopperTmaFwd) and offers it, under its own name and id, for the same problem with NCHW /
// NCDHW (or mixed) tensors. Its planning is the inner solver's on ChannelsLast(problem): the same
// space, default, validity and finishing step, so the params it stores are the inner solver's.
// Its solution is the inner one with every tensor that is not already channels-last (nor one
// whose layouts are the same bytes: one channel or one pixel, e.g. a 1x1 filter) moved to a
// workspace region: the inputs transposed there first (kernels/conv/layout_transpose.cu), the
// inner launches reading and writing the regions, the output transposed back last. The inner's
// own workspace is a further region; inner buffers zeroed first that now live in the workspace
// are zeroed by a fill launch of that region (the rest stay in Solution::zero_first). Regions are
// 256-byte aligned, as the allocators align whole buffers.
// Costs one read and one write of each moved tensor: the adapter pays where the inner kernel is
// much faster than the solvers that read the layout natively (tensor cores against SIMT).
// Not applicable where the inner solver runs the problem as it is (TunaHopperTmaFwd/Bwd on NCHW
// 1x1 layers: per-image GEMMs, no copies).
// Stateless; thread-safe like every solver.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tuner_core/solver/conv/wrapping_solver.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

// `p` with x, w and y in the channels-last layout of its dimensionality (NHWC, NDHWC).
Problem ChannelsLast(const Problem& p);

class ChannelsLastAdapter : public WrappingSolver {
 public:
  // `name`: the adapter's own (perf-db) name; `inner` must be non-null.
  ChannelsLastAdapter(std::string name, std::unique_ptr<Solver> inner);

  std::string_view Name() const override { return name_; }

  // NotApplicable where every tensor already is channels-last (the inner solver runs it itself),
  // for INT8, tensors that are not densely packed, sizes past the layout kernel's 32-bit rows and
  // columns, and where the inner solver refuses the channels-last problem (its reason quoted).
  TUNA_TUNABLE_SOLVER_VERBS
  std::optional<PerfConfig> Specialize(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 private:
  std::string name_;
};

}  // namespace tuna::solver

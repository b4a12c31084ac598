// A channels-last solver run on a problem whose tensors are not all channels-last (MIOpen's own
// path for its NHWC implicit-GEMM solvers on NCHW problems: transpose in, solve, transpose out).
//
// ChannelsLastAdapter wraps one solver that handles NHWC / NDHWC tensors (`inner`, e.g.
// TunaHopperTmaFwd) and offers it, under its own name and id, for the same problem with NCHW /
// NCDHW (or mixed) tensors: planned as the inner solver on ChannelsLast(problem), every tensor that
// is not already channels-last (nor one whose layouts are the same bytes: one channel or one pixel,
// e.g. a 1x1 filter) transposed into a workspace region and back (tensor_move_adapter.h).
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

#include "tuner_core/solver/conv/tensor_move_adapter.h"

namespace tuna::solver {

// `p` with x, w and y in the channels-last layout of its dimensionality (NHWC, NDHWC).
Problem ChannelsLast(const Problem& p);

class ChannelsLastAdapter : public TensorMoveAdapter {
 public:
  // `name`: the adapter's own (perf-db) name; `inner` must be non-null.
  ChannelsLastAdapter(std::string name, std::unique_ptr<Solver> inner)
      : TensorMoveAdapter(std::move(name), std::move(inner)) {}

 protected:
  // NotApplicable where every tensor already is channels-last (the inner solver runs it itself),
  // for INT8, tensors that are not densely packed, sizes past the layout kernel's 32-bit rows and
  // columns, and where the inner solver runs the problem as it is.
  absl::Status Admits(const Target& target, const Problem& problem) const override;
  Problem Planned(const Problem& problem) const override { return ChannelsLast(problem); }
  std::string_view PlannedWhat() const override { return "channels-last"; }
  bool Moves(const Problem& problem, BufferRole role) const override;
  std::vector<std::string> MoveEntries() const override;
  Launch MoveLaunch(int kernel, const Problem& problem, BufferRole role, bool in, Place from, Place to) const override;
};

}  // namespace tuna::solver

// A solver that takes one channel order run on problems in the other: transpose in, solve,
// transpose out (MIOpen's own path for its NHWC implicit-GEMM solvers on NCHW problems).
//
// ChannelsLastAdapter wraps one solver that handles NHWC / NDHWC tensors (`inner`, e.g.
// TunaHopperTmaFwd) and offers it, under its own name and id, for the same problem with NCHW /
// NCDHW (or mixed) tensors; ChannelsFirstAdapter is the mirror (NCHW inner solvers such as
// TunaFastSimtFwd and the Winograd family on NHWC / NDHWC problems, the layout FP32 users of
// channels-last frameworks send). Planned as the inner solver on the problem with every tensor in
// the inner's order, every tensor that is not already so (nor one whose two orders are the same
// bytes: one channel or one pixel, e.g. a 1x1 filter) transposed into a workspace region and
// back (tensor_move_adapter.h). Costs one read and one write of each moved tensor: an adapter
// pays where the inner kernel is much faster than the solvers that read the layout natively.
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
// `p` with x, w and y channels-first (NCHW, NCDHW).
Problem ChannelsFirst(const Problem& p);

class ChannelOrderAdapter : public TensorMoveAdapter {
 protected:
  // `inner_last`: the inner solver takes channels-last tensors (else channels-first); `inner`
  // must be non-null.
  ChannelOrderAdapter(std::string name, std::unique_ptr<Solver> inner, bool inner_last)
      : TensorMoveAdapter(std::move(name), std::move(inner)), inner_last_(inner_last) {}

  // Admits: NotApplicable where every tensor already is in the inner's order (the inner solver
  // runs it itself), for INT8, tensors that are not densely packed, sizes past the layout kernel's
  // 32-bit rows and columns, and where the inner solver runs the problem as it is.
  TUNA_TENSOR_MOVE_VERBS
  std::string_view PlannedWhat() const override { return inner_last_ ? "channels-last" : "channels-first"; }

 private:
  bool inner_last_;
};

// NCHW / NCDHW (and mixed) problems on a channels-last solver.
class ChannelsLastAdapter : public ChannelOrderAdapter {
 public:
  ChannelsLastAdapter(std::string name, std::unique_ptr<Solver> inner)
      : ChannelOrderAdapter(std::move(name), std::move(inner), /*inner_last=*/true) {}
};

// NHWC / NDHWC (and mixed) problems on a channels-first solver.
class ChannelsFirstAdapter : public ChannelOrderAdapter {
 public:
  ChannelsFirstAdapter(std::string name, std::unique_ptr<Solver> inner)
      : ChannelOrderAdapter(std::move(name), std::move(inner), /*inner_last=*/false) {}
};

}  // namespace tuna::solver

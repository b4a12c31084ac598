// A 2-D channels-first solver run on 3-D NCDHW problems whose depth is an identity (one tap, no
// padding, stride 1: R(2+1)D's and SlowFast's 1x3x3 layers), as the 2-D problem of N*D images
// (problem/flatten.h, DepthAsBatch).
//
// DepthBatchAdapter wraps one solver of 2-D NCHW problems (`inner`, e.g. TunaFastSimtFwd or
// TunaWinogradF4x3) and offers it, under its own name and id, for those 3-D problems: x and y move
// between (N, C, D, H, W) and (N, D, C, H, W) — a batched transpose of C x D runs of H*W elements
// (kernels/conv/layout_transpose.cu, tuna_transpose_runs) — into workspace regions and back; the
// filter (one depth tap) is the same bytes (tensor_move_adapter.h has the rest). Costs one read and
// one write of x and y: it pays where the 2-D kernel is much faster than the 3-D solvers
// (TunaIgemm). Channels-last problems of this kind need no copies (FlattenTo2d: every registered
// solver runs them), nor do those FlattenTo2d flattens otherwise: the adapter refuses both.
// Stateless; thread-safe like every solver.
#pragma once

#include <string_view>

#include "tuner_core/solver/conv/tensor_move_adapter.h"

namespace tuna::solver {

class DepthBatchAdapter : public TensorMoveAdapter {
 public:
  using TensorMoveAdapter::TensorMoveAdapter;  // (name, inner)

 protected:
  // Admits: NotApplicable for 2-D problems, a depth that is not an identity, problems FlattenTo2d
  // flattens, channels-last x or y, INT8, runs past the layout kernel's 32-bit grid, and where the
  // inner solver runs the problem as it is.
  TUNA_TENSOR_MOVE_VERBS
  std::string_view PlannedWhat() const override { return "depth-as-batch"; }
};

}  // namespace tuna::solver

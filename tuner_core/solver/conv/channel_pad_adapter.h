// A channels-last solver whose copies need whole 16-byte channel rows (C/G and K/G multiples of 8
// in FP16/BF16, of 4 in FP32: the TMA solvers) run on problems whose C/G or K/G is not one
// (R(2+1)D's 45, 230, 460 and 921 mid channels; width-multiplied networks), with the channels
// padded by zeros: the problem planned is the same convolution with C/G or K/G rounded up, which
// computes the same numbers (zero channels add zero products).
//
// ChannelPadAdapter wraps one solver of NHWC / NDHWC problems (`inner`) and offers it, under its
// own name and id: the inputs whose channels grow are copied padded into workspace regions (x: its
// C/G per group; dy: its K/G; w: its rows per group (K/G) or its channels (C/G)), the inner
// launches run on the regions, and a written tensor that grew is copied back without the padding
// (kernels/conv/layout_transpose.cu, tuna_pad_rows; tensor_move_adapter.h has the rest). One of C/G
// and K/G is padded, not both. Costs one read and one write of each padded tensor: it pays where
// the inner kernel is much faster than those that read the rows as they are (TunaIgemm).
// Stateless; thread-safe like every solver.
#pragma once

#include <string_view>

#include "tuner_core/solver/conv/tensor_move_adapter.h"

namespace tuna::solver {

class ChannelPadAdapter : public TensorMoveAdapter {
 public:
  using TensorMoveAdapter::TensorMoveAdapter;  // (name, inner)

  // Generic (searched briefly where a specialised solver applies too) where more than a third of
  // the padded channels are zeros (an RGB stem's 3 -> 8: the small-C solvers' layers); otherwise
  // as the inner solver.
  bool IsGeneric(const Target& target, const Problem& problem) const override;

 protected:
  // Admits: NotApplicable unless x, w and y are channels-last, FP32, FP16 or BF16, exactly one of
  // C/G and K/G is off a 16-byte row, the rows fit the layout kernel's 32-bit columns, and the
  // inner solver does not run the problem as it is.
  TUNA_TENSOR_MOVE_VERBS
  std::string_view PlannedWhat() const override { return "channel-padded"; }
};

}  // namespace tuna::solver

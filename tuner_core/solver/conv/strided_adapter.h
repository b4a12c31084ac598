// A solver of stride-1 layers run on strided 1x1 (1x1x1) layers without padding: the ResNet-style
// projections of 3-D networks (R3D, R(2+1)D, SlowFast: stride 2 in depth, height and width), which
// no 2-D solver takes (a depth stride keeps them off FlattenTo2d) and no 3-D tensor-core solver
// runs backward.
//
// A 1x1 layer reads x only where every coordinate is a multiple of its stride: its lattice. The
// problem planned is the same layer on the lattice with stride 1 (input size = output size), which
// every 2-D solver runs (FlattenTo2d: N*D images, or one (D*H, W) image). StridedAdapter wraps one
// such solver (`inner`) and offers it, under its own name and id: forward and backward weights
// copy the lattice of x into a workspace region first; backward data computes the lattice of dx
// there and copies it back, zeros off the lattice (kernels/conv/layout_transpose.cu,
// tuna_lattice_rows; tensor_move_adapter.h has the rest). w and y are used in place. Costs a read of
// the lattice and a write of its copy (backward data: a write of the whole dx, as any solver's):
// it pays where the inner kernel is much faster than those that take the strides (TunaIgemm).
// Stateless; thread-safe like every solver.
#pragma once

#include <string_view>

#include "tuner_core/solver/conv/tensor_move_adapter.h"

namespace tuna::solver {

class StridedAdapter : public TensorMoveAdapter {
 public:
  using TensorMoveAdapter::TensorMoveAdapter;  // (name, inner)

 protected:
  // Admits: NotApplicable unless the filter is one tap, there is no padding (convolution mode,
  // explicit pads) and some stride is above 1; for INT8, x's elements past the layout kernel's
  // 32-bit rows, and where the inner solver runs the problem as it is.
  TUNA_TENSOR_MOVE_VERBS
  std::string_view PlannedWhat() const override { return "stride-1 lattice"; }
};

}  // namespace tuna::solver

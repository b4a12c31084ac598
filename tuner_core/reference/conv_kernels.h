// Direct-convolution loop nests on dense, channels-first buffers (private to reference/).
//
// Buffers: x [N][C][ID][IH][IW], w [K][Cg][FD][FH][FW], y [N][K][OD][OH][OW], all contiguous.
// T is the accumulation type (float, double or int32_t); inputs are already converted to it.
// Each kernel partitions its outputs into independent work items (forward: (n,k) planes;
// backward data: (n,c) planes; backward weights: (k,cg) filter slices) and sums the terms of
// every output element in an order fixed by the geometry alone, so results do not depend on
// the thread count. Outputs are overwritten.
#pragma once

#include <array>
#include <cstdint>

#include "tuner_core/problem/problem.h"

namespace tuna::reference::internal {

struct ConvGeometry {
  int64_t n = 1, groups = 1;
  int64_t cg = 1, kg = 1;  // input / output channels per group
  std::array<int64_t, 3> in{}, fil{}, out{}, pad{}, stride{}, dil{};

  int64_t C() const { return cg * groups; }
  int64_t K() const { return kg * groups; }
  int64_t InPlane() const { return in[0] * in[1] * in[2]; }
  int64_t OutPlane() const { return out[0] * out[1] * out[2]; }
  int64_t Taps() const { return fil[0] * fil[1] * fil[2]; }
};

// Assumes CheckProblem(p) passed.
ConvGeometry MakeGeometry(const Problem& p);

template <typename T>
void ForwardDense(const ConvGeometry& g, const T* x, const T* w, T* y, int threads);
template <typename T>
void BackwardDataDense(const ConvGeometry& g, const T* dy, const T* w, T* dx, int threads);
template <typename T>
void BackwardWeightsDense(const ConvGeometry& g, const T* x, const T* dy, T* dw, int threads);

}  // namespace tuna::reference::internal

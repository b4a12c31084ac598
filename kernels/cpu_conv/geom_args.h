// The convolution geometry of the naive/GEMM CPU kernels, read from the kernel arguments: the
// TUNA_CONV_GEOM_NARGS int64 values starting at argument `first`, in the order the solvers pass
// them (tuner_core/solver/conv/naive_args.cc).
#pragma once

#include "cpu/cpu_kernel.h"
#include "cpu_conv/cpu_portability.h"
#include "conv/naive_conv_geom.h"

static inline TunaConvGeom GeomFromArgs(void** args, int first) {
  tuna_i64 v[TUNA_CONV_GEOM_NARGS];
  for (int i = 0; i < TUNA_CONV_GEOM_NARGS; ++i) v[i] = tuna_arg<tuna_i64>(args, first + i);
  TunaConvGeom g;
  int i = 0;
  g.n = v[i++]; g.c = v[i++]; g.k = v[i++]; g.groups = v[i++];
  for (int d = 0; d < 3; ++d) g.in[d] = v[i++];
  for (int d = 0; d < 3; ++d) g.fil[d] = v[i++];
  for (int d = 0; d < 3; ++d) g.out[d] = v[i++];
  for (int d = 0; d < 3; ++d) g.pad[d] = v[i++];
  for (int d = 0; d < 3; ++d) g.stride[d] = v[i++];
  for (int d = 0; d < 3; ++d) g.dil[d] = v[i++];
  for (int d = 0; d < 5; ++d) g.xs[d] = v[i++];
  for (int d = 0; d < 5; ++d) g.ws[d] = v[i++];
  for (int d = 0; d < 5; ++d) g.ys[d] = v[i++];
  return g;
}

// The cpu backend's twin of conv/small_c_fwd.cu (TunaSmallCFwd): the same body
// (conv/small_c_fwd_impl.h), the same options, arguments and grid. A call runs one block: it
// stages the block's patch and filter slice into arrays of its own (the block's shared memory),
// then runs the block's threads one after another (the body has one barrier, between the two).
// Scalar loads and stores only (TUNA_SC_VECTOR_IO 0); the compiler vectorises.
#include "cpu/cpu_kernel.h"
#include "cpu_conv/cpu_portability.h"

#include "conv/elem_type.h"

#define TUNA_SC_VECTOR_IO 0
#include "conv/small_c_fwd_impl.h"

TUNA_CPU_KERNEL(tuna_small_c_fwd) {
  ScArgs a;
  a.x = tuna_arg<const tuna_elem*>(args, 0);
  a.w = tuna_arg<const tuna_elem*>(args, 1);
  a.y = tuna_arg<tuna_elem*>(args, 2);
  int* sizes[] = {&a.hi, &a.wi, &a.ho, &a.wo, &a.kg, &a.k_tiles};
  for (int i = 0; i < 6; ++i) *sizes[i] = tuna_arg<int>(args, 3 + i);
  tuna_i64* strides[] = {&a.xs0, &a.xs1, &a.xs3, &a.xs4, &a.ws0, &a.ws1, &a.ws3, &a.ws4, &a.ys0, &a.ys1, &a.ys3, &a.ys4};
  for (int i = 0; i < 12; ++i) *strides[i] = tuna_arg<tuna_i64>(args, 9 + i);
  alignas(16) float sx[kScXFloats];
  alignas(16) float sw[kScWFloats];
  const ScBlock b = sc_block(a, (int)launch->block_idx.x, (int)launch->block_idx.y);
  for (int i = 0; i < kScXStaged; ++i) sc_stage_x(a, b, i, sx);
  for (int i = 0; i < kScWFloats; ++i) sc_stage_w(a, b, i, sw);
  for (int tid = 0; tid < kScThreads; ++tid) sc_compute(a, b, tid, sx, sw);
}

// Naive direct convolution for the cpu backend: the CPU side of ConvDirectNaiveConv{Fwd,Bwd,Wrw},
// with the semantics of the GPU kernel (the same element body, conv/naive_conv_impl.h).
//
// The written tensor's elements, in memory order, are split into one contiguous range per
// block of the launch grid; the backend's thread pool runs the blocks in parallel. Block
// "threads" (launch->block) are not used: the solver launches block = 1.
//
// Options: -DTUNA_DTYPE_FP32 | FP16 | BF16 | INT8 (INT8: forward only, int32 output).
// Arguments (all three entries): x, w, y buffers, then the 37 geometry integers.
#include "cpu/cpu_kernel.h"
#include "cpu_conv/cpu_portability.h"
#include "conv/naive_conv_geom.h"
#include "cpu_conv/geom_args.h"
#include "conv/naive_conv_impl.h"

namespace {

// This block's share [*begin, *end) of `total` elements.
void BlockRange(const TunaCpuLaunch* launch, tuna_i64 total, tuna_i64* begin, tuna_i64* end) {
  const tuna_i64 blocks = (tuna_i64)launch->grid.x * launch->grid.y * launch->grid.z;
  const tuna_i64 b = launch->block_idx.x +
                     (tuna_i64)launch->grid.x * (launch->block_idx.y +
                                                 (tuna_i64)launch->grid.y * launch->block_idx.z);
  *begin = total / blocks * b + (b < total % blocks ? b : total % blocks);
  *end = *begin + total / blocks + (b < total % blocks ? 1 : 0);
}

}  // namespace

TUNA_CPU_KERNEL(naive_conv_fwd) {
  const tuna_conv_in_t* x = tuna_arg<const tuna_conv_in_t*>(args, 0);
  const tuna_conv_in_t* w = tuna_arg<const tuna_conv_in_t*>(args, 1);
  tuna_conv_out_t* y = tuna_arg<tuna_conv_out_t*>(args, 2);
  const TunaConvGeom g = GeomFromArgs(args, 3);
  tuna_i64 begin, end;
  BlockRange(launch, tuna_naive_fwd_count(g), &begin, &end);
  for (tuna_i64 i = begin; i < end; ++i) tuna_naive_fwd_one(g, x, w, y, i);
}

TUNA_CPU_KERNEL(naive_conv_bwd) {
  tuna_conv_out_t* x = tuna_arg<tuna_conv_out_t*>(args, 0);
  const tuna_conv_in_t* w = tuna_arg<const tuna_conv_in_t*>(args, 1);
  const tuna_conv_in_t* y = tuna_arg<const tuna_conv_in_t*>(args, 2);
  const TunaConvGeom g = GeomFromArgs(args, 3);
  tuna_i64 begin, end;
  BlockRange(launch, tuna_naive_bwd_count(g), &begin, &end);
  for (tuna_i64 i = begin; i < end; ++i) tuna_naive_bwd_one(g, x, w, y, i);
}

TUNA_CPU_KERNEL(naive_conv_wrw) {
  const tuna_conv_in_t* x = tuna_arg<const tuna_conv_in_t*>(args, 0);
  tuna_conv_out_t* w = tuna_arg<tuna_conv_out_t*>(args, 1);
  const tuna_conv_in_t* y = tuna_arg<const tuna_conv_in_t*>(args, 2);
  const TunaConvGeom g = GeomFromArgs(args, 3);
  tuna_i64 begin, end;
  BlockRange(launch, tuna_naive_wrw_count(g), &begin, &end);
  for (tuna_i64 i = begin; i < end; ++i) tuna_naive_wrw_one(g, x, w, y, i);
}

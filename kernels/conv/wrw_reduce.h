// tuna_hopper_wrw_reduce: the in-order sum of the FP32 split-K slices of the Hopper
// backward-weights kernels (hopper_wrw.cu, hopper_tma_wrw.cu), rounded once to FP16/BF16.
// Include after common/portability.h and conv/hopper_ops.h (tuna_pack2).
#pragma once

// dw[row][c] = round(sum over z in 0..splits-1 of ws[z][row][c]) for row < rows (K*R*S), c < C,
// where ws has Cp >= C channels per row (the padding ones dropped); slices summed in order:
// deterministic. Unpadded (Cp == C, rows * C % 4 == 0): four elements per thread.
TUNA_GLOBAL void TUNA_LAUNCH_BOUNDS(256)
    tuna_hopper_wrw_reduce(const float* TUNA_RESTRICT ws, tuna_u16* TUNA_RESTRICT dw, long long ws_off, long long rows,
                           int Cp, int C, int splits) {
  ws += ws_off;
  const long long t = static_cast<long long>(TUNA_BID_X) * TUNA_BDIM_X + TUNA_TID_X;
  const long long slice = rows * Cp;
  if (Cp == C) {
    const long long i = t * 4;
    if (i >= slice) return;
    float4 sum = *reinterpret_cast<const float4*>(ws + i);
    for (int z = 1; z < splits; ++z) {
      const float4 v = *reinterpret_cast<const float4*>(ws + z * slice + i);
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
    *reinterpret_cast<uint2*>(dw + i) = make_uint2(tuna_pack2(sum.x, sum.y), tuna_pack2(sum.z, sum.w));
    return;
  }
  if (t >= rows * C) return;
  const long long row = t / C;
  const long long src = row * Cp + (t - row * C);
  float sum = ws[src];
  for (int z = 1; z < splits; ++z) sum += ws[z * slice + src];
  dw[t] = static_cast<tuna_u16>(tuna_pack2(sum, 0.f) & 0xffff);
}

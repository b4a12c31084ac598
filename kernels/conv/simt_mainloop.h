// The FP32 SIMT mainloop of fast_simt_fwd.cu and fast_simt_wrw.cu: a kStages-deep cp.async ring of
// k-major tiles, A (kRowsA rows, row stride kLdA floats) then B (kRowsB columns, kLdB), kTbK
// reduction steps per stage, filled by load_tile(stage, step) (which issues the cp.async copies of
// one step); each thread accumulates an 8x8 micro-tile: rows ty*4.. and kRowsA/2 + ty*4..,
// columns tx*4.. and kRowsB/2 + tx*4.., read as 128-bit shared loads. On return every copy has
// landed; callers that reuse the ring must still synchronise the block.
#pragma once

template <int kTbK, int kStages, int kLdA, int kLdB, int kRowsA, int kRowsB, typename LoadTile>
TUNA_DEVICE void tuna_simt_mainloop(const float* smem, int steps, int tx, int ty, LoadTile&& load_tile,
                                    float (&acc)[8][8]) {
  constexpr int kStageFloats = kTbK * (kLdA + kLdB);
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  // The prologue's copies stay a loop: each inlined load_tile is the largest block of the kernel
  // (a gather's address arithmetic), and unrolling it STAGES - 1 times made thin tiles' builds
  // ~1.6x longer for copies issued once per block.
#pragma unroll 1
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < steps) load_tile(s, s);
    tuna_cp_commit();
  }
  for (int kt = 0; kt < steps; ++kt) {
    tuna_cp_wait<kStages - 2>();
    TUNA_SYNC();
    const int next = kt + kStages - 1;
    if (next < steps) load_tile(next % kStages, next);
    tuna_cp_commit();
    const float* As = smem + (kt % kStages) * kStageFloats;
    const float* Bs = As + kTbK * kLdA;
#pragma unroll
    for (int k = 0; k < kTbK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(As + k * kLdA + ty * 4);
      const float4 a1 = *reinterpret_cast<const float4*>(As + k * kLdA + kRowsA / 2 + ty * 4);
      const float4 b0 = *reinterpret_cast<const float4*>(Bs + k * kLdB + tx * 4);
      const float4 b1 = *reinterpret_cast<const float4*>(Bs + k * kLdB + kRowsB / 2 + tx * 4);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }
  tuna_cp_wait<0>();
}

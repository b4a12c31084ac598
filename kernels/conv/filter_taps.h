// The split of an implicit-GEMM index over a filter's taps, k = (c * R + r) * S + s (s fastest),
// shared by fast_simt_fwd.cu (its reduction index) and fast_simt_wrw.cu (its dw columns).
//
// A build that names the filter (TUNA_FR, TUNA_FS > 0; the solvers do for 1x1 filters) divides by
// constants: nothing at all for 1x1. A build with TUNA_FR = TUNA_FS = 0 takes R and S at run
// time, with the host's magic numbers of R*S and S (gpu::MakeFastDiv; mul 0 stands for 1), so one
// build serves every filter size and every sub-pixel phase of a backward-data launch (issue #19:
// one code object per tile config). Constants instead of the magic numbers did not pay (H200,
// 2026-12-02: run-time taps 1.1 % / 3.1 % faster over 7 winners, forward / backward data).
#pragma once

#include "conv/fast_div.h"

#ifndef TUNA_FR
#error "filter_taps.h needs TUNA_FR and TUNA_FS (0: run-time taps)"
#endif

constexpr bool kTunaRuntimeTaps = TUNA_FR == 0;
static_assert((TUNA_FR == 0) == (TUNA_FS == 0), "TUNA_FR and TUNA_FS are both 0 (run time) or both sizes");

// R*S and S with their divisors' magic numbers, as the launch passes them (ignored by a build
// with compile-time taps).
struct TunaTaps {
  int rs, s;
  unsigned rs_mul, rs_shr, s_mul, s_shr;
};

TUNA_DEVICE int tuna_taps_rs(const TunaTaps& t) { return kTunaRuntimeTaps ? t.rs : TUNA_FR * TUNA_FS; }

// k -> (c, r, s).
TUNA_DEVICE void tuna_split_taps(const TunaTaps& t, int k, int& c, int& r, int& s) {
  if (kTunaRuntimeTaps) {
    c = tuna_fast_div(k, t.rs_mul, t.rs_shr);
    const int rs = k - c * t.rs;
    r = tuna_fast_div(rs, t.s_mul, t.s_shr);
    s = rs - r * t.s;
  } else {
    constexpr int kS = kTunaRuntimeTaps ? 1 : TUNA_FS, kRS = kTunaRuntimeTaps ? 1 : TUNA_FR * TUNA_FS;
    c = k / kRS;
    const int rs = k - c * kRS;
    r = rs / kS;
    s = rs - r * kS;
  }
}

// Division by a run-time divisor through the host's magic numbers (gpu::MakeFastDiv in
// tuner_core/solver/conv/gpu_common.h): n / d == umulhi(n, mul) >> shr for 0 <= n < 2^31, mul 0
// standing for d == 1. A multiply instead of a ~20-instruction division (CUDA).
#pragma once

TUNA_DEVICE int tuna_fast_div(int n, unsigned mul, unsigned shr) {
  return mul == 0 ? n : static_cast<int>(__umulhi(static_cast<unsigned>(n), mul) >> shr);
}

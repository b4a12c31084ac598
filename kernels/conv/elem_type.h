// The element type chosen by -DTUNA_DTYPE (0 = FP32 float, 1 = FP16 tuna_half, 2 = BF16
// tuna_bf16) and the one-comparison bounds check, for the GPU kernels (through
// tuna_conv_common.h) and their cpu-backend twins alike. Include after the portability header of
// the build (common/portability.h or cpu_conv/cpu_portability.h): it needs tuna_half, tuna_bf16
// and TUNA_DEVICE.
#pragma once

#ifndef TUNA_DTYPE
#error "TUNA_DTYPE must be defined (0 fp32, 1 fp16, 2 bf16)"
#endif

#if TUNA_DTYPE == 0
typedef float tuna_elem;
#elif TUNA_DTYPE == 1
typedef tuna_half tuna_elem;
#elif TUNA_DTYPE == 2
typedef tuna_bf16 tuna_elem;
#else
#error "unsupported TUNA_DTYPE"
#endif

// Unsigned bounds check for 0 <= v < hi in one comparison.
TUNA_DEVICE bool tuna_in_range(int v, int hi) { return (unsigned)v < (unsigned)hi; }

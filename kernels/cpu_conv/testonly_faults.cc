// TEST ONLY (tests/search): deliberately faulty "convolutions" that the tuner's Evaluator must
// classify: a wrong result, a kernel that writes nothing, a launch that hangs, a compile error.
// No builtin solver uses this file; it is embedded only because kernels must come from the
// embedded tree.
#include <time.h>

#include "cpu/cpu_kernel.h"

#ifdef TUNA_TESTONLY_BREAK
#error "testonly_faults.cc: compile failure requested (TUNA_TESTONLY_BREAK)"
#endif

// Writes `bytes` bytes of 0x3E (a plausible finite value in every float format) over the output.
TUNA_CPU_KERNEL(testonly_write_garbage) {
  unsigned char* out = tuna_arg<unsigned char*>(args, 0);
  const long long bytes = tuna_arg<long long>(args, 1);
  if (launch->block_idx.x != 0) return;
  for (long long i = 0; i < bytes; ++i) out[i] = 0x3E;
}

// Writes nothing at all.
TUNA_CPU_KERNEL(testonly_write_nothing) {
  (void)launch;
  (void)args;
}

// Busy-waits `ms` milliseconds (a hung launch for the watchdog), then writes nothing.
TUNA_CPU_KERNEL(testonly_spin) {
  const float ms = tuna_arg<float>(args, 2);
  if (launch->block_idx.x != 0) return;
  volatile unsigned long long sink = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    for (int i = 0; i < 100000; ++i) sink = sink + (unsigned long long)i;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double elapsed = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
    if (elapsed >= ms) break;
  }
}

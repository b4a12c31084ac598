// cp.async (sm_80+) helpers shared by the CUDA kernels: shared-memory addresses, 4/8/16-byte
// asynchronous copies with zero-fill (src_bytes 0 writes zeros), commit and wait.
#pragma once

TUNA_DEVICE unsigned tuna_smem_u32(const void* p) {
  unsigned r;
  asm volatile("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}
TUNA_DEVICE void tuna_cp_async4(unsigned saddr, const void* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(saddr), "l"(src), "r"(src_bytes));
}
TUNA_DEVICE void tuna_cp_async8(unsigned saddr, const void* src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(saddr), "l"(src), "r"(src_bytes));
}
TUNA_DEVICE void tuna_cp_async16(unsigned saddr, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(saddr), "l"(src), "r"(src_bytes));
}
TUNA_DEVICE void tuna_cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
TUNA_DEVICE void tuna_cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

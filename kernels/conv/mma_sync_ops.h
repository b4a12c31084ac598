// FP16/BF16 tensor-core helpers of the CUDA kernels (TUNA_DTYPE 1 fp16, 2 bf16): the warp-wide
// mma.sync m16n8k16 with FP32 accumulators (sm_80+; A row-major, B column-major fragments as the
// PTX ISA lays them out) and the FP32 -> 16-bit pair rounding every epilogue uses. Include after
// common/portability.h.
#pragma once

// c (4 FP32 accumulators of an m16n8 tile) += A (m16 x k16) * B (k16 x n8).
TUNA_DEVICE void tuna_mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if TUNA_DTYPE == 2
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// Two floats rounded to nearest even into one packed pair (lo at the lower address).
TUNA_DEVICE unsigned tuna_pack2(float lo, float hi) {
  unsigned r;
#if TUNA_DTYPE == 2
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#else
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#endif
  return r;
}

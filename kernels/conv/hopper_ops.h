// sm_90a helpers shared by the Hopper tensor-core kernels (hopper_fwd.cu, hopper_tma_fwd.cu, hopper_wrw.cu, hopper_tma_wrw.cu):
// proxy and wgmma fences, 128- and 64-byte-swizzle matrix descriptors, FP32 -> FP16/BF16 packing
// (tuna_pack2, from mma_sync_ops.h), mbarriers and register reallocation. Include after
// common/portability.h; TUNA_DTYPE (1 fp16, 2 bf16) picks the wgmma and pack flavour.
#pragma once

#include "conv/mma_sync_ops.h"

// Geometry of one convolution, as the kernels receive it (sizes are run-time arguments).
struct TunaConvGeom {
  int n_img, C, H, W, K, Ho, Wo, R, S, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups;
};


// cp.async and ordinary stores write through the generic proxy; wgmma reads through the async
// proxy: each writing thread fences before the barrier that hands the data to the tensor cores.
TUNA_DEVICE void tuna_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
TUNA_DEVICE void tuna_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
TUNA_DEVICE void tuna_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
TUNA_DEVICE void tuna_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator accesses across wgmma fences and waits.
TUNA_DEVICE void tuna_fence_acc(float& r) { asm volatile("" : "+f"(r)::"memory"); }
template <int N>
TUNA_DEVICE void tuna_fence_acc_all(float (&acc)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) tuna_fence_acc(acc[j]);
}

// Shared-memory matrix descriptor of a swizzled tile at saddr: 8-row groups `stride` bytes apart
// (stride byte offset), `leading` bytes between the slabs of an MN-major tile (unused, 16, for
// K-major), layout `mode` (1: 128-byte swizzle, 2: 64-byte, 3: 32-byte).
TUNA_DEVICE unsigned long long tuna_desc(unsigned saddr, unsigned leading, unsigned stride, unsigned mode) {
  unsigned long long d = 0;
  d |= static_cast<unsigned long long>((saddr & 0x3FFFF) >> 4);
  d |= static_cast<unsigned long long>(leading >> 4) << 16;  // leading byte offset
  d |= static_cast<unsigned long long>(stride >> 4) << 32;   // stride byte offset
  d |= static_cast<unsigned long long>(mode) << 62;          // swizzle mode
  return d;
}

// A K-major tile in the 128-byte swizzle: rows of 128 bytes, 8-row groups 1024 bytes apart.
TUNA_DEVICE unsigned long long tuna_desc_sw128(unsigned saddr) { return tuna_desc(saddr, 16, 1024, 1); }

// The same in the 64-byte swizzle (32 halves per row; the copy engine's SWIZZLE_64B): rows of 64
// bytes, 8-row groups 512 bytes apart, the 16-byte chunk index XORed with (row / 2) % 4. A k16
// step within the row is +32 bytes, as in sw128.
TUNA_DEVICE unsigned long long tuna_desc_sw64(unsigned saddr) { return tuna_desc(saddr, 16, 512, 2); }

// The same in the 32-byte swizzle (16 halves per row: one k16 step; the copy engine's
// SWIZZLE_32B): rows of 32 bytes, 8-row groups 256 bytes apart.
TUNA_DEVICE unsigned long long tuna_desc_sw32(unsigned saddr) { return tuna_desc(saddr, 16, 256, 3); }

// A K-major tile whose rows are kRowBytes (128, 64 or 32: 64, 32 or 16 halves) in the swizzle of
// that width.
template <int kRowBytes>
TUNA_DEVICE unsigned long long tuna_desc_rows(unsigned saddr) {
  static_assert(kRowBytes == 128 || kRowBytes == 64 || kRowBytes == 32, "a 128-, 64- or 32-byte swizzle row");
  if constexpr (kRowBytes == 128) {
    return tuna_desc_sw128(saddr);
  } else if constexpr (kRowBytes == 64) {
    return tuna_desc_sw64(saddr);
  } else {
    return tuna_desc_sw32(saddr);
  }
}

// Descriptor of an MN-major tile in the 128-byte swizzle (read with imm-trans = 1): per 64-element
// slab of M (or N), rows of 128 bytes along the reduction, 8-row groups 1024 bytes apart (stride
// byte offset), slabs `slab_bytes` apart (leading byte offset).
TUNA_DEVICE unsigned long long tuna_desc_mn_sw128(unsigned saddr, unsigned slab_bytes) {
  return tuna_desc(saddr, slab_bytes, 1024, 1);
}

// An MN-major tile in the swizzle of its slab width kSlab (64 elements: 128-byte rows, 128-byte
// swizzle, 8-row groups 1024 bytes apart; 32: 64-byte rows, 64-byte swizzle, 512 bytes apart),
// slabs `slab_bytes` apart.
template <int kSlab>
TUNA_DEVICE unsigned long long tuna_desc_mn(unsigned saddr, unsigned slab_bytes) {
  static_assert(kSlab == 64 || kSlab == 32, "a 64- or 32-element MN slab");
  return kSlab == 64 ? tuna_desc_mn_sw128(saddr, slab_bytes) : tuna_desc(saddr, slab_bytes, 512, 2);
}

// tuna_wgmma(acc, desc_a, desc_b[, scale_d]): one m64 x TB_N x k16 wgmma of the kernel's data
// type; scale_d 0: acc = A * B (acc's old value ignored), else acc += A * B.
#if TUNA_DTYPE == 2
#define TUNA_WGMMA_NAME(n) tuna_wgmma_m64n##n##k16_bf16
#else
#define TUNA_WGMMA_NAME(n) tuna_wgmma_m64n##n##k16_f16
#endif
#define TUNA_WGMMA_OF(n) TUNA_WGMMA_NAME(n)
TUNA_DEVICE void tuna_wgmma(float (&d)[TB_N / 2], unsigned long long a, unsigned long long b, int scale_d = 1) {
  TUNA_WGMMA_OF(TB_N)(d, a, b, scale_d);
}

// One k-tile's wgmmas over its A rows at `a` (m64 slabs 64 rows apart) and B at `b`: the first
// n16 of its k16 steps (at least one); `accumulate` false for the tile's first k-tile (scale-d 0:
// acc = A * B, no zeroing). B is K-major in rows of kRowB bytes in their swizzle (kBSlab 0), or
// N-major (read with imm-trans-b = 1) in kBSlab-column slabs (64 or 32) of kRowB / 2 rows, as a
// tiled copy of a tensor whose output columns are contiguous lands them (backward data reading
// w in place). A's rows are kRowB bytes (kATrans 0), or A is M-major (kATrans 1, imm-trans-a = 1):
// each m64 slab one 64-row box of kRowB / 2 reduction rows of 128 bytes in the 128-byte swizzle
// (a matrix whose GEMM rows are contiguous, e.g. w read transposed); the slabs are the same
// kRowB * 64 bytes apart either way.
template <int kRowB, int kBSlab = 0, int kATrans = 0, int kM, int kA>
TUNA_DEVICE void tuna_ktile_wgmmas(float (&acc)[kM][kA], unsigned a, unsigned b, bool accumulate, int n16) {
#pragma unroll
  for (int k16 = 0; k16 < kRowB / 32; ++k16) {
    if (k16 > 0 && k16 >= n16) break;
    unsigned long long db;
    if constexpr (kBSlab == 0) {
      db = tuna_desc_rows<kRowB>(b + k16 * 32);
    } else {
      db = tuna_desc_mn<kBSlab>(b + k16 * 16 * kBSlab * 2, (kRowB / 2) * kBSlab * 2);
    }
#pragma unroll
    for (int mr = 0; mr < kM; ++mr) {
      const unsigned slab = a + mr * 64 * kRowB;
      const unsigned long long da = kATrans ? tuna_desc_mn<64>(slab + k16 * 16 * 128, (kRowB / 2) * 128)
                                            : tuna_desc_rows<kRowB>(slab + k16 * 32);
      TUNA_WGMMA_OF(TB_N)<kATrans, kBSlab != 0>(acc[mr], da, db, accumulate || k16 > 0);
    }
  }
}

// ---- mbarriers (shared::cta, 8 bytes each) -----------------------------------------------------
TUNA_DEVICE void tuna_mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
TUNA_DEVICE void tuna_mbar_arrive(unsigned bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.release.cta.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}
// Returns once the phase of parity `parity` has completed (a fresh barrier is in phase 0, so a
// wait for parity 1 returns at once).
TUNA_DEVICE void tuna_mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nTUNA_MBAR_WAIT_%=:\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra TUNA_MBAR_WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// ---- named barriers (bar.sync / bar.arrive on hardware barrier `id` > 0, `count` threads) ------
// bar.arrive does not wait; bar.sync waits until `count` threads (arrivals included) reached it.
TUNA_DEVICE void tuna_named_arrive(unsigned id, unsigned count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
TUNA_DEVICE void tuna_named_sync(unsigned id, unsigned count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
// Makes the mbarrier init visible to the other threads (and the async proxy) before use.
TUNA_DEVICE void tuna_fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// ---- thread-block clusters ---------------------------------------------------------------------
// Cluster barrier with release/acquire semantics over shared::cluster (every thread, converged).
TUNA_DEVICE void tuna_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// The address of the same shared-memory byte in block `rank` of the cluster.
TUNA_DEVICE unsigned tuna_map_rank(unsigned saddr, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(saddr), "r"(rank));
  return r;
}
TUNA_DEVICE unsigned tuna_cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Arrives on an mbarrier of any block of the cluster (an address from tuna_map_rank).
TUNA_DEVICE void tuna_mbar_arrive_cluster(unsigned cluster_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_bar) : "memory");
}
// An arrival on another block's mbarrier with the default release.cta semantics: enough where it
// frees a ring slot that the peer's copy engine refills (this thread's reads of the slot have
// completed; nothing it wrote needs to become visible), as CUTLASS's ClusterBarrier::arrive does.
// The .release.cluster arrival above cost TunaHopperTmaWrw's clusters 2-3x (H200, 2026-12-04).
TUNA_DEVICE void tuna_mbar_arrive_remote(unsigned cluster_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_bar) : "memory");
}
// A 16-byte store into the shared memory of a block of the cluster (an address from tuna_map_rank).
TUNA_DEVICE void tuna_st_cluster_v4(unsigned cluster_addr, float a, float b, float c, float d) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(cluster_addr), "f"(a), "f"(b), "f"(c),
               "f"(d)
               : "memory");
}
// tuna_mbar_wait for arrivals that come from other blocks of the cluster.
TUNA_DEVICE void tuna_mbar_wait_cluster(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nTUNA_MBAR_WAITC_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra TUNA_MBAR_WAITC_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// setmaxnreg: hands registers from the producer warpgroup to the consumers. Takes effect only
// with a register cap at entry (__launch_bounds__(threads, 1)); every thread of the warpgroup
// executes it.
template <int N>
TUNA_DEVICE void tuna_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
TUNA_DEVICE void tuna_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// ---- Tensor memory accelerator (TMA) ------------------------------------------------------------
// A CUtensorMap (128 opaque bytes) passed by value as a __grid_constant__ kernel parameter.
struct alignas(64) TunaTensorMap {
  unsigned long long opaque[16];
};
TUNA_DEVICE void tuna_mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
TUNA_DEVICE void tuna_prefetch_tmap(const TunaTensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}
// A 2-D tile {x (inner), y} of `map` into shared memory at dst; completes on `bar`.
TUNA_DEVICE void tuna_tma_tile_2d(unsigned dst, const TunaTensorMap* map, int x, int y, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar)
      : "memory");
}
// A 3-D tile box at {x, y, z} (innermost first) into shared memory, completing on `bar`.
TUNA_DEVICE void tuna_tma_tile_3d(unsigned dst, const TunaTensorMap* map, int x, int y, int z, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::
          "r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(z), "r"(bar)
      : "memory");
}
// A 4-D tile box at {x, y, z, v} (innermost first; negative or past-the-end coordinates read
// zeros) into shared memory, completing on `bar`.
TUNA_DEVICE void tuna_tma_tile_4d(unsigned dst, const TunaTensorMap* map, int x, int y, int z, int v, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(z), "r"(v), "r"(bar)
      : "memory");
}
// tuna_tma_tile_2d multicast: the tile lands at the same offset `dst` in every block of
// `cta_mask` and completes on the mbarrier at offset `bar` in each of them.
TUNA_DEVICE void tuna_tma_tile_2d_multicast(unsigned dst, const TunaTensorMap* map, int x, int y, unsigned bar,
                                            unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar), "h"(cta_mask)
      : "memory");
}
// An im2col column of an NDHWC tensor: pixelsPerColumn pixels from base {c, w, h, d, n}, each
// shifted by the filter offset {ow, oh, od}.
TUNA_DEVICE void tuna_tma_im2col_5d(unsigned dst, const TunaTensorMap* map, int c, int w, int h, int d, int n,
                                    unsigned short off_w, unsigned short off_h, unsigned short off_d, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
      "%5, %6}], [%7], {%8, %9, %10};\n" ::"r"(dst),
      "l"(map), "r"(c), "r"(w), "r"(h), "r"(d), "r"(n), "r"(bar), "h"(off_w), "h"(off_h), "h"(off_d)
      : "memory");
}
// An im2col column of an NHWC tensor: pixelsPerColumn pixels from base {c, w, h, n} (walking w,
// then h, then n inside the map's bounding box), each shifted by the filter offset {ow, oh}.
TUNA_DEVICE void tuna_tma_im2col_4d(unsigned dst, const TunaTensorMap* map, int c, int w, int h, int n,
                                    unsigned short off_w, unsigned short off_h, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
      "%5}], [%6], {%7, %8};\n" ::"r"(dst),
      "l"(map), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar), "h"(off_w), "h"(off_h)
      : "memory");
}

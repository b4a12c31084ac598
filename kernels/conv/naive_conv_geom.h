// Convolution geometry and element types shared by the naive kernels (GPU: conv/naive_conv.cu,
// CPU: cpu_conv/naive_conv.cc) and the CPU GEMM kernel (cpu_conv/gemm_conv.cc).
//
// Include after common/portability.h (GPU) or cpu_conv/cpu_portability.h (CPU): it uses only
// the names both define (TUNA_DEVICE, tuna_i64, tuna_half, ...).
//
// Geometry arguments: 37 64-bit integers, in the order of TUNA_CONV_GEOM_PARAMS, built on the
// host by tuna::solver::ConvGeometryArgs (tuner_core/solver/conv/naive_args.h). Sizes and
// element strides come straight from Problem::XDesc()/WDesc()/YDesc(), so every layout
// combination (NCHW/NHWC/NCDHW/NDHWC, each tensor its own) is handled by the strides alone, and
// all index arithmetic is 64-bit.
//
// Element types: inputs of type In are summed in TunaConvTypes<In>::acc_t (float; int32 for
// INT8) and written as TunaConvTypes<In>::out_t (In; int32 for the INT8 forward output), with
// one rounding (TunaConvTypes<In>::store). A kernel of one type defines exactly one of
// -DTUNA_DTYPE_FP32 / FP16 / BF16 / INT8, which names them tuna_conv_in_t, tuna_conv_out_t,
// tuna_conv_acc_t and tuna_conv_store; a kernel with every type's entries (conv/naive_conv.cu)
// defines TUNA_DTYPE_ALL before including this header and uses the templates.
#pragma once

struct TunaConvGeom {
  tuna_i64 n, c, k, groups;
  tuna_i64 in[3], fil[3], out[3], pad[3], stride[3], dil[3];  // [0] depth, [1] height, [2] width
  tuna_i64 xs[5], ws[5], ys[5];  // element strides of x, w, y in (N|K, C, D, H, W) order
};

#define TUNA_CONV_GEOM_NARGS 37

#define TUNA_CONV_GEOM_PARAMS                                                                  \
  tuna_i64 a_n, tuna_i64 a_c, tuna_i64 a_k, tuna_i64 a_groups, tuna_i64 a_in0, tuna_i64 a_in1, \
      tuna_i64 a_in2, tuna_i64 a_fil0, tuna_i64 a_fil1, tuna_i64 a_fil2, tuna_i64 a_out0,      \
      tuna_i64 a_out1, tuna_i64 a_out2, tuna_i64 a_pad0, tuna_i64 a_pad1, tuna_i64 a_pad2,     \
      tuna_i64 a_str0, tuna_i64 a_str1, tuna_i64 a_str2, tuna_i64 a_dil0, tuna_i64 a_dil1,     \
      tuna_i64 a_dil2, tuna_i64 a_xs0, tuna_i64 a_xs1, tuna_i64 a_xs2, tuna_i64 a_xs3,         \
      tuna_i64 a_xs4, tuna_i64 a_ws0, tuna_i64 a_ws1, tuna_i64 a_ws2, tuna_i64 a_ws3,          \
      tuna_i64 a_ws4, tuna_i64 a_ys0, tuna_i64 a_ys1, tuna_i64 a_ys2, tuna_i64 a_ys3, tuna_i64 a_ys4

#define TUNA_CONV_GEOM_INIT(g)                                                               \
  do {                                                                                       \
    (g).n = a_n; (g).c = a_c; (g).k = a_k; (g).groups = a_groups;                             \
    (g).in[0] = a_in0; (g).in[1] = a_in1; (g).in[2] = a_in2;                                  \
    (g).fil[0] = a_fil0; (g).fil[1] = a_fil1; (g).fil[2] = a_fil2;                            \
    (g).out[0] = a_out0; (g).out[1] = a_out1; (g).out[2] = a_out2;                            \
    (g).pad[0] = a_pad0; (g).pad[1] = a_pad1; (g).pad[2] = a_pad2;                            \
    (g).stride[0] = a_str0; (g).stride[1] = a_str1; (g).stride[2] = a_str2;                   \
    (g).dil[0] = a_dil0; (g).dil[1] = a_dil1; (g).dil[2] = a_dil2;                            \
    (g).xs[0] = a_xs0; (g).xs[1] = a_xs1; (g).xs[2] = a_xs2; (g).xs[3] = a_xs3;               \
    (g).xs[4] = a_xs4;                                                                       \
    (g).ws[0] = a_ws0; (g).ws[1] = a_ws1; (g).ws[2] = a_ws2; (g).ws[3] = a_ws3;               \
    (g).ws[4] = a_ws4;                                                                       \
    (g).ys[0] = a_ys0; (g).ys[1] = a_ys1; (g).ys[2] = a_ys2; (g).ys[3] = a_ys3;               \
    (g).ys[4] = a_ys4;                                                                       \
  } while (0)

// ---- Element types ----------------------------------------------------------------------------
template <typename In>
struct TunaConvTypes {
  typedef In out_t;
  typedef float acc_t;
  // One rounding (nearest-even) of the accumulator to the written type.
  static TUNA_DEVICE In store(float acc) { return tuna_from_float<In>(acc); }
};
template <>
struct TunaConvTypes<tuna_i8> {  // forward only (MIOpen's int8 -> int32 convolution)
  typedef tuna_i32 out_t;
  typedef tuna_i32 acc_t;
  static TUNA_DEVICE tuna_i32 store(tuna_i32 acc) { return acc; }
};

#if defined(TUNA_DTYPE_FP32)
typedef float tuna_conv_in_t;
#elif defined(TUNA_DTYPE_FP16)
typedef tuna_half tuna_conv_in_t;
#elif defined(TUNA_DTYPE_BF16)
typedef tuna_bf16 tuna_conv_in_t;
#elif defined(TUNA_DTYPE_INT8)
typedef tuna_i8 tuna_conv_in_t;
#elif !defined(TUNA_DTYPE_ALL)
#error "define one of TUNA_DTYPE_FP32, TUNA_DTYPE_FP16, TUNA_DTYPE_BF16, TUNA_DTYPE_INT8, TUNA_DTYPE_ALL"
#endif

TUNA_DEVICE float tuna_conv_load(float v) { return v; }
TUNA_DEVICE float tuna_conv_load(tuna_half v) { return tuna_half_to_float(v); }
TUNA_DEVICE float tuna_conv_load(tuna_bf16 v) { return tuna_bf16_to_float(v); }
TUNA_DEVICE tuna_i32 tuna_conv_load(tuna_i8 v) { return (tuna_i32)v; }

#if !defined(TUNA_DTYPE_ALL)
typedef TunaConvTypes<tuna_conv_in_t>::out_t tuna_conv_out_t;
typedef TunaConvTypes<tuna_conv_in_t>::acc_t tuna_conv_acc_t;
TUNA_DEVICE tuna_conv_out_t tuna_conv_store(tuna_conv_acc_t acc) { return TunaConvTypes<tuna_conv_in_t>::store(acc); }
#endif

// Output positions o (of a dimension with `out` positions) whose input position
// o*stride - pad + foff lies in [0, in): the inclusive range [*lo, *hi] (empty when *hi < *lo).
TUNA_DEVICE void tuna_conv_out_range(tuna_i64 in, tuna_i64 out, tuna_i64 pad, tuna_i64 stride,
                                     tuna_i64 foff, tuna_i64* lo, tuna_i64* hi) {
  const tuna_i64 a = pad - foff;  // o*stride >= a
  *lo = a <= 0 ? 0 : (a + stride - 1) / stride;
  const tuna_i64 b = in - 1 + pad - foff;  // o*stride <= b
  *hi = b < 0 ? -1 : b / stride;
  if (*hi > out - 1) *hi = out - 1;
}

// The CPU twin of common/portability.h: the same names (TUNA_DEVICE, tuna_i64, tuna_half,
// tuna_bf16, tuna_to_float, tuna_from_float<T>, ...) for kernels compiled by the cpu backend, so
// that one kernel header (e.g. conv/naive_conv_impl.h) serves CUDA, HIP and the CPU.
//
// Conversions are exact bit manipulations with round-to-nearest-even, identical to
// tuner_core/numeric/{fp16,bf16}.h (the reference's rounding), and independent of the compiler's
// _Float16 support and of -march. C++17 (the cpu backend's dialect): no std::bit_cast.
#pragma once

#include <stdint.h>
#include <string.h>

#define TUNA_DEVICE inline
#define TUNA_RESTRICT __restrict__

typedef int8_t tuna_i8;
typedef uint8_t tuna_u8;
typedef int16_t tuna_i16;
typedef uint16_t tuna_u16;
typedef int32_t tuna_i32;
typedef uint32_t tuna_u32;
typedef int64_t tuna_i64;
typedef uint64_t tuna_u64;

struct tuna_half {
  tuna_u16 bits;
};
struct tuna_bf16 {
  tuna_u16 bits;
};

inline tuna_u32 tuna_float_as_u32(float f) {
  tuna_u32 u;
  memcpy(&u, &f, sizeof u);
  return u;
}
inline float tuna_u32_as_float(tuna_u32 u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

inline float tuna_half_to_float(tuna_half h) {
  const tuna_u32 sign = (tuna_u32)(h.bits & 0x8000u) << 16;
  const tuna_u32 exp = (h.bits >> 10) & 0x1fu;
  const tuna_u32 mant = h.bits & 0x3ffu;
  if (exp == 0x1f) return tuna_u32_as_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24 is exact in float.
    const float v = (float)mant * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return tuna_u32_as_float(sign | ((exp + 112) << 23) | (mant << 13));
}

// Round to nearest even, through the subnormal range; NaN stays a quiet NaN.
inline tuna_half tuna_float_to_half(float value) {
  const tuna_u32 f = tuna_float_as_u32(value);
  const tuna_u16 sign = (tuna_u16)((f >> 16) & 0x8000u);
  const tuna_u32 abs = f & 0x7fffffffu;
  const tuna_u32 exp = abs >> 23;
  const tuna_u32 mant = abs & 0x7fffffu;
  tuna_half out;
  if (exp == 0xff) {
    out.bits = mant == 0 ? (tuna_u16)(sign | 0x7c00u) : (tuna_u16)(sign | 0x7e00u | (mant >> 13));
    return out;
  }
  if (exp >= 143) {
    out.bits = (tuna_u16)(sign | 0x7c00u);
    return out;
  }
  if (exp >= 113) {
    tuna_u32 h = ((exp - 112) << 10) | (mant >> 13);
    const tuna_u32 rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    out.bits = (tuna_u16)(sign | h);
    return out;
  }
  if (exp < 102) {
    out.bits = sign;
    return out;
  }
  const tuna_u32 m = mant | 0x800000u;
  const tuna_u32 shift = 126 - exp;
  tuna_u32 h = m >> shift;
  const tuna_u32 rest = m & ((1u << shift) - 1);
  const tuna_u32 half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1u))) ++h;
  out.bits = (tuna_u16)(sign | h);
  return out;
}

inline float tuna_bf16_to_float(tuna_bf16 b) { return tuna_u32_as_float((tuna_u32)b.bits << 16); }

inline tuna_bf16 tuna_float_to_bf16(float f) {
  tuna_u32 u = tuna_float_as_u32(f);
  tuna_bf16 b;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    b.bits = (tuna_u16)((u >> 16) | 0x40u);
  } else {
    u += 0x7fffu + ((u >> 16) & 1u);
    b.bits = (tuna_u16)(u >> 16);
  }
  return b;
}

inline float tuna_to_float(float v) { return v; }
inline float tuna_to_float(tuna_half v) { return tuna_half_to_float(v); }
inline float tuna_to_float(tuna_bf16 v) { return tuna_bf16_to_float(v); }
template <typename T>
inline T tuna_from_float(float f);
template <>
inline float tuna_from_float<float>(float f) { return f; }
template <>
inline tuna_half tuna_from_float<tuna_half>(float f) { return tuna_float_to_half(f); }
template <>
inline tuna_bf16 tuna_from_float<tuna_bf16>(float f) { return tuna_float_to_bf16(f); }

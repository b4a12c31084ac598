// The naive direct convolution, one element of the written tensor per call: the shared body of
// the GPU kernel (conv/naive_conv.cu, one thread per element) and the CPU kernel
// (cpu_conv/naive_conv.cc, a range of elements per block). Include after conv/naive_conv_geom.h.
//
// Definition (forward terms, Cg = C/G, Kg = K/G, out-of-range x positions read as zero):
//   y[n,k,o]  = sum_{cg,f} x[n, g*Cg+cg, o*s + f*d - p] * w[k, cg, f]              (forward)
//   dx[n,c,i] = sum_{kg,f: (i+p-f*d)/s integral, in range} dy[n, g*Kg+kg, .] * w[g*Kg+kg, c%Cg, f]
//   dw[k,cg,f] = sum_{n,o} x[n, g*Cg+cg, o*s + f*d - p] * dy[n, k, o]
// Sums in TunaConvTypes<In>::acc_t (float; int32 for INT8), one rounding to the written type
// (conv/naive_conv_geom.h); In is the inputs' element type, deduced from the input pointers.
#pragma once

// Splits linear index `idx` into (n|k, c, d, h, w) coordinates of a tensor with `dims`. The
// fastest-varying coordinate is the one with unit stride (c for channels-last tensors, w
// otherwise), so consecutive indices touch consecutive addresses (coalesced on GPUs).
TUNA_DEVICE void tuna_conv_decode(tuna_i64 idx, const tuna_i64* dims, const tuna_i64* strides,
                                  tuna_i64* co) {
  if (strides[1] == 1 && strides[4] != 1) {
    co[1] = idx % dims[1]; idx /= dims[1];
    co[4] = idx % dims[4]; idx /= dims[4];
    co[3] = idx % dims[3]; idx /= dims[3];
    co[2] = idx % dims[2]; idx /= dims[2];
  } else {
    co[4] = idx % dims[4]; idx /= dims[4];
    co[3] = idx % dims[3]; idx /= dims[3];
    co[2] = idx % dims[2]; idx /= dims[2];
    co[1] = idx % dims[1]; idx /= dims[1];
  }
  co[0] = idx;
}

TUNA_DEVICE tuna_i64 tuna_conv_offset(const tuna_i64* co, const tuna_i64* s) {
  return co[0] * s[0] + co[1] * s[1] + co[2] * s[2] + co[3] * s[3] + co[4] * s[4];
}

// Element counts of the tensor each direction writes.
TUNA_DEVICE tuna_i64 tuna_naive_fwd_count(const TunaConvGeom& g) {
  return g.n * g.k * g.out[0] * g.out[1] * g.out[2];
}
TUNA_DEVICE tuna_i64 tuna_naive_bwd_count(const TunaConvGeom& g) {
  return g.n * g.c * g.in[0] * g.in[1] * g.in[2];
}
TUNA_DEVICE tuna_i64 tuna_naive_wrw_count(const TunaConvGeom& g) {
  return g.k * (g.c / g.groups) * g.fil[0] * g.fil[1] * g.fil[2];
}

template <typename In>
TUNA_DEVICE void tuna_naive_fwd_one(const TunaConvGeom& g, const In* TUNA_RESTRICT x, const In* TUNA_RESTRICT w,
                                    typename TunaConvTypes<In>::out_t* TUNA_RESTRICT y, tuna_i64 idx) {
  const tuna_i64 dims[5] = {g.n, g.k, g.out[0], g.out[1], g.out[2]};
  tuna_i64 co[5];
  tuna_conv_decode(idx, dims, g.ys, co);
  const tuna_i64 cgs = g.c / g.groups, kgs = g.k / g.groups;
  const tuna_i64 n = co[0], k = co[1];
  const tuna_i64 c0 = (k / kgs) * cgs;
  typename TunaConvTypes<In>::acc_t acc = 0;
  for (tuna_i64 fd = 0; fd < g.fil[0]; ++fd) {
    const tuna_i64 id = co[2] * g.stride[0] - g.pad[0] + fd * g.dil[0];
    if (id < 0 || id >= g.in[0]) continue;
    for (tuna_i64 fh = 0; fh < g.fil[1]; ++fh) {
      const tuna_i64 ih = co[3] * g.stride[1] - g.pad[1] + fh * g.dil[1];
      if (ih < 0 || ih >= g.in[1]) continue;
      for (tuna_i64 fw = 0; fw < g.fil[2]; ++fw) {
        const tuna_i64 iw = co[4] * g.stride[2] - g.pad[2] + fw * g.dil[2];
        if (iw < 0 || iw >= g.in[2]) continue;
        const In* xp =
            x + n * g.xs[0] + c0 * g.xs[1] + id * g.xs[2] + ih * g.xs[3] + iw * g.xs[4];
        const In* wp = w + k * g.ws[0] + fd * g.ws[2] + fh * g.ws[3] + fw * g.ws[4];
        for (tuna_i64 cg = 0; cg < cgs; ++cg) {
          acc += tuna_conv_load(xp[cg * g.xs[1]]) * tuna_conv_load(wp[cg * g.ws[1]]);
        }
      }
    }
  }
  y[tuna_conv_offset(co, g.ys)] = TunaConvTypes<In>::store(acc);
}

template <typename In>
TUNA_DEVICE void tuna_naive_bwd_one(const TunaConvGeom& g, typename TunaConvTypes<In>::out_t* TUNA_RESTRICT dx,
                                    const In* TUNA_RESTRICT w, const In* TUNA_RESTRICT dy, tuna_i64 idx) {
  const tuna_i64 dims[5] = {g.n, g.c, g.in[0], g.in[1], g.in[2]};
  tuna_i64 co[5];
  tuna_conv_decode(idx, dims, g.xs, co);
  const tuna_i64 cgs = g.c / g.groups, kgs = g.k / g.groups;
  const tuna_i64 n = co[0], c = co[1];
  const tuna_i64 cg = c % cgs, k0 = (c / cgs) * kgs;
  typename TunaConvTypes<In>::acc_t acc = 0;
  for (tuna_i64 fd = 0; fd < g.fil[0]; ++fd) {
    const tuna_i64 td = co[2] + g.pad[0] - fd * g.dil[0];
    if (td < 0 || td % g.stride[0] != 0) continue;
    const tuna_i64 od = td / g.stride[0];
    if (od >= g.out[0]) continue;
    for (tuna_i64 fh = 0; fh < g.fil[1]; ++fh) {
      const tuna_i64 th = co[3] + g.pad[1] - fh * g.dil[1];
      if (th < 0 || th % g.stride[1] != 0) continue;
      const tuna_i64 oh = th / g.stride[1];
      if (oh >= g.out[1]) continue;
      for (tuna_i64 fw = 0; fw < g.fil[2]; ++fw) {
        const tuna_i64 tw = co[4] + g.pad[2] - fw * g.dil[2];
        if (tw < 0 || tw % g.stride[2] != 0) continue;
        const tuna_i64 ow = tw / g.stride[2];
        if (ow >= g.out[2]) continue;
        const In* yp =
            dy + n * g.ys[0] + k0 * g.ys[1] + od * g.ys[2] + oh * g.ys[3] + ow * g.ys[4];
        const In* wp =
            w + k0 * g.ws[0] + cg * g.ws[1] + fd * g.ws[2] + fh * g.ws[3] + fw * g.ws[4];
        for (tuna_i64 kg = 0; kg < kgs; ++kg) {
          acc += tuna_conv_load(yp[kg * g.ys[1]]) * tuna_conv_load(wp[kg * g.ws[0]]);
        }
      }
    }
  }
  dx[tuna_conv_offset(co, g.xs)] = TunaConvTypes<In>::store(acc);
}

template <typename In>
TUNA_DEVICE void tuna_naive_wrw_one(const TunaConvGeom& g, const In* TUNA_RESTRICT x,
                                    typename TunaConvTypes<In>::out_t* TUNA_RESTRICT dw, const In* TUNA_RESTRICT dy,
                                    tuna_i64 idx) {
  const tuna_i64 cgs = g.c / g.groups, kgs = g.k / g.groups;
  const tuna_i64 dims[5] = {g.k, cgs, g.fil[0], g.fil[1], g.fil[2]};
  tuna_i64 co[5];
  tuna_conv_decode(idx, dims, g.ws, co);
  const tuna_i64 k = co[0];
  const tuna_i64 c = (k / kgs) * cgs + co[1];
  tuna_i64 lo[3], hi[3], foff[3];
  for (int i = 0; i < 3; ++i) {
    foff[i] = co[2 + i] * g.dil[i];
    tuna_conv_out_range(g.in[i], g.out[i], g.pad[i], g.stride[i], foff[i], &lo[i], &hi[i]);
  }
  typename TunaConvTypes<In>::acc_t acc = 0;
  for (tuna_i64 n = 0; n < g.n; ++n) {
    const In* xn = x + n * g.xs[0] + c * g.xs[1];
    const In* yn = dy + n * g.ys[0] + k * g.ys[1];
    for (tuna_i64 od = lo[0]; od <= hi[0]; ++od) {
      const tuna_i64 id = od * g.stride[0] - g.pad[0] + foff[0];
      for (tuna_i64 oh = lo[1]; oh <= hi[1]; ++oh) {
        const tuna_i64 ih = oh * g.stride[1] - g.pad[1] + foff[1];
        const In* xr = xn + id * g.xs[2] + ih * g.xs[3];
        const In* yr = yn + od * g.ys[2] + oh * g.ys[3];
        for (tuna_i64 ow = lo[2]; ow <= hi[2]; ++ow) {
          const tuna_i64 iw = ow * g.stride[2] - g.pad[2] + foff[2];
          acc += tuna_conv_load(xr[iw * g.xs[4]]) * tuna_conv_load(yr[ow * g.ys[4]]);
        }
      }
    }
  }
  dw[tuna_conv_offset(co, g.ws)] = TunaConvTypes<In>::store(acc);
}

#include "tuner_core/reference/conv_kernels.h"

#include <algorithm>
#include <vector>

#include "tuner_core/reference/parallel.h"

namespace tuna::reference::internal {
namespace {

// For each filter index f of one spatial dimension, the half-open range [lo, hi) of output
// positions o whose input position o*stride + f*dil - pad lies inside [0, in). Hoisting these
// out of the loops leaves the inner loops without bounds checks.
struct TapRange {
  int64_t lo = 0, hi = 0;
  int64_t offset = 0;  // f*dil - pad: input position of output 0
};

std::vector<TapRange> DimRanges(int64_t in, int64_t out, int64_t fil, int64_t pad, int64_t stride,
                                int64_t dil) {
  std::vector<TapRange> r(fil);
  for (int64_t f = 0; f < fil; ++f) {
    const int64_t off = f * dil - pad;
    const int64_t lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
    const int64_t hi = in - 1 - off < 0 ? 0 : (in - 1 - off) / stride + 1;
    r[f].offset = off;
    r[f].lo = std::min(lo, out);
    r[f].hi = std::max(r[f].lo, std::min(hi, out));
  }
  return r;
}

struct Ranges {
  std::array<std::vector<TapRange>, 3> dim;
  explicit Ranges(const ConvGeometry& g) {
    for (int i = 0; i < 3; ++i)
      dim[i] = DimRanges(g.in[i], g.out[i], g.fil[i], g.pad[i], g.stride[i], g.dil[i]);
  }
};

// y[j] += a * x[j*stride] for j < len. Separate unit-stride loop so it vectorises.
template <typename T>
inline void Axpy(int64_t len, T a, const T* __restrict x, int64_t stride, T* __restrict y) {
  if (stride == 1) {
    for (int64_t j = 0; j < len; ++j) y[j] += a * x[j];
  } else {
    for (int64_t j = 0; j < len; ++j) y[j] += a * x[j * stride];
  }
}

// y[j*stride] += a * x[j] for j < len.
template <typename T>
inline void AxpyScatter(int64_t len, T a, const T* __restrict x, T* __restrict y,
                        int64_t stride) {
  if (stride == 1) {
    for (int64_t j = 0; j < len; ++j) y[j] += a * x[j];
  } else {
    for (int64_t j = 0; j < len; ++j) y[j * stride] += a * x[j];
  }
}

// acc[j] += a[j] * b[j*stride] for j < len.
template <typename T>
inline void MulAcc(int64_t len, const T* __restrict a, const T* __restrict b, int64_t stride,
                   T* __restrict acc) {
  if (stride == 1) {
    for (int64_t j = 0; j < len; ++j) acc[j] += a[j] * b[j];
  } else {
    for (int64_t j = 0; j < len; ++j) acc[j] += a[j] * b[j * stride];
  }
}

// Calls tap(rd, rh, rw) for every filter tap in (fd, fh, fw) order: the weights' order.
template <typename Fn>
inline void ForEachTap(const Ranges& r, Fn tap) {
  for (const TapRange& rd : r.dim[0]) {
    for (const TapRange& rh : r.dim[1]) {
      for (const TapRange& rw : r.dim[2]) tap(rd, rh, rw);
    }
  }
}

// The output rows one tap touches, in (od, oh) order: row(in, out) with the offsets of the
// row's first input element (in an input plane; the next ones `stride[2]` apart) and of its
// first output element (in an output plane; rw.hi - rw.lo of them, contiguous).
template <typename Fn>
inline void ForEachRow(const ConvGeometry& g, const TapRange& rd, const TapRange& rh,
                       const TapRange& rw, Fn row) {
  const int64_t IH = g.in[1], IW = g.in[2], OH = g.out[1], OW = g.out[2];
  const int64_t sd = g.stride[0], sh = g.stride[1], sw = g.stride[2];
  const int64_t iw0 = rw.lo * sw + rw.offset;
  for (int64_t od = rd.lo; od < rd.hi; ++od) {
    const int64_t id = od * sd + rd.offset;
    for (int64_t oh = rh.lo; oh < rh.hi; ++oh) {
      const int64_t ih = oh * sh + rh.offset;
      row((id * IH + ih) * IW + iw0, (od * OH + oh) * OW + rw.lo);
    }
  }
}

}  // namespace

ConvGeometry MakeGeometry(const Problem& p) {
  ConvGeometry g;
  g.n = p.n;
  g.groups = p.groups;
  g.cg = p.c / p.groups;
  g.kg = p.k / p.groups;
  const Dhw out = p.Out();
  for (int i = 0; i < 3; ++i) {
    g.in[i] = p.in[i];
    g.fil[i] = p.fil[i];
    g.out[i] = out[i];
    g.pad[i] = p.pad[i];
    g.stride[i] = p.stride[i];
    g.dil[i] = p.dilation[i];
  }
  return g;
}

// Per output element the terms are added in (cg, fd, fh, fw) order.
template <typename T>
void ForwardDense(const ConvGeometry& g, const T* x, const T* w, T* y, int threads) {
  const Ranges r(g);
  const int64_t K = g.K(), C = g.C(), taps = g.Taps();
  const int64_t in_plane = g.InPlane(), out_plane = g.OutPlane();
  const int64_t sw = g.stride[2];
  ParallelFor(g.n * K, threads, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t n = item / K, k = item % K, grp = k / g.kg;
      T* yp = y + item * out_plane;
      std::fill(yp, yp + out_plane, T(0));
      for (int64_t cg = 0; cg < g.cg; ++cg) {
        const T* xp = x + (n * C + grp * g.cg + cg) * in_plane;
        const T* wp = w + (k * g.cg + cg) * taps;
        ForEachTap(r, [&](const TapRange& rd, const TapRange& rh, const TapRange& rw) {
          const T wv = *wp++;
          const int64_t len = rw.hi - rw.lo;
          if (len <= 0) return;
          ForEachRow(g, rd, rh, rw, [&](int64_t in, int64_t out) {
            Axpy(len, wv, xp + in, sw, yp + out);
          });
        });
      }
    }
  });
}

// Each dx element receives at most one term per (kg, fd, fh, fw), in that order.
template <typename T>
void BackwardDataDense(const ConvGeometry& g, const T* dy, const T* w, T* dx, int threads) {
  const Ranges r(g);
  const int64_t K = g.K(), C = g.C(), taps = g.Taps();
  const int64_t in_plane = g.InPlane(), out_plane = g.OutPlane();
  const int64_t sw = g.stride[2];
  ParallelFor(g.n * C, threads, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t n = item / C, c = item % C, grp = c / g.cg, cg = c % g.cg;
      T* xp = dx + item * in_plane;
      std::fill(xp, xp + in_plane, T(0));
      for (int64_t kg = 0; kg < g.kg; ++kg) {
        const int64_t k = grp * g.kg + kg;
        const T* yp = dy + (n * K + k) * out_plane;
        const T* wp = w + (k * g.cg + cg) * taps;
        ForEachTap(r, [&](const TapRange& rd, const TapRange& rh, const TapRange& rw) {
          const T wv = *wp++;
          const int64_t len = rw.hi - rw.lo;
          if (len <= 0) return;
          ForEachRow(g, rd, rh, rw, [&](int64_t in, int64_t out) {
            AxpyScatter(len, wv, yp + out, xp + in, sw);
          });
        });
      }
    }
  });
}

// Per dw element: lane j (output column rw.lo + j) accumulates over (n, od, oh) in order, then
// the lanes are added left to right. Lanes keep the inner loop vectorisable without
// reassociating a scalar sum.
template <typename T>
void BackwardWeightsDense(const ConvGeometry& g, const T* x, const T* dy, T* dw, int threads) {
  const Ranges r(g);
  const int64_t K = g.K(), C = g.C(), taps = g.Taps();
  const int64_t in_plane = g.InPlane(), out_plane = g.OutPlane();
  const int64_t OW = g.out[2], sw = g.stride[2];
  ParallelFor(K * g.cg, threads, [&](int64_t begin, int64_t end) {
    std::vector<T> lanes(OW);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t k = item / g.cg, cg = item % g.cg, grp = k / g.kg;
      const int64_t c = grp * g.cg + cg;
      T* out = dw + item * taps;
      ForEachTap(r, [&](const TapRange& rd, const TapRange& rh, const TapRange& rw) {
        const int64_t len = rw.hi - rw.lo;
        std::fill(lanes.begin(), lanes.end(), T(0));
        if (len > 0) {
          for (int64_t n = 0; n < g.n; ++n) {
            const T* xp = x + (n * C + c) * in_plane;
            const T* yp = dy + (n * K + k) * out_plane;
            ForEachRow(g, rd, rh, rw, [&](int64_t in, int64_t o) {
              MulAcc(len, yp + o, xp + in, sw, lanes.data());
            });
          }
        }
        T sum = 0;
        for (int64_t j = 0; j < len; ++j) sum += lanes[j];
        *out++ = sum;
      });
    }
  });
}

#define TUNA_INSTANTIATE(T)                                                                    \
  template void ForwardDense<T>(const ConvGeometry&, const T*, const T*, T*, int);           \
  template void BackwardDataDense<T>(const ConvGeometry&, const T*, const T*, T*, int);      \
  template void BackwardWeightsDense<T>(const ConvGeometry&, const T*, const T*, T*, int);
TUNA_INSTANTIATE(float)
TUNA_INSTANTIATE(double)
TUNA_INSTANTIATE(int32_t)
#undef TUNA_INSTANTIATE

}  // namespace tuna::reference::internal

// Test helpers: problem builders, a seeded random problem generator and a naive reference
// written straight from the definition (gather form for every direction, through
// TensorDesc::Offset) that shares no code with the fast reference.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "tuner_core/problem/problem.h"

namespace tuna::testing {

inline Problem Make2D(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t fh,
                      int64_t fw) {
  Problem p;
  p.spatial_dims = 2;
  p.n = n, p.c = c, p.k = k;
  p.in = {1, h, w};
  p.fil = {1, fh, fw};
  return p;
}

inline Problem Make3D(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w, int64_t k,
                      int64_t fd, int64_t fh, int64_t fw) {
  Problem p;
  p.spatial_dims = 3;
  p.n = n, p.c = c, p.k = k;
  p.in = {d, h, w};
  p.fil = {fd, fh, fw};
  p.in_layout = p.fil_layout = p.out_layout = Layout::kNCDHW;
  return p;
}

inline Layout ChannelsLast(const Problem& p) {
  return p.spatial_dims == 3 ? Layout::kNDHWC : Layout::kNHWC;
}
inline Layout ChannelsFirst(const Problem& p) {
  return p.spatial_dims == 3 ? Layout::kNCDHW : Layout::kNCHW;
}

inline std::string Describe(const Problem& p) {
  return absl::StrFormat(
      "%dD n=%d c=%d k=%d g=%d in=%dx%dx%d fil=%dx%dx%d pad=%d,%d,%d stride=%d,%d,%d "
      "dil=%d,%d,%d layouts=%s/%s/%s",
      p.spatial_dims, p.n, p.c, p.k, p.groups, p.in[0], p.in[1], p.in[2], p.fil[0], p.fil[1],
      p.fil[2], p.pad[0], p.pad[1], p.pad[2], p.stride[0], p.stride[1], p.stride[2],
      p.dilation[0], p.dilation[1], p.dilation[2], LayoutName(p.in_layout),
      LayoutName(p.fil_layout), LayoutName(p.out_layout));
}

// A random valid conv-mode problem (small enough for the naive reference). About a quarter
// are 3D; groups include depthwise; each tensor independently channels-first or -last.
inline Problem RandomProblem(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  for (;;) {
    Problem p;
    p.spatial_dims = pick(0, 3) == 0 ? 3 : 2;
    const int64_t g_choice = pick(0, 5);
    p.groups = g_choice <= 2 ? 1 : g_choice == 3 ? 2 : g_choice == 4 ? 3 : pick(2, 6);
    const bool depthwise = g_choice == 5;
    const int64_t cg = depthwise ? 1 : pick(1, 4);
    const int64_t kg = depthwise ? pick(1, 2) : pick(1, 4);
    p.c = cg * p.groups;
    p.k = kg * p.groups;
    p.n = pick(1, 3);
    for (int i = p.spatial_dims == 3 ? 0 : 1; i < 3; ++i) {
      p.in[i] = p.spatial_dims == 3 ? pick(1, 6) : pick(1, 11);
      p.fil[i] = pick(1, 3 + (pick(0, 4) == 0));
      p.pad[i] = pick(0, 2);
      p.stride[i] = pick(1, 3);
      p.dilation[i] = pick(1, 2 + (pick(0, 3) == 0));
    }
    auto layout = [&] { return pick(0, 1) ? ChannelsLast(p) : ChannelsFirst(p); };
    p.in_layout = layout(), p.fil_layout = layout(), p.out_layout = layout();
    bool ok = true;
    for (int i = 0; i < 3; ++i) {
      ok = ok && p.in[i] + 2 * p.pad[i] >= p.dilation[i] * (p.fil[i] - 1) + 1;
      // Reject outputs that see only padding in some dimension (identically zero).
      bool touches = false;
      const int64_t out = ok ? p.Out()[i] : 0;
      for (int64_t o = 0; o < out; ++o)
        for (int64_t f = 0; f < p.fil[i]; ++f) {
          const int64_t at = o * p.stride[i] + f * p.dilation[i] - p.pad[i];
          touches = touches || (at >= 0 && at < p.in[i]);
        }
      ok = ok && touches;
    }
    if (ok) return p;
    seed = rng();
  }
}

// Naive definitions, in double, on the problem's layouts.
inline std::vector<double> NaiveForward(const Problem& p, const std::vector<double>& x,
                                        const std::vector<double>& w) {
  const TensorDesc xd = p.XDesc(), wd = p.WDesc(), yd = p.YDesc();
  const Dhw o = p.Out();
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  std::vector<double> y(yd.ElementCount());
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t k = 0; k < p.k; ++k)
      for (int64_t od = 0; od < o[0]; ++od)
        for (int64_t oh = 0; oh < o[1]; ++oh)
          for (int64_t ow = 0; ow < o[2]; ++ow) {
            double s = 0;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t fd = 0; fd < p.fil[0]; ++fd)
                for (int64_t fh = 0; fh < p.fil[1]; ++fh)
                  for (int64_t fw = 0; fw < p.fil[2]; ++fw) {
                    const int64_t id = od * p.stride[0] + fd * p.dilation[0] - p.pad[0];
                    const int64_t ih = oh * p.stride[1] + fh * p.dilation[1] - p.pad[1];
                    const int64_t iw = ow * p.stride[2] + fw * p.dilation[2] - p.pad[2];
                    if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1] || iw < 0 ||
                        iw >= p.in[2])
                      continue;
                    s += x[xd.Offset(n, (k / kg) * cg + c, id, ih, iw)] *
                         w[wd.Offset(k, c, fd, fh, fw)];
                  }
            y[yd.Offset(n, k, od, oh, ow)] = s;
          }
  return y;
}

inline std::vector<double> NaiveBackwardData(const Problem& p, const std::vector<double>& dy,
                                             const std::vector<double>& w) {
  const TensorDesc xd = p.XDesc(), wd = p.WDesc(), yd = p.YDesc();
  const Dhw o = p.Out();
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  std::vector<double> dx(xd.ElementCount());
  // For input position i and tap f the output position is (i + pad - f*dil) / stride when
  // that divides exactly and lands inside the output.
  auto out_pos = [&](int dim, int64_t i, int64_t f) -> int64_t {
    const int64_t t = i + p.pad[dim] - f * p.dilation[dim];
    if (t < 0 || t % p.stride[dim] != 0) return -1;
    const int64_t q = t / p.stride[dim];
    return q < o[dim] ? q : -1;
  };
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t id = 0; id < p.in[0]; ++id)
        for (int64_t ih = 0; ih < p.in[1]; ++ih)
          for (int64_t iw = 0; iw < p.in[2]; ++iw) {
            double s = 0;
            const int64_t g = c / cg;
            for (int64_t kk = 0; kk < kg; ++kk)
              for (int64_t fd = 0; fd < p.fil[0]; ++fd)
                for (int64_t fh = 0; fh < p.fil[1]; ++fh)
                  for (int64_t fw = 0; fw < p.fil[2]; ++fw) {
                    const int64_t od = out_pos(0, id, fd), oh = out_pos(1, ih, fh),
                                  ow = out_pos(2, iw, fw);
                    if (od < 0 || oh < 0 || ow < 0) continue;
                    const int64_t k = g * kg + kk;
                    s += dy[yd.Offset(n, k, od, oh, ow)] * w[wd.Offset(k, c % cg, fd, fh, fw)];
                  }
            dx[xd.Offset(n, c, id, ih, iw)] = s;
          }
  return dx;
}

inline std::vector<double> NaiveBackwardWeights(const Problem& p, const std::vector<double>& x,
                                                const std::vector<double>& dy) {
  const TensorDesc xd = p.XDesc(), wd = p.WDesc(), yd = p.YDesc();
  const Dhw o = p.Out();
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  std::vector<double> dw(wd.ElementCount());
  for (int64_t k = 0; k < p.k; ++k)
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t fd = 0; fd < p.fil[0]; ++fd)
        for (int64_t fh = 0; fh < p.fil[1]; ++fh)
          for (int64_t fw = 0; fw < p.fil[2]; ++fw) {
            double s = 0;
            for (int64_t n = 0; n < p.n; ++n)
              for (int64_t od = 0; od < o[0]; ++od)
                for (int64_t oh = 0; oh < o[1]; ++oh)
                  for (int64_t ow = 0; ow < o[2]; ++ow) {
                    const int64_t id = od * p.stride[0] + fd * p.dilation[0] - p.pad[0];
                    const int64_t ih = oh * p.stride[1] + fh * p.dilation[1] - p.pad[1];
                    const int64_t iw = ow * p.stride[2] + fw * p.dilation[2] - p.pad[2];
                    if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1] || iw < 0 ||
                        iw >= p.in[2])
                      continue;
                    s += x[xd.Offset(n, (k / kg) * cg + c, id, ih, iw)] *
                         dy[yd.Offset(n, k, od, oh, ow)];
                  }
            dw[wd.Offset(k, c, fd, fh, fw)] = s;
          }
  return dw;
}

// Copies a tensor between two descs of the same dims (e.g. NCHW -> NHWC).
template <typename T>
std::vector<T> Relayout(const TensorDesc& from, const TensorDesc& to, const std::vector<T>& v) {
  std::vector<T> out(to.ElementCount());
  const auto& d = from.dims;
  for (int64_t a = 0; a < d[0]; ++a)
    for (int64_t b = 0; b < d[1]; ++b)
      for (int64_t c = 0; c < d[2]; ++c)
        for (int64_t e = 0; e < d[3]; ++e)
          for (int64_t f = 0; f < d[4]; ++f) out[to.Offset(a, b, c, e, f)] = v[from.Offset(a, b, c, e, f)];
  return out;
}

inline double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

inline double AbsDot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::abs(a[i] * b[i]);
  return s;
}

}  // namespace tuna::testing

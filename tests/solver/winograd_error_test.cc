// The rounding error of tuna's Winograd F(2x2,3x3) and F(4x4,3x3) (TunaWinogradF2x3 1017,
// TunaWinogradF4x3 1027) without a GPU: a CPU twin runs the kernels' arithmetic in FP32 — the
// transforms are the kernels' own code (kernels/conv/winograd_math.h, compiled here by the host
// compiler), the tiles, padding, backward-data rotation and GEMM order (one fmaf per channel,
// channels in order, as the SIMT GEMM kernel adds them) as the kernels lay them out — and is
// compared with an FP64 direct convolution of the same inputs (the verification's fills) on the
// ResNet-50 3x3 stride-1 layers (batch 2) and edge shapes (padding 0-2, odd and tiny sizes, tile
// tails, channel counts off every multiple), forward and backward data.
//
// Fails when a variant's result is not within reference/verify.h's FP32 tolerance against the
// FP32 reference (what every tuning candidate is held to) with a factor 2 of headroom on both of
// its bounds (per element and RMS), or when F(4x4)'s error against FP64 exceeds the bound its
// header documents. A wrong transform (checked: one coefficient of B^T changed) fails both by
// orders of magnitude. Prints the table docs/BENCHMARKS.md quotes.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "kernels/conv/winograd_math.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"

namespace tuna {
namespace {

// F(4x4,3x3) with B^T's v[1] = 2 d1 + 5 d2 + d3 - 2 d4 changed to 4 d2: the negative control.
struct WrongF4x3 : WinoF4x3 {
  static void Bt(const float d[6], float v[6]) {
    WinoF4x3::Bt(d, v);
    v[1] = 2.f * (d[1] - d[4]) + fmaf(4.f, d[2], d[3]);
  }
};

// The kernels' forward / backward-data computation (kernels/conv/winograd_tiles.h and the GEMM)
// of `p` on the host: `in` is x (forward) or dy (backward data), w the filter; returns y or dx.
template <class W>
std::vector<float> WinogradTwin(const Problem& p, const float* in, const float* w) {
  constexpr int A = W::kA, M = W::kM, P = A * A;
  const bool flip = p.direction == Direction::kBackwardData;
  const Dhw o = p.Out();
  const int64_t n = p.n, ci_n = flip ? p.k : p.c, ko_n = flip ? p.c : p.k;
  const int64_t h = flip ? o[1] : p.in[1], wd = flip ? o[2] : p.in[2];
  const int64_t oh = flip ? p.in[1] : o[1], ow = flip ? p.in[2] : o[2];
  const int64_t pad_h = flip ? 2 - p.pad[1] : p.pad[1], pad_w = flip ? 2 - p.pad[2] : p.pad[2];
  const int64_t th = (oh + M - 1) / M, tw = (ow + M - 1) / M, tiles = n * th * tw;
  std::vector<float> u(P * ko_n * ci_n), v(P * ci_n * tiles), out(n * ko_n * oh * ow);
  for (int64_t ko = 0; ko < ko_n; ++ko) {
    for (int64_t ci = 0; ci < ci_n; ++ci) {
      float g[3][3], t[A][A];
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s)
          g[r][s] = flip ? w[(ci * ko_n + ko) * 9 + (2 - r) * 3 + (2 - s)] : w[(ko * ci_n + ci) * 9 + r * 3 + s];
      wino_filter_tile<W>(g, t);
      for (int xi = 0; xi < P; ++xi) u[(xi * ko_n + ko) * ci_n + ci] = t[xi / A][xi % A];
    }
  }
  for (int64_t c = 0; c < ci_n; ++c) {
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t img = t / (th * tw), h0 = (t / tw) % th * M - pad_h, w0 = t % tw * M - pad_w;
      float d[A][A], r[A][A];
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < A; ++j) {
          const int64_t y = h0 + i, x = w0 + j;
          d[i][j] = y >= 0 && y < h && x >= 0 && x < wd ? in[((img * ci_n + c) * h + y) * wd + x] : 0.f;
        }
      wino_input_tile<W>(d, r);
      for (int xi = 0; xi < P; ++xi) v[(xi * ci_n + c) * tiles + t] = r[xi / A][xi % A];
    }
  }
  for (int64_t ko = 0; ko < ko_n; ++ko) {
    for (int64_t t = 0; t < tiles; ++t) {
      float m[A][A], y[M][M];
      for (int xi = 0; xi < P; ++xi) {
        float acc = 0.f;
        for (int64_t c = 0; c < ci_n; ++c) acc = fmaf(u[(xi * ko_n + ko) * ci_n + c], v[(xi * ci_n + c) * tiles + t], acc);
        m[xi / A][xi % A] = acc;
      }
      wino_output_tile<W>(m, y);
      const int64_t img = t / (th * tw), h0 = (t / tw) % th * M, w0 = t % tw * M;
      for (int i = 0; i < M && h0 + i < oh; ++i)
        for (int j = 0; j < M && w0 + j < ow; ++j) out[((img * ko_n + ko) * oh + h0 + i) * ow + w0 + j] = y[i][j];
    }
  }
  return out;
}

// One problem's inputs (the verification's seeded fills) and its references.
struct Case {
  Problem p;
  std::vector<std::byte> in, w;  // x or dy, and w, as FP32 storage
  std::vector<double> ref64;     // FP64 direct
  std::vector<float> ref32;      // reference::RunConv (FP32 direct): what candidates are checked against
};

Case MakeCase(const Problem& p) {
  Case c;
  c.p = p;
  const bool bwd = p.direction == Direction::kBackwardData;
  const int64_t in_count = bwd ? p.YDesc().ElementCount() : p.XDesc().ElementCount();
  const int64_t out_count = bwd ? p.XDesc().ElementCount() : p.YDesc().ElementCount();
  const uint64_t seed = std::hash<std::string>()(p.Canonical());
  c.in = reference::RandomBuffer(reference::ElementType::kFp32, in_count, seed + 1);
  c.w = reference::RandomBuffer(reference::ElementType::kFp32, p.WDesc().ElementCount(), seed + 2);
  const std::vector<double> in64 = reference::ToDoubles(reference::ElementType::kFp32, c.in.data(), in_count);
  const std::vector<double> w64 = reference::ToDoubles(reference::ElementType::kFp32, c.w.data(), p.WDesc().ElementCount());
  c.ref64.resize(out_count);
  c.ref32.resize(out_count);
  if (bwd) {
    REQUIRE(reference::ConvBackwardDataF64(p, in64, w64, c.ref64).ok());
    REQUIRE(reference::ConvBackwardData(p, c.in.data(), c.w.data(), c.ref32.data()).ok());
  } else {
    REQUIRE(reference::ConvForwardF64(p, in64, w64, c.ref64).ok());
    REQUIRE(reference::ConvForward(p, c.in.data(), c.w.data(), c.ref32.data()).ok());
  }
  return c;
}

// Errors of `got` against FP64 (max_abs, max_rel = max_abs / max|ref|, rms as verify.h defines it)
// and how much of verify.h's FP32 tolerance it uses against the FP32 reference (1 = at the bound).
struct Errors {
  double max_abs = 0, max_rel = 0, rms = 0;
  double element_use = 0, rms_use = 0;  // worst |got - ref32| / element bound, rms / rms bound
  bool verify_ok = false;
};

Errors Measure(const Case& c, const std::vector<float>& got) {
  Errors e;
  std::vector<double> g(got.begin(), got.end());
  const reference::VerifyReport r64 = reference::Compare(g, c.ref64, 1, reference::Tolerance{});
  e.max_abs = r64.max_abs_error;
  e.max_rel = r64.max_rel_error;
  e.rms = r64.rms_error;
  const int64_t l = reference::ReductionLength(c.p, c.p.direction);
  const reference::Tolerance tol = reference::DefaultTolerance(DataType::kFp32);
  std::vector<double> ref(c.ref32.begin(), c.ref32.end());
  const reference::VerifyReport r32 = reference::Compare(g, ref, l, tol);
  e.verify_ok = r32.ok;
  const double abs_bound = reference::AbsBound(tol, l, r32.scale);
  for (size_t i = 0; i < g.size(); ++i) {
    e.element_use = std::max(e.element_use, std::fabs(g[i] - ref[i]) / (tol.element_rel * std::fabs(ref[i]) + abs_bound));
  }
  e.rms_use = r32.rms_error / std::max(tol.rms, tol.rms_per_sqrt_l * std::sqrt(double(l)));
  return e;
}

std::vector<Problem> ErrorProblems() {
  std::vector<Problem> out;
  for (const Problem& layer : testing::ResNet50Layers()) {
    if (layer.fil[1] != 3 || layer.stride[1] != 1) continue;
    Problem b = layer;
    b.n = 2;
    out.push_back(b);
  }
  // n, c, k, h, w, pad: odd sizes and tile tails, padding 0-2, 1x1 and 2x2 images, large C.
  for (auto [n, c, k, h, w, pad] : std::vector<std::array<int64_t, 6>>{{2, 5, 7, 9, 11, 1},
                                                                       {1, 3, 6, 8, 5, 0},
                                                                       {3, 9, 4, 7, 7, 2},
                                                                       {1, 16, 16, 1, 1, 1},
                                                                       {2, 8, 12, 2, 3, 2},
                                                                       {1, 33, 17, 13, 6, 0},
                                                                       {2, 1, 1, 10, 10, 1},
                                                                       {1, 2048, 8, 5, 6, 1}}) {
    Problem b;
    b.n = n, b.c = c, b.k = k;
    b.in = {1, h, w};
    b.fil = {1, 3, 3};
    b.pad = {0, pad, pad};
    out.push_back(b);
  }
  return out;
}

TEST_CASE("Winograd F(2x2) and F(4x4): the FP32 twin's error against FP64 stays within the tolerance", "[winograd]") {
  const std::vector<Problem> problems = ErrorProblems();
  REQUIRE(problems.size() == 12);  // 4 ResNet-50 layers, 8 edge shapes
  std::printf("| problem | dir | L | direct max_rel | F(2x2) max_abs | max_rel | rms | F(4x4) max_abs | max_rel | rms | "
              "F(4x4) use of the element / RMS bound |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  Errors worst2, worst4;
  for (const Problem& base : problems) {
    for (Direction d : {Direction::kForward, Direction::kBackwardData}) {
      const Problem p = testing::With(base, d, DataType::kFp32, Layout::kNCHW);
      INFO(p.Canonical());
      const Case c = MakeCase(p);
      const auto* in = reinterpret_cast<const float*>(c.in.data());
      const auto* w = reinterpret_cast<const float*>(c.w.data());
      const Errors direct = Measure(c, c.ref32);
      const Errors e2 = Measure(c, WinogradTwin<WinoF2x3>(p, in, w));
      const Errors e4 = Measure(c, WinogradTwin<WinoF4x3>(p, in, w));
      std::printf("| n%ld c%ld k%ld %ldx%ld p%ld | %s | %ld | %.2g | %.2g | %.2g | %.2g | %.2g | %.2g | %.2g | %.2f / %.2f |\n",
                  long(p.n), long(p.c), long(p.k), long(p.in[1]), long(p.in[2]), long(p.pad[1]),
                  d == Direction::kForward ? "F" : "B", long(reference::ReductionLength(p, d)), direct.max_rel,
                  e2.max_abs, e2.max_rel, e2.rms, e4.max_abs, e4.max_rel, e4.rms, e4.element_use, e4.rms_use);
      for (const auto& [e, worst] : {std::pair{&e2, &worst2}, std::pair{&e4, &worst4}}) {
        CHECK(e->verify_ok);
        // Headroom: half of either bound is never reached.
        CHECK(e->element_use <= 0.5);
        CHECK(e->rms_use <= 0.5);
        worst->max_rel = std::max(worst->max_rel, e->max_rel);
        worst->rms = std::max(worst->rms, e->rms);
        worst->element_use = std::max(worst->element_use, e->element_use);
        worst->rms_use = std::max(worst->rms_use, e->rms_use);
      }
      // The bound gpu_winograd.h documents for F(4x4) against FP64: max_rel <= 2e-5.
      CHECK(e4.max_rel <= 2e-5);
    }
  }
  std::printf("worst F(2x2): max_rel %.3g rms %.3g, bound use %.2f / %.2f\n", worst2.max_rel, worst2.rms,
              worst2.element_use, worst2.rms_use);
  std::printf("worst F(4x4): max_rel %.3g rms %.3g, bound use %.2f / %.2f\n", worst4.max_rel, worst4.rms,
              worst4.element_use, worst4.rms_use);
}

TEST_CASE("Winograd twin: a wrong transform coefficient fails the check", "[winograd]") {
  for (Direction d : {Direction::kForward, Direction::kBackwardData}) {
    Problem b;
    b.n = 1, b.c = 8, b.k = 8;
    b.in = {1, 9, 9};
    b.fil = {1, 3, 3};
    b.pad = {0, 1, 1};
    const Problem p = testing::With(b, d, DataType::kFp32, Layout::kNCHW);
    const Case c = MakeCase(p);
    const auto* in = reinterpret_cast<const float*>(c.in.data());
    const auto* w = reinterpret_cast<const float*>(c.w.data());
    const Errors right = Measure(c, WinogradTwin<WinoF4x3>(p, in, w));
    const Errors wrong = Measure(c, WinogradTwin<WrongF4x3>(p, in, w));
    CHECK(right.verify_ok);
    CHECK_FALSE(wrong.verify_ok);
    CHECK(wrong.max_rel > 1e-2);
  }
}

}  // namespace
}  // namespace tuna

// The rounding error of tuna's Winograd F(2x2,3x3) and F(4x4,3x3) (TunaWinogradF2x3 1017,
// TunaWinogradF4x3 1027) without a GPU: a CPU twin runs the solvers' own plans (GetSolution of the
// default config: launches, arguments, workspace layout) with the kernels' own transform code —
// the per-thread bodies of kernels/conv/winograd_tiles.h over the arithmetic of
// kernels/conv/winograd_math.h, compiled here by the host compiler for every thread index — and
// the GEMM launch as the SIMT kernel adds (one fmaf per channel, channels in order), so it rounds
// as the GPU does. Compared with an FP64 direct convolution of the same inputs (the
// verification's seeded fills) on the ResNet-50 3x3 stride-1 layers (batch 2) and edge shapes
// (padding 0-2, odd and tiny sizes, tile tails, channel counts off every multiple), forward and
// backward data.
//
// Fails when a variant's result is not within reference/verify.h's FP32 tolerance against the
// FP32 reference (what every tuning candidate is held to) with a factor 2 of headroom on both of
// its bounds (per element and RMS), or when F(4x4)'s error against FP64 exceeds the bound its
// header documents. A wrong transform (checked: one coefficient of B^T changed) fails both by
// orders of magnitude; so would a wrong tile, padding, rotation or workspace offset. Prints the
// table docs/BENCHMARKS.md quotes.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "conv/winograd_tiles.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"
#include "tuner_core/solver/conv/gpu_winograd.h"

namespace tuna {
namespace {

// F(4x4,3x3) with B^T's v[1] = 2 d1 + 5 d2 + d3 - 2 d4 changed to 4 d2: the negative control.
struct WrongF4x3 : WinoF4x3 {
  static void Bt(const float d[6], float v[6]) {
    WinoF4x3::Bt(d, v);
    v[1] = 2.f * (d[1] - d[4]) + fmaf(4.f, d[2], d[3]);
  }
};

// The batched GEMM launch of fast_simt_fwd.cu as gpu_winograd.cc plans it (fast_simt::GemmPlan:
// one image, 1x1 taps, rows = K, depth = C, cols = T4; z-th point at the batch offsets):
// y[k][col] = sum_c w[k][c] x[c][col], one fmaf per channel in channel order from 0, as the SIMT
// mainloop accumulates.
void HostGemm(const solver::Launch& l, const float* x, const float* w, float* y) {
  const std::vector<solver::KernelArg>& a = l.args;
  REQUIRE(a.size() == 34);
  REQUIRE(a[3].i == 0);                                          // w_offset
  REQUIRE((a[4].i == 1 && a[6].i == 1 && a[9].i == 1));         // n, h, rows: one image row
  const int64_t depth = a[5].i, cols = a[7].i, rows = a[8].i;    // c, w, k
  REQUIRE(a[10].i == cols);
  REQUIRE((a[23].i == 1 && a[24].i == 1));                       // taps: 1x1
  const int64_t x_off = a[29].i, y_off = a[30].i, zx = a[31].i, zw = a[32].i, zy = a[33].i;
  for (int64_t z = 0; z < l.grid.z; ++z) {
    const float* xz = x + x_off + z * zx;
    const float* wz = w + z * zw;
    float* yz = y + y_off + z * zy;
    for (int64_t k = 0; k < rows; ++k) {
      for (int64_t col = 0; col < cols; ++col) {
        float acc = 0.f;
        for (int64_t c = 0; c < depth; ++c) acc = fmaf(wz[k * depth + c], xz[c * cols + col], acc);
        yz[k * cols + col] = acc;
      }
    }
  }
}

// The solution `s` plans for `p` (its default config), run on the host: the transform launches
// through the kernels' own per-thread bodies (kernels/conv/winograd_tiles.h over W's arithmetic)
// for every thread of the launch, with the solver's arguments in the entries' order, and the GEMM
// launch by HostGemm. Output and workspace are poisoned with NaN first. `in` is x (forward) or dy
// (backward data); returns y or dx.
template <class W>
std::vector<float> HostRun(const solver::Solver& s, const Problem& p, const std::vector<std::byte>& in,
                           const std::vector<std::byte>& w_bytes) {
  absl::StatusOr<solver::Target> target = solver::TargetForArch("sm_90");
  REQUIRE(target.ok());
  absl::StatusOr<solver::Solution> sol = s.GetSolution(*target, p, s.DefaultConfig(*target, p));
  REQUIRE(sol.ok());
  REQUIRE(sol->launches.size() == 4);
  CHECK(sol->kernels.back().source == (W::kM == 2 ? "conv/winograd_f2x3.cu" : "conv/winograd_f4x3.cu"));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const bool bwd = p.direction == Direction::kBackwardData;
  std::vector<float> x(p.XDesc().ElementCount(), nan), y(p.YDesc().ElementCount(), nan);
  std::vector<float> w(p.WDesc().ElementCount()), ws(sol->workspace_bytes / 4, nan);
  std::memcpy(w.data(), w_bytes.data(), w_bytes.size());
  std::memcpy(bwd ? y.data() : x.data(), in.data(), in.size());
  auto buf = [&](const solver::KernelArg& a) -> float* {
    REQUIRE(a.kind == solver::KernelArg::Kind::kBuffer);
    switch (a.role) {
      case solver::BufferRole::kX: return x.data();
      case solver::BufferRole::kW: return w.data();
      case solver::BufferRole::kY: return y.data();
      case solver::BufferRole::kWorkspace: return ws.data();
    }
    return nullptr;
  };
  for (const solver::Launch& l : sol->launches) {
    const std::vector<solver::KernelArg>& a = l.args;
    const int64_t threads = int64_t(l.grid.x) * l.block.x;
    auto i = [&](size_t k) { return static_cast<int>(a[k].i); };
    if (l.entry == "tuna_wino_filter") {
      REQUIRE(a.size() == 5);
      const float* src = buf(a[0]);
      float* dst = buf(a[1]);
      for (int e = 0; e < threads; ++e) wino_filter_body<W>(e, src, dst, i(2), i(3), i(4));
    } else if (l.entry == "tuna_wino_input") {
      REQUIRE(a.size() == 12);
      const float* src = buf(a[0]);
      float* dst = buf(a[1]);
      for (int64_t e = 0; e < threads; ++e) {
        wino_input_body<W>(e, src, dst, a[2].i, i(3), i(4), i(5), i(6), i(7), i(8), i(9), i(10), i(11));
      }
    } else if (l.entry == "tuna_wino_output") {
      REQUIRE(a.size() == 10);
      const float* src = buf(a[0]);
      float* dst = buf(a[2]);
      for (int64_t e = 0; e < threads; ++e) {
        wino_output_body<W>(e, src, a[1].i, dst, i(3), i(4), i(5), i(6), i(7), i(8), i(9));
      }
    } else {
      REQUIRE(l.entry == "tuna_fast_simt_fwd");
      HostGemm(l, buf(a[0]), buf(a[1]), buf(a[2]));
    }
  }
  return bwd ? x : y;
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
  for (const Problem& b : testing::WinogradEdgeProblems()) out.push_back(b);
  return out;
}

TEST_CASE("Winograd F(2x2) and F(4x4): the FP32 twin's error against FP64 stays within the tolerance", "[winograd]") {
  const std::vector<Problem> problems = ErrorProblems();
  REQUIRE(problems.size() == 14);  // 4 ResNet-50 layers, 9 edge shapes
  const solver::WinogradF2x3Solver f2;
  const solver::WinogradF4x3Solver f4;
  std::printf("| problem | dir | L | direct max_rel | F(2x2) max_abs | max_rel | rms | F(4x4) max_abs | max_rel | rms | "
              "F(4x4) use of the element / RMS bound |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  Errors worst2, worst4;
  for (const Problem& base : problems) {
    for (Direction d : {Direction::kForward, Direction::kBackwardData}) {
      const Problem p = testing::With(base, d, DataType::kFp32, Layout::kNCHW);
      INFO(p.Canonical());
      const Case c = MakeCase(p);
      const Errors direct = Measure(c, c.ref32);
      const Errors e2 = Measure(c, HostRun<WinoF2x3>(f2, p, c.in, c.w));
      const Errors e4 = Measure(c, HostRun<WinoF4x3>(f4, p, c.in, c.w));
      std::printf("| n%ld c%ld k%ld %ldx%ld p%ld,%ld | %s | %ld | %.2g | %.2g | %.2g | %.2g | %.2g | %.2g | %.2g | %.2f / %.2f |\n",
                  long(p.n), long(p.c), long(p.k), long(p.in[1]), long(p.in[2]), long(p.pad[1]), long(p.pad[2]),
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
    const solver::WinogradF4x3Solver f4;
    const Errors right = Measure(c, HostRun<WinoF4x3>(f4, p, c.in, c.w));
    const Errors wrong = Measure(c, HostRun<WrongF4x3>(f4, p, c.in, c.w));
    CHECK(right.verify_ok);
    CHECK_FALSE(wrong.verify_ok);
    CHECK(wrong.max_rel > 1e-2);
  }
}

}  // namespace
}  // namespace tuna

// TunaMfmaFwd (1024, MFMA implicit GEMM for gfx908 / gfx90a): planning checks that need no
// compiler (applicability, defaults valid on the 23 ResNet-50 layers and edge problems in FP16 and
// BF16, small non-empty spaces, pruning, launch shapes), a CPU model of the kernel's index math
// (its gather, LDS fragment addressing and epilogue, with the MFMA lane layout it relies on) against
// a direct convolution, and hiprtc builds (skipped with a warning where hiprtc is missing): the
// defaults of layers and edge problems in FP16 and BF16 on gfx908 and gfx90a, every valid config of
// one layer in FP16 on gfx90a, a fourth of them in BF16 on both. The kernel is compile-only: no AMD
// GPU has run it.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <random>
#include <set>

#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/hip/hip_backend.h"
#include "tuner_core/solver/conv/gpu_mfma.h"
#include "tuner_core/solver/invoker.h"

namespace tuna {
namespace {

using solver::MfmaFwdSolver;
using solver::PerfConfig;
using solver::Target;

Target Arch(const std::string& arch) {
  absl::StatusOr<Target> t = solver::TargetForArch(arch);
  REQUIRE(t.ok());
  return *t;
}

std::vector<PerfConfig> AllValid(const solver::Solver& s, const Target& t, const Problem& p) {
  std::vector<PerfConfig> out;
  const solver::SearchSpace space = s.Space(t, p);
  for (uint64_t i = 0; i < space.Size(); ++i) {
    PerfConfig c = space.At(i);
    if (s.IsValid(t, p, c).ok()) out.push_back(c);
  }
  return out;
}

Problem Fp16(int i) { return testing::With(testing::ResNet50Layers().at(i), Direction::kForward, DataType::kFp16, Layout::kNHWC); }

// Edge problems (FP16 NHWC forward): groups, 1x7, C = 3, stride 2, dilation, odd tails.
std::vector<Problem> MfmaEdgeProblems() {
  using testing::NhwcForward;
  return {
      NhwcForward(2, 64, 128, 14, 14, 3, 3, 1, 1, 1, 1, 32),  // grouped (ResNeXt-like), C/G = 2
      NhwcForward(2, 256, 256, 14, 14, 3, 3, 1, 1, 1, 1, 8),  // grouped, C/G = 32 (vector loads)
      NhwcForward(2, 128, 192, 17, 17, 1, 7, 0, 3, 1, 1, 1),  // 1x7 (Inception)
      NhwcForward(4, 3, 32, 65, 65, 3, 3, 1, 1, 2, 1, 1),     // C = 3, stride 2
      NhwcForward(1, 32, 48, 20, 20, 3, 3, 2, 2, 1, 2, 1),    // dilation 2
      NhwcForward(3, 5, 7, 9, 11, 2, 3, 1, 0, 1, 1, 1),       // every extent odd
  };
}

TEST_CASE("TunaMfmaFwd: applicable on gfx908 / gfx90a only, defaults valid, small spaces", "[solver]") {
  const MfmaFwdSolver s;
  const Target gfx908 = Arch("gfx908"), gfx90a = Arch("gfx90a");
  const std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  std::vector<Problem> problems;
  for (const Problem& b : layers) {
    for (DataType type : {DataType::kFp16, DataType::kBf16}) {
      problems.push_back(testing::With(b, Direction::kForward, type, Layout::kNHWC));
    }
  }
  for (const Problem& e : MfmaEdgeProblems()) {
    problems.push_back(e);
    problems.push_back(testing::With(e, Direction::kForward, DataType::kBf16, Layout::kNHWC));
  }
  size_t min_valid = 1u << 30, max_valid = 0;
  for (const Problem& p : problems) {
    INFO(p.Canonical());
    for (const Target& t : {gfx908, gfx90a}) {
      INFO(t.arch);
      absl::Status app = s.IsApplicable(t, p);
      INFO(app.message());
      REQUIRE(app.ok());
      const PerfConfig def = s.DefaultConfig(t, p);
      INFO("default " << def.ToString());
      CHECK(s.IsValid(t, p, def).ok());
      absl::StatusOr<PerfConfig> back = s.Space(t, p).Parse(def.ToString());
      REQUIRE(back.ok());
      CHECK(*back == def);
      absl::StatusOr<solver::Solution> sol = s.GetSolution(t, p, def);
      REQUIRE(sol.ok());
      REQUIRE(sol->launches.size() == 1);
      const solver::Launch& l = sol->launches[0];
      CHECK(l.block.x % 64 == 0);
      CHECK(l.block.x <= 256);
      CHECK(l.shared_bytes <= 65536);
      CHECK(l.grid.z == p.groups);
      CHECK(l.args.size() == 3 + 16);
      const size_t n = AllValid(s, t, p).size();
      min_valid = std::min(min_valid, n);
      max_valid = std::max(max_valid, n);
    }
    // Not on NVIDIA, the CPU, MFMA-less or wave32 AMD targets, nor gfx942 (not in the list).
    for (const char* other : {"sm_90", "sm_80", "cpu-x86_64", "gfx906", "gfx1030", "gfx942"}) {
      INFO(other);
      CHECK_FALSE(s.IsApplicable(Arch(other), p).ok());
    }
    // Other directions, FP32, NCHW, 3D are refused with a reason.
    CHECK_FALSE(s.IsApplicable(gfx90a, testing::With(p, Direction::kBackwardData, p.data_type, Layout::kNHWC)).ok());
    CHECK_FALSE(s.IsApplicable(gfx90a, testing::With(p, Direction::kForward, DataType::kFp32, Layout::kNHWC)).ok());
    CHECK_FALSE(s.IsApplicable(gfx90a, testing::With(p, Direction::kForward, p.data_type, Layout::kNCHW)).ok());
  }
  const Problem p3 = testing::With(testing::EdgeProblems().back(), Direction::kForward, DataType::kFp16, Layout::kNHWC);
  REQUIRE(p3.spatial_dims == 3);
  CHECK_FALSE(s.IsApplicable(gfx90a, p3).ok());
  CHECK(MfmaFwdSolver::IsMfmaArch("gfx90a:sramecc+:xnack-"));
  CHECK_FALSE(MfmaFwdSolver::IsMfmaArch("gfx9"));
  // Spaces: 256 points before pruning; every problem keeps a handful to a few dozen.
  CHECK(s.Space(gfx90a, problems[0]).Size() == 256);
  std::printf("TunaMfmaFwd: %zu to %zu valid configs per problem\n", min_valid, max_valid);
  CHECK(min_valid >= 4);
  CHECK(max_valid <= 80);
}

TEST_CASE("TunaMfmaFwd: pruning (LDS, threads, chunk split, registers, tile vs GEMM) and the plan", "[solver]") {
  const MfmaFwdSolver s;
  const Target t = Arch("gfx90a");
  Problem big = Fp16(3);  // K = 256
  big.k = 1024;
  const solver::SearchSpace space = s.Space(t, big);
  auto cfg = [&](int tm, int tn, int tk, int wm, int wn, int st) {
    return space.Make({{"TB_M", tm}, {"TB_N", tn}, {"TB_K", tk}, {"WARP_M", wm}, {"WARP_N", wn}, {"STAGES", st}});
  };
  CHECK(s.IsValid(t, big, cfg(128, 128, 32, 64, 64, 2)).ok());
  CHECK(s.IsValid(t, big, cfg(256, 128, 32, 64, 64, 1)).ok() == false);  // 8 waves
  CHECK(s.IsValid(t, big, cfg(256, 256, 32, 64, 64, 1)).ok() == false);  // 16 waves
  CHECK(s.IsValid(t, big, cfg(64, 64, 16, 32, 32, 2)).ok() == false);    // 128 chunks for 256 threads
  CHECK(s.IsValid(t, big, cfg(64, 64, 32, 32, 32, 2)).ok());
  CHECK(s.IsValid(t, big, cfg(128, 64, 32, 128 / 2, 64, 2)).ok());
  CHECK(s.IsValid(t, big, cfg(32, 64, 32, 64, 32, 2)).ok() == false);    // warp tile > block tile
  // LDS: 2 * (256 + 256) * 36 * 2 = 73728 > 64 KiB, one stage fits; a smaller device limit prunes.
  CHECK(MfmaFwdSolver::SharedBytes(256, 256, 32, 2) == 73728);
  CHECK(MfmaFwdSolver::SharedBytes(128, 128, 32, 2) == 36864);
  Target small = t;
  small.max_shared_bytes_per_block = 32 * 1024;
  CHECK(s.IsValid(t, big, cfg(128, 128, 32, 64, 64, 2)).ok());
  CHECK_FALSE(s.IsValid(small, big, cfg(128, 128, 32, 64, 64, 2)).ok());
  CHECK(s.IsValid(small, big, cfg(128, 128, 32, 64, 64, 1)).ok());
  // Register estimates stay inside the budget for every point of the domain that passes the rest.
  const MfmaFwdSolver::Registers r = MfmaFwdSolver::EstimateRegisters(128, 128, 32, 64, 64);
  CHECK(r.acc == 64);
  CHECK(r.other == 4 * 4 + 4 * 2 + 2 * 4 + 32);
  // Tiles far larger than the GEMM: K = 64 prunes TB_N 256 (and 128 survives as 2x).
  const Problem k64 = Fp16(2);
  REQUIRE(k64.k == 64);
  CHECK_FALSE(s.IsValid(t, k64, cfg(64, 256, 32, 32, 64, 2)).ok());
  CHECK(s.IsValid(t, k64, cfg(128, 64, 32, 64, 32, 2)).ok());
  // Not applicable means not valid either.
  CHECK_FALSE(s.IsValid(Arch("sm_90"), big, cfg(128, 128, 32, 64, 64, 2)).ok());

  // The plan: grouped problem, grid.z = G, grid.y over K/G, the scalar gather for C/G = 2.
  const Problem g = MfmaEdgeProblems()[0];
  const PerfConfig c = cfg(64, 32, 32, 32, 32, 2);
  absl::StatusOr<solver::Solution> sol = s.GetSolution(t, g, c);
  REQUIRE(sol.ok());
  const solver::Launch& l = sol->launches.at(0);
  CHECK(l.entry == "tuna_mfma_fwd");
  CHECK(l.grid.x == (2 * 14 * 14 + 63) / 64);
  CHECK(l.grid.y == 1);
  CHECK(l.grid.z == 32);
  CHECK(l.block.x == 128);
  CHECK(l.shared_bytes == MfmaFwdSolver::SharedBytes(64, 32, 32, 2));
  const std::vector<std::string>& opts = sol->kernels.at(0).options;
  const std::vector<std::string> want = {"-DTB_M=64", "-DTB_N=32", "-DTB_K=32", "-DWARP_M=32", "-DWARP_N=32",
                                         "-DSTAGES=2", "-DTUNA_DTYPE=1", "-DTUNA_VEC8=0"};
  CHECK(opts == want);
  absl::StatusOr<solver::Solution> vec = s.GetSolution(t, MfmaEdgeProblems()[1], s.DefaultConfig(t, MfmaEdgeProblems()[1]));
  REQUIRE(vec.ok());
  CHECK(vec->kernels.at(0).options.back() == "-DTUNA_VEC8=1");
  CHECK_FALSE(s.GetSolution(t, big, cfg(256, 256, 32, 64, 64, 2)).ok());
}

// ---- CPU model of mfma_fwd.cu's index math --------------------------------------------------
// A line-by-line transcription of the kernel's loops (chunk loads per thread, LDS stage layout,
// fragment reads per lane, epilogue per lane) in float, with the MFMA replaced by the layout the
// kernel's header documents for v_mfma_f32_32x32x{8f16,8bf16_1k} (kE = 4) and 32x32x4bf16 (kE = 2):
// lane l holds A[l % 32][kE*(l/32) + e], B[kE*(l/32) + e][l % 32], and
// d[4q + r] = D[8q + 4(l/32) + r][l % 32]. It checks the tiling and gathers, not the hardware.
struct ModelTile {
  int tb_m, tb_n, tb_k, warp_m, warp_n, stages;
};

std::vector<float> ModelForward(const Problem& p, const ModelTile& t, int mfma_k, const std::vector<float>& x,
                                const std::vector<float>& w) {
  const int C = static_cast<int>(p.c), H = static_cast<int>(p.in[1]), W = static_cast<int>(p.in[2]);
  const int K = static_cast<int>(p.k), G = static_cast<int>(p.groups);
  const Dhw o = p.Out();
  const int Ho = static_cast<int>(o[1]), Wo = static_cast<int>(o[2]);
  const int R = static_cast<int>(p.fil[1]), S = static_cast<int>(p.fil[2]);
  const int pad_h = static_cast<int>(p.pad[1]), pad_w = static_cast<int>(p.pad[2]);
  const int stride_h = static_cast<int>(p.stride[1]), stride_w = static_cast<int>(p.stride[2]);
  const int dil_h = static_cast<int>(p.dilation[1]), dil_w = static_cast<int>(p.dilation[2]);
  const int kWarpsM = t.tb_m / t.warp_m, kWarpsN = t.tb_n / t.warp_n;
  const int kThreads = kWarpsM * kWarpsN * 64, kLds = t.tb_k + 4, kMT = t.warp_m / 32, kNT = t.warp_n / 32;
  const int kE = mfma_k / 2, kKChunks = t.tb_k / 8;
  const int kAIters = t.tb_m * kKChunks / kThreads, kBIters = t.tb_n * kKChunks / kThreads;
  const int kRowStep = kThreads / kKChunks, kStageElems = (t.tb_m + t.tb_n) * kLds;
  const int Cg = C / G, Kg = K / G, M = static_cast<int>(p.n) * Ho * Wo, Kd = R * S * Cg;
  const bool vec8 = Cg % 8 == 0;
  std::vector<float> y(static_cast<size_t>(M) * K, std::nanf(""));
  const int k_tiles = (Kd + t.tb_k - 1) / t.tb_k;
  for (int group = 0; group < G; ++group) {
    const long long xg = static_cast<long long>(group) * Cg, wg = static_cast<long long>(group) * Kg * R * S * Cg,
                    yg = static_cast<long long>(group) * Kg;
    for (int bx = 0; bx < (M + t.tb_m - 1) / t.tb_m; ++bx) {
      for (int by = 0; by < (Kg + t.tb_n - 1) / t.tb_n; ++by) {
        const int m0 = bx * t.tb_m, n0 = by * t.tb_n;
        std::vector<float> smem(static_cast<size_t>(t.stages) * kStageElems, std::nanf(""));
        std::vector<std::vector<float>> ra(kThreads, std::vector<float>(kAIters * 8)),
            rb(kThreads, std::vector<float>(kBIters * 8));
        std::vector<std::vector<long long>> a_base(kThreads, std::vector<long long>(kAIters));
        std::vector<std::vector<int>> a_h(kThreads, std::vector<int>(kAIters)), a_w(kThreads, std::vector<int>(kAIters));
        for (int tid = 0; tid < kThreads; ++tid) {
          const int row_base = tid / kKChunks;
          for (int i = 0; i < kAIters; ++i) {
            const int m = m0 + row_base + i * kRowStep;
            if (m < M) {
              const int img = m / (Ho * Wo), rem = m - img * Ho * Wo, ho = rem / Wo, wo = rem - ho * Wo;
              a_base[tid][i] = static_cast<long long>(img) * H * W * C;
              a_h[tid][i] = ho * stride_h - pad_h;
              a_w[tid][i] = wo * stride_w - pad_w;
            } else {
              a_base[tid][i] = -1, a_h[tid][i] = 0, a_w[tid][i] = 0;
            }
          }
        }
        auto load_global = [&](int kt) {
          for (int tid = 0; tid < kThreads; ++tid) {
            const int kc = tid % kKChunks, row_base = tid / kKChunks, k = kt * t.tb_k + kc * 8;
            for (int e = 0; e < 8; ++e) {
              // The vector path takes the chunk's tap from its first element (C/G % 8 == 0).
              const int kk = vec8 ? k : k + e, ce = vec8 ? e : 0;
              const bool ok = kk < Kd;
              const int rs = kk / Cg, c = kk - rs * Cg + ce, r = rs / S, s = rs - r * S;
              for (int i = 0; i < kAIters; ++i) {
                const int hi = a_h[tid][i] + r * dil_h, wi = a_w[tid][i] + s * dil_w;
                const bool v = ok && a_base[tid][i] >= 0 && (unsigned)hi < (unsigned)H && (unsigned)wi < (unsigned)W;
                ra[tid][i * 8 + e] = v ? x.at(xg + a_base[tid][i] + (static_cast<long long>(hi) * W + wi) * C + c) : 0.f;
              }
              for (int i = 0; i < kBIters; ++i) {
                const int row = row_base + i * kRowStep;
                const bool v = ok && n0 + row < Kg;
                rb[tid][i * 8 + e] = v ? w.at(wg + static_cast<long long>(n0 + row) * Kd + k + e) : 0.f;
              }
            }
          }
        };
        auto store_lds = [&](int stage) {
          for (int tid = 0; tid < kThreads; ++tid) {
            const int kc = tid % kKChunks, row_base = tid / kKChunks;
            const int a_s = stage * kStageElems, b_s = a_s + t.tb_m * kLds;
            for (int i = 0; i < kAIters; ++i)
              for (int e = 0; e < 8; ++e) smem.at(a_s + (row_base + i * kRowStep) * kLds + kc * 8 + e) = ra[tid][i * 8 + e];
            for (int i = 0; i < kBIters; ++i)
              for (int e = 0; e < 8; ++e) smem.at(b_s + (row_base + i * kRowStep) * kLds + kc * 8 + e) = rb[tid][i * 8 + e];
          }
        };
        // acc[tid][mt][nt][16]
        std::vector<float> acc(static_cast<size_t>(kThreads) * kMT * kNT * 16, 0.f);
        auto A = [&](int tid, int mt, int nt, int q) -> float& { return acc[((tid * kMT + mt) * kNT + nt) * 16 + q]; };
        load_global(0);
        store_lds(0);
        for (int kt = 0; kt < k_tiles; ++kt) {
          const int stage = t.stages == 1 ? 0 : (kt & 1);
          const bool has_next = kt + 1 < k_tiles;
          if (has_next) load_global(kt + 1);
          const int a_s = stage * kStageElems, b_s = a_s + t.tb_m * kLds;
          for (int wave = 0; wave < kWarpsM * kWarpsN; ++wave) {
            const int wave_m = wave % kWarpsM, wave_n = wave / kWarpsM;
            for (int kk = 0; kk < t.tb_k; kk += mfma_k) {
              // Fragments as the lanes read them: af[lane][mt][e], bf[lane][nt][e].
              std::vector<float> af(64 * kMT * kE), bf(64 * kNT * kE);
              for (int lane = 0; lane < 64; ++lane) {
                const int a_row = wave_m * t.warp_m + (lane & 31), b_row = wave_n * t.warp_n + (lane & 31);
                const int k_off = (lane >> 5) * kE;
                for (int e = 0; e < kE; ++e) {
                  for (int mt = 0; mt < kMT; ++mt)
                    af[(lane * kMT + mt) * kE + e] = smem.at(a_s + (a_row + mt * 32) * kLds + kk + k_off + e);
                  for (int nt = 0; nt < kNT; ++nt)
                    bf[(lane * kNT + nt) * kE + e] = smem.at(b_s + (b_row + nt * 32) * kLds + kk + k_off + e);
                }
              }
              // The MFMA by its documented layout.
              for (int mt = 0; mt < kMT; ++mt) {
                for (int nt = 0; nt < kNT; ++nt) {
                  float a_mat[32][8], b_mat[8][32];
                  for (int lane = 0; lane < 64; ++lane)
                    for (int e = 0; e < kE; ++e) {
                      a_mat[lane % 32][kE * (lane / 32) + e] = af[(lane * kMT + mt) * kE + e];
                      b_mat[kE * (lane / 32) + e][lane % 32] = bf[(lane * kNT + nt) * kE + e];
                    }
                  for (int lane = 0; lane < 64; ++lane)
                    for (int q = 0; q < 4; ++q)
                      for (int r = 0; r < 4; ++r) {
                        const int i = 8 * q + 4 * (lane / 32) + r, j = lane % 32;
                        float sum = 0.f;
                        for (int k = 0; k < mfma_k; ++k) sum += a_mat[i][k] * b_mat[k][j];
                        A(wave * 64 + lane, mt, nt, 4 * q + r) += sum;
                      }
                }
              }
            }
          }
          if (has_next) store_lds(t.stages == 1 ? 0 : (stage ^ 1));
        }
        for (int tid = 0; tid < kThreads; ++tid) {
          const int lane = tid % 64, wave = tid / 64, wave_m = wave % kWarpsM, wave_n = wave / kWarpsM;
          const int col0 = n0 + wave_n * t.warp_n + (lane & 31);
          for (int mt = 0; mt < kMT; ++mt)
            for (int q = 0; q < 4; ++q)
              for (int r = 0; r < 4; ++r) {
                const int m = m0 + wave_m * t.warp_m + mt * 32 + 8 * q + 4 * (lane >> 5) + r;
                if (m >= M) continue;
                for (int nt = 0; nt < kNT; ++nt) {
                  const int col = col0 + nt * 32;
                  if (col < Kg) {
                    float& out = y.at(yg + static_cast<long long>(m) * K + col);
                    CHECK(std::isnan(out));  // each output written once
                    out = A(tid, mt, nt, 4 * q + r);
                  }
                }
              }
        }
      }
    }
  }
  return y;
}

// Direct NHWC convolution (w: K, R, S, C/G).
std::vector<float> DirectForward(const Problem& p, const std::vector<float>& x, const std::vector<float>& w) {
  const Dhw o = p.Out();
  const int64_t Cg = p.c / p.groups, Kg = p.k / p.groups;
  std::vector<float> y(p.n * o[1] * o[2] * p.k, 0.f);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t ho = 0; ho < o[1]; ++ho)
      for (int64_t wo = 0; wo < o[2]; ++wo)
        for (int64_t k = 0; k < p.k; ++k) {
          const int64_t g = k / Kg;
          float sum = 0.f;
          for (int64_t r = 0; r < p.fil[1]; ++r)
            for (int64_t s = 0; s < p.fil[2]; ++s) {
              const int64_t hi = ho * p.stride[1] - p.pad[1] + r * p.dilation[1];
              const int64_t wi = wo * p.stride[2] - p.pad[2] + s * p.dilation[2];
              if (hi < 0 || hi >= p.in[1] || wi < 0 || wi >= p.in[2]) continue;
              for (int64_t c = 0; c < Cg; ++c)
                sum += x[((n * p.in[1] + hi) * p.in[2] + wi) * p.c + g * Cg + c] * w[((k * p.fil[1] + r) * p.fil[2] + s) * Cg + c];
            }
          y[((n * o[1] + ho) * o[2] + wo) * p.k + k] = sum;
        }
  return y;
}

TEST_CASE("TunaMfmaFwd: a CPU model of the kernel's index math matches a direct convolution", "[solver]") {
  using testing::NhwcForward;
  const MfmaFwdSolver s;
  const Target t = Arch("gfx90a");
  const std::vector<Problem> problems = {
      NhwcForward(1, 16, 40, 9, 7, 3, 3, 1, 1, 1, 1, 1),   // vector path, K and M tails
      NhwcForward(2, 3, 20, 11, 11, 3, 3, 1, 1, 2, 1, 1),  // C = 3 gather, stride 2
      NhwcForward(1, 32, 24, 12, 12, 3, 3, 2, 2, 1, 2, 1),  // dilation 2
      NhwcForward(1, 64, 64, 6, 6, 3, 3, 1, 1, 1, 1, 4),   // groups 4, C/G = 16
      NhwcForward(1, 12, 18, 7, 8, 3, 3, 1, 1, 1, 1, 6),   // groups 6, C/G = 2 (gather)
      NhwcForward(1, 24, 40, 9, 13, 1, 7, 0, 3, 1, 1, 1),  // 1x7, C/G = 24
  };
  std::mt19937_64 rng(5);
  int checked = 0;
  for (const Problem& p : problems) {
    std::uniform_int_distribution<int> val(-3, 3);
    std::vector<float> x(p.n * p.c * p.in[1] * p.in[2]), w(p.k * p.c / p.groups * p.fil[1] * p.fil[2]);
    for (float& v : x) v = static_cast<float>(val(rng));
    for (float& v : w) v = static_cast<float>(val(rng));
    const std::vector<float> want = DirectForward(p, x, w);
    std::vector<PerfConfig> configs = {s.DefaultConfig(t, p)};
    const std::vector<PerfConfig> valid = AllValid(s, t, p);
    for (int i = 0; i < 3; ++i) configs.push_back(valid[rng() % valid.size()]);
    const solver::SearchSpace space = s.Space(t, p);
    for (const PerfConfig& c : configs) {
      const ModelTile tile{static_cast<int>(space.Value(c, "TB_M")),   static_cast<int>(space.Value(c, "TB_N")),
                           static_cast<int>(space.Value(c, "TB_K")),   static_cast<int>(space.Value(c, "WARP_M")),
                           static_cast<int>(space.Value(c, "WARP_N")), static_cast<int>(space.Value(c, "STAGES"))};
      for (int mfma_k : {8, 4}) {
        INFO(p.Canonical() << " params " << c.ToString() << " mfma k " << mfma_k);
        const std::vector<float> got = ModelForward(p, tile, mfma_k, x, w);
        REQUIRE(got.size() == want.size());
        size_t bad = 0;
        for (size_t i = 0; i < got.size(); ++i) bad += !(got[i] == want[i]);  // small integers: exact
        CHECK(bad == 0);
        ++checked;
      }
    }
  }
  CHECK(checked == 48);
}

// The kernel descriptor's PRIVATE_SEGMENT_FIXED_SIZE (bytes of scratch per lane: register spills)
// of `symbol` ("<entry>.kd") in an AMDGPU code object (ELF64: the descriptor's second 32-bit word,
// AMDGPUUsage "Kernel Descriptor"); -1 when the symbol is not found.
int64_t ScratchBytes(const std::string& elf, const std::string& symbol) {
  auto u16 = [&](size_t at) { uint16_t v = 0; std::memcpy(&v, elf.data() + at, 2); return static_cast<uint64_t>(v); };
  auto u32 = [&](size_t at) { uint32_t v = 0; std::memcpy(&v, elf.data() + at, 4); return static_cast<uint64_t>(v); };
  auto u64 = [&](size_t at) { uint64_t v = 0; std::memcpy(&v, elf.data() + at, 8); return v; };
  if (elf.size() < 64 || elf.compare(0, 4, "\x7f" "ELF") != 0 || elf[4] != 2) return -1;
  const uint64_t shoff = u64(0x28), shentsize = u16(0x3a), shnum = u16(0x3c);
  auto sh = [&](uint64_t i) { return shoff + i * shentsize; };
  if (sh(shnum) > elf.size()) return -1;
  for (uint64_t i = 0; i < shnum; ++i) {
    if (u32(sh(i) + 4) != 2 /* SHT_SYMTAB */) continue;
    const uint64_t off = u64(sh(i) + 0x18), size = u64(sh(i) + 0x20), entsize = u64(sh(i) + 0x38);
    const uint64_t strtab = u64(sh(u32(sh(i) + 0x28)) + 0x18);
    for (uint64_t at = off; entsize > 0 && at + entsize <= off + size; at += entsize) {
      const char* name = elf.c_str() + strtab + u32(at);
      if (symbol != name) continue;
      const uint64_t shndx = u16(at + 6), value = u64(at + 8);
      const uint64_t file = u64(sh(shndx) + 0x18) + (value - u64(sh(shndx) + 0x10));
      return file + 8 <= elf.size() ? static_cast<int64_t>(u32(file + 4)) : -1;
    }
  }
  return -1;
}

TEST_CASE("TunaMfmaFwd: hiprtc builds for gfx908 and gfx90a", "[solver][hiprtc]") {
  std::unique_ptr<backend::Backend> hip = backend::NewHipBackend(backend::HipBackendOptions::FromEnv());
  if (absl::Status st = hip->CompilerStatus(); !st.ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + st.ToString());
    return;
  }
  const MfmaFwdSolver s;
  const std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  for (const std::string arch : {"gfx908", "gfx90a"}) {
    const Target t = Arch(arch);
    std::set<std::string> done;
    int builds = 0;
    auto build = [&](const Problem& p, const PerfConfig& c) {
      absl::StatusOr<solver::Solution> sol = s.GetSolution(t, p, c);
      INFO(arch << " " << p.Canonical() << " params " << c.ToString());
      REQUIRE(sol.ok());
      std::string key;
      for (const std::string& o : sol->kernels.at(0).options) key += o + " ";
      if (!done.insert(key).second) return;
      absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(*hip, *sol, arch);
      if (!code.ok()) std::printf("%s\n", std::string(code.status().message()).substr(0, 4000).c_str());
      REQUIRE(code.ok());
      REQUIRE(code->size() == 1);
      CHECK(code->at(0).bytes.compare(0, 4, "\x7f" "ELF") == 0);
      // The register budget holds: no spills to scratch.
      CHECK(ScratchBytes(code->at(0).bytes, "tuna_mfma_fwd.kd") == 0);
      ++builds;
    };
    // Defaults: the stem (C = 3: gather), 1x1, 3x3, 3x3 stride 2 and late layers, FP16 and BF16,
    // and the edge problems (groups, 1x7, stride 2, dilation, odd tails).
    for (int i : {0, 1, 2, 6, 10, 16, 20}) {
      for (DataType type : {DataType::kFp16, DataType::kBf16}) {
        const Problem p = testing::With(layers[i], Direction::kForward, type, Layout::kNHWC);
        build(p, s.DefaultConfig(t, p));
      }
    }
    for (const Problem& e : MfmaEdgeProblems()) {
      for (DataType type : {DataType::kFp16, DataType::kBf16}) {
        const Problem p = testing::With(e, Direction::kForward, type, Layout::kNHWC);
        build(p, s.DefaultConfig(t, p));
      }
    }
    const int defaults = builds;
    // A 3x3 layer (layers[10]: 128 -> 128, 28x28): on gfx90a every valid config in FP16 and every
    // fourth in BF16; on gfx908 (the same source and dialect, and for FP16 the same MFMA) the BF16
    // ones only, where its instruction differs (v_mfma_f32_32x32x4bf16, two per k step of 8;
    // gfx90a's the _1k form).
    const bool all_fp16 = arch == "gfx90a";
    int fp16 = 0, bf16 = 0;
    const Problem h = testing::With(layers[10], Direction::kForward, DataType::kFp16, Layout::kNHWC);
    const std::vector<PerfConfig> valid = AllValid(s, t, h);
    for (size_t i = 0; i < valid.size(); ++i) {
      if (all_fp16) {
        build(h, valid[i]);
        ++fp16;
      }
      if (i % 4 == 0) {
        build(testing::With(h, Direction::kForward, DataType::kBf16, Layout::kNHWC), valid[i]);
        ++bf16;
      }
    }
    if (all_fp16) {
      std::printf("%s: %d distinct hiprtc builds of TunaMfmaFwd (%d defaults, all %d valid configs of one FP16 "
                  "layer, %d of them in BF16)\n",
                  arch.c_str(), builds, defaults, fp16, bf16);
    } else {
      std::printf("%s: %d distinct hiprtc builds of TunaMfmaFwd (%d defaults, %d of the %zu valid configs of one "
                  "FP16 layer in BF16; all of them: gfx90a)\n",
                  arch.c_str(), builds, defaults, bf16, valid.size());
    }
    CHECK(defaults >= 8);
    CHECK(valid.size() >= 16);
    CHECK(fp16 == (all_fp16 ? static_cast<int>(valid.size()) : 0));
    CHECK(bf16 == static_cast<int>((valid.size() + 3) / 4));
    // Distinct option sets (TUNA_DTYPE tells FP16 from BF16; a default may equal a valid config).
    CHECK(builds >= fp16 + bf16);
  }
}

}  // namespace
}  // namespace tuna

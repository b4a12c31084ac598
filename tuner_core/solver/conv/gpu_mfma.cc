#include "tuner_core/solver/conv/gpu_mfma.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;

// The axes by name (the one place a config is decoded).
struct MfmaParams {
  int tb_m, tb_n, tb_k, warp_m, warp_n, stages;
  static MfmaParams Of(const SearchSpace& s, const PerfConfig& c) {
    return {static_cast<int>(s.Value(c, "TB_M")),   static_cast<int>(s.Value(c, "TB_N")),
            static_cast<int>(s.Value(c, "TB_K")),   static_cast<int>(s.Value(c, "WARP_M")),
            static_cast<int>(s.Value(c, "WARP_N")), static_cast<int>(s.Value(c, "STAGES"))};
  }
  int Threads() const { return (tb_m / warp_m) * (tb_n / warp_n) * 64; }
};

// Register budget per lane (estimates of MfmaFwdSolver::EstimateRegisters): gfx908 holds MFMA
// accumulators in its 256 AGPRs and everything else in 256 VGPRs; gfx90a has one 512-entry file.
// Half of each keeps a 256-thread block (one wave per SIMD) clear of spills with room to spare.
constexpr int kAccBudget = 128;
constexpr int kOtherBudget = 128;
constexpr uint64_t kLdsBytes = 65536;  // LDS per workgroup on gfx908 / gfx90a

}  // namespace

bool MfmaFwdSolver::IsMfmaArch(std::string_view arch) {
  const std::string_view base = arch.substr(0, arch.find(':'));
  return base.substr(0, 4) == "gfx9" && (base == "gfx908" || base == "gfx90a");
}

uint64_t MfmaFwdSolver::SharedBytes(int tb_m, int tb_n, int tb_k, int stages) {
  return static_cast<uint64_t>(stages) * (tb_m + tb_n) * (tb_k + 4) * 2;
}

MfmaFwdSolver::Registers MfmaFwdSolver::EstimateRegisters(int tb_m, int tb_n, int tb_k, int warp_m, int warp_n) {
  const int threads = (tb_m / warp_m) * (tb_n / warp_n) * 64;
  const int chunks = tb_k / 8;
  const int a_iters = (tb_m * chunks + threads - 1) / threads;
  const int b_iters = (tb_n * chunks + threads - 1) / threads;
  Registers r;
  r.acc = (warp_m / 32) * (warp_n / 32) * 16;
  // 4 VGPRs per staged chunk, 4 per A row's gather state (64-bit base, h, w), 2 per fragment.
  r.other = 4 * (a_iters + b_iters) + 4 * a_iters + 2 * (warp_m / 32 + warp_n / 32) + 32;
  return r;
}

absl::Status MfmaFwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (target.backend != backend::BackendKind::kHip || !IsMfmaArch(target.arch)) {
    return NotApplicable(Name(), "AMD gfx908 / gfx90a only (MFMA builtins)");
  }
  if (target.warp_size != 64) return NotApplicable(Name(), "wave64 only");
  if (absl::Status st = gpu::CheckCommon(Name(), target, p, Direction::kForward); !st.ok()) return st;
  if (p.data_type != DataType::kFp16 && p.data_type != DataType::kBf16) {
    return NotApplicable(Name(), std::string("data type ") + std::string(DataTypeName(p.data_type)) + " not handled");
  }
  if (p.spatial_dims != 2) return NotApplicable(Name(), "2D only");
  if (p.in_layout != Layout::kNHWC || p.fil_layout != Layout::kNHWC || p.out_layout != Layout::kNHWC) {
    return NotApplicable(Name(), "requires NHWC x, w and y");
  }
  if (!gpu::IsDense(p.XDesc(), Layout::kNHWC) || !gpu::IsDense(p.WDesc(), Layout::kNHWC) ||
      !gpu::IsDense(p.YDesc(), Layout::kNHWC)) {
    return NotApplicable(Name(), "requires densely packed tensors");
  }
  const int64_t rows = gpu::OutputPixels(p);
  const int64_t kdim = p.c / p.groups * p.fil[1] * p.fil[2];
  if (rows > gpu::kMaxIndex || kdim > gpu::kMaxIndex || p.k > gpu::kMaxIndex || p.c > gpu::kMaxIndex ||
      p.n * p.c * p.in[1] * p.in[2] > (int64_t{1} << 40)) {
    return NotApplicable(Name(), "sizes exceed 32-bit GEMM indices");
  }
  if (p.pad[1] > p.in[1] || p.pad[2] > p.in[2] || p.stride[1] > 65535 || p.stride[2] > 65535 ||
      p.dilation[1] > 65535 || p.dilation[2] > 65535) {
    return NotApplicable(Name(), "padding/stride out of range");
  }
  // The grid's y (output-channel tiles of the smallest TB_N) and z (groups).
  if (p.groups > gpu::kMaxGridYZ || CeilDiv(p.k / p.groups, 32) > gpu::kMaxGridYZ) {
    return NotApplicable(Name(), "too many groups or output channels for the grid");
  }
  return absl::OkStatus();
}

SearchSpace MfmaFwdSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  return SearchSpace({{"TB_M", Pow2Range(32, 256)},
                      {"TB_N", Pow2Range(32, 256)},
                      {"TB_K", Pow2Range(16, 32)},
                      {"WARP_M", Pow2Range(32, 64)},
                      {"WARP_N", Pow2Range(32, 64)},
                      {"STAGES", LinearRange(1, 2)}});
}

absl::Status MfmaFwdSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  const MfmaParams t = MfmaParams::Of(Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  if (t.warp_m > t.tb_m || t.warp_n > t.tb_n) return invalid("warp tile larger than the block tile");
  const int threads = t.Threads();
  // 1..4 wavefronts: one per SIMD of a CU at most, so the register budget below holds.
  if (threads > 256) return invalid(absl::StrCat(threads, " threads > 256"));
  // Every thread loads whole 16-byte chunks of A and of B rows, the same number each.
  const int chunks = t.tb_k / 8;
  if (t.tb_m * chunks < threads || (t.tb_m * chunks) % threads != 0 || t.tb_n * chunks < threads ||
      (t.tb_n * chunks) % threads != 0) {
    return invalid(absl::StrCat("the ", t.tb_m, "x", t.tb_k, " and ", t.tb_n, "x", t.tb_k,
                                " tiles' 16-byte chunks do not split evenly over ", threads, " threads"));
  }
  const uint64_t lds = SharedBytes(t.tb_m, t.tb_n, t.tb_k, t.stages);
  const uint64_t lds_limit = std::min<uint64_t>(kLdsBytes, target.max_shared_bytes_per_block);
  if (lds > lds_limit) return invalid(absl::StrCat(lds, " bytes of LDS > ", lds_limit));
  const Registers regs = EstimateRegisters(t.tb_m, t.tb_n, t.tb_k, t.warp_m, t.warp_n);
  if (regs.acc > kAccBudget || regs.other > kOtherBudget) {
    return invalid(absl::StrCat("about ", regs.acc, " accumulator + ", regs.other, " other registers per lane"));
  }
  const int64_t gm = gpu::OutputPixels(p);
  const int64_t gn = p.k / p.groups;
  // Tiles twice the GEMM extent only waste threads (the 64x64 fallback default is never pruned).
  if (t.tb_n > 64 && t.tb_n / 2 >= gn) return invalid("TB_N much larger than K/G");
  if (t.tb_m > 64 && t.tb_m / 2 >= gm) return invalid("TB_M much larger than N*Ho*Wo");
  if (CeilDiv(gn, t.tb_n) > gpu::kMaxGridYZ) return invalid("grid.y too large");
  return absl::OkStatus();
}

PerfConfig MfmaFwdSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const int64_t gm = gpu::OutputPixels(p);
  const int64_t gn = p.k / p.groups;
  const SearchSpace space = Space(target, p);
  // Enough 128x128 blocks to fill every CU once: 4 waves of 64x64; narrow outputs: 64x32 (2
  // waves); else 64x64 (4 waves of 32x32).
  const int64_t big_blocks = CeilDiv(gm, 128) * CeilDiv(gn, 128) * p.groups;
  PerfConfig c;
  if (big_blocks >= target.num_cu && gn >= 128) {
    c = space.Make({{"TB_M", 128}, {"TB_N", 128}, {"TB_K", 32}, {"WARP_M", 64}, {"WARP_N", 64}, {"STAGES", 2}});
  } else if (gn <= 32) {
    c = space.Make({{"TB_M", 64}, {"TB_N", 32}, {"TB_K", 32}, {"WARP_M", 32}, {"WARP_N", 32}, {"STAGES", 2}});
  } else {
    c = space.Make({{"TB_M", 64}, {"TB_N", 64}, {"TB_K", 32}, {"WARP_M", 32}, {"WARP_N", 32}, {"STAGES", 2}});
  }
  if (IsValid(target, p, c).ok()) return c;
  // 256 threads, 18 KiB of LDS: valid for every applicable problem.
  return space.Make({{"TB_M", 64}, {"TB_N", 64}, {"TB_K", 32}, {"WARP_M", 32}, {"WARP_N", 32}, {"STAGES", 2}});
}

absl::StatusOr<Solution> MfmaFwdSolver::GetSolution(const Target& target, const Problem& p,
                                                    const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const MfmaParams t = MfmaParams::Of(space, config);
  KernelBuild build = gpu::TunedBuild("conv/mfma_fwd.cu", {"tuna_mfma_fwd"}, space, config, p.data_type);
  build.options.push_back(absl::StrCat("-DTUNA_VEC8=", (p.c / p.groups) % 8 == 0 ? 1 : 0));
  const Dhw o = p.Out();
  const int64_t gm = gpu::OutputPixels(p);
  Solution sol;
  sol.kernels.push_back(build);
  Launch l;
  l.kernel = 0;
  l.entry = "tuna_mfma_fwd";
  l.grid.x = static_cast<uint32_t>(CeilDiv(gm, t.tb_m));
  l.grid.y = static_cast<uint32_t>(CeilDiv(p.k / p.groups, t.tb_n));
  l.grid.z = static_cast<uint32_t>(p.groups);
  l.block.x = static_cast<uint32_t>(t.Threads());
  l.shared_bytes = SharedBytes(t.tb_m, t.tb_n, t.tb_k, t.stages);
  l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kY)};
  for (int64_t v : {p.n, p.c, p.in[1], p.in[2], p.k, o[1], o[2], p.fil[1], p.fil[2], p.pad[1], p.pad[2],
                    p.stride[1], p.stride[2], p.dilation[1], p.dilation[2], p.groups}) {
    l.args.push_back(KernelArg::I32(v));
  }
  sol.launches.push_back(l);
  return sol;
}

}  // namespace tuna::solver

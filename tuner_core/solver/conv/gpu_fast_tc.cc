#include "tuner_core/solver/conv/gpu_fast_tc.h"

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;

// The axes by name (the one place a config is decoded); Space() lists them in params order, the
// same for every problem.
struct TcParams {
  int tb_m, tb_n, warp_m, warp_n, stages;
  static TcParams Of(const SearchSpace& s, const PerfConfig& c) {
    return {static_cast<int>(s.Value(c, "TB_M")), static_cast<int>(s.Value(c, "TB_N")),
            static_cast<int>(s.Value(c, "WARP_M")), static_cast<int>(s.Value(c, "WARP_N")),
            static_cast<int>(s.Value(c, "STAGES"))};
  }
  static SearchSpace Space() {
    return SearchSpace({{"TB_M", Pow2Range(64, 256)},
                        {"TB_N", Pow2Range(64, 256)},
                        {"WARP_M", Pow2Range(32, 64)},
                        {"WARP_N", Pow2Range(32, 64)},
                        {"STAGES", LinearRange(2, 4)}});
  }
};

}  // namespace

uint64_t FastTcFwdSolver::SharedBytes(int tb_m, int tb_n, int stages) {
  return static_cast<uint64_t>(stages) * (tb_m + tb_n) * (32 + 8) * 2;
}

absl::Status FastTcFwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  return gpu::CheckFastConv(Name(), target, p, DataType::kFp16, DataType::kBf16, Layout::kNHWC);
}

SearchSpace FastTcFwdSolver::Space(const Target&, const Problem&) const { return TcParams::Space(); }

absl::Status FastTcFwdSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  const TcParams t = TcParams::Of(Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  const int threads = (t.tb_m / t.warp_m) * (t.tb_n / t.warp_n) * 32;
  // 64..256 threads: each thread's 16-byte chunks cover whole rows of the BK = 32 tile, and a
  // 64x64 warp tile (128 FP32 accumulators) leaves registers for 2 blocks of 128 threads.
  if (threads < 64 || threads > 256) return invalid(absl::StrCat(threads, " threads outside [64, 256]"));
  const uint64_t smem = SharedBytes(t.tb_m, t.tb_n, t.stages);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  const int64_t gm = gpu::OutputPixels(p);
  // Tiles twice the GEMM extent only waste threads (never prune the smallest tile).
  if (t.tb_n > 64 && t.tb_n / 2 >= p.k) return invalid("TB_N much larger than K");
  if (t.tb_m > 64 && t.tb_m / 2 >= gm) return invalid("TB_M much larger than N*Ho*Wo");
  if (CeilDiv(p.k, t.tb_n) > gpu::kMaxGridYZ) return invalid("grid.y too large");
  return absl::OkStatus();
}

PerfConfig FastTcFwdSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const int64_t gm = gpu::OutputPixels(p);
  // Enough blocks to fill every SM once with 128x128 tiles, else 64x64 (small late layers).
  const int64_t big_blocks = CeilDiv(gm, 128) * CeilDiv(p.k, 128);
  const SearchSpace space = Space(target, p);
  const PerfConfig c = big_blocks >= target.num_cu && p.k >= 128
                           ? space.Make({{"TB_M", 128}, {"TB_N", 128}, {"WARP_M", 64}, {"WARP_N", 64}, {"STAGES", 3}})
                           : space.Make({{"TB_M", 64}, {"TB_N", 64}, {"WARP_M", 32}, {"WARP_N", 32}, {"STAGES", 4}});
  if (IsValid(target, p, c).ok()) return c;
  // 128 threads, 20 KiB: valid for every applicable problem.
  return space.Make({{"TB_M", 64}, {"TB_N", 64}, {"WARP_M", 32}, {"WARP_N", 32}, {"STAGES", 2}});
}

absl::StatusOr<Solution> FastTcFwdSolver::GetSolution(const Target& target, const Problem& p,
                                                      const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const TcParams t = TcParams::Of(space, config);
  const int threads = (t.tb_m / t.warp_m) * (t.tb_n / t.warp_n) * 32;
  KernelBuild build = gpu::TunedBuild("conv/fast_tc_fwd.cu", {"tuna_fast_tc_fwd"}, space, config, p.data_type);
  build.options.push_back(absl::StrCat("-DTUNA_VEC8=", p.c % 8 == 0 ? 1 : 0));
  const Dhw o = p.Out();
  const int64_t gm = gpu::OutputPixels(p);
  Solution sol;
  sol.kernels.push_back(build);
  Launch l;
  l.kernel = 0;
  l.entry = "tuna_fast_tc_fwd";
  l.grid.x = static_cast<uint32_t>(CeilDiv(gm, t.tb_m));
  l.grid.y = static_cast<uint32_t>(CeilDiv(p.k, t.tb_n));
  l.block.x = static_cast<uint32_t>(threads);
  l.shared_bytes = SharedBytes(t.tb_m, t.tb_n, t.stages);
  l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kY)};
  for (int64_t v : {p.n, p.c, p.in[1], p.in[2], p.k, o[1], o[2], p.fil[1], p.fil[2], p.pad[1], p.pad[2],
                    p.stride[1], p.stride[2], p.dilation[1], p.dilation[2]}) {
    l.args.push_back(KernelArg::I32(v));
  }
  sol.launches.push_back(l);
  return sol;
}

}  // namespace tuna::solver

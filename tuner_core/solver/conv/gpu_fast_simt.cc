#include "tuner_core/solver/conv/gpu_fast_simt.h"

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;

constexpr int64_t kMaxFilter = 11;  // compiled-in filter sizes beyond this are not worth a build

// The axes by name (the one place a config is decoded). GEMM M = N*Ho*Wo pixels, N = K.
struct SimtParams {
  int tb_m, tb_n, tb_k, stages;
  static SimtParams Of(const SearchSpace& s, const PerfConfig& c) {
    return {static_cast<int>(s.Value(c, "TB_M")), static_cast<int>(s.Value(c, "TB_N")),
            static_cast<int>(s.Value(c, "TB_K")), static_cast<int>(s.Value(c, "STAGES"))};
  }
};

}  // namespace

uint64_t FastSimtFwdSolver::SharedBytes(int tb_m, int tb_n, int tb_k, int stages) {
  // The w tile's rows (TB_N output channels) are padded by 4 floats.
  return static_cast<uint64_t>(stages) * tb_k * (tb_m + tb_n + 4) * 4;
}

bool FastSimtFwdSolver::VectorB(const Problem& p) {
  return p.fil[1] == 1 && p.fil[2] == 1 && p.stride[1] == 1 && p.stride[2] == 1 && p.pad[1] == 0 &&
         p.pad[2] == 0 && (p.in[1] * p.in[2]) % 4 == 0;
}

absl::Status FastSimtFwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (absl::Status st = gpu::CheckFastForward(Name(), target, p, DataType::kFp32, DataType::kFp32, Layout::kNCHW);
      !st.ok()) {
    return st;
  }
  if (p.fil[1] > kMaxFilter || p.fil[2] > kMaxFilter) return NotApplicable(Name(), "filter larger than 11");
  return absl::OkStatus();
}

SearchSpace FastSimtFwdSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  // TB_N before TB_M: the params order of the old (tb_m = channels, tb_n = pixels) naming.
  return SearchSpace({{"TB_N", Pow2Range(64, 128)},
                      {"TB_M", Pow2Range(64, 128)},
                      {"TB_K", Pow2Range(8, 16)},
                      {"STAGES", LinearRange(2, 4)}});
}

absl::Status FastSimtFwdSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = Solver::IsValid(target, p, config); !st.ok()) return st;
  // A config is valid only for a problem the solver handles (GetSolution agrees).
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return absl::InvalidArgumentError(st.message());
  const auto [tb_m, tb_n, tb_k, stages] = SimtParams::Of(Space(target, p), config);
  auto invalid = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(Name()), ": params '", config.ToString(), "': ", why));
  };
  const uint64_t smem = SharedBytes(tb_m, tb_n, tb_k, stages);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  // 64 accumulators + 16 operands per thread at up to 256 threads: fits the register file at
  // one block per SM at least; more stages than K tiles only cost shared memory.
  const int64_t k_tiles = CeilDiv(p.c * p.fil[1] * p.fil[2], tb_k);
  if (stages > 2 && k_tiles < stages) return invalid("more stages than K tiles");
  if (tb_n > 64 && tb_n / 2 >= p.k) return invalid("TB_N much larger than K");
  if (CeilDiv(p.k, tb_n) > gpu::kMaxGridYZ) return invalid("grid.y too large");
  return absl::OkStatus();
}

PerfConfig FastSimtFwdSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const Dhw o = p.Out();
  const int64_t pixels = p.n * o[1] * o[2];
  const SearchSpace space = Space(target, p);
  const PerfConfig c = CeilDiv(pixels, 128) * CeilDiv(p.k, 128) >= 2 * target.num_cu
                           ? space.Make({{"TB_M", 128}, {"TB_N", 128}, {"TB_K", 8}, {"STAGES", 3}})
                           : space.Make({{"TB_M", 64}, {"TB_N", 64}, {"TB_K", 16}, {"STAGES", 3}});
  if (IsValid(target, p, c).ok()) return c;
  // 64 threads, 9 KiB: valid for every applicable problem.
  return space.Make({{"TB_M", 64}, {"TB_N", 64}, {"TB_K", 8}, {"STAGES", 2}});
}

absl::StatusOr<Solution> FastSimtFwdSolver::GetSolution(const Target& target, const Problem& p,
                                                        const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const auto [tb_m, tb_n, tb_k, stages] = SimtParams::Of(space, config);
  KernelBuild build;
  build.source = "conv/fast_simt_fwd.cu";
  build.entries = {"tuna_fast_simt_fwd"};
  build.options = space.Defines(config);
  for (std::string o : {absl::StrCat("-DTUNA_FR=", p.fil[1]), absl::StrCat("-DTUNA_FS=", p.fil[2]),
                        absl::StrCat("-DTUNA_VEC4_B=", VectorB(p) ? 1 : 0)}) {
    build.options.push_back(std::move(o));
  }
  const Dhw o = p.Out();
  const int64_t pixels = p.n * o[1] * o[2];
  Solution sol;
  sol.kernels.push_back(build);
  Launch l;
  l.kernel = 0;
  l.entry = "tuna_fast_simt_fwd";
  l.grid.x = static_cast<uint32_t>(CeilDiv(pixels, tb_m));
  l.grid.y = static_cast<uint32_t>(CeilDiv(p.k, tb_n));
  l.block.x = static_cast<uint32_t>(tb_m * tb_n / 64);
  l.shared_bytes = SharedBytes(tb_m, tb_n, tb_k, stages);
  l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kY)};
  for (int64_t v : {p.n, p.c, p.in[1], p.in[2], p.k, o[1], o[2], p.pad[1], p.pad[2], p.stride[1], p.stride[2],
                    p.dilation[1], p.dilation[2]}) {
    l.args.push_back(KernelArg::I32(v));
  }
  sol.launches.push_back(l);
  return sol;
}

}  // namespace tuna::solver

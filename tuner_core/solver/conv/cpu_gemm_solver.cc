#include "tuner_core/solver/conv/cpu_gemm_solver.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "tuner_core/problem/validate.h"
#include "tuner_core/solver/conv/naive_args.h"

namespace tuna::solver {
namespace {

constexpr std::string_view kName = "TunaCpuGemmConv";
constexpr int64_t kMaxMicroFloats = 64;  // register tile budget (16 AVX2 registers of 8 floats)
constexpr uint64_t kInfoBytes = 64;      // scratch per row/column descriptor (kernel asserts)
constexpr int64_t kMaxReduceBlocks = 256;

const std::vector<int64_t>& TileMValues() {
  static const std::vector<int64_t> v = Pow2Range(8, 128);
  return v;
}
const std::vector<int64_t>& TileNValues() {
  static const std::vector<int64_t> v = Pow2Range(8, 256);
  return v;
}
const std::vector<int64_t>& TileKValues() {
  static const std::vector<int64_t> v = Pow2Range(8, 256);
  return v;
}
const std::vector<int64_t>& MicroMValues() {
  static const std::vector<int64_t> v = Pow2Range(1, 8);
  return v;
}
const std::vector<int64_t>& MicroNValues() {
  static const std::vector<int64_t> v = Pow2Range(4, 16);
  return v;
}
const std::vector<int64_t>& SplitKValues() {
  static const std::vector<int64_t> v = Pow2Range(1, 16);
  return v;
}

// The axes, in params order; their names are the kernel's -D names.
const SearchSpace& CpuGemmSpace() {
  static const SearchSpace space({{"TB_M", TileMValues()},
                                  {"TB_N", TileNValues()},
                                  {"TB_K", TileKValues()},
                                  {"THREAD_M", MicroMValues()},
                                  {"THREAD_N", MicroNValues()},
                                  {"SPLIT_K", SplitKValues()}});
  return space;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A tile that covers the extent twice over computes the same as the next smaller one.
bool TileUseful(int64_t tile, int64_t extent, const std::vector<int64_t>& domain) {
  return tile == domain.front() || tile < 2 * extent;
}

// The preferred tile, shrunk to the smallest domain value covering the extent.
int64_t FitTile(int64_t preferred, int64_t extent, const std::vector<int64_t>& domain) {
  for (int64_t v : domain) {
    if (v >= extent) return std::min(preferred, v);
  }
  return preferred;
}

// Every split must own at least one reduction chunk.
bool SplitUseful(int64_t split, int64_t ktiles) {
  if (split == 1) return true;
  const int64_t per = CeilDiv(ktiles, split);
  return (split - 1) * per < ktiles;
}

const char* DirDefine(Direction d) {
  switch (d) {
    case Direction::kForward: return "-DTUNA_CONV_DIR=0";
    case Direction::kBackwardData: return "-DTUNA_CONV_DIR=1";
    case Direction::kBackwardWeights: return "-DTUNA_CONV_DIR=2";
  }
  return "-DTUNA_CONV_DIR=0";
}

}  // namespace

CpuGemmShape CpuGemmShapeOf(const Problem& p) {
  const Dhw out = p.Out();
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  const int64_t taps = p.fil[0] * p.fil[1] * p.fil[2];
  const int64_t out_pos = out[0] * out[1] * out[2];
  const int64_t in_pos = p.in[0] * p.in[1] * p.in[2];
  CpuGemmShape s;
  s.groups = p.groups;
  switch (p.direction) {
    case Direction::kForward: s.m = kg, s.n = p.n * out_pos, s.k = cg * taps; break;
    case Direction::kBackwardData: s.m = cg, s.n = p.n * in_pos, s.k = kg * taps; break;
    case Direction::kBackwardWeights: s.m = kg, s.n = cg * taps, s.k = p.n * out_pos; break;
  }
  return s;
}

CpuGemmParams CpuGemmParams::From(const PerfConfig& config) {
  CpuGemmParams p;
  const SearchSpace& s = CpuGemmSpace();
  if (config.values.size() == s.axes().size()) {
    p.tile_m = s.Value(config, "TB_M");
    p.tile_n = s.Value(config, "TB_N");
    p.tile_k = s.Value(config, "TB_K");
    p.micro_m = s.Value(config, "THREAD_M");
    p.micro_n = s.Value(config, "THREAD_N");
    p.split_k = s.Value(config, "SPLIT_K");
  }
  return p;
}

PerfConfig CpuGemmParams::ToConfig() const {
  return CpuGemmSpace().Make({{"TB_M", tile_m},
                              {"TB_N", tile_n},
                              {"TB_K", tile_k},
                              {"THREAD_M", micro_m},
                              {"THREAD_N", micro_n},
                              {"SPLIT_K", split_k}});
}

uint64_t CpuGemmParams::SharedBytes() const {
  const uint64_t floats = uint64_t(tile_k) * tile_m + uint64_t(tile_k) * tile_n +
                          uint64_t(tile_m) * tile_n;
  return floats * sizeof(float) + (uint64_t(tile_n) + uint64_t(tile_k)) * kInfoBytes;
}

absl::Status CpuGemmConvSolver::IsApplicable(const Target& target, const Problem& problem) const {
  if (target.backend != backend::BackendKind::kCpu) {
    return NotApplicable(kName, absl::StrCat("runs on the cpu backend only, not ",
                                             backend::BackendKindName(target.backend)));
  }
  if (problem.mode == ConvMode::kTrans) {
    return NotApplicable(kName, "transposed convolution is not supported");
  }
  if (problem.data_type == DataType::kInt8) {
    return NotApplicable(kName, "INT8 is not supported (FP32, FP16, BF16 only)");
  }
  if (absl::Status valid = ValidateProblem(problem); !valid.ok()) {
    return NotApplicable(kName, absl::StrCat("invalid problem: ", valid.message()));
  }
  if (problem.ReadsPastPaddedInput()) {
    return NotApplicable(kName, "output window past the padded input (MIOpen's clamp or pad mode same)");
  }
  return absl::OkStatus();
}

SearchSpace CpuGemmConvSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  return CpuGemmSpace();
}

PerfConfig CpuGemmConvSolver::DefaultConfig(const Target& target, const Problem& problem) const {
  const CpuGemmShape s = CpuGemmShapeOf(problem);
  CpuGemmParams p;
  p.tile_m = FitTile(32, s.m, TileMValues());
  p.tile_n = FitTile(128, s.n, TileNValues());
  p.tile_k = FitTile(64, s.k, TileKValues());
  p.micro_m = std::min<int64_t>(4, p.tile_m);
  p.micro_n = std::min<int64_t>(8, p.tile_n);
  // Too few output tiles to keep every core busy (typical of backward weights): split the
  // reduction, as far as it has chunks to give.
  const int64_t blocks = CeilDiv(s.m, p.tile_m) * CeilDiv(s.n, p.tile_n) * s.groups;
  const int64_t ktiles = CeilDiv(s.k, p.tile_k);
  const int64_t threads = std::max(1, target.num_cu);
  p.split_k = 1;
  if (blocks < threads) {
    for (int64_t split : SplitKValues()) {
      if (split <= CeilDiv(threads, blocks) && SplitUseful(split, ktiles)) p.split_k = split;
    }
  }
  return p.ToConfig();
}

absl::Status CpuGemmConvSolver::IsValid(const Target& target, const Problem& problem,
                                        const PerfConfig& config) const {
  if (absl::Status st = Solver::IsValid(target, problem, config); !st.ok()) return st;
  const CpuGemmParams p = CpuGemmParams::From(config);
  const CpuGemmShape s = CpuGemmShapeOf(problem);
  auto invalid = [&](std::string_view why) { return InvalidConfig(kName, config, why); };
  if (p.micro_m > p.tile_m || p.micro_n > p.tile_n) {
    return invalid("the register tile exceeds the block tile");
  }
  if (p.micro_m * p.micro_n > kMaxMicroFloats) {
    return invalid(absl::StrCat("register tile of ", p.micro_m * p.micro_n, " floats (max ",
                                kMaxMicroFloats, ")"));
  }
  if (!TileUseful(p.tile_m, s.m, TileMValues())) {
    return invalid(absl::StrCat("TB_M ", p.tile_m, " is at least twice M = ", s.m));
  }
  if (!TileUseful(p.tile_n, s.n, TileNValues())) {
    return invalid(absl::StrCat("TB_N ", p.tile_n, " is at least twice N = ", s.n));
  }
  if (!TileUseful(p.tile_k, s.k, TileKValues())) {
    return invalid(absl::StrCat("TB_K ", p.tile_k, " is at least twice K = ", s.k));
  }
  if (!SplitUseful(p.split_k, CeilDiv(s.k, p.tile_k))) {
    return invalid(absl::StrCat("SPLIT_K ", p.split_k, " leaves a split without reduction chunks (",
                                CeilDiv(s.k, p.tile_k), " chunks)"));
  }
  if (target.max_shared_bytes_per_block > 0 && p.SharedBytes() > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat("needs ", p.SharedBytes(), " scratch bytes per block (limit ",
                                target.max_shared_bytes_per_block, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Solution> CpuGemmConvSolver::GetSolution(const Target& target, const Problem& problem,
                                                        const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, problem); !st.ok()) return st;
  if (absl::Status st = IsValid(target, problem, config); !st.ok()) return st;
  const CpuGemmParams p = CpuGemmParams::From(config);
  const CpuGemmShape s = CpuGemmShapeOf(problem);

  KernelBuild build;
  build.source = "cpu_conv/gemm_conv.cc";
  build.entries = {"cpu_gemm_conv"};
  if (p.split_k > 1) build.entries.push_back("cpu_gemm_conv_reduce");
  build.options = {DataTypeDefine(problem.data_type), DirDefine(problem.direction)};
  for (std::string& d : Space(target, problem).Defines(config)) build.options.push_back(std::move(d));

  std::vector<KernelArg> args = ConvBufferArgs();
  for (const KernelArg& a : ConvGeometryArgs(problem)) args.push_back(a);
  if (p.split_k > 1) args.push_back(KernelArg::Buffer(BufferRole::kWorkspace));

  Solution solution;
  Launch gemm;
  gemm.kernel = 0;
  gemm.entry = "cpu_gemm_conv";
  gemm.grid = {static_cast<uint32_t>(CeilDiv(s.n, p.tile_n)), static_cast<uint32_t>(CeilDiv(s.m, p.tile_m)),
               static_cast<uint32_t>(s.groups * p.split_k)};
  gemm.block = {1, 1, 1};
  gemm.shared_bytes = p.SharedBytes();
  gemm.args = args;
  solution.launches.push_back(std::move(gemm));
  if (p.split_k > 1) {
    const int64_t results = s.groups * s.m * s.n;
    solution.workspace_bytes = uint64_t(results) * uint64_t(p.split_k) * sizeof(float);
    Launch reduce;
    reduce.kernel = 0;
    reduce.entry = "cpu_gemm_conv_reduce";
    reduce.grid = {static_cast<uint32_t>(std::clamp<int64_t>(
                       std::max(1, target.num_cu) * 4, 1, std::min(results, kMaxReduceBlocks))),
                   1, 1};
    reduce.block = {1, 1, 1};
    reduce.args = std::move(args);
    solution.launches.push_back(std::move(reduce));
  }
  solution.kernels.push_back(std::move(build));
  return solution;
}

SolverList CpuTunableSolvers() {
  SolverList list;
  list.emplace_back(2001, std::make_unique<CpuGemmConvSolver>());
  return list;
}

}  // namespace tuna::solver

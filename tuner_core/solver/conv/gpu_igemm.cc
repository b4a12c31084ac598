#include "tuner_core/solver/conv/gpu_igemm.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;

constexpr int kMaxThreads = 512;
constexpr int kMinThreads = 32;
constexpr int kMaxLoadsPerThread = 16;       // per operand, each a register of the prefetch
constexpr uint64_t kStaticSharedLimit = 49152;  // the kernel's tiles are static shared memory

const char* DirectionSuffix(Direction d) {
  switch (d) {
    case Direction::kForward: return "Fwd";
    case Direction::kBackwardData: return "Bwd";
    case Direction::kBackwardWeights: return "Wrw";
  }
  return "?";
}

int DirIndex(Direction d) {
  return d == Direction::kForward ? 0 : (d == Direction::kBackwardData ? 1 : 2);
}

// True when the filter is densely packed with GEMM-K index (c, z, y, x) = its memory order.
bool FilterKContiguous(const TensorDesc& w) {
  const auto& d = w.dims;
  const auto& s = w.strides;
  return s[4] == 1 && s[3] == d[4] && s[2] == d[3] * d[4] && s[1] == d[2] * d[3] * d[4];
}

// True when (d, h, w) of one (n, channel) plane are densely packed (channels-first tensors).
bool PlaneContiguous(const TensorDesc& t) {
  const auto& d = t.dims;
  const auto& s = t.strides;
  return s[4] == 1 && s[3] == d[4] && s[2] == d[3] * d[4];
}

}  // namespace

IgemmSolver::IgemmSolver(Direction direction)
    : direction_(direction), name_(absl::StrCat("TunaIgemm", DirectionSuffix(direction))) {}

absl::Status IgemmSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (absl::Status st = gpu::CheckCommon(name_, target, p, direction_); !st.ok()) return st;
  // The most conservative config of DefaultConfig's fallback must launch: check its grid.
  const PerfConfig fallback = DefaultConfig(target, p);
  const IgemmPlan plan = Plan(target, p, fallback);
  if (plan.gm > gpu::kMaxIndex || plan.gn > gpu::kMaxIndex || plan.gk > gpu::kMaxIndex) {
    return NotApplicable(name_, "GEMM size exceeds 2^31");
  }
  const int64_t nhw_in = p.n * p.in[0] * p.in[1] * p.in[2];
  const Dhw o = p.Out();
  if (nhw_in > gpu::kMaxIndex || p.n * o[0] * o[1] * o[2] > gpu::kMaxIndex) {
    return NotApplicable(name_, "N*D*H*W exceeds 2^31");
  }
  if (absl::Status st = IsValid(target, p, fallback); !st.ok()) {
    return NotApplicable(name_, absl::StrCat("no valid config: ", st.message()));
  }
  return absl::OkStatus();
}

SearchSpace IgemmSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  // VEC_K and SPLIT_K are read by the solver only: VEC_K becomes TUNA_VEC_A/B where the layout
  // allows, SPLIT_K is grid.z and a kernel argument.
  std::vector<ParamAxis> axes = {
      {"TB_M", Pow2Range(16, 128)},
      {"TB_N", Pow2Range(16, 128)},
      {"TB_K", Pow2Range(4, 32)},
      {"THREAD_M", Pow2Range(1, 8)},
      {"THREAD_N", Pow2Range(1, 8)},
      {"VEC_K", Pow2Range(1, 8), AxisUse::kSolver},
      {"STAGES", LinearRange(1, 2)},
  };
  if (direction_ == Direction::kBackwardWeights) axes.push_back({"SPLIT_K", Pow2Range(1, 64), AxisUse::kSolver});
  return SearchSpace(std::move(axes));
}

IgemmPlan IgemmSolver::Plan(const Target& target, const Problem& p, const PerfConfig& config) const {
  const SearchSpace space = Space(target, p);
  IgemmPlan plan;
  plan.tb_m = static_cast<int>(space.Value(config, "TB_M"));
  plan.tb_n = static_cast<int>(space.Value(config, "TB_N"));
  plan.tb_k = static_cast<int>(space.Value(config, "TB_K"));
  plan.thread_m = static_cast<int>(space.Value(config, "THREAD_M"));
  plan.thread_n = static_cast<int>(space.Value(config, "THREAD_N"));
  plan.vec = static_cast<int>(space.Value(config, "VEC_K"));
  plan.stages = static_cast<int>(space.Value(config, "STAGES"));
  plan.split_k = direction_ == Direction::kBackwardWeights ? static_cast<int>(space.Value(config, "SPLIT_K")) : 1;
  if (plan.thread_m > 0 && plan.thread_n > 0) {
    plan.threads = (plan.tb_m / plan.thread_m) * (plan.tb_n / plan.thread_n);
  }

  const TensorDesc x = p.XDesc(), w = p.WDesc(), y = p.YDesc();
  const int64_t g = p.groups, cg = p.c / g, kg = p.k / g;
  const int64_t taps = p.fil[0] * p.fil[1] * p.fil[2];
  const Dhw o = p.Out();
  const int64_t opix = o[0] * o[1] * o[2];
  const int vec = std::max(plan.vec, 1);
  switch (direction_) {
    case Direction::kForward: {
      plan.gm = p.n * opix;
      plan.gn = kg;
      plan.gk = cg * taps;
      plan.korder = gpu::IsChannelsLast(p.in_layout) ? 1 : 0;
      plan.kfast_a = plan.korder == 1 && x.strides[1] == 1;
      if (plan.kfast_a && cg % vec == 0) plan.vec_a = vec;
      if (plan.korder == 1) {
        plan.kfast_b = w.strides[1] == 1;
        if (plan.kfast_b && cg % vec == 0) plan.vec_b = vec;
      } else {
        plan.kfast_b = FilterKContiguous(w);
        if (plan.kfast_b && plan.gk % vec == 0) plan.vec_b = vec;
      }
      break;
    }
    case Direction::kBackwardData: {
      int64_t per_class = p.n;
      for (int i = 0; i < 3; ++i) per_class *= CeilDiv(p.in[i], p.stride[i]);
      plan.gm = per_class;
      plan.gn = cg;
      plan.gk = kg * taps;  // upper bound: a class visits only the taps that reach it
      plan.classes = p.stride[0] * p.stride[1] * p.stride[2];
      plan.korder = gpu::IsChannelsLast(p.out_layout) ? 1 : 0;
      plan.kfast_a = plan.korder == 1 && y.strides[1] == 1;
      if (plan.kfast_a && kg % vec == 0) plan.vec_a = vec;
      break;
    }
    case Direction::kBackwardWeights: {
      plan.gm = kg;
      plan.gn = cg * taps;
      plan.gk = p.n * opix;
      plan.kfast_a = PlaneContiguous(y);
      if (plan.kfast_a && opix % vec == 0) plan.vec_a = vec;
      plan.kfast_b = PlaneContiguous(x);
      break;
    }
  }
  const int64_t k_tiles = plan.tb_k > 0 ? CeilDiv(plan.gk, plan.tb_k) : 0;
  plan.k_tiles_per_split = plan.split_k > 0 ? CeilDiv(k_tiles, plan.split_k) : k_tiles;
  plan.shared_bytes =
      static_cast<uint64_t>(plan.stages) * plan.tb_k * (plan.tb_m + plan.tb_n + 2) * sizeof(float);
  return plan;
}

absl::Status IgemmSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = Solver::IsValid(target, p, config); !st.ok()) return st;
  const IgemmPlan plan = Plan(target, p, config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(name_, config, why); };
  if (plan.thread_m > plan.tb_m || plan.thread_n > plan.tb_n) return invalid("thread tile exceeds block tile");
  if (plan.threads < kMinThreads || plan.threads > kMaxThreads) {
    return invalid(absl::StrCat(plan.threads, " threads outside [", kMinThreads, ", ", kMaxThreads, "]"));
  }
  if (plan.thread_m * plan.thread_n > 64) return invalid("micro-tile above 64 accumulators");
  // Register file: accumulators + operands + addressing per thread, 64K registers per block.
  if (plan.threads * (plan.thread_m * plan.thread_n + plan.thread_m + plan.thread_n + 40) > 65536) {
    return invalid("register budget exceeded");
  }
  const uint64_t smem_limit = std::min<uint64_t>(kStaticSharedLimit, target.max_shared_bytes_per_block);
  if (plan.shared_bytes > smem_limit) {
    return invalid(absl::StrCat(plan.shared_bytes, " bytes of shared memory > ", smem_limit));
  }
  if (plan.vec > 1) {
    if (plan.vec * static_cast<int>(DataTypeSize(p.data_type)) > 16) return invalid("vector wider than 16 bytes");
    if (plan.tb_k % plan.vec != 0) return invalid("TB_K not divisible by VEC_K");
    if (plan.vec_a == 1 && plan.vec_b == 1) return invalid("layout/sizes allow no vector loads");
  }
  const int64_t loads_a = CeilDiv(int64_t{plan.tb_m} * plan.tb_k / plan.vec_a, plan.threads);
  const int64_t loads_b = CeilDiv(int64_t{plan.tb_n} * plan.tb_k / plan.vec_b, plan.threads);
  if (loads_a > kMaxLoadsPerThread || loads_b > kMaxLoadsPerThread) return invalid("too many loads per thread");
  // Tiles much larger than the GEMM only waste threads: prune (never the smallest tile).
  if (plan.tb_m > 16 && plan.tb_m / 2 >= plan.gm) return invalid("TB_M much larger than GEMM M");
  if (plan.tb_n > 16 && plan.tb_n / 2 >= plan.gn) return invalid("TB_N much larger than GEMM N");
  if (CeilDiv(plan.gn, plan.tb_n) > gpu::kMaxGridYZ) return invalid("grid.y too large");
  if (CeilDiv(plan.gm, plan.tb_m) > gpu::kMaxIndex) return invalid("grid.x too large");
  const int64_t grid_z = p.groups * (direction_ == Direction::kBackwardData ? plan.classes : plan.split_k);
  if (grid_z > gpu::kMaxGridYZ) return invalid("grid.z too large");
  if (plan.split_k > 1) {
    const int64_t k_tiles = CeilDiv(plan.gk, plan.tb_k);
    // Every split must own at least one K tile (and splits beyond that only add atomics).
    if (CeilDiv(k_tiles, plan.k_tiles_per_split) < plan.split_k) return invalid("SPLIT_K exceeds K tiles");
  }
  return absl::OkStatus();
}

PerfConfig IgemmSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const SearchSpace space = Space(target, p);
  const bool wrw = direction_ == Direction::kBackwardWeights;
  // Named values, SPLIT_K only for Wrw.
  auto make = [&](int64_t tb_m, int64_t tb_n, int64_t tb_k, int64_t th_m, int64_t th_n, int64_t vec,
                  int64_t stages, int64_t split) {
    NamedValues v = {{"TB_M", tb_m},     {"TB_N", tb_n},   {"TB_K", tb_k},     {"THREAD_M", th_m},
                     {"THREAD_N", th_n}, {"VEC_K", vec},   {"STAGES", stages}};
    if (wrw) v.emplace_back("SPLIT_K", split);
    return space.Make(v);
  };
  // GEMM sizes from a unit plan, for the tile choice.
  const IgemmPlan shape = Plan(target, p, make(64, 64, 8, 4, 4, 1, 2, 1));
  auto pick_tile = [](int64_t extent) -> std::pair<int64_t, int64_t> {
    if (extent <= 16) return {16, 1};
    if (extent <= 32) return {32, 2};
    if (extent <= 64) return {64, 4};
    return {64, 4};
  };
  auto [tb_m, th_m] = pick_tile(shape.gm);
  auto [tb_n, th_n] = pick_tile(shape.gn);
  if (shape.gm >= 128 && shape.gn >= 128) tb_m = 128, th_m = 8;  // larger tiles for large GEMMs
  const int64_t vec_max = std::min<int64_t>(8, 16 / static_cast<int64_t>(DataTypeSize(p.data_type)));
  std::vector<PerfConfig> candidates;
  for (int64_t vec = vec_max; vec >= 1; vec /= 2) {
    for (int64_t tb_k : {int64_t{16}, int64_t{8}}) {
      int64_t split = 1;
      if (wrw) {
        // Enough blocks to fill the GPU twice, each split keeping at least 4 K tiles.
        const int64_t tiles = CeilDiv(shape.gm, tb_m) * CeilDiv(shape.gn, tb_n) * p.groups;
        const int64_t k_tiles = CeilDiv(shape.gk, tb_k);
        while (split < 64 && tiles * split * 2 <= 2 * target.num_cu && k_tiles / (split * 2) >= 4) split *= 2;
      }
      candidates.push_back(make(tb_m, tb_n, tb_k, th_m, th_n, vec, 2, split));
    }
  }
  for (const PerfConfig& c : candidates) {
    if (IsValid(target, p, c).ok()) return c;
  }
  return make(16, 16, 8, 1, 1, 1, 1, 1);  // 256 threads, 1 KB of shared memory
}

absl::StatusOr<Solution> IgemmSolver::GetSolution(const Target& target, const Problem& p,
                                                  const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const IgemmPlan plan = Plan(target, p, config);
  const bool wrw = direction_ == Direction::kBackwardWeights;
  const bool sixteen_bit = p.data_type != DataType::kFp32;
  const bool atomic = wrw && plan.split_k > 1;

  KernelBuild build;
  build.source = "conv/tuna_igemm.cu";
  const char* entry = direction_ == Direction::kForward        ? "tuna_igemm_fwd"
                      : direction_ == Direction::kBackwardData ? "tuna_igemm_bwd"
                                                                 : "tuna_igemm_wrw";
  build.entries = {entry};
  if (atomic && sixteen_bit) build.entries.push_back("tuna_igemm_wrw_finalize");
  build.options = space.Defines(config);  // the tile axes; VEC_K and SPLIT_K are not read as -D
  build.options.push_back(absl::StrCat("-DTUNA_DIR=", DirIndex(direction_)));
  build.options.push_back(gpu::DTypeOption(p.data_type));
  build.options.push_back(absl::StrCat("-DTUNA_VEC_A=", plan.vec_a));
  build.options.push_back(absl::StrCat("-DTUNA_VEC_B=", plan.vec_b));
  build.options.push_back(absl::StrCat("-DTUNA_KFAST_A=", plan.kfast_a ? 1 : 0));
  build.options.push_back(absl::StrCat("-DTUNA_KFAST_B=", plan.kfast_b ? 1 : 0));
  build.options.push_back(absl::StrCat("-DTUNA_KORDER=", plan.korder));
  build.options.push_back(absl::StrCat("-DTUNA_ATOMIC=", atomic ? 1 : 0));

  Solution sol;
  sol.kernels.push_back(build);
  Launch launch;
  launch.kernel = 0;
  launch.entry = entry;
  launch.grid.x = static_cast<uint32_t>(CeilDiv(plan.gm, plan.tb_m));
  launch.grid.y = static_cast<uint32_t>(CeilDiv(plan.gn, plan.tb_n));
  launch.grid.z = static_cast<uint32_t>(
      p.groups * (direction_ == Direction::kBackwardData ? plan.classes : plan.split_k));
  launch.block.x = static_cast<uint32_t>(plan.threads);
  launch.shared_bytes = 0;  // static shared memory only

  const BufferRole out_role = WrittenRole(direction_);
  BufferRole acc_role = out_role;  // unused by the kernel unless it accumulates atomically
  if (atomic) {
    if (sixteen_bit) {
      acc_role = BufferRole::kWorkspace;
      sol.workspace_bytes = static_cast<uint64_t>(p.WDesc().ElementCount()) * sizeof(float);
      sol.zero_first = {BufferRole::kWorkspace};
    } else {
      sol.zero_first = {BufferRole::kW};
    }
  }
  auto& a = launch.args;
  a = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kY),
       KernelArg::Buffer(acc_role)};
  const Dhw o = p.Out();
  for (int64_t v : {p.n, p.c / p.groups, p.k / p.groups, p.in[0], p.in[1], p.in[2], o[0], o[1], o[2],
                    p.fil[0], p.fil[1], p.fil[2], p.pad[0], p.pad[1], p.pad[2], p.stride[0], p.stride[1],
                    p.stride[2], p.dilation[0], p.dilation[1], p.dilation[2]}) {
    a.push_back(KernelArg::I64(v));
  }
  gpu::AppendStrides(a, p.XDesc());
  gpu::AppendStrides(a, p.WDesc());
  gpu::AppendStrides(a, p.YDesc());
  a.push_back(KernelArg::I64(plan.split_k));
  a.push_back(KernelArg::I64(plan.k_tiles_per_split));
  sol.launches.push_back(launch);

  if (atomic && sixteen_bit) {
    Launch fin;
    fin.kernel = 0;
    fin.entry = "tuna_igemm_wrw_finalize";
    const int64_t count = p.WDesc().ElementCount();
    fin.block.x = 256;
    fin.grid.x = static_cast<uint32_t>(std::clamp<int64_t>(CeilDiv(count, 256), 1, 65535));
    fin.args = {KernelArg::Buffer(BufferRole::kWorkspace), KernelArg::Buffer(BufferRole::kW),
                KernelArg::I64(count)};
    sol.launches.push_back(fin);
  }
  return sol;
}

}  // namespace tuna::solver

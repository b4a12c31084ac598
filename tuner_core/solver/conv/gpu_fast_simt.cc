#include "tuner_core/solver/conv/gpu_fast_simt.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver::fast_simt {

using gpu::CeilDiv;

SimtParams SimtParams::Of(const SearchSpace& s, const PerfConfig& c) {
  return {static_cast<int>(s.Value(c, "TB_M")), static_cast<int>(s.Value(c, "TB_N")),
          static_cast<int>(s.Value(c, "TB_K")), static_cast<int>(s.Value(c, "STAGES"))};
}

SearchSpace Space() {
  return SearchSpace({{"TB_N", {8, 64, 128}},
                      {"TB_M", Pow2Range(32, 256)},
                      {"TB_K", Pow2Range(8, 16)},
                      {"STAGES", LinearRange(2, 4)}});
}

std::vector<std::string> TapsOptions(int64_t taps_h, int64_t taps_w) {
  const bool one = taps_h == 1 && taps_w == 1;
  return {one ? "-DTUNA_FR=1" : "-DTUNA_FR=0", one ? "-DTUNA_FS=1" : "-DTUNA_FS=0"};
}

void AppendTapsArgs(int64_t taps_h, int64_t taps_w, std::vector<KernelArg>& args) {
  const gpu::FastDiv rs = gpu::MakeFastDiv(taps_h * taps_w), s = gpu::MakeFastDiv(taps_w);
  for (int64_t v : {taps_h * taps_w, taps_w, int64_t{rs.mul}, int64_t{rs.shr}, int64_t{s.mul}, int64_t{s.shr}}) {
    args.push_back(KernelArg::I32(v));
  }
}

uint64_t SharedBytes(int tb_m, int tb_n, int tb_k, int stages) {
  // The w tile's rows (TB_N output channels) are padded by 4 floats.
  return static_cast<uint64_t>(stages) * tb_k * (tb_m + tb_n + 4) * 4;
}

int64_t Plan::MaxPixels() const {
  int64_t pixels = 0;
  for (const Phase& ph : phases) pixels = std::max(pixels, n * ph.rows * ph.cols);
  return pixels;
}

int64_t Plan::MaxTaps() const {
  int64_t taps = 0;
  for (const Phase& ph : phases) taps = std::max(taps, ph.taps_h * ph.taps_w);
  return taps;
}

Plan ForwardPlan(const Problem& p) {
  const Dhw o = p.Out();
  Plan plan;
  plan.n = p.n, plan.c = p.c, plan.h = p.in[1], plan.w = p.in[2];
  plan.k = p.k, plan.out_h = o[1], plan.out_w = o[2];
  plan.stride_h = p.stride[1], plan.stride_w = p.stride[2];
  plan.phases.push_back({p.fil[1], p.fil[2], p.pad[1], p.pad[2], p.dilation[1], p.dilation[2], o[1], o[2], 0, 0, 0});
  return plan;
}

Plan GemmPlan(int64_t rows, int64_t depth, int64_t cols) {
  Plan plan;
  plan.n = 1, plan.c = depth, plan.h = 1, plan.w = cols;
  plan.k = rows, plan.out_h = 1, plan.out_w = cols;
  plan.phases.push_back({1, 1, 0, 0, 1, 1, 1, cols, 0, 0, 0});
  return plan;
}

namespace {

// One dimension of a backward-data phase: residue `a` of the dx rows (see the header).
struct PhaseDim {
  int64_t taps = 0, pad = 0, rows = 0;
};

PhaseDim BackwardDim(int64_t a, int64_t extent, int64_t fil, int64_t pad, int64_t stride, int64_t dil) {
  const int64_t r0 = (a + pad) % stride;
  PhaseDim d;
  d.taps = r0 < fil ? CeilDiv(fil - r0, stride) : 0;
  // dx row a + stride*i takes dy row i + off0 - q from tap r0 + stride*q (dilation 1 when
  // strided); with the taps reversed that is a stride-1 convolution padded by (taps-1)*dil - off0.
  const int64_t off0 = (a + pad - r0) / stride;
  d.pad = (d.taps - 1) * dil - off0;
  d.rows = extent > a ? CeilDiv(extent - a, stride) : 0;
  return d;
}

}  // namespace

Plan BackwardDataPlan(const Problem& p) {
  const Dhw o = p.Out();
  Plan plan;
  plan.n = p.n, plan.c = p.k, plan.h = o[1], plan.w = o[2];  // x: dy
  plan.k = p.c, plan.out_h = p.in[1], plan.out_w = p.in[2];   // y: dx
  plan.out_sh = p.stride[1], plan.out_sw = p.stride[2];
  int64_t offset = 0;
  for (int64_t a = 0; a < p.stride[1]; ++a) {
    const PhaseDim dh = BackwardDim(a, p.in[1], p.fil[1], p.pad[1], p.stride[1], p.dilation[1]);
    for (int64_t b = 0; b < p.stride[2]; ++b) {
      const PhaseDim dw = BackwardDim(b, p.in[2], p.fil[2], p.pad[2], p.stride[2], p.dilation[2]);
      if (dh.rows == 0 || dw.rows == 0) continue;
      plan.phases.push_back({dh.taps, dw.taps, dh.pad, dw.pad, p.dilation[1], p.dilation[2], dh.rows, dw.rows, a, b,
                             offset});
      offset += dh.taps * dw.taps * p.k * p.c;
    }
  }
  return plan;
}

absl::Status CheckValid(std::string_view solver, const Target& target, const Plan& plan, const PerfConfig& config) {
  const auto [tb_m, tb_n, tb_k, stages] = SimtParams::Of(Space(), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(solver, config, why); };
  const uint64_t smem = SharedBytes(tb_m, tb_n, tb_k, stages);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  // 64 accumulators + 16 operands per thread at up to 256 threads: fits the register file at
  // one block per SM at least; more stages than K tiles only cost shared memory.
  const int64_t k_tiles = CeilDiv(plan.c * plan.MaxTaps(), tb_k);
  if (stages > 2 && k_tiles < stages) return invalid("more stages than K tiles");
  if (tb_n > 64 && tb_n / 2 >= plan.k) return invalid("TB_N much larger than K");
  // The thin tile (8 output channels x 256 pixels, one warp) is for outputs of at most 8 channels
  // (the stem's backward data, C = 3), where 64-row tiles would compute mostly padding.
  if ((tb_n == 8) != (tb_m == 256)) return invalid("TB_N 8 goes with TB_M 256 only, and TB_M 256 with TB_N 8");
  if (tb_n == 8 && plan.k > 8) return invalid("TB_N 8 only for outputs of at most 8 channels");
  if (CeilDiv(plan.k, tb_n) > gpu::kMaxGridYZ) return invalid("grid.y too large");
  if (tb_m == 32 && CeilDiv(plan.MaxPixels(), 64) * CeilDiv(plan.k, 64) >= 2 * target.num_cu) {
    return invalid("TB_M 32 only where 64-pixel tiles leave SMs idle");
  }
  return absl::OkStatus();
}

PerfConfig Default(const Target& target, const Plan& plan) {
  const int64_t pixels = plan.MaxPixels();
  const SearchSpace space = Space();
  if (plan.k <= 8) {
    const PerfConfig thin = space.Make({{"TB_M", 256}, {"TB_N", 8}, {"TB_K", 8}, {"STAGES", 3}});
    if (CheckValid("", target, plan, thin).ok()) return thin;
  }
  const PerfConfig c = CeilDiv(pixels, 128) * CeilDiv(plan.k, 128) >= 2 * target.num_cu
                           ? space.Make({{"TB_M", 128}, {"TB_N", 128}, {"TB_K", 8}, {"STAGES", 3}})
                           : space.Make({{"TB_M", 64}, {"TB_N", 64}, {"TB_K", 16}, {"STAGES", 3}});
  if (CheckValid("", target, plan, c).ok()) return c;
  // 64 threads, 9 KiB: valid for every applicable problem.
  return space.Make({{"TB_M", 64}, {"TB_N", 64}, {"TB_K", 8}, {"STAGES", 2}});
}

namespace {

// 1x1, stride 1, unpadded, same extent in and out, whole groups of four pixels: the B tile is a
// plain GEMM operand and takes 16-byte copies (a block with a thread per four pixel columns at
// least: not the thin tile).
bool VectorB(const Plan& plan, const Phase& ph, int tb_m, int tb_n) {
  const int threads = tb_m * tb_n / 64;
  return threads % (tb_m / 4) == 0 && ph.taps_h == 1 && ph.taps_w == 1 && plan.stride_h == 1 && plan.stride_w == 1 && ph.pad_h == 0 &&
         ph.pad_w == 0 && ph.rows == plan.h && ph.cols == plan.w && (plan.h * plan.w) % 4 == 0;
}

}  // namespace

void AppendConv(const Plan& plan, const PerfConfig& config, BufferRole x, BufferRole w, BufferRole y,
                Solution& sol, const Batch& batch) {
  const SearchSpace space = Space();
  const auto [tb_m, tb_n, tb_k, stages] = SimtParams::Of(space, config);
  std::map<std::pair<std::vector<std::string>, bool>, size_t> kernel_of;  // (taps options, vector B) -> kernel
  auto kernel_for = [&](const Phase& ph) {
    const bool vec = VectorB(plan, ph, tb_m, tb_n);
    std::vector<std::string> taps = TapsOptions(ph.taps_h, ph.taps_w);
    auto [it, fresh] = kernel_of.try_emplace({taps, vec}, sol.kernels.size());
    if (fresh) {
      KernelBuild build;
      build.source = "conv/fast_simt_fwd.cu";
      build.entries = {"tuna_fast_simt_fwd", "tuna_simt_bwd_filter"};
      build.options = space.Defines(config);
      build.options.insert(build.options.end(), taps.begin(), taps.end());
      build.options.push_back(absl::StrCat("-DTUNA_VEC4_B=", vec ? 1 : 0));
      build.options.push_back(absl::StrCat("-DTUNA_PHASED=", plan.Phased() ? 1 : 0));
      sol.kernels.push_back(std::move(build));
    }
    return it->second;
  };
  for (const Phase& phase : plan.phases) {
    const Phase* ph = &phase;
    if (ph->taps_h * ph->taps_w == 0) {  // no tap reaches these rows: zeroed, not launched
      if (sol.zero_first.empty()) sol.zero_first.push_back(y);
      continue;
    }
    Launch l;
    l.kernel = kernel_for(*ph);
    l.entry = "tuna_fast_simt_fwd";
    l.grid.x = static_cast<uint32_t>(CeilDiv(plan.n * ph->rows * ph->cols, tb_m));
    l.grid.y = static_cast<uint32_t>(CeilDiv(plan.k, tb_n));
    l.grid.z = static_cast<uint32_t>(batch.count);
    l.block.x = static_cast<uint32_t>(tb_m * tb_n / 64);
    l.shared_bytes = SharedBytes(tb_m, tb_n, tb_k, stages);
    l.args = {KernelArg::Buffer(x), KernelArg::Buffer(w), KernelArg::Buffer(y), KernelArg::I32(ph->w_offset + batch.w_off)};
    for (int64_t v : {plan.n, plan.c, plan.h, plan.w, plan.k, ph->rows, ph->cols, ph->pad_h, ph->pad_w, plan.stride_h,
                      plan.stride_w, ph->dil_h, ph->dil_w, plan.out_h, plan.out_w, ph->out_a, ph->out_b, plan.out_sh,
                      plan.out_sw}) {
      l.args.push_back(KernelArg::I32(v));
    }
    AppendTapsArgs(ph->taps_h, ph->taps_w, l.args);
    for (int64_t v : {batch.x_off, batch.y_off, batch.zx, batch.zw, batch.zy}) l.args.push_back(KernelArg::I64(v));
    sol.launches.push_back(std::move(l));
  }
}

SearchSpace SimtSolver::Space(const Target&, const Problem&) const { return fast_simt::Space(); }

PerfConfig SimtSolver::DefaultConfig(const Target& target, const Problem& p) const {
  return Default(target, PlanOf(p));
}

absl::Status SimtSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  return CheckValid(Name(), target, PlanOf(p), config);
}

}  // namespace tuna::solver::fast_simt

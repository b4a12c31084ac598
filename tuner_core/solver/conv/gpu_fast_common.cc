#include "tuner_core/solver/conv/gpu_fast_common.h"

#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver::gpu {

bool IsDense(const TensorDesc& t, Layout layout) {
  const auto& d = t.dims;  // n, c, d, h, w
  const auto& s = t.strides;
  if (layout == Layout::kNCHW) {
    return s[4] == 1 && s[3] == d[4] && s[2] == d[3] * d[4] && s[1] == d[2] * d[3] * d[4] &&
           s[0] == d[1] * d[2] * d[3] * d[4];
  }
  if (layout == Layout::kNHWC) {
    return s[1] == 1 && s[4] == d[1] && s[3] == d[4] * d[1] && s[2] == d[3] * d[4] * d[1] &&
           s[0] == d[1] * d[2] * d[3] * d[4];
  }
  return false;
}

backend::TensorMapSpec::Swizzle RowSwizzle(int channels) {
  using Swizzle = backend::TensorMapSpec::Swizzle;
  return channels == 16 ? Swizzle::k32B : channels == 32 ? Swizzle::k64B : Swizzle::k128B;
}

absl::Status CheckSm90a16(std::string_view solver, const Target& target, const Problem& p, Direction direction) {
  if (target.backend != backend::BackendKind::kCuda || target.SmVersion() != 90) {
    return NotApplicable(solver, "wgmma and TMA kernels are built for CUDA sm_90a only");
  }
  if (absl::Status st = CheckCommon(solver, target, p, direction); !st.ok()) return st;
  if (p.data_type != DataType::kFp16 && p.data_type != DataType::kBf16) return NotApplicable(solver, "FP16 and BF16 only");
  return absl::OkStatus();
}

absl::Status CheckSm90aNhwc16(std::string_view solver, const Target& target, const Problem& p, Direction direction) {
  if (absl::Status st = CheckSm90a16(solver, target, p, direction); !st.ok()) return st;
  if (p.spatial_dims != 2) return NotApplicable(solver, "2D only");
  if (p.in_layout != Layout::kNHWC || p.fil_layout != Layout::kNHWC || p.out_layout != Layout::kNHWC ||
      !IsDense(p.XDesc(), Layout::kNHWC) || !IsDense(p.WDesc(), Layout::kNHWC) || !IsDense(p.YDesc(), Layout::kNHWC)) {
    return NotApplicable(solver, "requires dense NHWC x, w and y");
  }
  return absl::OkStatus();
}

absl::Status CheckFastConv(std::string_view solver, const Target& target, const Problem& p,
                           DataType type_a, DataType type_b, Layout layout, FastConvRules rules) {
  if (target.backend != backend::BackendKind::kCuda) {
    return NotApplicable(solver, "CUDA only (inline PTX: cp.async, ldmatrix, mma.sync)");
  }
  if (target.SmVersion() < rules.min_sm) {
    return NotApplicable(solver, "requires sm_" + std::to_string(rules.min_sm) + " or newer");
  }
  if (absl::Status st = CheckCommon(solver, target, p, rules.direction); !st.ok()) return st;
  if (p.data_type != type_a && p.data_type != type_b) {
    return NotApplicable(solver, std::string("data type ") + std::string(DataTypeName(p.data_type)) +
                                     " not handled");
  }
  if (p.spatial_dims != 2) return NotApplicable(solver, "2D only");
  if (p.groups != 1 && !rules.groups) return NotApplicable(solver, "groups > 1 not supported");
  if (p.in_layout != layout || p.fil_layout != layout || p.out_layout != layout) {
    return NotApplicable(solver, std::string("requires ") + std::string(LayoutName(layout)) + " x, w and y");
  }
  if (!IsDense(p.XDesc(), layout) || !IsDense(p.WDesc(), layout) || !IsDense(p.YDesc(), layout)) {
    return NotApplicable(solver, "requires densely packed tensors");
  }
  const int64_t rows = OutputPixels(p);
  const int64_t kdim = p.c * p.fil[1] * p.fil[2];
  if (rows > kMaxIndex || kdim > kMaxIndex || p.k > kMaxIndex ||
      p.n * p.c * p.in[1] * p.in[2] > (int64_t{1} << 40)) {
    return NotApplicable(solver, "sizes exceed 32-bit GEMM indices");
  }
  if (p.pad[1] > p.in[1] || p.pad[2] > p.in[2] || p.stride[1] > 65535 || p.dilation[1] > 65535) {
    return NotApplicable(solver, "padding/stride out of range");
  }
  return absl::OkStatus();
}

HopperTile HopperTile::Of(const SearchSpace& s, const PerfConfig& c) {
  return {static_cast<int>(s.Value(c, "TB_M")), static_cast<int>(s.Value(c, "TB_N")),
          static_cast<int>(s.Value(c, "WG_M")), static_cast<int>(s.Value(c, "STAGES")),
          static_cast<int>(s.Value(c, "SPLIT_K"))};
}

PerfConfig HopperTile::Config(const SearchSpace& s) const {
  return s.Make({{"TB_M", tb_m}, {"TB_N", tb_n}, {"WG_M", wg_m}, {"STAGES", stages}, {"SPLIT_K", split_k}});
}

double WaveEfficiency(int64_t blocks, int num_cu) {
  const int64_t rounds = CeilDiv(blocks, num_cu);
  return static_cast<double>(blocks) / static_cast<double>(rounds * num_cu);
}

bool WrwSplitsPay(int64_t tile_units, int split, int64_t pixel_tiles, int num_cu) {
  if (split == 1) return true;
  const int64_t blocks = tile_units * split;
  return blocks <= 8 * num_cu && CeilDiv(pixel_tiles, split) >= 4 &&
         (blocks <= num_cu || WaveEfficiency(blocks, num_cu) >= 0.75);
}

Launch HopperWrwReduceLaunch(const Problem& p, int64_t cp, int split_k, int64_t ws_offset) {
  const int64_t rows = p.k * FilterTaps(p);
  const int64_t cg = p.c / p.groups;
  const int64_t threads = cp == cg ? rows * cg / 4 : rows * cg;  // unpadded: four elements a thread
  Launch r;
  r.kernel = 0;
  r.entry = "tuna_hopper_wrw_reduce";
  r.grid.x = static_cast<uint32_t>(CeilDiv(threads, 256));
  r.block.x = 256;
  r.args = {KernelArg::Buffer(BufferRole::kWorkspace), KernelArg::Buffer(BufferRole::kW), KernelArg::I64(ws_offset),
            KernelArg::I64(rows), KernelArg::I32(cp), KernelArg::I32(cg), KernelArg::I32(split_k)};
  return r;
}

int64_t ChunkChannels(const Problem& p) {
  const int64_t cg = p.c / p.groups;
  if (cg % 8 == 0) return cg;
  return cg <= 4 ? 4 : CeilDiv(cg, 8) * 8;
}

}  // namespace tuna::solver::gpu

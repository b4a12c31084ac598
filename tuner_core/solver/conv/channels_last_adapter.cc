#include "tuner_core/solver/conv/channels_last_adapter.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"

namespace tuna::solver {
namespace {

// The launch geometry of kernels/conv/layout_transpose_impl.h (kLtTile, kLtThreadsX/Y,
// kLtFillThreads): tiles of kTile words of one element or (packed) of 4 bytes.
constexpr int64_t kTile = 32;
constexpr uint32_t kThreadsX = 32, kThreadsY = 8, kFillThreads = 256;
constexpr int64_t kMaxFillBlocks = 4096;
constexpr uint64_t kRegionAlign = 256;
constexpr std::array<BufferRole, 3> kTensors = {BufferRole::kX, BufferRole::kW, BufferRole::kY};

uint64_t AlignUp(uint64_t v) { return (v + kRegionAlign - 1) / kRegionAlign * kRegionAlign; }

Layout LayoutOf(const Problem& p, BufferRole role) {
  return role == BufferRole::kX ? p.in_layout : role == BufferRole::kW ? p.fil_layout : p.out_layout;
}

TensorDesc DescOf(const Problem& p, BufferRole role) {
  return role == BufferRole::kX ? p.XDesc() : role == BufferRole::kW ? p.WDesc() : p.YDesc();
}

// A tensor (dims n|k, c, d, h, w) as `batches` matrices of channels x pixels (channels-first) or
// pixels x channels (channels-last).
struct MatrixView {
  int64_t batches = 0, channels = 0, pixels = 0;
};

MatrixView ViewOf(const TensorDesc& d) { return {d.dims[0], d.dims[1], d.dims[2] * d.dims[3] * d.dims[4]}; }

uint64_t TensorBytes(const Problem& p, BufferRole role) {
  return static_cast<uint64_t>(DescOf(p, role).ElementCount()) * DataTypeSize(p.data_type);
}

KernelBuild LayoutBuild(const Target& target, const Problem& p) {
  KernelBuild b;
  b.source = target.backend == backend::BackendKind::kCpu ? "cpu_conv/layout_transpose.cc" : "conv/layout_transpose.cu";
  b.entries = {"tuna_batched_transpose", "tuna_batched_transpose_packed", "tuna_fill_zero"};
  b.options = {absl::StrCat("-DTUNA_ELEM_BYTES=", DataTypeSize(p.data_type))};
  return b;
}

// dst (batches x cols x rows) = the transposes of src (batches x rows x cols) of `elem_bytes`
// elements: moved in 32-bit words of 4 / elem_bytes elements where rows and cols allow (the
// packed entry: 128-byte warp accesses), else element by element.
Launch TransposeLaunch(int kernel, std::pair<BufferRole, int64_t> src, std::pair<BufferRole, int64_t> dst,
                       int64_t batches, int64_t rows, int64_t cols, int64_t elem_bytes) {
  const int64_t pack = 4 / elem_bytes;
  const bool packed = pack > 1 && rows % pack == 0 && cols % pack == 0;
  const int64_t tile = packed ? kTile * pack : kTile;
  const int64_t tiles_cols = gpu::CeilDiv(cols, tile);
  Launch l;
  l.kernel = kernel;
  l.entry = packed ? "tuna_batched_transpose_packed" : "tuna_batched_transpose";
  l.grid = {static_cast<uint32_t>(gpu::CeilDiv(rows, tile) * tiles_cols),
            static_cast<uint32_t>(std::min(batches, gpu::kMaxGridYZ)), 1};
  l.block = {kThreadsX, kThreadsY, 1};
  l.args = {KernelArg::Buffer(src.first, src.second), KernelArg::Buffer(dst.first, dst.second),
            KernelArg::I64(batches), KernelArg::I32(rows), KernelArg::I32(cols), KernelArg::I32(tiles_cols)};
  return l;
}

Launch FillZeroLaunch(int kernel, int64_t offset, uint64_t bytes) {
  const int64_t words = static_cast<int64_t>((bytes + 3) / 4);  // the region is padded to kRegionAlign
  Launch l;
  l.kernel = kernel;
  l.entry = "tuna_fill_zero";
  l.grid = {static_cast<uint32_t>(std::clamp<int64_t>(gpu::CeilDiv(words, kFillThreads), 1, kMaxFillBlocks)), 1, 1};
  l.block = {kFillThreads, 1, 1};
  l.args = {KernelArg::Buffer(BufferRole::kWorkspace, offset), KernelArg::I64(words)};
  return l;
}

// True when the tensor needs no move: channels-last already, or one channel or one pixel per
// batch (a 1x1 filter, C/G = 1), where both layouts are the same bytes.
bool StaysInPlace(const Problem& p, BufferRole role) {
  const MatrixView v = ViewOf(DescOf(p, role));
  return gpu::IsChannelsLast(LayoutOf(p, role)) || v.channels == 1 || v.pixels == 1;
}

// Where the adapter keeps each buffer the inner solution names: x, w and y stay in place where
// StaysInPlace, else a workspace region; the inner workspace is the last region.
struct Regions {
  std::array<int64_t, 3> tensor{-1, -1, -1};  // byte offsets in the workspace, -1: in place
  int64_t inner_workspace = 0;
  uint64_t total = 0;

  Regions(const Problem& p, uint64_t inner_workspace_bytes) {
    for (size_t i = 0; i < kTensors.size(); ++i) {
      if (StaysInPlace(p, kTensors[i])) continue;
      tensor[i] = static_cast<int64_t>(total);
      total += AlignUp(TensorBytes(p, kTensors[i]));
    }
    inner_workspace = static_cast<int64_t>(total);
    total += AlignUp(inner_workspace_bytes);
  }
  bool Moved(BufferRole role) const { return role != BufferRole::kWorkspace && tensor[static_cast<int>(role)] >= 0; }
  // (buffer, byte offset) of an inner role.
  std::pair<BufferRole, int64_t> Where(BufferRole role) const {
    if (role == BufferRole::kWorkspace) return {BufferRole::kWorkspace, inner_workspace};
    if (Moved(role)) return {BufferRole::kWorkspace, tensor[static_cast<int>(role)]};
    return {role, 0};
  }
};

}  // namespace

Problem ChannelsLast(const Problem& p) {
  Problem q = p;
  const Layout cl = p.spatial_dims == 3 ? Layout::kNDHWC : Layout::kNHWC;
  q.in_layout = q.fil_layout = q.out_layout = cl;
  return q;
}

ChannelsLastAdapter::ChannelsLastAdapter(std::string name, std::unique_ptr<Solver> inner)
    : WrappingSolver(std::move(inner)), name_(std::move(name)) {}

absl::Status ChannelsLastAdapter::IsApplicable(const Target& target, const Problem& p) const {
  if (gpu::IsChannelsLast(p.in_layout) && gpu::IsChannelsLast(p.fil_layout) && gpu::IsChannelsLast(p.out_layout)) {
    return NotApplicable(name_, absl::StrCat("x, w and y are channels-last already (", std::string(inner().Name()), " runs it)"));
  }
  if (p.data_type == DataType::kInt8) return NotApplicable(name_, "INT8 is not handled");
  if (inner().IsApplicable(target, p).ok()) {  // e.g. TunaHopperTmaFwd's per-image GEMMs of NCHW 1x1 layers
    return NotApplicable(name_, absl::StrCat(std::string(inner().Name()), " runs these layouts without copies"));
  }
  for (BufferRole role : kTensors) {
    if (gpu::IsChannelsLast(LayoutOf(p, role))) continue;
    const TensorDesc desc = DescOf(p, role);
    if (!gpu::IsDense(desc, Layout::kNCHW)) return NotApplicable(name_, "requires densely packed tensors");
    const MatrixView v = ViewOf(desc);
    if (v.channels > gpu::kMaxIndex || v.pixels > gpu::kMaxIndex ||
        gpu::CeilDiv(v.channels, kTile) * gpu::CeilDiv(v.pixels, kTile) > gpu::kMaxIndex) {
      return NotApplicable(name_, "a tensor's channels or pixels exceed the layout kernel's 32-bit grid");
    }
  }
  if (absl::Status st = inner().IsApplicable(target, ChannelsLast(p)); !st.ok()) {
    return NotApplicable(name_, absl::StrCat("on the channels-last problem: ", st.message()));
  }
  return absl::OkStatus();
}

SearchSpace ChannelsLastAdapter::Space(const Target& target, const Problem& p) const {
  return inner().Space(target, ChannelsLast(p));
}

PerfConfig ChannelsLastAdapter::DefaultConfig(const Target& target, const Problem& p) const {
  return inner().DefaultConfig(target, ChannelsLast(p));
}

absl::Status ChannelsLastAdapter::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  return inner().IsValid(target, ChannelsLast(p), config);
}

std::optional<PerfConfig> ChannelsLastAdapter::Specialize(const Target& target, const Problem& p,
                                                          const PerfConfig& config) const {
  return inner().Specialize(target, ChannelsLast(p), config);
}

absl::StatusOr<Solution> ChannelsLastAdapter::GetSolution(const Target& target, const Problem& p,
                                                          const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  absl::StatusOr<Solution> sol = inner().GetSolution(target, ChannelsLast(p), config);
  if (!sol.ok()) return sol.status();
  const Regions regions(p, sol->workspace_bytes);
  Solution out;
  out.kernels = sol->kernels;
  const int layout = static_cast<int>(out.kernels.size());
  out.kernels.push_back(LayoutBuild(target, p));
  out.workspace_bytes = regions.total;
  for (BufferRole role : sol->zero_first) {
    const auto [buffer, offset] = regions.Where(role);
    if (buffer != BufferRole::kWorkspace) {
      out.zero_first.push_back(role);
      continue;
    }
    const uint64_t bytes = role == BufferRole::kWorkspace ? sol->workspace_bytes : TensorBytes(p, role);
    if (bytes > 0) out.launches.push_back(FillZeroLaunch(layout, offset, bytes));
  }
  const BufferRole written = WrittenRole(p.direction);
  const int64_t elem_bytes = static_cast<int64_t>(DataTypeSize(p.data_type));
  for (BufferRole role : kTensors) {  // the inputs, to channels-last
    if (role == written || !regions.Moved(role)) continue;
    const MatrixView v = ViewOf(DescOf(p, role));
    out.launches.push_back(
        TransposeLaunch(layout, {role, 0}, regions.Where(role), v.batches, v.channels, v.pixels, elem_bytes));
  }
  for (Launch l : sol->launches) {
    for (KernelArg& a : l.args) {
      if (a.kind != KernelArg::Kind::kBuffer && a.kind != KernelArg::Kind::kTensorMap) continue;
      const auto [buffer, offset] = regions.Where(a.role);
      a.role = buffer;
      a.i += offset;
    }
    out.launches.push_back(std::move(l));
  }
  if (regions.Moved(written)) {  // the output, back to the problem's layout
    const MatrixView v = ViewOf(DescOf(p, written));
    out.launches.push_back(
        TransposeLaunch(layout, regions.Where(written), {written, 0}, v.batches, v.pixels, v.channels, elem_bytes));
  }
  return out;
}

}  // namespace tuna::solver

#include "tuner_core/solver/conv/channel_order_adapter.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"

namespace tuna::solver {
namespace {

// The launch geometry of kernels/conv/layout_transpose_impl.h (kLtTile, kLtThreadsX/Y): tiles of
// kTile words of one element or (packed) of 4 bytes.
constexpr int64_t kTile = 32;
constexpr uint32_t kThreadsX = 32, kThreadsY = 8;

// A tensor (dims n|k, c, d, h, w) as `batches` matrices of channels x pixels (channels-first) or
// pixels x channels (channels-last).
struct MatrixView {
  int64_t batches = 0, channels = 0, pixels = 0;
};

MatrixView ViewOf(const TensorDesc& d) { return {d.dims[0], d.dims[1], d.dims[2] * d.dims[3] * d.dims[4]}; }

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

// `p` with x, w and y all in `layout2d` (2-D problems) or `layout3d`.
Problem AllIn(const Problem& p, Layout layout2d, Layout layout3d) {
  Problem q = p;
  q.in_layout = q.fil_layout = q.out_layout = p.spatial_dims == 3 ? layout3d : layout2d;
  return q;
}

}  // namespace

Problem ChannelsLast(const Problem& p) { return AllIn(p, Layout::kNHWC, Layout::kNDHWC); }
Problem ChannelsFirst(const Problem& p) { return AllIn(p, Layout::kNCHW, Layout::kNCDHW); }

Problem ChannelOrderAdapter::Planned(const Problem& p) const { return inner_last_ ? ChannelsLast(p) : ChannelsFirst(p); }

absl::Status ChannelOrderAdapter::Admits(const Target& target, const Problem& p) const {
  const auto in_order = [&](BufferRole role) { return gpu::IsChannelsLast(LayoutOf(p, role)) == inner_last_; };
  if (std::all_of(kConvTensors.begin(), kConvTensors.end(), in_order)) {
    return NotApplicable(Name(), absl::StrCat("x, w and y are ", std::string(PlannedWhat()), " already (",
                                              std::string(inner().Name()), " runs it)"));
  }
  if (p.data_type == DataType::kInt8) return NotApplicable(Name(), "INT8 is not handled");
  if (inner().IsApplicable(target, p).ok()) {  // e.g. TunaHopperTmaFwd's per-image GEMMs of NCHW 1x1 layers
    return NotApplicable(Name(), absl::StrCat(std::string(inner().Name()), " runs these layouts without copies"));
  }
  for (BufferRole role : kConvTensors) {
    if (in_order(role)) continue;
    const TensorDesc desc = DescOf(p, role);
    if (!gpu::IsDense(desc, inner_last_ ? Layout::kNCHW : Layout::kNHWC)) {
      return NotApplicable(Name(), "requires densely packed tensors");
    }
    const MatrixView v = ViewOf(desc);
    if (v.channels > gpu::kMaxIndex || v.pixels > gpu::kMaxIndex ||
        gpu::CeilDiv(v.channels, kTile) * gpu::CeilDiv(v.pixels, kTile) > gpu::kMaxIndex) {
      return NotApplicable(Name(), "a tensor's channels or pixels exceed the layout kernel's 32-bit grid");
    }
  }
  return absl::OkStatus();
}

// A tensor moves unless in the inner's order already, or one channel or one pixel per batch (a
// 1x1 filter, C/G = 1), where both orders are the same bytes.
bool ChannelOrderAdapter::Moves(const Problem& p, BufferRole role) const {
  const MatrixView v = ViewOf(DescOf(p, role));
  return gpu::IsChannelsLast(LayoutOf(p, role)) != inner_last_ && v.channels > 1 && v.pixels > 1;
}

std::vector<std::string> ChannelOrderAdapter::MoveEntries() const {
  return {"tuna_batched_transpose", "tuna_batched_transpose_packed", "tuna_fill_zero"};
}

// Each batch's channels x pixels matrix transposed to pixels x channels where the source is
// channels-first (moving into a channels-last inner, or back out of a channels-first one), else
// the reverse.
Launch ChannelOrderAdapter::MoveLaunch(int kernel, const Problem& p, BufferRole role, bool in, Place from,
                                       Place to) const {
  const MatrixView v = ViewOf(DescOf(p, role));
  const int64_t elem_bytes = static_cast<int64_t>(DataTypeSize(p.data_type));
  return in == inner_last_ ? TransposeLaunch(kernel, from, to, v.batches, v.channels, v.pixels, elem_bytes)
                           : TransposeLaunch(kernel, from, to, v.batches, v.pixels, v.channels, elem_bytes);
}

}  // namespace tuna::solver

#include "tuner_core/solver/conv/depth_batch_adapter.h"

#include <algorithm>

#include "tuner_core/problem/flatten.h"
#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver {
namespace {

constexpr uint32_t kRunThreads = 256;  // kernels/conv/layout_transpose_impl.h: kLtRunThreads

}  // namespace

absl::Status DepthBatchAdapter::Admits(const Target& target, const Problem& p) const {
  if (p.spatial_dims != 3) return NotApplicable(Name(), "3-D only");
  if (FlattenTo2d(p).has_value()) return NotApplicable(Name(), "a 2-D problem on the same bytes: no copies needed");
  if (!DepthAsBatch(p).has_value()) return NotApplicable(Name(), "the depth is not an identity (one tap, no padding, stride 1)");
  if (gpu::IsChannelsLast(p.in_layout) || gpu::IsChannelsLast(p.out_layout)) return NotApplicable(Name(), "NCDHW x and y only");
  if (p.data_type == DataType::kInt8) return NotApplicable(Name(), "INT8 is not handled");
  const Dhw o = p.Out();
  if (std::max(p.c, p.k) * std::max(p.in[0], o[0]) > gpu::kMaxIndex) {
    return NotApplicable(Name(), "channels x depth exceed the layout kernel's 32-bit grid");
  }
  if (inner().IsApplicable(target, p).ok()) {
    return NotApplicable(Name(), std::string(inner().Name()) + " runs these problems without copies");
  }
  return absl::OkStatus();
}

Problem DepthBatchAdapter::Planned(const Problem& p) const { return DepthAsBatch(p).value_or(p); }

// x and y move where more than one frame and one channel make the two orders differ; w never.
bool DepthBatchAdapter::Moves(const Problem& p, BufferRole role) const {
  if (role == BufferRole::kW || gpu::IsChannelsLast(LayoutOf(p, role))) return false;
  const TensorDesc d = DescOf(p, role);
  return d.dims[1] > 1 && d.dims[2] > 1;
}

std::vector<std::string> DepthBatchAdapter::MoveEntries() const {
  return {"tuna_transpose_runs", "tuna_transpose_runs_packed", "tuna_fill_zero"};
}

// In: per image, the C x D runs of H*W elements to D x C; out: the reverse. Moved in 32-bit words
// where a run is whole words.
Launch DepthBatchAdapter::MoveLaunch(int kernel, const Problem& p, BufferRole role, bool in, Place from,
                                     Place to) const {
  const TensorDesc d = DescOf(p, role);
  const int64_t channels = d.dims[1], frames = d.dims[2], run = d.dims[3] * d.dims[4];
  const int64_t run_bytes = run * static_cast<int64_t>(DataTypeSize(p.data_type));
  const bool packed = run_bytes % 4 == 0;
  const int64_t rows = in ? channels : frames, cols = in ? frames : channels;
  Launch l;
  l.kernel = kernel;
  l.entry = packed ? "tuna_transpose_runs_packed" : "tuna_transpose_runs";
  l.grid = {static_cast<uint32_t>(rows * cols), static_cast<uint32_t>(std::min(d.dims[0], gpu::kMaxGridYZ)), 1};
  l.block = {kRunThreads, 1, 1};
  l.args = {KernelArg::Buffer(from.first, from.second), KernelArg::Buffer(to.first, to.second), KernelArg::I64(d.dims[0]),
            KernelArg::I32(rows), KernelArg::I32(cols), KernelArg::I64(packed ? run_bytes / 4 : run)};
  return l;
}

}  // namespace tuna::solver

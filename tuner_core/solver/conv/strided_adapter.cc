#include "tuner_core/solver/conv/strided_adapter.h"

#include <algorithm>

#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver {
namespace {

constexpr uint32_t kLatticeWarps = 8;  // kernels/conv/layout_transpose_impl.h: kLtLatticeWarps
constexpr int64_t kMaxLatticeBlocks = 8192;

bool OneTap(const Problem& p) { return p.fil[0] == 1 && p.fil[1] == 1 && p.fil[2] == 1; }
bool Unpadded(const Problem& p) { return p.pad[0] == 0 && p.pad[1] == 0 && p.pad[2] == 0; }
bool Strided(const Problem& p) { return p.stride[0] > 1 || p.stride[1] > 1 || p.stride[2] > 1; }

}  // namespace

absl::Status StridedAdapter::Admits(const Target& target, const Problem& p) const {
  if (!OneTap(p) || !Unpadded(p)) return NotApplicable(Name(), "1x1 (1x1x1) layers without padding only");
  if (!Strided(p)) return NotApplicable(Name(), "stride 1: nothing to take out");
  if (p.mode != ConvMode::kConv || p.pad_mode != PadMode::kDefault) {
    return NotApplicable(Name(), "convolution mode with explicit padding only");
  }
  if (p.data_type == DataType::kInt8) return NotApplicable(Name(), "FP32, FP16 and BF16 only");
  if (p.XDesc().ElementCount() > gpu::kMaxIndex) return NotApplicable(Name(), "x past the layout kernel's 32-bit rows");
  if (inner().IsApplicable(target, p).ok()) {
    return NotApplicable(Name(), std::string(inner().Name()) + " runs these strides itself");
  }
  return absl::OkStatus();
}

Problem StridedAdapter::Planned(const Problem& p) const {
  Problem q = p;
  q.in = p.Out();
  q.stride = {1, 1, 1};
  q.dilation = {1, 1, 1};
  return q;
}

bool StridedAdapter::Moves(const Problem&, BufferRole role) const { return role == BufferRole::kX; }

std::vector<std::string> StridedAdapter::MoveEntries() const {
  return {"tuna_lattice_rows", "tuna_lattice_rows_packed", "tuna_fill_zero"};
}

// x as [outer][D][H][W][inner]: channels-first outer = N*C, inner = 1; channels-last outer = N,
// inner = C (in 32-bit words where C is whole words). In: the lattice gathered into the region;
// out (backward data): the region scattered into dx, zeros off the lattice.
Launch StridedAdapter::MoveLaunch(int kernel, const Problem& p, BufferRole, bool in, Place from, Place to) const {
  const bool last = gpu::IsChannelsLast(p.in_layout);
  const int64_t c_bytes = p.c * static_cast<int64_t>(DataTypeSize(p.data_type));
  const bool packed = last && c_bytes % 4 == 0;
  const int64_t outer = last ? p.n : p.n * p.c;
  const int64_t inner = !last ? 1 : packed ? c_bytes / 4 : p.c;
  const Dhw full = p.in, lat = p.Out();
  const int64_t rows = outer * (in ? lat[0] * lat[1] : full[0] * full[1]);
  Launch l;
  l.kernel = kernel;
  l.entry = packed ? "tuna_lattice_rows_packed" : "tuna_lattice_rows";
  l.grid = {static_cast<uint32_t>(std::clamp<int64_t>(gpu::CeilDiv(rows, kLatticeWarps), 1, kMaxLatticeBlocks)), 1, 1};
  l.block = {32 * kLatticeWarps, 1, 1};
  l.args = {KernelArg::Buffer(from.first, from.second), KernelArg::Buffer(to.first, to.second), KernelArg::I32(rows)};
  for (const Dhw& dims : {full, lat, p.stride}) {
    for (int64_t v : dims) l.args.push_back(KernelArg::I32(v));
  }
  l.args.push_back(KernelArg::I32(inner));
  l.args.push_back(KernelArg::I32(in ? 1 : 0));
  return l;
}

}  // namespace tuna::solver

#include "tuner_core/solver/conv/channel_pad_adapter.h"

#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver {
namespace {

// Channels per 16-byte row of the data type, and `channels` rounded up to whole rows.
int64_t Unit(const Problem& p) { return 16 / static_cast<int64_t>(DataTypeSize(p.data_type)); }
int64_t Padded(const Problem& p, int64_t channels) { return gpu::CeilDiv(channels, Unit(p)) * Unit(p); }
bool PadsC(const Problem& p) { return (p.c / p.groups) % Unit(p) != 0; }
bool PadsK(const Problem& p) { return (p.k / p.groups) % Unit(p) != 0; }
// Pixels of x (or of y) over every image.
int64_t Pixels(const TensorDesc& d) { return d.dims[0] * d.dims[2] * d.dims[3] * d.dims[4]; }

// A tensor as rows of `cols` elements, padded to (or cut from) `padded` columns.
struct RowView {
  int64_t rows = 0, cols = 0, padded = 0;
};

// How tensor `role` of p pads: x by C/G per pixel and group, y by K/G; w by its C/G channels per
// (output channel, tap), or by its K/G rows (K/G * taps * C/G elements) per group.
RowView ViewOf(const Problem& p, BufferRole role) {
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  if (role == BufferRole::kX) return {Pixels(p.XDesc()) * p.groups, cg, Padded(p, cg)};
  if (role == BufferRole::kY) return {Pixels(p.YDesc()) * p.groups, kg, Padded(p, kg)};
  if (PadsC(p)) return {p.k * gpu::FilterTaps(p), cg, Padded(p, cg)};
  const int64_t row = gpu::FilterTaps(p) * cg;
  return {p.groups, kg * row, Padded(p, kg) * row};
}

}  // namespace

absl::Status ChannelPadAdapter::Admits(const Target& target, const Problem& p) const {
  if (!gpu::AllChannelsLast(p)) return NotApplicable(Name(), "channels-last x, w and y only");
  if (p.data_type == DataType::kInt8) return NotApplicable(Name(), "FP32, FP16 and BF16 only");
  if (!PadsC(p) && !PadsK(p)) return NotApplicable(Name(), "channels per group fill whole 16-byte rows already");
  if (PadsC(p) && PadsK(p)) return NotApplicable(Name(), "pads C/G or K/G, not both");
  for (BufferRole role : kConvTensors) {
    if (ViewOf(p, role).padded > gpu::kMaxIndex) return NotApplicable(Name(), "a padded row past 32-bit columns");
  }
  if (inner().IsApplicable(target, p).ok()) {
    return NotApplicable(Name(), std::string(inner().Name()) + " runs these channels as they are");
  }
  return absl::OkStatus();
}

bool ChannelPadAdapter::IsGeneric(const Target& target, const Problem& p) const {
  const int64_t channels = PadsC(p) ? p.c / p.groups : p.k / p.groups;
  const int64_t zeros = Padded(p, channels) - channels;
  return 3 * zeros > Padded(p, channels) || TensorMoveAdapter::IsGeneric(target, p);
}

Problem ChannelPadAdapter::Planned(const Problem& p) const {
  Problem q = p;
  q.c = p.groups * Padded(p, p.c / p.groups);
  q.k = p.groups * Padded(p, p.k / p.groups);
  return q;
}

// x moves where C/G grows, y where K/G grows, w where either does.
bool ChannelPadAdapter::Moves(const Problem& p, BufferRole role) const {
  if (role == BufferRole::kX) return PadsC(p);
  if (role == BufferRole::kY) return PadsK(p);
  return PadsC(p) || PadsK(p);
}

std::vector<std::string> ChannelPadAdapter::MoveEntries() const { return {"tuna_pad_rows", "tuna_fill_zero"}; }

Launch ChannelPadAdapter::MoveLaunch(int kernel, const Problem& p, BufferRole role, bool in, Place from,
                                     Place to) const {
  const RowView v = ViewOf(p, role);
  Launch l = GridStrideLaunch(kernel, "tuna_pad_rows", v.rows * v.padded);
  l.args = {KernelArg::Buffer(from.first, from.second), KernelArg::Buffer(to.first, to.second), KernelArg::I64(v.rows),
            KernelArg::I32(in ? v.cols : v.padded), KernelArg::I32(in ? v.padded : v.cols)};
  return l;
}

}  // namespace tuna::solver

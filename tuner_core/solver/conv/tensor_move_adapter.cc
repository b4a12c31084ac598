#include "tuner_core/solver/conv/tensor_move_adapter.h"

#include <algorithm>
#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver {
namespace {

// The grid-stride entries' geometry (kernels/conv/layout_transpose_impl.h: kLtFillThreads).
constexpr uint32_t kFillThreads = 256;
constexpr int64_t kMaxFillBlocks = 4096;
constexpr uint64_t kRegionAlign = 256;

uint64_t AlignUp(uint64_t v) { return (v + kRegionAlign - 1) / kRegionAlign * kRegionAlign; }

KernelBuild LayoutBuild(const Target& target, const Problem& p, std::vector<std::string> entries) {
  KernelBuild b;
  b.source = target.backend == backend::BackendKind::kCpu ? "cpu_conv/layout_transpose.cc" : "conv/layout_transpose.cu";
  b.entries = std::move(entries);
  b.options = {absl::StrCat("-DTUNA_ELEM_BYTES=", DataTypeSize(p.data_type))};
  return b;
}

Launch FillZeroLaunch(int kernel, int64_t offset, uint64_t bytes) {
  const int64_t words = static_cast<int64_t>((bytes + 3) / 4);  // the region is padded to kRegionAlign
  Launch l = GridStrideLaunch(kernel, "tuna_fill_zero", words);
  l.args = {KernelArg::Buffer(BufferRole::kWorkspace, offset), KernelArg::I64(words)};
  return l;
}

// Where the adapter keeps each buffer the inner solution names: x, w and y in place unless they
// move, else a workspace region; the inner workspace is the last region.
struct Regions {
  std::array<int64_t, 3> tensor{-1, -1, -1};  // byte offsets in the workspace, -1: in place
  int64_t inner_workspace = 0;
  uint64_t total = 0;

  // `planned`: the tensors as the inner solver takes them (a region holds that form).
  template <typename MovesFn>
  Regions(const Problem& planned, uint64_t inner_workspace_bytes, MovesFn moves) {
    for (size_t i = 0; i < kConvTensors.size(); ++i) {
      if (!moves(kConvTensors[i])) continue;
      tensor[i] = static_cast<int64_t>(total);
      total += AlignUp(TensorBytes(planned, kConvTensors[i]));
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

Launch GridStrideLaunch(int kernel, std::string entry, int64_t items) {
  Launch l;
  l.kernel = kernel;
  l.entry = std::move(entry);
  l.grid = {static_cast<uint32_t>(std::clamp<int64_t>(gpu::CeilDiv(items, kFillThreads), 1, kMaxFillBlocks)), 1, 1};
  l.block = {kFillThreads, 1, 1};
  return l;
}

Layout LayoutOf(const Problem& p, BufferRole role) {
  return role == BufferRole::kX ? p.in_layout : role == BufferRole::kW ? p.fil_layout : p.out_layout;
}

TensorDesc DescOf(const Problem& p, BufferRole role) {
  return role == BufferRole::kX ? p.XDesc() : role == BufferRole::kW ? p.WDesc() : p.YDesc();
}

uint64_t TensorBytes(const Problem& p, BufferRole role) {
  return static_cast<uint64_t>(DescOf(p, role).ElementCount()) * DataTypeSize(p.data_type);
}

absl::Status TensorMoveAdapter::IsApplicable(const Target& target, const Problem& p) const {
  if (absl::Status st = Admits(target, p); !st.ok()) return st;
  if (absl::Status st = inner().IsApplicable(target, Planned(p)); !st.ok()) {
    return NotApplicable(Name(), absl::StrCat("on the ", std::string(PlannedWhat()), " problem: ", st.message()));
  }
  return absl::OkStatus();
}

SearchSpace TensorMoveAdapter::Space(const Target& target, const Problem& p) const {
  return inner().Space(target, Planned(p));
}

PerfConfig TensorMoveAdapter::DefaultConfig(const Target& target, const Problem& p) const {
  return inner().DefaultConfig(target, Planned(p));
}

absl::Status TensorMoveAdapter::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  return inner().IsValid(target, Planned(p), config);
}

std::optional<PerfConfig> TensorMoveAdapter::Specialize(const Target& target, const Problem& p,
                                                        const PerfConfig& config) const {
  return inner().Specialize(target, Planned(p), config);
}

absl::StatusOr<Solution> TensorMoveAdapter::GetSolution(const Target& target, const Problem& p,
                                                        const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  const Problem planned = Planned(p);
  absl::StatusOr<Solution> sol = inner().GetSolution(target, planned, config);
  if (!sol.ok()) return sol.status();
  const Regions regions(planned, sol->workspace_bytes, [&](BufferRole role) { return Moves(p, role); });
  Solution out;
  out.kernels = sol->kernels;
  const int layout = static_cast<int>(out.kernels.size());
  out.kernels.push_back(LayoutBuild(target, p, MoveEntries()));
  out.workspace_bytes = regions.total;
  for (BufferRole role : sol->zero_first) {
    const auto [buffer, offset] = regions.Where(role);
    if (buffer != BufferRole::kWorkspace) {
      out.zero_first.push_back(role);
      continue;
    }
    const uint64_t bytes = role == BufferRole::kWorkspace ? sol->workspace_bytes : TensorBytes(planned, role);
    if (bytes > 0) out.launches.push_back(FillZeroLaunch(layout, offset, bytes));
  }
  const BufferRole written = WrittenRole(p.direction);
  for (BufferRole role : kConvTensors) {  // the inputs, into the inner solver's layout
    if (role == written || !regions.Moved(role)) continue;
    out.launches.push_back(MoveLaunch(layout, p, role, /*in=*/true, {role, 0}, regions.Where(role)));
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
  if (regions.Moved(written)) {  // the output, back into the problem's layout
    out.launches.push_back(MoveLaunch(layout, p, written, /*in=*/false, regions.Where(written), {written, 0}));
  }
  return out;
}

}  // namespace tuna::solver

// A solver run on problems whose tensors its inner solver takes only once they are moved
// (permuted or padded) into workspace regions: the machinery of ChannelsLastAdapter (NCHW <->
// NHWC), DepthBatchAdapter (NCDHW <-> N*D NCHW images) and ChannelPadAdapter (channels padded to
// whole 16-byte rows).
//
// A subclass says which problems it admits, the problem the inner solver plans (Planned), which
// of x, w and y move, and the layout-kernel launch that moves one (kernels/conv/layout_transpose.cu,
// body shared with a cpu twin). Planning is the inner solver's on Planned(problem): the same
// space, default, validity and finishing step, so the params it stores are the inner solver's. The
// solution is the inner one with every moved tensor in a workspace region (sized as the tensor of
// Planned(problem)): inputs moved there
// first, the inner launches reading and writing the regions (every buffer and tensor-map argument
// remapped), the output moved back last. The inner's own workspace is a further region; inner
// buffers zeroed first that now live in the workspace are zeroed by a fill launch of that region
// (the rest stay in Solution::zero_first). Regions are 256-byte aligned, as the allocators align
// whole buffers. Stateless; thread-safe like every solver.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuner_core/solver/conv/wrapping_solver.h"

// The overrides every subclass declares (PlannedWhat aside, often inline).
#define TUNA_TENSOR_MOVE_VERBS                                                                 \
  absl::Status Admits(const Target& target, const Problem& problem) const override;            \
  Problem Planned(const Problem& problem) const override;                                      \
  bool Moves(const Problem& problem, BufferRole role) const override;                          \
  std::vector<std::string> MoveEntries() const override;                                       \
  Launch MoveLaunch(int kernel, const Problem& problem, BufferRole role, bool in, Place from, \
                    Place to) const override;

namespace tuna::solver {

class TensorMoveAdapter : public WrappingSolver {
 public:
  // `name`: the adapter's own (perf-db) name; `inner` must be non-null. Subclasses inherit it
  // (`using TensorMoveAdapter::TensorMoveAdapter`) unless they keep more state.
  TensorMoveAdapter(std::string name, std::unique_ptr<Solver> inner)
      : WrappingSolver(std::move(inner)), name_(std::move(name)) {}

  std::string_view Name() const override { return name_; }

  // Admits(problem), then the inner solver on Planned(problem) (its refusal quoted).
  TUNA_TUNABLE_SOLVER_VERBS
  std::optional<PerfConfig> Specialize(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 protected:
  // A buffer of the solution and a byte offset into it.
  using Place = std::pair<BufferRole, int64_t>;

  // OK where the adapter's moves apply to `problem` (NotApplicable naming the adapter otherwise).
  virtual absl::Status Admits(const Target& target, const Problem& problem) const = 0;
  // The problem the inner solver plans and runs, and how refusals of it are introduced.
  virtual Problem Planned(const Problem& problem) const = 0;
  virtual std::string_view PlannedWhat() const = 0;  // e.g. "channels-last"
  // True where tensor `role` (x, w or y) must move before (or, written, after) the inner launches.
  virtual bool Moves(const Problem& problem, BufferRole role) const = 0;
  // The layout kernel's entries the moves use (the build is layout_transpose's for the target).
  virtual std::vector<std::string> MoveEntries() const = 0;
  // The launch (kernel index `kernel`) moving tensor `role` from `from` to `to`: into the inner
  // solver's layout (`in`) or back into the problem's.
  virtual Launch MoveLaunch(int kernel, const Problem& problem, BufferRole role, bool in, Place from,
                            Place to) const = 0;

 private:
  std::string name_;
};

// Helpers for subclasses: the convolution's tensors; a tensor's layout, descriptor and bytes; a
// launch of one of the layout kernel's grid-stride entries (tuna_fill_zero, tuna_pad_rows) over
// `items` elements (kLtFillThreads a block, at most 4096 blocks), its arguments left to the caller.
inline constexpr std::array<BufferRole, 3> kConvTensors = {BufferRole::kX, BufferRole::kW, BufferRole::kY};
Launch GridStrideLaunch(int kernel, std::string entry, int64_t items);
Layout LayoutOf(const Problem& p, BufferRole role);
TensorDesc DescOf(const Problem& p, BufferRole role);
uint64_t TensorBytes(const Problem& p, BufferRole role);

}  // namespace tuna::solver

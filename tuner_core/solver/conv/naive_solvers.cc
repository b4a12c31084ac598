#include "tuner_core/solver/conv/naive_solvers.h"

#include <algorithm>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tuner_core/problem/validate.h"
#include "tuner_core/solver/conv/naive_args.h"

namespace tuna::solver {
namespace {

constexpr uint32_t kGpuBlock = 256;
// Grid-stride loop past this: keeps grid.x * block.x below 2^32 (HIP's limit) for any tensor.
constexpr int64_t kMaxGpuBlocks = int64_t{1} << 22;
// CPU: enough blocks for the pool to balance uneven rows (padding, dilation) on many cores.
constexpr int64_t kCpuBlocksPerThread = 16;
constexpr int64_t kMinCpuBlocks = 64;

const char* EntryName(Direction d) {
  switch (d) {
    case Direction::kForward: return "naive_conv_fwd";
    case Direction::kBackwardData: return "naive_conv_bwd";
    case Direction::kBackwardWeights: return "naive_conv_wrw";
  }
  return "naive_conv_fwd";
}

// The GPU kernel's entry for direction `d` and inputs of type `t` (kernels/conv/naive_conv.cu).
std::string GpuEntryName(Direction d, DataType t) {
  return absl::StrCat(EntryName(d), "_", absl::AsciiStrToLower(std::string(DataTypeName(t))));
}

// One GPU build per (direction, arch) serves every problem and type: every type's entry of the
// direction, the direction as the only option.
std::vector<std::string> GpuEntries(Direction d) {
  std::vector<std::string> all;
  for (DataType t : {DataType::kFp32, DataType::kFp16, DataType::kBf16, DataType::kInt8}) {
    if (t != DataType::kInt8 || d == Direction::kForward) all.push_back(GpuEntryName(d, t));
  }
  return all;
}

}  // namespace

std::string_view NaiveConvSolver::Name() const {
  switch (direction_) {
    case Direction::kForward: return "ConvDirectNaiveConvFwd";
    case Direction::kBackwardData: return "ConvDirectNaiveConvBwd";
    case Direction::kBackwardWeights: return "ConvDirectNaiveConvWrw";
  }
  return "ConvDirectNaiveConvFwd";
}

absl::Status NaiveConvSolver::IsApplicable(const Target& target, const Problem& problem) const {
  (void)target;  // every backend has a naive kernel
  if (problem.direction != direction_) {
    return NotApplicable(Name(), absl::StrCat("handles direction ", std::string(DirectionName(direction_)),
                                              " only, not ", std::string(DirectionName(problem.direction))));
  }
  if (problem.mode == ConvMode::kTrans) {
    // Solvers see convolutions only: import and the runtime convert a transposed problem
    // (problem/transpose.h); a config stored in trans mode predates that.
    return NotApplicable(Name(), "a transposed problem runs as its convolution: re-import its driver line");
  }
  if (problem.data_type == DataType::kInt8 && direction_ != Direction::kForward) {
    return NotApplicable(Name(), "INT8 is supported for the forward direction only");
  }
  if (absl::Status valid = ValidateProblem(problem); !valid.ok()) {
    return NotApplicable(Name(), absl::StrCat("invalid problem: ", valid.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Solution> NaiveConvSolver::GetSolution(const Target& target, const Problem& problem,
                                                      const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, problem); !st.ok()) return st;
  if (!config.values.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(Name()), " is not tunable; params '",
                                                    config.ToString(), "' must be empty"));
  }
  const int64_t total = WrittenElementCount(problem, direction_);
  KernelBuild build;
  Launch launch;
  launch.kernel = 0;
  if (target.IsGpu()) {
    build.source = "conv/naive_conv.cu";
    build.entries = GpuEntries(direction_);
    build.options = {absl::StrCat("-DTUNA_NAIVE_DIR=", direction_ == Direction::kForward ? 0 : direction_ == Direction::kBackwardData ? 1 : 2)};
    launch.entry = GpuEntryName(direction_, problem.data_type);
    const int64_t blocks = std::clamp<int64_t>((total + kGpuBlock - 1) / kGpuBlock, 1, kMaxGpuBlocks);
    launch.grid = {static_cast<uint32_t>(blocks), 1, 1};
    launch.block = {kGpuBlock, 1, 1};
  } else {
    build.source = "cpu_conv/naive_conv.cc";
    build.entries = {EntryName(direction_)};
    build.options = {DataTypeDefine(problem.data_type)};
    launch.entry = EntryName(direction_);
    const int64_t want = std::max<int64_t>(kMinCpuBlocks, kCpuBlocksPerThread * std::max(1, target.num_cu));
    launch.grid = {static_cast<uint32_t>(std::clamp<int64_t>(total, 1, want)), 1, 1};
    launch.block = {1, 1, 1};
  }
  launch.args = ConvBufferArgs();
  for (KernelArg& a : ConvGeometryArgs(problem)) launch.args.push_back(a);

  Solution solution;
  solution.kernels.push_back(std::move(build));
  solution.launches.push_back(std::move(launch));
  return solution;
}

SolverList NaiveSolvers() {
  SolverList list;
  list.emplace_back(85, std::make_unique<NaiveConvSolver>(Direction::kForward));
  list.emplace_back(86, std::make_unique<NaiveConvSolver>(Direction::kBackwardData));
  list.emplace_back(87, std::make_unique<NaiveConvSolver>(Direction::kBackwardWeights));
  return list;
}

}  // namespace tuna::solver

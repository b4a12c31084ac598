#include "tuner_core/solver/conv/gpu_common.h"

#include <bit>
#include <utility>

#include "tuner_core/solver/solver.h"

namespace tuna::solver::gpu {

absl::Status CheckCommon(std::string_view solver, const Target& target, const Problem& problem,
                         Direction direction) {
  if (!target.IsGpu()) return NotApplicable(solver, "GPU targets only");
  return CheckConvShape(solver, problem, direction);
}

absl::Status CheckConvShape(std::string_view solver, const Problem& problem, Direction direction) {
  if (problem.direction != direction) {
    return NotApplicable(solver, std::string("direction ") + std::string(DirectionName(problem.direction)) +
                                     " not handled");
  }
  if (problem.mode != ConvMode::kConv) return NotApplicable(solver, "transposed convolution not supported");
  if (problem.data_type != DataType::kFp32 && problem.data_type != DataType::kFp16 &&
      problem.data_type != DataType::kBf16) {
    return NotApplicable(solver, "FP32, FP16 and BF16 only");
  }
  if (problem.spatial_dims != 2 && problem.spatial_dims != 3) {
    return NotApplicable(solver, "2 or 3 spatial dims only");
  }
  if (problem.groups < 1 || problem.c % problem.groups != 0 || problem.k % problem.groups != 0) {
    return NotApplicable(solver, "C and K must be divisible by groups");
  }
  if (problem.ReadsPastPaddedInput()) {
    return NotApplicable(solver, "output window past the padded input (MIOpen's clamp or pad mode same)");
  }
  const Dhw out = problem.Out();
  for (int i = 0; i < 3; ++i) {
    if (out[i] < 1) return NotApplicable(solver, "empty output");
    if (problem.stride[i] < 1 || problem.dilation[i] < 1) return NotApplicable(solver, "bad stride/dilation");
  }
  return absl::OkStatus();
}

std::string DTypeOption(DataType type) {
  switch (type) {
    case DataType::kFp16: return "-DTUNA_DTYPE=1";
    case DataType::kBf16: return "-DTUNA_DTYPE=2";
    default: return "-DTUNA_DTYPE=0";
  }
}

KernelBuild TunedBuild(std::string source, std::vector<std::string> entries, const SearchSpace& space,
                       const PerfConfig& config, DataType type) {
  KernelBuild build;
  build.source = std::move(source);
  build.entries = std::move(entries);
  build.options = space.Defines(config);
  build.options.push_back(DTypeOption(type));
  return build;
}

void AppendStrides(std::vector<KernelArg>& args, const TensorDesc& desc) {
  for (int64_t s : desc.strides) args.push_back(KernelArg::I64(s));
}

void Append2dStrides(std::vector<KernelArg>& args, const TensorDesc& desc) {
  for (int d : {0, 1, 3, 4}) args.push_back(KernelArg::I64(desc.strides[d]));
}

FastDiv MakeFastDiv(int64_t d) {
  FastDiv f;
  if (d <= 1) return f;
  const int log2_up = std::bit_width(static_cast<uint64_t>(d - 1));  // ceil(log2(d))
  const int p = 31 + log2_up;  // mul = ceil(2^p / d) < 2^32 for 1 < d < 2^31
  f.mul = static_cast<uint32_t>(((uint64_t{1} << p) + static_cast<uint64_t>(d) - 1) / static_cast<uint64_t>(d));
  f.shr = static_cast<uint32_t>(p - 32);
  return f;
}

}  // namespace tuna::solver::gpu

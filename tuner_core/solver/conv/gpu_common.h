// Helpers shared by tuna's tunable GPU solvers (gpu_*.cc): the applicability checks every GPU
// kernel of kernels/conv/tuna_*.cu shares, and the pieces of a Solution they all build the
// same way (element-type option, stride arguments). Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/perf_config.h"
#include "tuner_core/solver/solution.h"
#include "tuner_core/solver/target.h"

namespace tuna::solver::gpu {

// OK when `target` is a GPU and the problem is a convolution (not transposed) of `direction`
// in FP32/FP16/BF16 with 2 or 3 spatial dims; else NotApplicable naming `solver` and the reason.
absl::Status CheckCommon(std::string_view solver, const Target& target, const Problem& problem,
                         Direction direction);
// CheckCommon without the target check: for the kernels that also run on the cpu backend
// (TunaSmallCFwd's twin).
absl::Status CheckConvShape(std::string_view solver, const Problem& problem, Direction direction);

// "-DTUNA_DTYPE=0|1|2" for FP32/FP16/BF16.
std::string DTypeOption(DataType type);

// The build a tunable GPU solver starts from: `source` exporting `entries`, compiled with the
// config's axes as -D options (SearchSpace::Defines) and then DTypeOption(type). Callers append
// their own options.
KernelBuild TunedBuild(std::string source, std::vector<std::string> entries, const SearchSpace& space,
                       const PerfConfig& config, DataType type);

// Appends the five element strides of `desc` as I64 arguments.
void AppendStrides(std::vector<KernelArg>& args, const TensorDesc& desc);
// Appends the element strides of a 2D problem's tensor (dims 0, 1, 3, 4: n/k, c, h/r, w/s; the
// depth dim skipped) as I64 arguments.
void Append2dStrides(std::vector<KernelArg>& args, const TensorDesc& desc);

using ::tuna::IsChannelsLast;  // problem.h
// x, w and y all NHWC / NDHWC.
inline bool AllChannelsLast(const Problem& p) {
  return IsChannelsLast(p.in_layout) && IsChannelsLast(p.fil_layout) && IsChannelsLast(p.out_layout);
}
// The filter's taps per output and input channel: T*R*S (2-D: T = 1).
inline int64_t FilterTaps(const Problem& p) { return p.fil[0] * p.fil[1] * p.fil[2]; }
inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
// N*Do*Ho*Wo (2-D: N*Ho*Wo): the pixel rows of the implicit GEMMs (their M, or the reduction of
// backward weights).
inline int64_t OutputPixels(const Problem& p) {
  const Dhw o = p.Out();
  return p.n * o[0] * o[1] * o[2];  // 2-D: o[0] = 1
}

// Division by a run-time divisor d as a kernel does it without a divide: for 0 <= n < 2^31,
// n / d == umulhi(n, mul) >> shr (mul 0 stands for d == 1: the quotient is n). Computed on the
// host so a kernel's per-tile index decode costs a multiply instead of a ~20-instruction
// division (issue #17: run-time sizes at the price of constants). d >= 1, d < 2^31.
struct FastDiv {
  uint32_t mul = 0, shr = 0;
};
FastDiv MakeFastDiv(int64_t d);
// The quotient as a kernel computes it (for tests).
inline int64_t ApplyFastDiv(const FastDiv& f, int64_t n) {
  return f.mul == 0 ? n : static_cast<int64_t>(((static_cast<uint64_t>(n) * f.mul) >> 32) >> f.shr);
}

// Largest grid.y / grid.z extent accepted by both CUDA and HIP.
inline constexpr int64_t kMaxGridYZ = 65535;
// GEMM indices and image coordinates are 32-bit inside the kernels.
inline constexpr int64_t kMaxIndex = (int64_t{1} << 31) - 1;

}  // namespace tuna::solver::gpu

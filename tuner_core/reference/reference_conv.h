// CPU reference convolution: the ground truth every solver result is verified against.
//
// Covers conv mode (ConvMode::kTrans returns Unimplemented) for 2D and 3D problems, every
// direction, any group count, stride, padding and dilation, and every layout (x, w and y may
// each use a different one). Tensors are addressed through Problem::XDesc()/WDesc()/YDesc(),
// i.e. in the layouts the problem names.
//
// Definition (forward terms, g = group of the channel, Cg = C/G, Kg = K/G):
//   y[n,k,o] = sum_{cg<Cg, f} x[n, g*Cg+cg, o*stride + f*dilation - pad] * w[k, cg, f]
// with out-of-range x positions reading as zero. Backward data is the adjoint in x, backward
// weights the adjoint in w (dy has y's shape, dx x's, dw w's).
//
// Numerics: FP32/FP16/BF16 inputs are read in their storage type, products are summed in FP32
// (or FP64 with Accumulation::kFp64) and each output element is rounded once to the storage
// type with round-to-nearest-even. INT8 (forward only) sums in int32 and writes int32 output.
// The order in which terms are added to each output element is fixed by the problem alone, so
// results are bit-identical for every thread count and every run. FP contraction (FMA) is
// disabled in this library so the result does not depend on -march either.
//
// Buffers: each buffer holds ElementCount(desc) * element size bytes, laid out by the desc's
// strides (dense for every Layout). Element sizes are DataTypeSize(problem.data_type), except
// the INT8 forward output, which is int32 (4 bytes). The output buffer is overwritten, never
// accumulated into, and must not overlap an input. Caller owns all buffers; nothing is kept
// after the call returns.
//
// Threads: the call blocks; it spawns up to `threads` std::threads over a partition of the
// output elements and joins them before returning. Distinct calls may run concurrently.
//
// Errors: InvalidArgument for malformed problems (non-positive sizes, C or K not divisible by
// groups, empty output, un-normalised 2D depth fields, null buffers, negative thread count),
// Unimplemented for transposed convolution and INT8 backward directions.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "tuner_core/problem/problem.h"

namespace tuna::reference {

enum class Accumulation {
  kDefault,  // FP32 for FP32/FP16/BF16, int32 for INT8
  kFp64,     // FP64 sums for FP32/FP16/BF16 (about 2x slower); ignored for INT8
};

struct ConvOptions {
  // Worker threads; 0 means std::thread::hardware_concurrency(). Never changes results.
  int threads = 0;
  Accumulation accumulation = Accumulation::kDefault;
};

// Buffers of one direction, named in forward terms; `out` is the one the direction writes:
//   kForward:         reads x, w        writes out = y
//   kBackwardData:    reads y (= dy), w writes out = dx (x's desc)
//   kBackwardWeights: reads x, y (= dy) writes out = dw (w's desc)
// The input a direction does not read may be null.
struct ConvTensors {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* y = nullptr;
  void* out = nullptr;
};

// Runs problem.direction.
absl::Status RunConv(const Problem& problem, const ConvTensors& tensors,
                     const ConvOptions& options = {});

// One direction each, whatever problem.direction says.
absl::Status ConvForward(const Problem& problem, const void* x, const void* w, void* y,
                         const ConvOptions& options = {});
absl::Status ConvBackwardData(const Problem& problem, const void* dy, const void* w, void* dx,
                              const ConvOptions& options = {});
absl::Status ConvBackwardWeights(const Problem& problem, const void* x, const void* dy,
                                 void* dw, const ConvOptions& options = {});

// FP64 tensors and FP64 sums, ignoring problem.data_type: for tests that need the exact
// adjoint identities and as an accurate reference for error analysis. Spans must hold at least
// ElementCount() of their desc (InvalidArgument otherwise). Same layouts/threads contract.
absl::Status ConvForwardF64(const Problem& problem, std::span<const double> x,
                            std::span<const double> w, std::span<double> y, int threads = 0);
absl::Status ConvBackwardDataF64(const Problem& problem, std::span<const double> dy,
                                 std::span<const double> w, std::span<double> dx,
                                 int threads = 0);
absl::Status ConvBackwardWeightsF64(const Problem& problem, std::span<const double> x,
                                    std::span<const double> dy, std::span<double> dw,
                                    int threads = 0);

// Checks what every entry point checks (see Errors above) without running anything.
absl::Status CheckProblem(const Problem& problem);

// The desc of the buffer `direction` writes (y, x or w) and the number of products summed
// into one of its elements (an upper bound where padding/stride leave fewer): Cg*FD*FH*FW
// forward, Kg*FD*FH*FW backward data, N*OD*OH*OW backward weights. Verification scales its
// tolerance with this length.
TensorDesc OutputDesc(const Problem& problem, Direction direction);
int64_t ReductionLength(const Problem& problem, Direction direction);

// Bytes per element of the buffer `direction` writes (4 for the INT8 forward output).
size_t OutputElementSize(const Problem& problem, Direction direction);

}  // namespace tuna::reference

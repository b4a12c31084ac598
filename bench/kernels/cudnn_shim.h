// A minimal cuDNN 9 binding for the kernels bench: the legacy convolution API (4d descriptors,
// Find*AlgorithmEx, the three convolution calls), dlopen'ed from libcudnn.so.9 so the bench
// builds without cuDNN headers and runs where cuDNN is absent (Unavailable). The enums and
// structs mirror cudnn_ops.h / cudnn_cnn.h of cuDNN 9 (values are part of cuDNN's stable ABI).
//
// Threads: one CudnnConv per thread. It uses the calling thread's current CUDA context (the
// primary context, as the tuna CUDA backend makes current) and the legacy default stream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"

namespace tuna::bench {

struct CudnnChoice {
  int algo = -1;
  size_t workspace_bytes = 0;
  float find_ms = 0;  // cuDNN's own time for the algorithm during Find
  int math_type = 0;  // the math type Find measured it with (set on the descriptor for Run)
};

class CudnnLib;

// One convolution problem bound to cuDNN descriptors. FP32 uses CUDNN_FMA_MATH (TF32 off),
// FP16/BF16 CUDNN_TENSOR_OP_MATH (tensor cores, as PyTorch sets for half; CUDNN_DEFAULT_MATH
// keeps FP16 off the tensor cores: measured 19 TFLOPS geomean instead of ~190). Supports 2D, groups >= 1, NCHW or NHWC.
class CudnnConv {
 public:
  ~CudnnConv();
  // Opens the library (`path`: a file, a directory holding libcudnn.so.9, or empty for the
  // loader's search) once per process; Unavailable when it cannot be loaded.
  static absl::StatusOr<std::unique_ptr<CudnnConv>> Create(const std::string& path, const Problem& problem);

  // Picks the fastest algorithm with cudnnFind*AlgorithmEx for problem.direction, using the
  // given device buffers (x, w, y as in the problem) and a workspace of at most ws_bytes.
  absl::StatusOr<CudnnChoice> Find(uint64_t x, uint64_t w, uint64_t y, uint64_t ws, size_t ws_bytes);
  // Runs problem.direction with `choice` (asynchronously, on the default stream).
  absl::Status Run(const CudnnChoice& choice, uint64_t x, uint64_t w, uint64_t y, uint64_t ws);

  std::string version() const;

 private:
  CudnnConv() = default;
  const CudnnLib* lib_ = nullptr;
  Problem p_;
  void* handle_ = nullptr;
  void* xd_ = nullptr;
  void* yd_ = nullptr;
  void* wd_ = nullptr;
  void* cd_ = nullptr;
};

}  // namespace tuna::bench

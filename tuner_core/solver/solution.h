// What a solver returns for (target, problem, config): kernels to build and how to launch
// them, as data. No function objects: a Solution can be planned on one host (compile worker)
// and executed on another (GPU worker) by the generic Invoker (invoker.h), and printed in logs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner_core/backend/backend.h"
#include "tuner_core/problem/problem.h"

namespace tuna::solver {

// The convolution's buffers, in forward terms and in the problem's layouts. Which ones are
// read and which one is written follows from the direction: F writes y, B writes x, W writes w.
// kX, kW, kY are 0, 1, 2: the index of each tensor in arrays of the three (x, w, y).
enum class BufferRole { kX, kW, kY, kWorkspace };

// The tensor `direction` writes (WrittenRole); the others are read.
inline BufferRole WrittenRole(Direction direction) {
  return direction == Direction::kForward        ? BufferRole::kY
         : direction == Direction::kBackwardData ? BufferRole::kX
                                                 : BufferRole::kW;
}

struct KernelArg {
  // kBuffer: the address of the role's buffer, `i` bytes in (a region of the workspace).
  // kTensorMap: the 128-byte descriptor of `tensor_map` over the role's buffer, `i` bytes in,
  // encoded by the device at launch (Device::EncodeTensorMap; NVIDIA sm_90+ only).
  // kWords: a struct of int32 fields passed by value.
  enum class Kind { kBuffer, kI32, kI64, kF32, kTensorMap, kWords };
  Kind kind = Kind::kI32;
  BufferRole role = BufferRole::kX;  // for kBuffer / kTensorMap
  int64_t i = 0;                     // for kI32 / kI64; byte offset for kBuffer / kTensorMap
  float f = 0;                       // for kF32
  backend::TensorMapSpec tensor_map;  // for kTensorMap
  std::vector<int32_t> words;         // for kWords

  static KernelArg Buffer(BufferRole r, int64_t offset_bytes = 0) { return {Kind::kBuffer, r, offset_bytes, 0, {}, {}}; }
  static KernelArg I32(int64_t v) { return {Kind::kI32, BufferRole::kX, v, 0, {}, {}}; }
  static KernelArg I64(int64_t v) { return {Kind::kI64, BufferRole::kX, v, 0, {}, {}}; }
  static KernelArg F32(float v) { return {Kind::kF32, BufferRole::kX, 0, v, {}, {}}; }
  static KernelArg TensorMap(BufferRole r, backend::TensorMapSpec spec, int64_t offset_bytes = 0) {
    return {Kind::kTensorMap, r, offset_bytes, 0, spec, {}};
  }
  static KernelArg Words(std::vector<int32_t> w) { return {Kind::kWords, BufferRole::kX, 0, 0, {}, std::move(w)}; }
};

// One kernel to compile: a source of the embedded kernel tree (kernels/sources.h) and the
// -D options that specialise it.
struct KernelBuild {
  std::string source;                // "conv/naive_conv.cu", "cpu/gemm_conv.cc"
  std::vector<std::string> entries;  // kernel names the code object must export
  std::vector<std::string> options;  // "-DTB_M=64", ...
  // Uses arch-specific instructions (NVIDIA wgmma, setmaxnreg): built for "sm_90a" on an
  // "sm_90" target. Such code runs on that exact arch only.
  bool arch_specific = false;
};

// The arch string a build is compiled for on `target_arch` (see KernelBuild::arch_specific).
inline std::string BuildArch(const KernelBuild& build, const std::string& target_arch) {
  if (build.arch_specific && target_arch.rfind("sm_", 0) == 0 && target_arch.back() != 'a') {
    return target_arch + "a";
  }
  return target_arch;
}

struct Launch {
  int kernel = 0;       // index into Solution::kernels
  std::string entry;    // which entry of that kernel
  backend::Dim3 grid, block;
  size_t shared_bytes = 0;
  std::vector<KernelArg> args;
};

struct Solution {
  std::vector<KernelBuild> kernels;
  std::vector<BufferRole> zero_first;  // buffers zeroed before the launches (split-K, atomics)
  std::vector<Launch> launches;        // run in order on one stream
  uint64_t workspace_bytes = 0;
};

}  // namespace tuna::solver

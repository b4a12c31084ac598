// Runs a solver's solution through the cpu backend (compile, load, launch) and verifies the
// written tensor against the CPU reference: the shared harness of the naive and CPU GEMM
// solver tests. Identical builds (same source, entries and options) are compiled once per
// harness. Not thread-safe; one harness per test case.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tuner_core/backend/cpu/cpu_backend.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"
#include "tuner_core/solver/invoker.h"
#include "tuner_core/solver/solver.h"

namespace tuna::testing {

class CpuSolverHarness {
 public:
  CpuSolverHarness() : backend_(backend::NewCpuBackend(backend::CpuBackendOptions::FromEnv())) {
    if (!backend_->CompilerStatus().ok()) {
      status_ = backend_->CompilerStatus();
      return;
    }
    absl::StatusOr<std::unique_ptr<backend::Device>> device = backend_->OpenDevice(0);
    if (!device.ok()) {
      status_ = device.status();
      return;
    }
    device_ = *std::move(device);
    target_ = solver::TargetForDevice(backend::BackendKind::kCpu, device_->Info());
  }

  // Not OK when the host has no C++ compiler for the cpu backend.
  const absl::Status& status() const { return status_; }
  // True where status() is not OK, after SkipUnlessCi (a warning here, a failed case under CI):
  // the caller returns.
  bool Skipped() const {
    if (status_.ok()) return false;
    SkipUnlessCi("no C++ compiler for the cpu backend: " + status_.ToString());
    return true;
  }
  const solver::Target& target() const { return target_; }
  int compiles() const { return compiles_; }
  // The cpu backend and its device 0 (valid where status() is OK), for tests that launch by hand.
  backend::Backend& backend() { return *backend_; }
  backend::Device& device() { return *device_; }

  // GetSolution → compile (cached) → run on fresh random inputs → compare with the reference.
  // The written buffer starts as all-ones bytes (NaN for floats), so an element the solution
  // forgets to write fails verification.
  // With `timings_ms`, also times `time_repetitions` further runs (for benchmarks).
  absl::StatusOr<reference::VerifyReport> Run(const solver::Solver& s, const Problem& p,
                                              const solver::PerfConfig& config, uint64_t seed = 7,
                                              std::vector<double>* timings_ms = nullptr,
                                              int time_repetitions = 3) {
    if (!status_.ok()) return status_;
    absl::StatusOr<solver::Solution> sol = s.GetSolution(target_, p, config);
    if (!sol.ok()) return sol.status();
    std::string key;
    for (const solver::KernelBuild& k : sol->kernels) {
      absl::StrAppend(&key, k.source, "|", absl::StrJoin(k.entries, ","), "|",
                      absl::StrJoin(k.options, " "), ";");
    }
    auto cached = cache_.find(key);
    if (cached == cache_.end()) {
      absl::StatusOr<std::vector<backend::CodeObject>> code =
          solver::CompileSolution(*backend_, *sol, target_.arch);
      if (!code.ok()) return code.status();
      ++compiles_;
      cached = cache_.emplace(key, *std::move(code)).first;
    }
    absl::StatusOr<std::unique_ptr<solver::Invoker>> invoker =
        solver::Invoker::Create(*device_, *sol, cached->second);
    if (!invoker.ok()) return invoker.status();

    const reference::ElementType in_type = reference::StorageType(p.data_type);
    const reference::ElementType out_type = reference::OutputType(p, p.direction);
    const int64_t counts[3] = {p.XDesc().ElementCount(), p.WDesc().ElementCount(),
                               p.YDesc().ElementCount()};
    const int written = static_cast<int>(solver::WrittenRole(p.direction));
    std::vector<std::byte> host[3];
    backend::DeviceBuffer dev[3];
    for (int i = 0; i < 3; ++i) {
      const reference::ElementType t = i == written ? out_type : in_type;
      const size_t bytes = counts[i] * reference::ElementSize(t);
      if (i == written) {
        host[i].assign(bytes, std::byte{0xff});
      } else {
        host[i] = reference::RandomBuffer(t, counts[i], seed * 3 + i);
      }
      absl::StatusOr<backend::DeviceBuffer> b = device_->Alloc(bytes);
      if (!b.ok()) return b.status();
      dev[i] = *std::move(b);
      if (absl::Status st = device_->CopyToDevice(dev[i], host[i].data(), bytes); !st.ok()) return st;
    }
    backend::DeviceBuffer workspace;
    if (sol->workspace_bytes > 0) {
      absl::StatusOr<backend::DeviceBuffer> b = device_->Alloc(sol->workspace_bytes);
      if (!b.ok()) return b.status();
      workspace = *std::move(b);
      if (absl::Status st = device_->Memset(workspace, 0xff, sol->workspace_bytes); !st.ok()) return st;
    }
    solver::ConvBuffers buffers{&dev[0], &dev[1], &dev[2], workspace.valid() ? &workspace : nullptr};
    if (absl::Status st = (*invoker)->Run(buffers); !st.ok()) return st;
    if (timings_ms != nullptr) {
      absl::StatusOr<std::vector<double>> ms =
          device_->TimeLaunches([&] { return (*invoker)->Run(buffers); }, time_repetitions);
      if (!ms.ok()) return ms.status();
      *timings_ms = *std::move(ms);
    }
    if (absl::Status st = device_->Synchronize(); !st.ok()) return st;
    std::vector<std::byte> got(host[written].size());
    if (absl::Status st = device_->CopyToHost(got.data(), dev[written], got.size()); !st.ok()) return st;

    std::vector<std::byte> expected(got.size());
    reference::ConvTensors tensors{host[0].data(), host[1].data(), host[2].data(), expected.data()};
    if (absl::Status st = reference::RunConv(p, tensors); !st.ok()) return st;
    return reference::VerifyConvOutput(p, p.direction, got.data(), expected.data());
  }

 private:
  absl::Status status_;
  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<backend::Device> device_;
  solver::Target target_;
  std::map<std::string, std::vector<backend::CodeObject>> cache_;
  int compiles_ = 0;
};

// Small problems covering the geometry the solvers must get right (each named for messages).
struct NamedProblem {
  std::string name;
  Problem problem;
};

inline Problem Make2d(int64_t n, int64_t c, int64_t k, int64_t h, int64_t w, int64_t fy, int64_t fx,
                      int64_t pad_h, int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t dil_h,
                      int64_t dil_w, int64_t groups, DataType type, Layout in, Layout fil, Layout out) {
  Problem p;
  p.spatial_dims = 2;
  p.n = n, p.c = c, p.k = k;
  p.in = {1, h, w};
  p.fil = {1, fy, fx};
  p.pad = {0, pad_h, pad_w};
  p.stride = {1, stride_h, stride_w};
  p.dilation = {1, dil_h, dil_w};
  p.groups = groups;
  p.data_type = type;
  p.in_layout = in, p.fil_layout = fil, p.out_layout = out;
  return p;
}

inline Problem Make3d(int64_t n, int64_t c, int64_t k, Dhw in, Dhw fil, Dhw pad, Dhw stride, Dhw dil,
                      int64_t groups, DataType type, Layout il, Layout fl, Layout ol) {
  Problem p;
  p.spatial_dims = 3;
  p.n = n, p.c = c, p.k = k;
  p.in = in, p.fil = fil, p.pad = pad, p.stride = stride, p.dilation = dil;
  p.groups = groups;
  p.data_type = type;
  p.in_layout = il, p.fil_layout = fl, p.out_layout = ol;
  return p;
}

// Runs `s` on `p` with `config` through the harness and checks the result against the reference.
inline void CheckMatchesReference(CpuSolverHarness& h, const solver::Solver& s, const Problem& p,
                                  const solver::PerfConfig& config) {
  absl::StatusOr<reference::VerifyReport> report = h.Run(s, p, config);
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  INFO(report->Summary());
  CHECK(report->ok);
}

// Runs a layout-kernel solution (one launch reading the kX buffer, writing the kY buffer) on the
// cpu backend: x holds `src`, y `y_bytes` bytes of 0xab first. Returns y's bytes afterwards.
inline std::vector<unsigned char> RunOnCpu(backend::Backend& be, backend::Device& device, const solver::Solution& sol,
                                           const std::vector<unsigned char>& src, size_t y_bytes) {
  absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(be, sol, "cpu-x86_64");
  REQUIRE(code.ok());
  absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = solver::Invoker::Create(device, sol, *code);
  REQUIRE(inv.ok());
  absl::StatusOr<backend::DeviceBuffer> x = device.Alloc(src.size()), y = device.Alloc(y_bytes);
  REQUIRE((x.ok() && y.ok()));
  REQUIRE(device.CopyToDevice(*x, src.data(), src.size()).ok());
  REQUIRE(device.Memset(*y, 0xab, y_bytes).ok());
  REQUIRE((*inv)->Run({&*x, nullptr, &*y, nullptr}).ok());
  REQUIRE(device.Synchronize().ok());
  std::vector<unsigned char> got(y_bytes);
  REQUIRE(device.CopyToHost(got.data(), *y, y_bytes).ok());
  return got;
}

// Checks that `got` holds, from byte `offset` on, the transposes of `src`'s `batches` row-major
// rows x cols matrices of `unit` -byte units (an element, or a run of them), and 0xab before it.
inline void CheckTransposed(const std::vector<unsigned char>& src, const std::vector<unsigned char>& got,
                            int64_t batches, int64_t rows, int64_t cols, size_t unit, size_t offset) {
  for (size_t i = 0; i < offset; ++i) REQUIRE(got[i] == 0xab);  // before the offset: untouched
  int64_t wrong = 0;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const size_t from = static_cast<size_t>((b * rows + r) * cols + c) * unit;
        const size_t to = offset + static_cast<size_t>((b * cols + c) * rows + r) * unit;
        wrong += std::memcmp(&src[from], &got[to], unit) != 0;
      }
  CHECK(wrong == 0);
}

// A dozen small forward problems (set .direction to use them for B and W): every data type,
// NCHW / NHWC / mixed layouts, groups and depthwise, stride, padding, dilation, 1x1,
// asymmetric filters, and 3D.
inline std::vector<NamedProblem> SmallProblems() {
  const Layout C = Layout::kNCHW, L = Layout::kNHWC, C3 = Layout::kNCDHW, L3 = Layout::kNDHWC;
  const DataType F32 = DataType::kFp32, F16 = DataType::kFp16, B16 = DataType::kBf16;
  return {
      {"3x3 pad 1 NCHW fp32", Make2d(2, 3, 4, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, F32, C, C, C)},
      {"3x3 stride 2 NHWC fp16", Make2d(1, 4, 6, 9, 8, 3, 3, 0, 0, 2, 2, 1, 1, 1, F16, L, L, L)},
      {"3x3 dilation 2 pad 2 NCHW bf16", Make2d(2, 5, 3, 8, 7, 3, 3, 2, 2, 1, 1, 2, 2, 1, B16, C, C, C)},
      {"groups 2 mixed NHWC/NCHW/NHWC fp32", Make2d(2, 4, 6, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 2, F32, L, C, L)},
      {"depthwise stride 2 NCHW fp16", Make2d(2, 6, 6, 6, 6, 3, 3, 1, 1, 2, 2, 1, 1, 6, F16, C, C, C)},
      {"1x1 NHWC bf16", Make2d(3, 8, 5, 4, 5, 1, 1, 0, 0, 1, 1, 1, 1, 1, B16, L, L, L)},
      {"1x3 pad (0,1) stride (1,2) mixed NCHW/NHWC/NCHW fp32",
       Make2d(2, 3, 5, 5, 9, 1, 3, 0, 1, 1, 2, 1, 1, 1, F32, C, L, C)},
      {"1x1 stride 3 > filter NHWC fp32", Make2d(2, 5, 7, 7, 8, 1, 1, 0, 0, 3, 3, 1, 1, 1, F32, L, L, L)},
      {"pad 2 > half filter, groups 3 mixed NCHW/NHWC/NHWC bf16",
       Make2d(1, 6, 3, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1, 3, B16, C, L, L)},
      {"3D 3x3x3 pad 1 NCDHW fp32",
       Make3d(1, 3, 4, {4, 5, 5}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1, F32, C3, C3, C3)},
      {"3D groups 2 stride 2 NDHWC fp16",
       Make3d(2, 4, 4, {5, 5, 4}, {2, 2, 2}, {0, 1, 0}, {2, 2, 2}, {1, 1, 1}, 2, F16, L3, L3, L3)},
      {"3D dilation 2 mixed NDHWC/NCDHW/NDHWC bf16",
       Make3d(1, 2, 3, {6, 4, 5}, {2, 3, 2}, {1, 1, 0}, {1, 2, 1}, {2, 1, 2}, 1, B16, L3, C3, L3)},
  };
}

}  // namespace tuna::testing

// The CPU backend: kernels are C++ built by the system compiler into a shared object and run
// from a thread pool (ABI in kernels/cpu/cpu_kernel.h). Host memory is the device memory.
// Used for CPU-only CI, as a reference, and for the CPU solvers.
#pragma once

#include <memory>
#include <string>

#include "tuner_core/backend/backend.h"

namespace tuna::backend {

struct CpuBackendOptions {
  std::string cxx = "c++";       // compiler (argv[0], searched in PATH)
  std::string tmp_dir = "/tmp";  // for build directories and loaded shared objects
  int threads = 0;               // launch threads; 0 = hardware concurrency
  // Fault injection for the chaos tests (tests/chaos/host_fault_test.cc): while this file
  // exists, OpenDevice fails as a broken GPU's would. Empty: never.
  std::string device_fault_file;

  // cxx from $TUNA_CXX, tmp_dir from $TMPDIR, device_fault_file from
  // $TUNA_CPU_DEVICE_FAULT_FILE when set.
  static CpuBackendOptions FromEnv();
};

// Never fails: a missing compiler shows in CompilerStatus(); the device always exists (and opens,
// unless a device_fault_file is given and exists).
std::unique_ptr<Backend> NewCpuBackend(const CpuBackendOptions& options);

// The arch of this host: "cpu-avx512", "cpu-avx2", "cpu-x86_64", "cpu-aarch64", "cpu-generic".
std::string HostCpuArch();

}  // namespace tuna::backend

#include "tuner_core/backend/cpu/cpu_backend.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "kernels/cpu/cpu_kernel.h"
#include "spdlog/spdlog.h"
#include "tuner_core/backend/kernel_headers.h"
#include "tuner_core/backend/subprocess.h"

namespace tuna::backend {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxSharedBytes = 64u << 20;
constexpr absl::Duration kCompileTimeout = absl::Minutes(5);

// Levels of the x86 targets, for "may code built for A run on B".
int X86Level(const std::string& arch) {
  if (arch == "cpu-x86_64") return 1;
  if (arch == "cpu-avx2") return 3;
  if (arch == "cpu-avx512") return 4;
  return 0;
}

absl::StatusOr<std::vector<std::string>> ArchFlags(const std::string& arch) {
  if (arch == "cpu-x86_64") return std::vector<std::string>{"-march=x86-64"};
  if (arch == "cpu-avx2") return std::vector<std::string>{"-march=x86-64-v3"};
  if (arch == "cpu-avx512") return std::vector<std::string>{"-march=x86-64-v4"};
  if (arch == "cpu-native") return std::vector<std::string>{"-march=native"};
  if (arch == "cpu-aarch64" || arch == "cpu-generic") return std::vector<std::string>{};
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown cpu target '", arch,
      "' (cpu-x86_64, cpu-avx2, cpu-avx512, cpu-native, cpu-aarch64, cpu-generic)"));
}

bool ArchRunsOn(const std::string& code_arch, const std::string& device_arch) {
  if (code_arch == device_arch || code_arch == "cpu-generic") return true;
  // Built for this machine's own flags: the caller compiled it here (not portable).
  if (code_arch == "cpu-native") return true;
  int code_level = X86Level(code_arch), device_level = X86Level(device_arch);
  return code_level > 0 && device_level > 0 && code_level <= device_level;
}

// Options reach the compiler's argv directly (no shell); still, only flags that shape code
// generation are accepted, never ones that change inputs or outputs (-o, -I, @file, plugins).
absl::Status CheckOption(const std::string& option) {
  static constexpr const char* kAllowed[] = {"-D", "-U", "-O", "-f", "-m", "-W", "-g"};
  for (const char* prefix : kAllowed) {
    if (absl::StartsWith(option, prefix) && !absl::StartsWith(option, "-fplugin")) {
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "compile option '", option, "' not allowed for the cpu backend (-D -U -O -f -m -W -g)"));
}

absl::Status WriteFile(const fs::path& path, const std::string& content) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError(absl::StrCat("cannot read ", path.string()));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A temp directory removed on destruction.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Create(const std::string& parent) {
    std::string tmpl = parent + "/tuna-cpu-build-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("mkdtemp in ", parent, ": ", strerror(errno)));
    }
    TempDir d;
    d.path_ = tmpl;
    return d;
  }
  TempDir() = default;
  TempDir(TempDir&& o) noexcept : path_(std::exchange(o.path_, {})) {}
  ~TempDir() {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Opens a shared object from bytes: written to a private temp file, dlopen'ed, unlinked (the
// mapping stays). Each load gets a new file name, so dlopen never returns a cached handle.
absl::StatusOr<void*> DlopenBytes(const std::string& bytes, const std::string& tmp_dir) {
  std::string name = tmp_dir + "/tuna-cpu-XXXXXX.so";
  int fd = mkstemps(name.data(), 3);
  if (fd < 0) return absl::InternalError(absl::StrCat("mkstemps in ", tmp_dir, ": ", strerror(errno)));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      close(fd);
      unlink(name.c_str());
      return absl::InternalError(absl::StrCat("write ", name, ": ", strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string error = handle ? "" : dlerror();
  unlink(name.c_str());
  if (handle == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("not a loadable cpu code object: ", error));
  }
  int* abi = static_cast<int*>(dlsym(handle, TUNA_CPU_ABI_SYMBOL));
  if (abi == nullptr || *abi != TUNA_CPU_ABI_VERSION) {
    dlclose(handle);
    return absl::InvalidArgumentError(absl::StrCat(
        "cpu code object without ", TUNA_CPU_ABI_SYMBOL, " == ", TUNA_CPU_ABI_VERSION,
        " (not built by the tuna cpu backend, or by another version)"));
  }
  return handle;
}

std::string CpuInfoField(const std::string& field) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, field)) {
      std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(':', 1));
      if (parts.size() == 2) return std::string(absl::StripAsciiWhitespace(parts[1]));
    }
  }
  return "";
}

DeviceInfo HostDeviceInfo() {
  DeviceInfo info;
  info.index = 0;
  info.name = CpuInfoField("model name");
  if (info.name.empty()) info.name = "host cpu";
  info.arch = HostCpuArch();
  info.compute_units = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) info.global_memory_bytes = uint64_t(pages) * uint64_t(page_size);
  std::string mhz = CpuInfoField("cpu MHz");
  if (!mhz.empty()) info.clock_mhz = static_cast<int>(std::atof(mhz.c_str()));
  info.warp_size = 1;
  info.shared_memory_per_block = kMaxSharedBytes;
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 > 0) info.l2_cache_bytes = static_cast<uint64_t>(l2);
  return info;
}

class CpuModule : public Module {
 public:
  explicit CpuModule(void* handle) : handle_(handle) {}
  ~CpuModule() override { dlclose(handle_); }

  absl::StatusOr<Kernel> GetKernel(const std::string& name) override {
    void* fn = dlsym(handle_, name.c_str());
    if (fn == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("cpu code object has no kernel '", name, "'"));
    }
    return Kernel{fn, name};
  }

 private:
  void* handle_;
};

class CpuDevice : public Device {
 public:
  CpuDevice(DeviceInfo info, std::string tmp_dir, int threads)
      : info_(std::move(info)), tmp_dir_(std::move(tmp_dir)), threads_(threads) {}

  const DeviceInfo& Info() const override { return info_; }

  absl::Status CopyToDevice(const DeviceBuffer& dst, const void* src, size_t bytes,
                            size_t dst_offset) override {
    if (absl::Status st = CheckBufferRange(dst, dst_offset, bytes); !st.ok()) return st;
    std::memcpy(reinterpret_cast<char*>(dst.address()) + dst_offset, src, bytes);
    return absl::OkStatus();
  }
  absl::Status CopyToHost(void* dst, const DeviceBuffer& src, size_t bytes,
                          size_t src_offset) override {
    if (absl::Status st = CheckBufferRange(src, src_offset, bytes); !st.ok()) return st;
    std::memcpy(dst, reinterpret_cast<const char*>(src.address()) + src_offset, bytes);
    return absl::OkStatus();
  }
  absl::Status Memset(const DeviceBuffer& dst, uint8_t value, size_t bytes) override {
    if (absl::Status st = CheckBufferRange(dst, 0, bytes); !st.ok()) return st;
    std::memset(reinterpret_cast<void*>(dst.address()), value, bytes);
    return absl::OkStatus();
  }
  absl::Status CopyOnDevice(const DeviceBuffer& dst, const DeviceBuffer& src,
                            size_t bytes) override {
    if (absl::Status st = CheckBufferRange(dst, 0, bytes); !st.ok()) return st;
    if (absl::Status st = CheckBufferRange(src, 0, bytes); !st.ok()) return st;
    std::memmove(reinterpret_cast<void*>(dst.address()),
                 reinterpret_cast<const void*>(src.address()), bytes);
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<Module>> Load(const CodeObject& code) override {
    if (code.kind != BackendKind::kCpu) {
      return absl::InvalidArgumentError(
          absl::StrCat("a ", BackendKindName(code.kind), " code object cannot load on the cpu"));
    }
    if (!ArchRunsOn(code.arch, info_.arch)) {
      return absl::InvalidArgumentError(
          absl::StrCat("code object for ", code.arch, " cannot run on this ", info_.arch, " host"));
    }
    absl::StatusOr<void*> handle = DlopenBytes(code.bytes, tmp_dir_);
    if (!handle.ok()) return handle.status();
    return std::unique_ptr<Module>(new CpuModule(*handle));
  }

  absl::Status Launch(const Kernel& kernel, Dim3 grid, Dim3 block, size_t shared_bytes,
                      KernelArgs& args) override {
    if (kernel.handle == nullptr) return absl::InvalidArgumentError("launch of a null kernel");
    const uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
    if (blocks == 0 || uint64_t(block.x) * block.y * block.z == 0) {
      return absl::InvalidArgumentError(absl::StrCat("empty launch of ", kernel.name));
    }
    if (shared_bytes > kMaxSharedBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(kernel.name, ": ", shared_bytes, " shared bytes exceed the cpu limit"));
    }
    auto fn = reinterpret_cast<TunaCpuKernelFn>(kernel.handle);
    void** pointers = args.Pointers();
    const int workers = static_cast<int>(std::min<uint64_t>(blocks, threads_));
    std::atomic<uint64_t> next{0};
    auto work = [&](uint32_t worker) {
      void* shared = nullptr;
      if (shared_bytes > 0) shared = aligned_alloc(64, (shared_bytes + 63) / 64 * 64);
      TunaCpuLaunch launch{{grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, {0, 0, 0},
                           shared, shared_bytes, worker};
      for (uint64_t b = next.fetch_add(1); b < blocks; b = next.fetch_add(1)) {
        launch.block_idx.x = static_cast<uint32_t>(b % grid.x);
        launch.block_idx.y = static_cast<uint32_t>((b / grid.x) % grid.y);
        launch.block_idx.z = static_cast<uint32_t>(b / (uint64_t(grid.x) * grid.y));
        fn(&launch, pointers);
      }
      free(shared);
    };
    // Threads per launch rather than a pool: launches of tuned kernels are long compared with
    // thread start-up (tens of microseconds), and a pool would be state shared across devices.
    std::vector<std::thread> pool;
    for (int w = 1; w < workers; ++w) pool.emplace_back(work, static_cast<uint32_t>(w));
    work(0);
    for (std::thread& t : pool) t.join();
    return absl::OkStatus();
  }

  absl::Status Synchronize() override { return absl::OkStatus(); }

 protected:
  absl::StatusOr<std::vector<double>> TimeRuns(const std::function<absl::Status()>& launch,
                                               int repetitions,
                                               const std::function<absl::Status()>& before_each) override {
    std::vector<double> ms;
    for (int i = 0; i < repetitions; ++i) {
      if (before_each) {
        if (absl::Status st = before_each(); !st.ok()) return st;
      }
      auto t0 = std::chrono::steady_clock::now();
      if (absl::Status st = launch(); !st.ok()) return st;
      auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    return ms;
  }

  absl::StatusOr<uint64_t> AllocRaw(size_t bytes) override {
    void* p = aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (p == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("cpu: cannot allocate ", bytes, " bytes"));
    }
    return reinterpret_cast<uint64_t>(p);
  }
  absl::Status FreeRaw(uint64_t address) override {
    free(reinterpret_cast<void*>(address));
    return absl::OkStatus();
  }

 private:
  DeviceInfo info_;
  std::string tmp_dir_;
  int threads_;
};

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(CpuBackendOptions options) : options_(std::move(options)) {
    if (options_.threads <= 0) {
      options_.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    }
    absl::StatusOr<ProcessResult> version = RunProcess({options_.cxx, "--version"}, absl::Seconds(30));
    if (!version.ok()) {
      compiler_status_ = absl::UnavailableError(
          absl::StrCat("C++ compiler '", options_.cxx, "' (TUNA_CXX): ", version.status().message()));
    } else if (version->exit_code != 0) {
      compiler_status_ = absl::UnavailableError(absl::StrCat(
          "C++ compiler '", options_.cxx, "' --version exited ", version->exit_code));
    } else {
      compiler_version_ = std::string(absl::StripAsciiWhitespace(
          std::vector<std::string>(absl::StrSplit(version->output, '\n')).front()));
    }
  }

  BackendKind Kind() const override { return BackendKind::kCpu; }
  std::string Name() const override { return "cpu"; }
  absl::Status CompilerStatus() const override { return compiler_status_; }
  absl::Status DriverStatus() const override { return absl::OkStatus(); }
  std::string CompilerVersion() const override { return compiler_version_; }
  std::string DriverVersion() const override { return "host"; }
  std::vector<std::string> CompileTargets() const override {
    if (!compiler_status_.ok()) return {};
#if defined(__x86_64__)
    return {"cpu-x86_64", "cpu-avx2", "cpu-avx512", "cpu-native"};
#else
    return {"cpu-generic", "cpu-native"};
#endif
  }

  absl::StatusOr<CodeObject> Compile(const CompileRequest& request) const override {
    if (!compiler_status_.ok()) return compiler_status_;
    if (request.source.empty()) return absl::InvalidArgumentError("empty kernel source");
    absl::StatusOr<std::vector<std::string>> arch_flags = ArchFlags(request.arch);
    if (!arch_flags.ok()) return arch_flags.status();
    for (const std::string& option : request.options) {
      if (absl::Status st = CheckOption(option); !st.ok()) return st;
    }
    absl::StatusOr<TempDir> dir = TempDir::Create(options_.tmp_dir);
    if (!dir.ok()) return dir.status();
    const fs::path include = dir->path() / "include";
    std::vector<SourceHeader> headers = StandardKernelHeaders(BackendKind::kCpu);
    headers.insert(headers.end(), request.headers.begin(), request.headers.end());
    for (const SourceHeader& h : headers) {
      if (h.name.empty() || h.name[0] == '/' || absl::StrContains(h.name, "..")) {
        return absl::InvalidArgumentError(absl::StrCat("bad header name '", h.name, "'"));
      }
      if (absl::Status st = WriteFile(include / h.name, h.content); !st.ok()) return st;
    }
    const fs::path source = dir->path() / "kernel.cc";
    const fs::path output = dir->path() / "kernel.so";
    if (absl::Status st = WriteFile(source, request.source); !st.ok()) return st;

    std::vector<std::string> argv = {options_.cxx, "-O3", "-fPIC", "-shared", "-std=c++17",
                                     "-fvisibility=hidden", "-DTUNA_CPU_KERNEL_SOURCE=1"};
    argv.insert(argv.end(), arch_flags->begin(), arch_flags->end());
    argv.insert(argv.end(), request.options.begin(), request.options.end());
    argv.insert(argv.end(), {"-I", include.string(), "-x", "c++", source.string(), "-o",
                             output.string()});
    absl::StatusOr<ProcessResult> run = RunProcess(argv, kCompileTimeout);
    if (!run.ok()) return run.status();
    if (run->exit_code != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cpu compile of ", request.source_name, " for ", request.arch, " failed (exit ",
          run->exit_code, "):\n", run->output));
    }
    CodeObject code;
    code.kind = BackendKind::kCpu;
    code.arch = request.arch;
    code.compiler_version = compiler_version_;
    code.entries = request.entries;
    code.log = run->output;
    absl::StatusOr<std::string> bytes = ReadFile(output);
    if (!bytes.ok()) return bytes.status();
    code.bytes = std::move(*bytes);
    // Missing entries are a compile-time error, not a surprise at load on another host.
    absl::StatusOr<void*> handle = DlopenBytes(code.bytes, options_.tmp_dir);
    if (!handle.ok()) return handle.status();
    std::string missing;
    for (const std::string& entry : request.entries) {
      if (dlsym(*handle, entry.c_str()) == nullptr) absl::StrAppend(&missing, " ", entry);
    }
    dlclose(*handle);
    if (!missing.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cpu compile of ", request.source_name, ": entries not defined (TUNA_CPU_KERNEL):",
          missing));
    }
    return code;
  }

  absl::StatusOr<std::vector<DeviceInfo>> ListDevices() const override {
    return std::vector<DeviceInfo>{HostDeviceInfo()};
  }

  absl::StatusOr<std::unique_ptr<Device>> OpenDevice(int index) const override {
    if (index != 0) {
      return absl::InvalidArgumentError(absl::StrCat("cpu device ", index, " does not exist (only 0)"));
    }
    if (!options_.device_fault_file.empty() && access(options_.device_fault_file.c_str(), F_OK) == 0) {
      return absl::UnavailableError(absl::StrCat("cpu device 0 cannot be opened: fault injected (",
                                                 options_.device_fault_file, " exists)"));
    }
    return std::unique_ptr<Device>(new CpuDevice(HostDeviceInfo(), options_.tmp_dir, options_.threads));
  }

 private:
  CpuBackendOptions options_;
  absl::Status compiler_status_;
  std::string compiler_version_;
};

}  // namespace

CpuBackendOptions CpuBackendOptions::FromEnv() {
  CpuBackendOptions o;
  if (const char* cxx = getenv("TUNA_CXX"); cxx && *cxx) o.cxx = cxx;
  if (const char* tmp = getenv("TMPDIR"); tmp && *tmp) o.tmp_dir = tmp;
  if (const char* f = getenv("TUNA_CPU_DEVICE_FAULT_FILE"); f && *f) o.device_fault_file = f;
  return o;
}

std::unique_ptr<Backend> NewCpuBackend(const CpuBackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

std::string HostCpuArch() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return "cpu-avx512";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("bmi2")) {
    return "cpu-avx2";
  }
  return "cpu-x86_64";
#elif defined(__aarch64__)
  return "cpu-aarch64";
#else
  return "cpu-generic";
#endif
}

}  // namespace tuna::backend

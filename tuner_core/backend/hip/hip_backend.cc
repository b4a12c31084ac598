#include "tuner_core/backend/hip/hip_backend.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"
#include "tuner_core/backend/dynamic_library.h"
#include "tuner_core/backend/event_timing.h"
#include "tuner_core/backend/hip/hip_api.h"
#include "tuner_core/backend/kernel_headers.h"
#include "tuner_core/backend/subprocess.h"

namespace tuna::backend {
namespace {

using hip_api::RtcApi;
using hip_api::RuntimeApi;

constexpr absl::Duration kProbeTimeout = absl::Seconds(120);
constexpr char kProbeSource[] =
    "extern \"C\" __global__ void tuna_probe(float* p) { p[threadIdx.x] += 1.0f; }\n";

std::string ErrorText(const RuntimeApi& api, hipError_t e) {
  const char* name = api.hipGetErrorName ? api.hipGetErrorName(e) : nullptr;
  const char* text = api.hipGetErrorString ? api.hipGetErrorString(e) : nullptr;
  return absl::StrCat(name ? name : "HIP error", " (", static_cast<int>(e), "): ",
                      text ? text : "unknown");
}

absl::Status HipStatusOf(const RuntimeApi& api, hipError_t e, const std::string& what) {
  if (e == hipSuccess) return absl::OkStatus();
  std::string msg = absl::StrCat(what, ": ", ErrorText(api, e));
  switch (e) {
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorLaunchTimeOut:
    case hipErrorAssert:
      return ContextLostError(msg);
    case hipErrorOutOfMemory: return absl::ResourceExhaustedError(msg);
    case hipErrorNoBinaryForGpu:
    case hipErrorInvalidImage:
    case hipErrorNotFound:
    case hipErrorInvalidValue:
    case hipErrorInvalidDeviceFunction:
      return absl::InvalidArgumentError(msg);
    case hipErrorNoDevice:
    case hipErrorNotInitialized:
    case hipErrorInvalidDevice:
    case hipErrorInsufficientDriver:
      return absl::UnavailableError(msg);
    default: return absl::InternalError(msg);
  }
}

// "gfx90a" or "gfx90a:sramecc+:xnack-": the processor must be gfx + alphanumerics.
bool IsValidHipArch(const std::string& arch) {
  std::string base = arch.substr(0, arch.find(':'));
  if (!absl::StartsWith(base, "gfx") || base.size() < 6) return false;
  for (char c : base) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// ROCm 5.2's in-process compiler (comgr + clang) keeps LLVM's command-line option registry in
// process-global state: two hiprtc compiles at once can abort the process ("Option 'h'
// registered more than once"), and a fork while one runs copies its locks held. Every hiprtc call
// and every probe fork in the process holds this lock, whichever HipBackend it comes through.
std::mutex& HiprtcProcessLock() {
  static std::mutex mu;
  return mu;
}

struct RtcResult {
  hiprtcResult result = HIPRTC_SUCCESS;
  std::string log;
  std::string code;
};

RtcResult RunHiprtc(const RtcApi& rtc, const std::string& source, const std::string& name,
                    const std::vector<SourceHeader>& headers,
                    const std::vector<std::string>& options) {
  RtcResult out;
  std::vector<const char*> texts, names, opts;
  for (const SourceHeader& h : headers) {
    texts.push_back(h.content.c_str());
    names.push_back(h.name.c_str());
  }
  for (const std::string& o : options) opts.push_back(o.c_str());
  hiprtcProgram prog = nullptr;
  out.result = rtc.hiprtcCreateProgram(&prog, source.c_str(), name.c_str(),
                                       static_cast<int>(texts.size()), texts.data(), names.data());
  if (out.result != HIPRTC_SUCCESS) return out;
  out.result = rtc.hiprtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t log_size = 0;
  if (rtc.hiprtcGetProgramLogSize(prog, &log_size) == HIPRTC_SUCCESS && log_size > 1) {
    out.log.resize(log_size);
    rtc.hiprtcGetProgramLog(prog, out.log.data());
    out.log.resize(log_size - 1);
  }
  if (out.result == HIPRTC_SUCCESS) {
    size_t size = 0;
    out.result = rtc.hiprtcGetCodeSize(prog, &size);
    if (out.result == HIPRTC_SUCCESS && size > 0) {
      out.code.resize(size);
      out.result = rtc.hiprtcGetCode(prog, out.code.data());
    }
  }
  rtc.hiprtcDestroyProgram(&prog);
  return out;
}

class HipModule : public Module {
 public:
  HipModule(const RuntimeApi* api, int device, hipModule_t module)
      : api_(api), device_(device), module_(module) {}
  ~HipModule() override {
    (void)api_->hipSetDevice(device_);
    (void)api_->hipModuleUnload(module_);
  }
  absl::StatusOr<Kernel> GetKernel(const std::string& name) override {
    (void)api_->hipSetDevice(device_);
    hipFunction_t f = nullptr;
    hipError_t e = api_->hipModuleGetFunction(&f, module_, name.c_str());
    if (e != hipSuccess) {
      return absl::InvalidArgumentError(
          absl::StrCat("hip module has no kernel '", name, "': ", ErrorText(*api_, e)));
    }
    return Kernel{f, name};
  }

 private:
  const RuntimeApi* api_;
  int device_;
  hipModule_t module_;
};

class HipDevice : public GpuDevice {
 public:
  HipDevice(const RuntimeApi* api, DeviceInfo info) : GpuDevice("hip"), api_(api), info_(std::move(info)) {}

  const DeviceInfo& Info() const override { return info_; }

  absl::Status CopyToDevice(const DeviceBuffer& dst, const void* src, size_t bytes,
                            size_t dst_offset) override {
    if (absl::Status st = Enter(dst, dst_offset, bytes); !st.ok()) return st;
    return Check(api_->hipMemcpyHtoD(Ptr(dst.address() + dst_offset), const_cast<void*>(src), bytes),
                 "hipMemcpyHtoD");
  }
  absl::Status CopyToHost(void* dst, const DeviceBuffer& src, size_t bytes,
                          size_t src_offset) override {
    if (absl::Status st = Enter(src, src_offset, bytes); !st.ok()) return st;
    return Check(api_->hipMemcpyDtoH(dst, Ptr(src.address() + src_offset), bytes), "hipMemcpyDtoH");
  }
  absl::Status Memset(const DeviceBuffer& dst, uint8_t value, size_t bytes) override {
    if (absl::Status st = Enter(dst, 0, bytes); !st.ok()) return st;
    return Check(api_->hipMemsetD8(Ptr(dst.address()), value, bytes), "hipMemsetD8");
  }

  absl::StatusOr<std::unique_ptr<Module>> Load(const CodeObject& code) override {
    if (code.kind != BackendKind::kHip) {
      return absl::InvalidArgumentError(
          absl::StrCat("a ", BackendKindName(code.kind), " code object cannot load on hip"));
    }
    if (code.arch.substr(0, code.arch.find(':')) != info_.arch) {
      return absl::InvalidArgumentError(
          absl::StrCat("code object for ", code.arch, " cannot run on ", info_.arch));
    }
    if (absl::Status st = Enter(); !st.ok()) return st;
    hipModule_t module = nullptr;
    if (absl::Status st = Check(api_->hipModuleLoadData(&module, code.bytes.data()),
                                "hipModuleLoadData");
        !st.ok()) {
      return st;
    }
    return std::unique_ptr<Module>(new HipModule(api_, info_.index, module));
  }

  absl::Status Launch(const Kernel& kernel, Dim3 grid, Dim3 block, size_t shared_bytes,
                      KernelArgs& args) override {
    if (kernel.handle == nullptr) return absl::InvalidArgumentError("launch of a null kernel");
    if (absl::Status st = Enter(); !st.ok()) return st;
    return Check(api_->hipModuleLaunchKernel(static_cast<hipFunction_t>(kernel.handle), grid.x,
                                             grid.y, grid.z, block.x, block.y, block.z,
                                             static_cast<unsigned>(shared_bytes), nullptr,
                                             args.Pointers(), nullptr),
                 "hipModuleLaunchKernel " + kernel.name);
  }

  absl::Status Synchronize() override {
    if (absl::Status st = Enter(); !st.ok()) return st;
    return Check(api_->hipDeviceSynchronize(), "hipDeviceSynchronize");
  }

  absl::Status CopyOnDevice(const DeviceBuffer& dst, const DeviceBuffer& src,
                            size_t bytes) override {
    if (absl::Status st = Enter(dst, 0, bytes); !st.ok()) return st;
    if (absl::Status st = Enter(src, 0, bytes); !st.ok()) return st;
    return Check(api_->hipMemcpyDtoDAsync(Ptr(dst.address()), Ptr(src.address()), bytes, nullptr),
                 "hipMemcpyDtoDAsync");
  }

 protected:
  absl::StatusOr<std::vector<double>> TimeRuns(const std::function<absl::Status()>& launch,
                                               int repetitions,
                                               const std::function<absl::Status()>& before_each) override {
    if (absl::Status st = Enter(); !st.ok()) return st;
    EventCalls<hipEvent_t> calls;
    calls.create = [this](hipEvent_t* e) { return Check(api_->hipEventCreate(e), "hipEventCreate"); };
    calls.record = [this](hipEvent_t e) { return Check(api_->hipEventRecord(e, nullptr), "hipEventRecord"); };
    calls.synchronize = [this](hipEvent_t e) { return Check(api_->hipEventSynchronize(e), "hipEventSynchronize"); };
    calls.elapsed_ms = [this](float* t, hipEvent_t start, hipEvent_t stop) {
      return Check(api_->hipEventElapsedTime(t, start, stop), "hipEventElapsedTime");
    };
    calls.destroy = [this](hipEvent_t e) { (void)api_->hipEventDestroy(e); };
    return TimeWithEvents(calls, launch, repetitions, before_each);
  }

  absl::StatusOr<uint64_t> AllocRaw(size_t bytes) override {
    if (absl::Status st = Enter(); !st.ok()) return st;
    void* p = nullptr;
    if (absl::Status st = Check(api_->hipMalloc(&p, bytes), absl::StrCat("hipMalloc ", bytes));
        !st.ok()) {
      return st;
    }
    return reinterpret_cast<uint64_t>(p);
  }
  absl::Status FreeRaw(uint64_t address) override {
    if (lost()) return absl::OkStatus();  // the device's memory is gone with its context
    if (absl::Status st = Enter(); !st.ok()) return st;
    return Check(api_->hipFree(Ptr(address)), "hipFree");
  }

 private:
  static void* Ptr(uint64_t address) { return reinterpret_cast<void*>(address); }

  absl::Status MakeCurrent() override { return Check(api_->hipSetDevice(info_.index), "hipSetDevice"); }
  absl::Status Check(hipError_t e, const std::string& what) { return Latch(HipStatusOf(*api_, e, what)); }

  const RuntimeApi* api_;
  DeviceInfo info_;
};

class HipBackend : public Backend {
 public:
  explicit HipBackend(const HipBackendOptions& options) {
    std::vector<std::string> sonames = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
    absl::StatusOr<DynamicLibrary> runtime = DynamicLibrary::Open(
        LibraryCandidates(options.hip_path, sonames, {"/opt/rocm/lib"}, {"/opt/rocm-*/lib"}));
    LoadRtc(options, runtime);
    LoadRuntime(runtime);
  }

  BackendKind Kind() const override { return BackendKind::kHip; }
  std::string Name() const override { return "hip"; }
  absl::Status CompilerStatus() const override { return compiler_status_; }
  absl::Status DriverStatus() const override { return driver_status_; }
  std::string CompilerVersion() const override { return compiler_version_; }
  std::string DriverVersion() const override { return driver_version_; }

  std::vector<std::string> CompileTargets() const override {
    std::vector<std::string> out;
    if (!compiler_status_.ok()) return out;
    for (const std::string& target : HipCandidateTargets()) {
      if (ProbeTarget(target).ok()) out.push_back(target);
    }
    return out;
  }

  absl::StatusOr<CodeObject> Compile(const CompileRequest& request) const override {
    if (!compiler_status_.ok()) return compiler_status_;
    if (request.source.empty()) return absl::InvalidArgumentError("empty kernel source");
    if (!IsValidHipArch(request.arch)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown hip target '", request.arch, "' (gfxNNN[:feature±...])"));
    }
    if (absl::Status st = ProbeTarget(request.arch); !st.ok()) return st;

    std::vector<SourceHeader> headers = StandardKernelHeaders(BackendKind::kHip);
    headers.insert(headers.end(), request.headers.begin(), request.headers.end());
    std::vector<std::string> options = {"--gpu-architecture=" + request.arch, "-std=c++17"};
    options.insert(options.end(), request.options.begin(), request.options.end());
    RtcResult r;
    {
      std::lock_guard lock(HiprtcProcessLock());
      r = RunHiprtc(rtc_, request.source, request.source_name, headers, options);
    }
    if (r.result == HIPRTC_ERROR_COMPILATION) {
      return absl::FailedPreconditionError(absl::StrCat(
          "hiprtc compile of ", request.source_name, " for ", request.arch, " failed:\n", r.log));
    }
    if (r.result != HIPRTC_SUCCESS || r.code.empty()) {
      return absl::InternalError(absl::StrCat("hiprtc (", request.arch, "): ",
                                              rtc_.hiprtcGetErrorString(r.result), "\n", r.log));
    }
    if (absl::Status st = CheckEntriesDefined("hiprtc", request.source_name, r.code, request.entries); !st.ok()) {
      return st;
    }
    CodeObject code;
    code.kind = BackendKind::kHip;
    code.arch = request.arch;
    code.compiler_version = hiprtc_version_;
    code.entries = request.entries;
    code.bytes = std::move(r.code);
    code.log = std::move(r.log);
    return code;
  }

  absl::StatusOr<std::vector<DeviceInfo>> ListDevices() const override {
    if (!driver_status_.ok()) return driver_status_;
    return QueryEachDevice(
        [this](int* count) { return HipStatusOf(runtime_, runtime_.hipGetDeviceCount(count), "hipGetDeviceCount"); },
        [this](int i) { return QueryDevice(i); });
  }

  absl::StatusOr<std::unique_ptr<Device>> OpenDevice(int index) const override {
    absl::StatusOr<DeviceInfo> info = QueryDevice(index);
    if (!info.ok()) return info.status();
    return std::unique_ptr<Device>(new HipDevice(&runtime_, *std::move(info)));
  }

 private:
  void LoadRtc(const HipBackendOptions& options, const absl::StatusOr<DynamicLibrary>& runtime) {
    // ROCm >= 5.3 ships libhiprtc separately; 5.2 (Debian) has hiprtc* inside libamdhip64.
    absl::StatusOr<DynamicLibrary> lib = DynamicLibrary::Open(LibraryCandidates(
        options.hiprtc_path, {"libhiprtc.so.6", "libhiprtc.so.5", "libhiprtc.so"},
        {"/opt/rocm/lib"}, {"/opt/rocm-*/lib"}));
    if (!lib.ok() || lib->Symbol("hiprtcCreateProgram") == nullptr) {
      if (runtime.ok() && runtime->Symbol("hiprtcCreateProgram") != nullptr) {
        lib = *runtime;
      } else {
        compiler_status_ = absl::UnavailableError(absl::StrCat(
            "hiprtc not found (set TUNA_HIPRTC_PATH or TUNA_HIP_PATH): ",
            lib.ok() ? "" : lib.status().message(), runtime.ok() ? "" : "; ",
            runtime.ok() ? "" : runtime.status().message()));
        return;
      }
    }
    std::vector<std::string> missing;
#define TUNA_RESOLVE(name)                                                 \
  rtc_.name = reinterpret_cast<decltype(rtc_.name)>(lib->Symbol(#name)); \
  if (rtc_.name == nullptr) missing.push_back(#name);
    TUNA_HIPRTC_FUNCTIONS(TUNA_RESOLVE)
#undef TUNA_RESOLVE
    if (!missing.empty()) {
      compiler_status_ = absl::UnavailableError(
          absl::StrCat(lib->path(), " lacks ", absl::StrJoin(missing, ", ")));
      return;
    }
    int major = 0, minor = 0;
    rtc_.hiprtcVersion(&major, &minor);
    // ROCm 5.2's hiprtcVersion answers 9.0 (its own counter); when hiprtc lives in the runtime
    // library the runtime's version names the release better.
    using RuntimeVersionFn = hipError_t (*)(int*);
    auto runtime_version = reinterpret_cast<RuntimeVersionFn>(lib->Symbol("hipRuntimeGetVersion"));
    int v = 0;
    if (runtime_version != nullptr && runtime_version(&v) == hipSuccess && v > 0) {
      major = v / 10000000;
      minor = (v / 100000) % 100;
    }
    hiprtc_version_ = absl::StrCat("hiprtc ", major, ".", minor);
    compiler_version_ = absl::StrCat(hiprtc_version_, " (", lib->path(), ")");
  }

  void LoadRuntime(const absl::StatusOr<DynamicLibrary>& lib) {
    if (!lib.ok()) {
      driver_status_ = absl::UnavailableError(
          absl::StrCat("HIP runtime not found (set TUNA_HIP_PATH): ", lib.status().message()));
      return;
    }
    std::vector<std::string> missing;
#define TUNA_RESOLVE(name)                                                          \
  runtime_.name = reinterpret_cast<decltype(runtime_.name)>(lib->Symbol(#name)); \
  if (runtime_.name == nullptr) missing.push_back(#name);
    TUNA_HIP_RUNTIME_FUNCTIONS(TUNA_RESOLVE)
    TUNA_RESOLVE(hipMalloc)
#undef TUNA_RESOLVE
    if (!missing.empty()) {
      driver_status_ = absl::UnavailableError(
          absl::StrCat(lib->path(), " lacks ", absl::StrJoin(missing, ", ")));
      return;
    }
    int version = 0;
    (void)runtime_.hipRuntimeGetVersion(&version);
    // HIP_VERSION encoding: major * 10000000 + minor * 100000 + patch.
    driver_version_ = absl::StrCat("hip runtime ", version / 10000000, ".",
                                   (version / 100000) % 100, " (", lib->path(), ")");
    driver_status_ = HipStatusOf(runtime_, runtime_.hipInit(0), "hipInit");
    if (driver_status_.ok()) {
      int count = 0;
      driver_status_ = HipStatusOf(runtime_, runtime_.hipGetDeviceCount(&count), "hipGetDeviceCount");
      if (driver_status_.ok() && count == 0) driver_status_ = absl::UnavailableError("no HIP device");
    }
  }

  absl::StatusOr<DeviceInfo> QueryDevice(int index) const {
    if (!driver_status_.ok()) return driver_status_;
    // Oversized: a newer runtime's struct may be larger than the 5.2 header's.
    union {
      hipDeviceProp_t props;
      char bytes[16384];
    } u{};
    if (absl::Status st = HipStatusOf(runtime_, runtime_.hipGetDeviceProperties(&u.props, index),
                                      absl::StrCat("hipGetDeviceProperties ", index));
        !st.ok()) {
      return st;
    }
    const hipDeviceProp_t& p = u.props;
    DeviceInfo info;
    info.index = index;
    info.name = p.name;
    std::string arch = p.gcnArchName;
    info.arch = arch.substr(0, arch.find(':'));
    if (info.arch.empty()) info.arch = absl::StrCat("gfx", p.gcnArch);
    info.compute_units = p.multiProcessorCount;
    info.global_memory_bytes = p.totalGlobalMem;
    info.clock_mhz = p.clockRate / 1000;
    info.warp_size = p.warpSize;
    info.shared_memory_per_block = p.sharedMemPerBlock;
    info.shared_memory_per_block_optin = p.maxSharedMemoryPerMultiProcessor;
    info.l2_cache_bytes = static_cast<uint64_t>(p.l2CacheSize);
    return info;
  }

  // OK when hiprtc can compile for `target`; Unimplemented ("not supported") when it cannot.
  // Probed in a forked child because hiprtc aborts on targets it does not know.
  absl::Status ProbeTarget(const std::string& target) const {
    {
      std::lock_guard lock(probe_mu_);
      if (auto it = probed_.find(target); it != probed_.end()) return it->second;
    }
    absl::Status result;
    {
      std::lock_guard fork_lock(HiprtcProcessLock());  // no thread is inside hiprtc while we fork
      std::lock_guard lock(probe_mu_);
      if (auto it = probed_.find(target); it != probed_.end()) return it->second;
      const RtcApi* rtc = &rtc_;
      absl::StatusOr<int> child = RunInChild(
          [rtc, &target] {
            RtcResult r = RunHiprtc(*rtc, kProbeSource, "tuna_probe.cu", {},
                                    {"--gpu-architecture=" + target});
            return (r.result == HIPRTC_SUCCESS && r.code.size() > 4 &&
                    r.code.compare(0, 4, "\x7f" "ELF") == 0)
                       ? 0
                       : 1;
          },
          kProbeTimeout);
      if (!child.ok()) {
        // A stuck probe says nothing about the target: report it, do not cache it.
        return absl::InternalError(absl::StrCat("probing hiprtc for ", target, ": ",
                                                child.status().message()));
      }
      if (*child != 0) {
        result = absl::UnimplementedError(absl::StrCat(
            "not supported: ", hiprtc_version_, " cannot compile for ", target,
            *child > 128 ? absl::StrCat(" (hiprtc crashed with signal ", *child - 128, ")")
                         : std::string(" (compile failed)")));
      }
      probed_[target] = result;
    }
    spdlog::debug("hiprtc target {}: {}", target, result.ok() ? "supported" : result.ToString());
    return result;
  }

  RtcApi rtc_;
  RuntimeApi runtime_;
  absl::Status compiler_status_;
  absl::Status driver_status_;
  std::string hiprtc_version_;
  std::string compiler_version_;
  std::string driver_version_;

  mutable std::mutex probe_mu_;
  mutable std::map<std::string, absl::Status> probed_;  // GUARDED_BY(probe_mu_)
};

}  // namespace

HipBackendOptions HipBackendOptions::FromEnv() {
  HipBackendOptions o;
  if (const char* p = std::getenv("TUNA_HIP_PATH"); p && *p) o.hip_path = p;
  if (const char* p = std::getenv("TUNA_HIPRTC_PATH"); p && *p) o.hiprtc_path = p;
  return o;
}

std::unique_ptr<Backend> NewHipBackend(const HipBackendOptions& options) {
  return std::make_unique<HipBackend>(options);
}

const std::vector<std::string>& HipCandidateTargets() {
  static const std::vector<std::string> kTargets = {
      "gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942",
      "gfx1030", "gfx1100", "gfx1101", "gfx1102",
  };
  return kTargets;
}

}  // namespace tuna::backend

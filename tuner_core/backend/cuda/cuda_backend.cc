#include "tuner_core/backend/cuda/cuda_backend.h"

#include <cctype>
#include <cstring>
#include <cstdlib>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/backend/cuda/cuda_api.h"
#include "tuner_core/backend/dynamic_library.h"
#include "tuner_core/backend/event_timing.h"
#include "tuner_core/backend/kernel_headers.h"

namespace tuna::backend {
namespace {

using namespace tuna::cuda_api;

constexpr int kDefaultSharedLimit = 48 * 1024;

std::string ResultName(const DriverApi& api, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(r, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(r, &text);
  return absl::StrCat(name ? name : "CUDA error", " (", r, "): ", text ? text : "unknown");
}

bool IsStickyError(CUresult r) {
  switch (r) {
    case kCUDA_ERROR_ILLEGAL_ADDRESS:
    case kCUDA_ERROR_LAUNCH_TIMEOUT:
    case kCUDA_ERROR_ECC_UNCORRECTABLE:
    case kCUDA_ERROR_CONTEXT_IS_DESTROYED:
    case kCUDA_ERROR_ASSERT:
    case kCUDA_ERROR_HARDWARE_STACK_ERROR:
    case kCUDA_ERROR_ILLEGAL_INSTRUCTION:
    case kCUDA_ERROR_MISALIGNED_ADDRESS:
    case kCUDA_ERROR_INVALID_ADDRESS_SPACE:
    case kCUDA_ERROR_INVALID_PC:
    case kCUDA_ERROR_LAUNCH_FAILED:
      return true;
    default:
      return false;
  }
}

absl::Status DriverStatusOf(const DriverApi& api, CUresult r, const std::string& what) {
  if (r == kCUDA_SUCCESS) return absl::OkStatus();
  std::string msg = absl::StrCat(what, ": ", ResultName(api, r));
  if (IsStickyError(r)) return ContextLostError(msg);
  switch (r) {
    case kCUDA_ERROR_OUT_OF_MEMORY: return absl::ResourceExhaustedError(msg);
    case kCUDA_ERROR_NO_BINARY_FOR_GPU:
    case kCUDA_ERROR_INVALID_PTX:
    case kCUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case kCUDA_ERROR_NOT_FOUND:
    case kCUDA_ERROR_INVALID_VALUE:
    case kCUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return absl::InvalidArgumentError(msg);
    case kCUDA_ERROR_NO_DEVICE:
    case kCUDA_ERROR_NOT_INITIALIZED:
    case kCUDA_ERROR_INVALID_DEVICE:
      return absl::UnavailableError(msg);
    default: return absl::InternalError(msg);
  }
}

// "sm_90" → (90, cubin); "sm_90a" → (90, cubin); "compute_90" → (90, ptx).
struct CudaTarget {
  int sm = 0;
  bool ptx = false;
};

std::optional<CudaTarget> ParseCudaArch(const std::string& arch) {
  CudaTarget t;
  std::string rest;
  if (absl::StartsWith(arch, "sm_")) {
    rest = arch.substr(3);
  } else if (absl::StartsWith(arch, "compute_")) {
    rest = arch.substr(8);
    t.ptx = true;
  } else {
    return std::nullopt;
  }
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits < 2 || digits > 3) return std::nullopt;
  std::string suffix = rest.substr(digits);
  if (!(suffix.empty() || suffix == "a" || suffix == "f")) return std::nullopt;
  t.sm = std::atoi(rest.substr(0, digits).c_str());
  return t;
}

template <typename Api, typename Fill>
absl::Status ResolveAll(const DynamicLibrary& lib, Api* api, Fill fill) {
  std::vector<std::string> missing;
  fill(lib, api, &missing);
  if (!missing.empty()) {
    return absl::UnavailableError(absl::StrCat(lib.path(), " lacks ", absl::StrJoin(missing, ", ")));
  }
  return absl::OkStatus();
}

class CudaModule : public Module {
 public:
  CudaModule(const DriverApi* api, CUcontext ctx, CUmodule module)
      : api_(api), ctx_(ctx), module_(module) {}
  ~CudaModule() override {
    api_->cuCtxSetCurrent(ctx_);
    api_->cuModuleUnload(module_);
  }
  absl::StatusOr<Kernel> GetKernel(const std::string& name) override {
    api_->cuCtxSetCurrent(ctx_);
    CUfunction f = nullptr;
    CUresult r = api_->cuModuleGetFunction(&f, module_, name.c_str());
    if (r == kCUDA_ERROR_NOT_FOUND) {
      return absl::InvalidArgumentError(absl::StrCat("cuda module has no kernel '", name, "'"));
    }
    if (absl::Status st = DriverStatusOf(*api_, r, "cuModuleGetFunction " + name); !st.ok()) {
      return st;
    }
    return Kernel{f, name};
  }

 private:
  const DriverApi* api_;
  CUcontext ctx_;
  CUmodule module_;
};

class CudaDevice : public GpuDevice {
 public:
  CudaDevice(const DriverApi* api, CUdevice dev, CUcontext ctx, DeviceInfo info)
      : GpuDevice("cuda"), api_(api), dev_(dev), ctx_(ctx), info_(std::move(info)) {}
  ~CudaDevice() override { api_->cuDevicePrimaryCtxRelease_v2(dev_); }

  const DeviceInfo& Info() const override { return info_; }

  absl::Status CopyToDevice(const DeviceBuffer& dst, const void* src, size_t bytes,
                            size_t dst_offset) override {
    if (absl::Status st = Enter(dst, dst_offset, bytes); !st.ok()) return st;
    return Check(api_->cuMemcpyHtoD_v2(dst.address() + dst_offset, src, bytes), "cuMemcpyHtoD");
  }
  absl::Status CopyToHost(void* dst, const DeviceBuffer& src, size_t bytes,
                          size_t src_offset) override {
    if (absl::Status st = Enter(src, src_offset, bytes); !st.ok()) return st;
    return Check(api_->cuMemcpyDtoH_v2(dst, src.address() + src_offset, bytes), "cuMemcpyDtoH");
  }
  absl::Status Memset(const DeviceBuffer& dst, uint8_t value, size_t bytes) override {
    if (absl::Status st = Enter(dst, 0, bytes); !st.ok()) return st;
    return Check(api_->cuMemsetD8_v2(dst.address(), value, bytes), "cuMemsetD8");
  }

  absl::StatusOr<std::unique_ptr<Module>> Load(const CodeObject& code) override {
    if (code.kind != BackendKind::kCuda) {
      return absl::InvalidArgumentError(
          absl::StrCat("a ", BackendKindName(code.kind), " code object cannot load on cuda"));
    }
    if (absl::Status st = Enter(); !st.ok()) return st;
    CUmodule module = nullptr;
    if (absl::Status st = Check(api_->cuModuleLoadData(&module, code.bytes.data()),
                                absl::StrCat("cuModuleLoadData (", code.arch, " on ", info_.arch, ")"));
        !st.ok()) {
      return st;
    }
    return std::unique_ptr<Module>(new CudaModule(api_, ctx_, module));
  }

  absl::Status Launch(const Kernel& kernel, Dim3 grid, Dim3 block, size_t shared_bytes,
                      KernelArgs& args) override {
    if (kernel.handle == nullptr) return absl::InvalidArgumentError("launch of a null kernel");
    if (absl::Status st = Enter(); !st.ok()) return st;
    auto f = static_cast<CUfunction>(kernel.handle);
    if (shared_bytes > kDefaultSharedLimit) {
      if (absl::Status st = Check(api_->cuFuncSetAttribute(
                                      f, kCU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      static_cast<int>(shared_bytes)),
                                  "cuFuncSetAttribute(max dynamic shared) " + kernel.name);
          !st.ok()) {
        return st;
      }
    }
    return Check(api_->cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                      static_cast<unsigned>(shared_bytes), nullptr,
                                      args.Pointers(), nullptr),
                 "cuLaunchKernel " + kernel.name);
  }

  absl::Status Synchronize() override {
    if (absl::Status st = Enter(); !st.ok()) return st;
    return Check(api_->cuCtxSynchronize(), "cuCtxSynchronize");
  }

  absl::StatusOr<TensorMapBytes> EncodeTensorMap(const TensorMapSpec& spec, const DeviceBuffer& buffer,
                                                 size_t offset_bytes) override {
    if (api_->cuTensorMapEncodeTiled == nullptr) {
      return absl::UnimplementedError("this CUDA driver has no cuTensorMapEncodeTiled (CUDA 12+ needed)");
    }
    if (spec.rank < 1 || spec.rank > 5) return absl::InvalidArgumentError("tensor map rank outside 1..5");
    if (absl::Status st = Enter(buffer, offset_bytes, 0); !st.ok()) return st;
    int type = 0;
    switch (spec.element_bytes) {
      case 1: type = kCU_TENSOR_MAP_DATA_TYPE_UINT8; break;
      case 2: type = kCU_TENSOR_MAP_DATA_TYPE_UINT16; break;
      case 4: type = kCU_TENSOR_MAP_DATA_TYPE_UINT32; break;
      case 8: type = kCU_TENSOR_MAP_DATA_TYPE_UINT64; break;
      default: return absl::InvalidArgumentError(absl::StrCat("tensor map element of ", spec.element_bytes, " bytes"));
    }
    int swizzle = kCU_TENSOR_MAP_SWIZZLE_NONE;
    switch (spec.swizzle) {
      case TensorMapSpec::Swizzle::kNone: break;
      case TensorMapSpec::Swizzle::k32B: swizzle = kCU_TENSOR_MAP_SWIZZLE_32B; break;
      case TensorMapSpec::Swizzle::k64B: swizzle = kCU_TENSOR_MAP_SWIZZLE_64B; break;
      case TensorMapSpec::Swizzle::k128B: swizzle = kCU_TENSOR_MAP_SWIZZLE_128B; break;
    }
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], element_strides[5];
    for (int i = 0; i < spec.rank; ++i) {
      dims[i] = spec.dims[i];
      box[i] = spec.box[i];
      element_strides[i] = spec.element_strides[i];
      if (i > 0) strides[i - 1] = spec.strides_bytes[i - 1];
    }
    const auto data_type = static_cast<CUtensorMapDataType>(type);
    const auto rank = static_cast<cuuint32_t>(spec.rank);
    void* address = reinterpret_cast<void*>(buffer.address() + offset_bytes);
    const auto interleave = static_cast<CUtensorMapInterleave>(kCU_TENSOR_MAP_INTERLEAVE_NONE);
    const auto swizzle_mode = static_cast<CUtensorMapSwizzle>(swizzle);
    const auto l2 = static_cast<CUtensorMapL2promotion>(kCU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    const auto oob = static_cast<CUtensorMapFloatOOBfill>(kCU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    CUtensorMap map;
    absl::Status st;
    if (spec.mode == TensorMapSpec::Mode::kIm2col) {
      if (api_->cuTensorMapEncodeIm2col == nullptr) {
        return absl::UnimplementedError("this CUDA driver has no cuTensorMapEncodeIm2col (CUDA 12+ needed)");
      }
      if (spec.rank < 3) return absl::InvalidArgumentError("im2col tensor map of rank < 3");
      st = Check(api_->cuTensorMapEncodeIm2col(&map, data_type, rank, address, dims, strides, spec.lower_corner.data(),
                                               spec.upper_corner.data(), spec.channels_per_pixel,
                                               spec.pixels_per_column, element_strides, interleave, swizzle_mode, l2,
                                               oob),
                 "cuTensorMapEncodeIm2col");
    } else {
      st = Check(api_->cuTensorMapEncodeTiled(&map, data_type, rank, address, dims, strides, box, element_strides,
                                              interleave, swizzle_mode, l2, oob),
                 "cuTensorMapEncodeTiled");
    }
    if (!st.ok()) return st;
    TensorMapBytes out;
    static_assert(sizeof(out.bytes) == sizeof(map));
    std::memcpy(out.bytes, &map, sizeof(map));
    return out;
  }

  absl::Status CopyOnDevice(const DeviceBuffer& dst, const DeviceBuffer& src,
                            size_t bytes) override {
    if (absl::Status st = Enter(dst, 0, bytes); !st.ok()) return st;
    if (absl::Status st = Enter(src, 0, bytes); !st.ok()) return st;
    return Check(api_->cuMemcpyDtoDAsync_v2(dst.address(), src.address(), bytes, nullptr),
                 "cuMemcpyDtoDAsync");
  }

 protected:
  absl::StatusOr<std::vector<double>> TimeRuns(const std::function<absl::Status()>& launch,
                                               int repetitions,
                                               const std::function<absl::Status()>& before_each) override {
    if (absl::Status st = Enter(); !st.ok()) return st;
    EventCalls<CUevent> calls;
    calls.create = [this](CUevent* e) { return Check(api_->cuEventCreate(e, kCU_EVENT_DEFAULT), "cuEventCreate"); };
    calls.record = [this](CUevent e) { return Check(api_->cuEventRecord(e, nullptr), "cuEventRecord"); };
    calls.synchronize = [this](CUevent e) { return Check(api_->cuEventSynchronize(e), "cuEventSynchronize"); };
    calls.elapsed_ms = [this](float* t, CUevent start, CUevent stop) {
      return Check(api_->cuEventElapsedTime_v2(t, start, stop), "cuEventElapsedTime");
    };
    calls.destroy = [this](CUevent e) { api_->cuEventDestroy_v2(e); };
    return TimeWithEvents(calls, launch, repetitions, before_each);
  }

  absl::StatusOr<uint64_t> AllocRaw(size_t bytes) override {
    if (absl::Status st = Enter(); !st.ok()) return st;
    CUdeviceptr p = 0;
    if (absl::Status st = Check(api_->cuMemAlloc_v2(&p, bytes), absl::StrCat("cuMemAlloc ", bytes));
        !st.ok()) {
      return st;
    }
    return static_cast<uint64_t>(p);
  }
  absl::Status FreeRaw(uint64_t address) override {
    if (lost()) return absl::OkStatus();  // the context's memory is gone with it
    if (absl::Status st = Enter(); !st.ok()) return st;
    return Check(api_->cuMemFree_v2(address), "cuMemFree");
  }

 private:
  // Every call makes the context current (Enter): the device may be used from another thread
  // than the one that opened it (one at a time).
  absl::Status MakeCurrent() override { return Check(api_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }
  absl::Status Check(CUresult r, const std::string& what) { return Latch(DriverStatusOf(*api_, r, what)); }

  const DriverApi* api_;
  CUdevice dev_;
  CUcontext ctx_;
  DeviceInfo info_;
};

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(const CudaBackendOptions& options) {
    LoadNvrtc(options);
    LoadDriver(options);
  }

  BackendKind Kind() const override { return BackendKind::kCuda; }
  std::string Name() const override { return "cuda"; }
  absl::Status CompilerStatus() const override { return compiler_status_; }
  absl::Status DriverStatus() const override { return driver_status_; }
  std::string CompilerVersion() const override { return compiler_version_; }
  std::string DriverVersion() const override { return driver_version_; }

  std::vector<std::string> CompileTargets() const override {
    std::vector<std::string> out;
    for (int sm : supported_sms_) out.push_back(absl::StrCat("sm_", sm));
    return out;
  }

  absl::StatusOr<CodeObject> Compile(const CompileRequest& request) const override {
    if (!compiler_status_.ok()) return compiler_status_;
    if (request.source.empty()) return absl::InvalidArgumentError("empty kernel source");
    std::optional<CudaTarget> target = ParseCudaArch(request.arch);
    if (!target) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown cuda target '", request.arch, "' (sm_XY, sm_XYa, compute_XY)"));
    }
    if (!supported_sms_.empty() &&
        std::find(supported_sms_.begin(), supported_sms_.end(), target->sm) == supported_sms_.end()) {
      return absl::UnimplementedError(absl::StrCat("not supported: ", compiler_version_,
                                                   " cannot compile for ", request.arch));
    }
    std::vector<SourceHeader> headers = StandardKernelHeaders(BackendKind::kCuda);
    headers.insert(headers.end(), request.headers.begin(), request.headers.end());
    std::vector<const char*> header_texts, header_names;
    for (const SourceHeader& h : headers) {
      header_texts.push_back(h.content.c_str());
      header_names.push_back(h.name.c_str());
    }
    nvrtcProgram prog = nullptr;
    nvrtcResult r = nvrtc_.nvrtcCreateProgram(&prog, request.source.c_str(),
                                              request.source_name.c_str(),
                                              static_cast<int>(headers.size()),
                                              header_texts.data(), header_names.data());
    if (r != kNVRTC_SUCCESS) {
      return absl::InternalError(absl::StrCat("nvrtcCreateProgram: ", nvrtc_.nvrtcGetErrorString(r)));
    }
    struct Destroy {
      const NvrtcApi* api;
      nvrtcProgram* prog;
      ~Destroy() { api->nvrtcDestroyProgram(prog); }
    } destroy{&nvrtc_, &prog};

    std::vector<std::string> options = {"--gpu-architecture=" + request.arch, "-std=c++17"};
    options.insert(options.end(), request.options.begin(), request.options.end());
    std::vector<const char*> option_ptrs;
    for (const std::string& o : options) option_ptrs.push_back(o.c_str());
    r = nvrtc_.nvrtcCompileProgram(prog, static_cast<int>(option_ptrs.size()), option_ptrs.data());

    std::string log;
    size_t log_size = 0;
    if (nvrtc_.nvrtcGetProgramLogSize(prog, &log_size) == kNVRTC_SUCCESS && log_size > 1) {
      log.resize(log_size);
      nvrtc_.nvrtcGetProgramLog(prog, log.data());
      log.resize(log_size - 1);
    }
    if (r == kNVRTC_ERROR_COMPILATION) {
      return absl::FailedPreconditionError(absl::StrCat(
          "nvrtc compile of ", request.source_name, " for ", request.arch, " failed:\n", log));
    }
    if (r != kNVRTC_SUCCESS) {
      return absl::InternalError(absl::StrCat("nvrtcCompileProgram (", request.arch,
                                              "): ", nvrtc_.nvrtcGetErrorString(r), "\n", log));
    }
    CodeObject code;
    code.kind = BackendKind::kCuda;
    code.arch = request.arch;
    code.compiler_version = nvrtc_version_;
    code.entries = request.entries;
    code.log = log;
    size_t size = 0;
    if (target->ptx) {
      r = nvrtc_.nvrtcGetPTXSize(prog, &size);
      code.bytes.resize(size);  // keeps the terminating NUL: cuModuleLoadData wants it
      if (r == kNVRTC_SUCCESS) r = nvrtc_.nvrtcGetPTX(prog, code.bytes.data());
    } else {
      r = nvrtc_.nvrtcGetCUBINSize(prog, &size);
      code.bytes.resize(size);
      if (r == kNVRTC_SUCCESS) r = nvrtc_.nvrtcGetCUBIN(prog, code.bytes.data());
    }
    if (r != kNVRTC_SUCCESS || code.bytes.empty()) {
      return absl::InternalError(absl::StrCat("nvrtc: no ", target->ptx ? "PTX" : "cubin", " for ",
                                              request.arch, ": ", nvrtc_.nvrtcGetErrorString(r)));
    }
    if (absl::Status st = CheckEntriesDefined("nvrtc", request.source_name, code.bytes, request.entries); !st.ok()) {
      return st;
    }
    return code;
  }

  absl::StatusOr<std::vector<DeviceInfo>> ListDevices() const override {
    if (!driver_status_.ok()) return driver_status_;
    return QueryEachDevice(
        [this](int* count) { return DriverStatusOf(driver_, driver_.cuDeviceGetCount(count), "cuDeviceGetCount"); },
        [this](int i) { return QueryDevice(i); });
  }

  absl::StatusOr<std::unique_ptr<Device>> OpenDevice(int index) const override {
    absl::StatusOr<DeviceInfo> info = QueryDevice(index);
    if (!info.ok()) return info.status();
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    absl::Status st = DriverStatusOf(driver_, driver_.cuDeviceGet(&dev, index), "cuDeviceGet");
    if (st.ok()) {
      st = DriverStatusOf(driver_, driver_.cuDevicePrimaryCtxRetain(&ctx, dev),
                          "cuDevicePrimaryCtxRetain");
    }
    if (!st.ok()) return st;
    return std::unique_ptr<Device>(new CudaDevice(&driver_, dev, ctx, *std::move(info)));
  }

 private:
  void LoadNvrtc(const CudaBackendOptions& options) {
    std::vector<std::string> globs = {
        "/usr/local/lib/python3*/dist-packages/nvidia/*/lib",
        "/usr/lib/python3/dist-packages/nvidia/*/lib",
        "/opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib",
    };
    if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) {
      globs.push_back(absl::StrCat(venv, "/lib/python3*/site-packages/nvidia/*/lib"));
    }
    absl::StatusOr<DynamicLibrary> lib = DynamicLibrary::Open(LibraryCandidates(
        options.nvrtc_path, {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"},
        {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/local/cuda/targets/x86_64-linux/lib"},
        globs));
    if (!lib.ok()) {
      compiler_status_ = absl::UnavailableError(
          absl::StrCat("NVRTC not found (set TUNA_NVRTC_PATH): ", lib.status().message()));
      return;
    }
    compiler_status_ = ResolveAll(*lib, &nvrtc_, [](const DynamicLibrary& l, NvrtcApi* api,
                                                    std::vector<std::string>* missing) {
#define TUNA_RESOLVE(name, params)                                         \
  api->name = reinterpret_cast<PFN_##name>(l.Symbol(#name));               \
  if (api->name == nullptr && std::string(#name).find("Supported") == std::string::npos) \
    missing->push_back(#name);
      TUNA_NVRTC_FUNCTIONS(TUNA_RESOLVE)
#undef TUNA_RESOLVE
      api->nvrtcGetErrorString =
          reinterpret_cast<PFN_nvrtcGetErrorString>(l.Symbol("nvrtcGetErrorString"));
      if (api->nvrtcGetErrorString == nullptr) missing->push_back("nvrtcGetErrorString");
    });
    if (!compiler_status_.ok()) return;
    int major = 0, minor = 0;
    nvrtc_.nvrtcVersion(&major, &minor);
    nvrtc_version_ = absl::StrCat("nvrtc ", major, ".", minor);
    compiler_version_ = absl::StrCat(nvrtc_version_, " (", lib->path(), ")");
    int n = 0;
    if (nvrtc_.nvrtcGetNumSupportedArchs && nvrtc_.nvrtcGetSupportedArchs &&
        nvrtc_.nvrtcGetNumSupportedArchs(&n) == kNVRTC_SUCCESS && n > 0) {
      supported_sms_.resize(static_cast<size_t>(n));
      if (nvrtc_.nvrtcGetSupportedArchs(supported_sms_.data()) != kNVRTC_SUCCESS) supported_sms_.clear();
    }
  }

  void LoadDriver(const CudaBackendOptions& options) {
    // Only the real driver: the toolkit's stubs/libcuda.so loads but fails every call.
    absl::StatusOr<DynamicLibrary> lib =
        DynamicLibrary::Open(LibraryCandidates(options.driver_path, {"libcuda.so.1"}, {}, {}));
    if (!lib.ok()) {
      driver_status_ = absl::UnavailableError(absl::StrCat(
          "CUDA driver not found (no NVIDIA driver on this host?): ", lib.status().message()));
      return;
    }
    driver_status_ = ResolveAll(*lib, &driver_, [](const DynamicLibrary& l, DriverApi* api,
                                                   std::vector<std::string>* missing) {
#define TUNA_RESOLVE(name, params)                                         \
  api->name = reinterpret_cast<PFN_##name>(l.Symbol(#name));               \
  if (api->name == nullptr) missing->push_back(#name);
      TUNA_CUDA_DRIVER_FUNCTIONS(TUNA_RESOLVE)
#undef TUNA_RESOLVE
      // Drivers before 12.8 only have the unversioned symbol (same signature).
      if (api->cuEventElapsedTime_v2 == nullptr) {
        api->cuEventElapsedTime_v2 =
            reinterpret_cast<PFN_cuEventElapsedTime_v2>(l.Symbol("cuEventElapsedTime"));
        if (api->cuEventElapsedTime_v2 != nullptr) std::erase(*missing, "cuEventElapsedTime_v2");
      }
      // Optional (drivers of CUDA 12+): tensor maps are then Unimplemented.
      std::erase(*missing, "cuTensorMapEncodeTiled");
      std::erase(*missing, "cuTensorMapEncodeIm2col");
    });
    if (!driver_status_.ok()) return;
    int version = 0;
    driver_.cuDriverGetVersion(&version);
    driver_version_ = absl::StrCat("cuda driver ", version / 1000, ".", (version % 1000) / 10, " (",
                                   lib->path(), ")");
    driver_status_ = DriverStatusOf(driver_, driver_.cuInit(0), "cuInit");
  }

  absl::StatusOr<DeviceInfo> QueryDevice(int index) const {
    if (!driver_status_.ok()) return driver_status_;
    CUdevice dev = 0;
    if (absl::Status st = DriverStatusOf(driver_, driver_.cuDeviceGet(&dev, index),
                                         absl::StrCat("cuDeviceGet ", index));
        !st.ok()) {
      return st;
    }
    DeviceInfo info;
    info.index = index;
    char name[256] = {};
    driver_.cuDeviceGetName(name, sizeof(name) - 1, dev);
    info.name = name;
    auto attr = [&](int a) {
      int v = 0;
      driver_.cuDeviceGetAttribute(&v, a, dev);
      return v;
    };
    info.arch = absl::StrCat("sm_", attr(kCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                             attr(kCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    info.compute_units = attr(kCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    size_t total = 0;
    driver_.cuDeviceTotalMem_v2(&total, dev);
    info.global_memory_bytes = total;
    info.clock_mhz = attr(kCU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
    info.warp_size = attr(kCU_DEVICE_ATTRIBUTE_WARP_SIZE);
    info.shared_memory_per_block = static_cast<uint64_t>(attr(kCU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
    info.shared_memory_per_block_optin =
        static_cast<uint64_t>(attr(kCU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
    info.l2_cache_bytes = static_cast<uint64_t>(attr(kCU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
    return info;
  }

  NvrtcApi nvrtc_;
  DriverApi driver_;
  absl::Status compiler_status_;
  absl::Status driver_status_;
  std::string nvrtc_version_;
  std::string compiler_version_;
  std::string driver_version_;
  std::vector<int> supported_sms_;
};

}  // namespace

CudaBackendOptions CudaBackendOptions::FromEnv() {
  CudaBackendOptions o;
  if (const char* p = std::getenv("TUNA_CUDA_DRIVER_PATH"); p && *p) o.driver_path = p;
  if (const char* p = std::getenv("TUNA_NVRTC_PATH"); p && *p) o.nvrtc_path = p;
  return o;
}

std::unique_ptr<Backend> NewCudaBackend(const CudaBackendOptions& options) {
  return std::make_unique<CudaBackend>(options);
}

}  // namespace tuna::backend

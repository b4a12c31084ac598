// Compute backends: compile kernel sources to code objects, and run them on a device.
//
// Modeled on leveldb's Env: one abstract `Backend` per platform (cuda, hip, cpu), chosen at run
// time (see registry.h), so one binary runs on CPU-only, NVIDIA and AMD hosts. The GPU backends
// dlopen their vendor libraries; a missing library is a Status, never a crash or a link error.
//
// Two halves with different needs:
//   * Compile (Backend::Compile) needs only the compiler library (NVRTC, hiprtc, the system
//     C++ compiler), never a device: compile workers on CPU-only hosts use it.
//   * Devices (Backend::OpenDevice → Device → Module → Kernel, DeviceBuffer) need the driver
//     library and a device.
//
// Errors (absl::Status codes used by every implementation):
//   Unavailable       the library or device is missing (message says which and where searched).
//   Unimplemented     the target arch is not supported by this compiler ("not supported").
//   InvalidArgument   bad request: unknown arch string, empty source, kernel name not found, a
//                     code object built for another arch or backend.
//   FailedPrecondition compile error in the kernel source: the message carries the compiler log.
//   ResourceExhausted out of device memory.
//   Internal          driver failure; if the device context is gone (illegal address, launch
//                     failure, ...), IsContextLost(status) is true: the process must drop every
//                     object of that backend and restart (the executor runs it in a child).
//
// Threads: a Backend is safe for concurrent use (Compile from a pool of threads). A Device and
// everything obtained from it (Module, Kernel, DeviceBuffer) is used by one thread at a time.
// Lifetime: destroy DeviceBuffers and Modules before their Device, Devices before their Backend.
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tuna::backend {

enum class BackendKind { kCpu, kCuda, kHip };

// "cpu", "cuda", "hip".
const char* BackendKindName(BackendKind kind);

struct DeviceInfo {
  int index = 0;
  std::string name;               // "NVIDIA H100 80GB HBM3", "AMD Instinct MI210", CPU model
  std::string arch;               // "sm_90", "gfx90a", "cpu-avx2": the compile target
  int compute_units = 0;          // SMs, CUs, or hardware threads
  uint64_t global_memory_bytes = 0;
  int clock_mhz = 0;              // 0 when unknown
  int warp_size = 0;              // 32, 64; 1 for the CPU
  uint64_t shared_memory_per_block = 0;        // default limit (48 KiB on NVIDIA)
  uint64_t shared_memory_per_block_optin = 0;  // largest with an opt-in (0: same as default)
  uint64_t l2_cache_bytes = 0;    // 0 when unknown
};

// A header the kernel source may #include by `name` (e.g. "conv/direct.h"). The backends add
// the standard kernel headers themselves (kernel_headers.h: "common/portability.h", and for
// the cpu backend "cpu/cpu_kernel.h").
struct SourceHeader {
  std::string name;
  std::string content;
};

struct CompileRequest {
  std::string source;               // the translation unit
  std::string source_name = "kernel.cu";  // for compiler messages
  std::vector<std::string> entries;  // extern "C" kernel names the code object must define
  std::vector<std::string> options;  // "-DTB_M=128", "-DTUNA_DTYPE=1", ... (passed to the compiler as is)
  std::string arch;                  // target: "sm_90", "sm_90a", "compute_90" (PTX), "gfx90a",
                                     // "cpu-x86_64", "cpu-avx2", "cpu-avx512", "cpu-native"
  std::vector<SourceHeader> headers;  // extra headers besides the standard ones
};

// A compiled, device-independent artifact: cubin/PTX, AMD code object, or a CPU shared object.
// Self-contained bytes, so it can be stored (kernel db) and loaded in another process or host.
struct CodeObject {
  BackendKind kind = BackendKind::kCpu;
  std::string arch;
  std::string compiler_version;  // "nvrtc 13.0", "hiprtc 5.2", "g++ (Debian 12.2.0-14) 12.2.0"
  std::vector<std::string> entries;
  std::string bytes;
  std::string log;  // compiler warnings (empty when quiet)
};

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// A view of a device buffer for a bulk tensor copy engine (NVIDIA TMA, sm_90+): the kernel
// receives the encoded 128-byte descriptor by value. Dimensions are innermost first.
//   kTiled: a copy moves a `box` of elements.
//   kIm2col: rank 3..5 (C, W[, H[, D]], N); a copy moves `pixels_per_column` pixels of
//     `channels_per_pixel` channels, walking W, then H, then D, then N inside the bounding box
//     [lower_corner, dim - 1 + upper_corner] (per spatial dimension, W first) in steps of
//     `element_strides`; the kernel adds the filter offset of each copy.
struct TensorMapSpec {
  enum class Swizzle { kNone, k32B, k64B, k128B };
  enum class Mode { kTiled, kIm2col };
  Mode mode = Mode::kTiled;
  int rank = 2;                              // 1..5 (im2col: 3..5)
  uint32_t element_bytes = 2;                // 1, 2, 4 or 8 (copied as raw bits)
  std::array<uint64_t, 5> dims{};            // elements per dimension
  std::array<uint64_t, 4> strides_bytes{};   // of dims[1..rank-1], multiples of 16
  std::array<uint32_t, 5> box{};             // kTiled: elements one copy moves per dimension
  std::array<uint32_t, 5> element_strides{1, 1, 1, 1, 1};  // traversal step per dimension (<= 8)
  std::array<int, 3> lower_corner{};         // kIm2col: spatial dimensions, W first
  std::array<int, 3> upper_corner{};         // kIm2col: offsets from each dimension's end
  uint32_t channels_per_pixel = 0;           // kIm2col
  uint32_t pixels_per_column = 0;            // kIm2col
  Swizzle swizzle = Swizzle::kNone;          // shared-memory layout of the box (the kernel's)
};

// The encoded descriptor, passed to a kernel as one argument.
struct alignas(16) TensorMapBytes {
  unsigned char bytes[128];
};

// Kernel arguments packed as the driver APIs want them: a vector of pointers, one per argument,
// each pointing at the argument's value (cuLaunchKernel/hipModuleLaunchKernel `kernelParams`;
// the cpu backend passes the same array to the kernel). Values are copied in, so temporaries
// are fine. Device pointers are passed as their 64-bit address (Add(const DeviceBuffer&)).
class KernelArgs {
 public:
  template <typename T>
  KernelArgs& Add(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "kernel arguments are plain values");
    static_assert(alignof(T) <= kSlotAlign, "over-aligned kernel argument");
    return AddBytes(&value, sizeof(T), alignof(T));
  }
  // One argument of `bytes` bytes aligned to `align` (a power of two <= 16): a struct passed by
  // value whose size is known only at run time.
  KernelArgs& AddBytes(const void* data, size_t bytes, size_t align);
  KernelArgs& Add(const class DeviceBuffer& buffer);

  size_t size() const { return offsets_.size(); }
  // Valid until the next Add or the destruction of this object.
  void** Pointers();

 private:
  static constexpr size_t kSlotAlign = 16;
  void Grow(size_t bytes);
  char* Base() { return reinterpret_cast<char*>(storage_.data()); }

  struct alignas(kSlotAlign) Slot {
    char b[kSlotAlign];
  };
  std::vector<Slot> storage_;
  size_t storage_size_ = 0;
  std::vector<size_t> offsets_;
  std::vector<void*> pointers_;
};

class Device;

// Owns one device allocation; frees it on destruction. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device* device, uint64_t address, size_t bytes)
      : device_(device), address_(address), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { Reset(); }

  uint64_t address() const { return address_; }  // CUdeviceptr / hipDeviceptr_t / host pointer
  size_t bytes() const { return bytes_; }
  bool valid() const { return device_ != nullptr; }
  void Reset();  // frees now; errors are logged (a free cannot be retried)

 private:
  Device* device_ = nullptr;
  uint64_t address_ = 0;
  size_t bytes_ = 0;
};

// A kernel entry of a loaded Module. A handle: valid while its Module lives.
struct Kernel {
  void* handle = nullptr;  // CUfunction / hipFunction_t / function pointer
  std::string name;
};

// A loaded code object.
class Module {
 public:
  virtual ~Module() = default;
  // InvalidArgument naming the kernel when the code object has no such entry.
  virtual absl::StatusOr<Kernel> GetKernel(const std::string& name) = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual const DeviceInfo& Info() const = 0;

  // ResourceExhausted when the device is out of memory.
  absl::StatusOr<DeviceBuffer> Alloc(size_t bytes);
  virtual absl::Status CopyToDevice(const DeviceBuffer& dst, const void* src, size_t bytes,
                                    size_t dst_offset = 0) = 0;
  virtual absl::Status CopyToHost(void* dst, const DeviceBuffer& src, size_t bytes,
                                  size_t src_offset = 0) = 0;
  virtual absl::Status Memset(const DeviceBuffer& dst, uint8_t value, size_t bytes) = 0;
  // Device-to-device copy of the first `bytes` of src into dst (asynchronous on GPUs, ordered
  // with launches). InvalidArgument when either buffer is smaller than `bytes`.
  virtual absl::Status CopyOnDevice(const DeviceBuffer& dst, const DeviceBuffer& src,
                                    size_t bytes) = 0;

  // InvalidArgument for a code object of another backend or an incompatible arch.
  virtual absl::StatusOr<std::unique_ptr<Module>> Load(const CodeObject& code) = 0;

  // Asynchronous on GPUs (errors of the kernel itself surface at the next Synchronize);
  // synchronous on the CPU. Shared bytes above 48 KiB are opted in on CUDA automatically.
  virtual absl::Status Launch(const Kernel& kernel, Dim3 grid, Dim3 block, size_t shared_bytes,
                              KernelArgs& args) = 0;
  virtual absl::Status Synchronize() = 0;

  // The descriptor of `spec` over `buffer` starting `offset_bytes` in (16-byte aligned), for
  // Launch. Unimplemented on backends without a tensor copy engine; InvalidArgument when the
  // driver refuses the spec (alignment, box sizes, swizzle span).
  virtual absl::StatusOr<TensorMapBytes> EncodeTensorMap(const TensorMapSpec& spec, const DeviceBuffer& buffer,
                                                         size_t offset_bytes);

  // Runs `launch` `repetitions` times and returns each run's device time in milliseconds (GPU
  // events around each run; steady_clock on the CPU). `launch` may issue several kernels; the
  // first error it returns stops the timing and is returned. `before_each` (optional; e.g. an
  // L2 flush) runs before every launch, outside the timed region. On GPUs everything is
  // queued at once and synchronised once at the end: no host round trip leaves the device idle
  // between runs.
  absl::StatusOr<std::vector<double>> TimeLaunches(
      const std::function<absl::Status()>& launch, int repetitions,
      const std::function<absl::Status()>& before_each = nullptr) {
    if (repetitions <= 0) return absl::InvalidArgumentError("repetitions must be positive");
    return TimeRuns(launch, repetitions, before_each);
  }

 protected:
  Device() = default;
  // TimeLaunches with repetitions > 0 and before_each possibly empty.
  virtual absl::StatusOr<std::vector<double>> TimeRuns(
      const std::function<absl::Status()>& launch, int repetitions,
      const std::function<absl::Status()>& before_each) = 0;
  friend class DeviceBuffer;
  virtual absl::StatusOr<uint64_t> AllocRaw(size_t bytes) = 0;
  virtual absl::Status FreeRaw(uint64_t address) = 0;
};

// OK when `buffer` is valid and [offset, offset + bytes) lies inside it; InvalidArgument naming
// the range otherwise (the devices' copy and fill checks).
absl::Status CheckBufferRange(const DeviceBuffer& buffer, size_t offset, size_t bytes);

// What the GPU devices (CUDA, HIP) share around their driver calls: every call first enters the
// device (Enter: MakeCurrent, the vendor's make-current call), and each driver status goes
// through Latch. A status that reports the context lost (IsContextLost) sticks: Latch logs it as
// an error naming the device ("<backend> device <index> (<name>): <message>"), and from then on
// lost() is true and every Enter fails with ContextLostError("<name> (earlier failure)") without
// a driver call.
class GpuDevice : public Device {
 protected:
  explicit GpuDevice(std::string_view backend) : backend_(backend) {}  // "cuda", "hip" (a literal)

  absl::Status Enter();
  // CheckBufferRange(buffer, offset, bytes), then Enter().
  absl::Status Enter(const DeviceBuffer& buffer, size_t offset, size_t bytes);
  // `status` as it is; a lost context is latched and logged.
  absl::Status Latch(absl::Status status);
  // True once a driver status reported the context lost (its memory went with it).
  bool lost() const { return lost_; }
  // Makes this device's context current for the calling thread; its status through Latch.
  virtual absl::Status MakeCurrent() = 0;

 private:
  std::string_view backend_;
  bool lost_ = false;
};

// A GPU backend's ListDevices: the device count from `count_devices` (its error returned as it
// is), then the DeviceInfo of each index 0..count-1 from `query`; the first error stops and is
// returned.
absl::StatusOr<std::vector<DeviceInfo>> QueryEachDevice(
    const std::function<absl::Status(int*)>& count_devices,
    const std::function<absl::StatusOr<DeviceInfo>(int)>& query);

// A GPU backend's Compile: OK when each of `entries` occurs by name in the compiled `code`
// (extern "C" entries stand by name in the ELF symbol table / the PTX .entry lines); else
// FailedPrecondition "<compiler> compile of <source_name>: entries not defined (TUNA_GLOBAL): ..."
// listing the missing ones.
absl::Status CheckEntriesDefined(const std::string& compiler, const std::string& source_name,
                                 const std::string& code, const std::vector<std::string>& entries);

class Backend {
 public:
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual BackendKind Kind() const = 0;
  virtual std::string Name() const = 0;  // "cuda", "hip", "cpu"

  // OK when Compile can run; else why not (Unavailable: NVRTC not found, searched ...).
  virtual absl::Status CompilerStatus() const = 0;
  // OK when devices can be listed and opened; else why not (driver missing, no device).
  virtual absl::Status DriverStatus() const = 0;
  // "nvrtc 13.0 (/usr/local/cuda/lib/libnvrtc.so.13)"; empty when unavailable.
  virtual std::string CompilerVersion() const = 0;
  // "cuda driver 13.0"; empty when unavailable.
  virtual std::string DriverVersion() const = 0;
  // The compile targets this host's compiler accepts ("sm_90", "gfx90a", "cpu-avx2", ...).
  // May be slow on first call (hip probes each candidate in a child process; then cached).
  virtual std::vector<std::string> CompileTargets() const = 0;

  // Needs no device. Compile errors are FailedPrecondition with the compiler log in the message
  // (and nothing else); an unsupported arch is Unimplemented.
  virtual absl::StatusOr<CodeObject> Compile(const CompileRequest& request) const = 0;
  // The code object Compile would return, when the backend has it at hand without compiling (a
  // caching decorator's memory or disk); nullopt otherwise, and always for a plain compiler.
  // Cheap: callers try it on their own thread before they queue a build.
  virtual std::optional<CodeObject> Lookup(const CompileRequest& request) const {
    (void)request;
    return std::nullopt;
  }

  virtual absl::StatusOr<std::vector<DeviceInfo>> ListDevices() const = 0;
  virtual absl::StatusOr<std::unique_ptr<Device>> OpenDevice(int index) const = 0;

 protected:
  Backend() = default;
};

// The status every backend returns when its device context is unusable (a kernel faulted).
absl::Status ContextLostError(const std::string& what);
bool IsContextLost(const absl::Status& status);

}  // namespace tuna::backend

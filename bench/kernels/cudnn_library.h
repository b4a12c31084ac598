// Loading cuDNN 9 for the bench's two cuDNN paths (the legacy shim and the backend API): one
// dlopen per process, symbols resolved into a table of function pointers. Thread-safe.
#pragma once

#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace tuna::bench {

// The handle of libcudnn.so.9: `path` is the library file, a directory holding it, or empty
// for the loader's search. The first call's path wins; Unavailable (with dlerror) when absent.
absl::StatusOr<void*> OpenCudnn(const std::string& path);

// Resolves symbols of `handle` into function pointers; the first missing one is kept as an
// Unavailable status naming it.
class CudnnSymbols {
 public:
  explicit CudnnSymbols(void* handle) : handle_(handle) {}
  template <typename Fn>
  void Get(Fn& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<Fn>>(dlsym(handle_, name));
    if (fn == nullptr && status_.ok()) status_ = absl::UnavailableError(absl::StrCat("libcudnn lacks ", name));
  }
  const absl::Status& status() const { return status_; }

 private:
  void* handle_;
  absl::Status status_;
};

// The entry points both paths use (a path's table derives from it); LoadCudnnOnce resolves them.
struct CudnnCommonLib {
  using Status = int;  // cudnnStatus_t
  Status (*create)(void**) = nullptr;
  Status (*destroy)(void*) = nullptr;
  const char* (*error_string)(Status) = nullptr;
  size_t (*get_version)() = nullptr;
};

// The process's one table `Lib` (a CudnnCommonLib) of cuDNN entry points: built on the first
// call, the common entries first, then `fill(lib, symbols, handle)`, which resolves the path's
// own with symbols.Get; the first call's status (library or a symbol missing) is every later
// call's answer.
template <typename Lib, typename Fill>
absl::StatusOr<const Lib*> LoadCudnnOnce(const std::string& path, Fill fill) {
  static std::once_flag once;
  static const Lib* lib = nullptr;
  static absl::Status* status = new absl::Status();
  std::call_once(once, [&] {
    absl::StatusOr<void*> handle = OpenCudnn(path);
    if (!handle.ok()) {
      *status = handle.status();
      return;
    }
    auto table = std::make_unique<Lib>();
    CudnnSymbols symbols(*handle);
    CudnnCommonLib& common = *table;
    symbols.Get(common.create, "cudnnCreate");
    symbols.Get(common.destroy, "cudnnDestroy");
    symbols.Get(common.error_string, "cudnnGetErrorString");
    symbols.Get(common.get_version, "cudnnGetVersion");
    fill(*table, symbols, *handle);
    *status = symbols.status();
    if (status->ok()) lib = table.release();
  });
  if (lib == nullptr) return *status;
  return lib;
}

}  // namespace tuna::bench

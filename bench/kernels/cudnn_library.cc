#include "bench/kernels/cudnn_library.h"

#include <mutex>

namespace tuna::bench {

absl::StatusOr<void*> OpenCudnn(const std::string& path) {
  static std::once_flag once;
  static void* handle = nullptr;
  static absl::Status* status = new absl::Status();
  std::call_once(once, [&] {
    std::string file = path.empty() ? "libcudnn.so.9" : path;
    if (!path.empty() && path.find(".so") == std::string::npos) file = path + "/libcudnn.so.9";
    handle = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) *status = absl::UnavailableError(absl::StrCat("cannot load ", file, ": ", dlerror()));
  });
  if (handle == nullptr) return *status;
  return handle;
}

}  // namespace tuna::bench

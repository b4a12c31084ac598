// dlopen with a list of candidates, so a missing GPU library is a Status, not a link error.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tuna::backend {

// A library handle that stays loaded for the life of the process: GPU runtimes register
// atexit handlers and threads, so unloading them early is unsafe. Copyable handle.
class DynamicLibrary {
 public:
  // Tries each candidate in order (a soname is searched the usual dlopen way, a path is opened
  // as is). Unavailable listing every candidate and the last dlerror when none loads.
  static absl::StatusOr<DynamicLibrary> Open(const std::vector<std::string>& candidates);

  // nullptr when absent.
  void* Symbol(const char* name) const;
  // The file that was loaded (from dlinfo), or the candidate string.
  const std::string& path() const { return path_; }

 private:
  void* handle_ = nullptr;
  std::string path_;
};

// Candidate paths: `override_path` first (when non-empty), then each soname as is, then each
// soname inside each directory of `dirs` and of the glob patterns in `dir_globs`.
std::vector<std::string> LibraryCandidates(const std::string& override_path,
                                           const std::vector<std::string>& sonames,
                                           const std::vector<std::string>& dirs,
                                           const std::vector<std::string>& dir_globs);

}  // namespace tuna::backend

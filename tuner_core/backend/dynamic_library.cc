#include "tuner_core/backend/dynamic_library.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tuna::backend {

absl::StatusOr<DynamicLibrary> DynamicLibrary::Open(const std::vector<std::string>& candidates) {
  std::string last_error = "no candidates";
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = dlerror();
      last_error = e ? e : "unknown dlopen error";
      continue;
    }
    DynamicLibrary lib;
    lib.handle_ = handle;
    lib.path_ = candidate;
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name &&
        map->l_name[0] != '\0') {
      lib.path_ = map->l_name;
    }
    return lib;
  }
  return absl::UnavailableError(
      absl::StrCat("tried ", absl::StrJoin(candidates, ", "), " (last error: ", last_error, ")"));
}

void* DynamicLibrary::Symbol(const char* name) const {
  return handle_ ? dlsym(handle_, name) : nullptr;
}

std::vector<std::string> LibraryCandidates(const std::string& override_path,
                                           const std::vector<std::string>& sonames,
                                           const std::vector<std::string>& dirs,
                                           const std::vector<std::string>& dir_globs) {
  std::vector<std::string> out;
  if (!override_path.empty()) out.push_back(override_path);
  for (const std::string& s : sonames) out.push_back(s);
  std::vector<std::string> all_dirs = dirs;
  for (const std::string& pattern : dir_globs) {
    glob_t g{};
    if (glob(pattern.c_str(), GLOB_ONLYDIR | GLOB_NOSORT, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) all_dirs.push_back(g.gl_pathv[i]);
    }
    globfree(&g);
  }
  for (const std::string& d : all_dirs) {
    for (const std::string& s : sonames) {
      if (s.find('/') == std::string::npos) out.push_back(absl::StrCat(d, "/", s));
    }
  }
  return out;
}

}  // namespace tuna::backend

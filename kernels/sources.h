// The kernel source tree, embedded in the binary: workers compile from memory, so a bundle
// needs no kernel files on disk. Paths are relative to kernels/ ("conv/naive_conv.cu").
#pragma once

#include <string_view>
#include <vector>

namespace tuna::kernels {

struct KernelSourceFile {
  const char* path;
  const char* text;
};

// nullptr when no embedded file has that path.
const char* FindSource(std::string_view path);
const std::vector<KernelSourceFile>& AllSources();

}  // namespace tuna::kernels

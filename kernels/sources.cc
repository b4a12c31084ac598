#include "kernels/sources.h"

#include "kernels/embedded_sources.inc"

namespace tuna::kernels {

const std::vector<KernelSourceFile>& AllSources() {
  static const std::vector<KernelSourceFile> files(std::begin(kEmbeddedSources),
                                                   std::end(kEmbeddedSources) - 1);
  return files;
}

const char* FindSource(std::string_view path) {
  for (const KernelSourceFile& f : AllSources())
    if (path == f.path) return f.text;
  return nullptr;
}

}  // namespace tuna::kernels

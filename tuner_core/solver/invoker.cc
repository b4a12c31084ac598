#include "tuner_core/solver/invoker.h"

#include "absl/strings/str_cat.h"
#include "kernels/sources.h"

namespace tuna::solver {
namespace {

// Every embedded kernel file is offered as a header, so sources may include their helpers
// ("conv/igemm_tile.h") without any file on disk.
std::vector<backend::SourceHeader> KernelTreeHeaders() {
  std::vector<backend::SourceHeader> headers;
  for (const kernels::KernelSourceFile& f : kernels::AllSources()) {
    headers.push_back({f.path, f.text});
  }
  return headers;
}

const backend::DeviceBuffer* BufferFor(const ConvBuffers& b, BufferRole role) {
  switch (role) {
    case BufferRole::kX: return b.x;
    case BufferRole::kW: return b.w;
    case BufferRole::kY: return b.y;
    case BufferRole::kWorkspace: return b.workspace;
  }
  return nullptr;
}

const char* RoleName(BufferRole role) {
  switch (role) {
    case BufferRole::kX: return "x";
    case BufferRole::kW: return "w";
    case BufferRole::kY: return "y";
    case BufferRole::kWorkspace: return "workspace";
  }
  return "?";
}

}  // namespace

absl::StatusOr<backend::CompileRequest> CompileRequestFor(const KernelBuild& k,
                                                          const std::string& arch) {
  const char* text = kernels::FindSource(k.source);
  if (text == nullptr) {
    return absl::NotFoundError(absl::StrCat("kernel source '", k.source, "' is not embedded"));
  }
  backend::CompileRequest req;
  req.source = text;
  req.source_name = k.source;
  req.entries = k.entries;
  req.options = k.options;
  req.arch = BuildArch(k, arch);
  req.headers = KernelTreeHeaders();
  return req;
}

absl::StatusOr<std::vector<backend::CodeObject>> CompileSolution(const backend::Backend& backend,
                                                                 const Solution& solution,
                                                                 const std::string& arch) {
  std::vector<backend::CodeObject> out;
  for (const KernelBuild& k : solution.kernels) {
    absl::StatusOr<backend::CompileRequest> req = CompileRequestFor(k, arch);
    if (!req.ok()) return req.status();
    absl::StatusOr<backend::CodeObject> code = backend.Compile(*req);
    if (!code.ok()) {
      return absl::Status(code.status().code(),
                          absl::StrCat(k.source, ": ", code.status().message()));
    }
    out.push_back(*std::move(code));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Invoker>> Invoker::Create(
    backend::Device& device, Solution solution, const std::vector<backend::CodeObject>& code,
    backend::ModuleCache* modules) {
  if (code.size() != solution.kernels.size()) {
    return absl::InvalidArgumentError(absl::StrCat("solution has ", solution.kernels.size(),
                                                   " kernels but ", code.size(),
                                                   " code objects were given"));
  }
  std::unique_ptr<Invoker> inv(new Invoker(device, std::move(solution)));
  for (size_t i = 0; i < code.size(); ++i) {
    absl::StatusOr<std::shared_ptr<backend::Module>> m;
    if (modules != nullptr) {
      m = modules->Load(device, code[i]);
    } else if (absl::StatusOr<std::unique_ptr<backend::Module>> own = device.Load(code[i]); own.ok()) {
      m = std::shared_ptr<backend::Module>(*std::move(own));
    } else {
      m = own.status();
    }
    if (!m.ok()) return m.status();
    std::vector<backend::Kernel> entries;
    for (const std::string& name : inv->solution_.kernels[i].entries) {
      absl::StatusOr<backend::Kernel> k = (*m)->GetKernel(name);
      if (!k.ok()) return k.status();
      entries.push_back(*k);
    }
    inv->modules_.push_back(*std::move(m));
    inv->kernels_.push_back(std::move(entries));
  }
  for (const Launch& l : inv->solution_.launches) {
    if (l.kernel < 0 || l.kernel >= static_cast<int>(inv->kernels_.size())) {
      return absl::InvalidArgumentError(absl::StrCat("launch of unknown kernel ", l.kernel));
    }
  }
  return inv;
}

absl::Status Invoker::Run(const ConvBuffers& buffers) {
  if (solution_.workspace_bytes > 0 &&
      (buffers.workspace == nullptr || buffers.workspace->bytes() < solution_.workspace_bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("solution needs a workspace of ", solution_.workspace_bytes, " bytes"));
  }
  for (BufferRole role : solution_.zero_first) {
    const backend::DeviceBuffer* b = BufferFor(buffers, role);
    if (b == nullptr) return absl::InvalidArgumentError(absl::StrCat("no ", RoleName(role), " buffer"));
    if (absl::Status st = device_.Memset(*b, 0, b->bytes()); !st.ok()) return st;
  }
  for (size_t li = 0; li < solution_.launches.size(); ++li) {
    const Launch& l = solution_.launches[li];
    const std::vector<backend::Kernel>& entries = kernels_[l.kernel];
    const std::vector<std::string>& names = solution_.kernels[l.kernel].entries;
    const backend::Kernel* kernel = nullptr;
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == l.entry) kernel = &entries[i];
    if (kernel == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("launch names unknown entry '", l.entry, "'"));
    }
    backend::KernelArgs args;
    for (size_t ai = 0; ai < l.args.size(); ++ai) {
      const KernelArg& a = l.args[ai];
      switch (a.kind) {
        case KernelArg::Kind::kBuffer: {
          const backend::DeviceBuffer* b = BufferFor(buffers, a.role);
          if (b == nullptr) {
            return absl::InvalidArgumentError(absl::StrCat("no ", RoleName(a.role), " buffer"));
          }
          if (a.i < 0 || (a.i > 0 && static_cast<uint64_t>(a.i) >= b->bytes())) {
            return absl::InvalidArgumentError(
                absl::StrCat(RoleName(a.role), " buffer of ", b->bytes(), " bytes has no byte ", a.i));
          }
          args.Add<uint64_t>(b->address() + static_cast<uint64_t>(a.i));
          break;
        }
        case KernelArg::Kind::kI32: args.Add(static_cast<int32_t>(a.i)); break;
        case KernelArg::Kind::kI64: args.Add(static_cast<int64_t>(a.i)); break;
        case KernelArg::Kind::kF32: args.Add(a.f); break;
        case KernelArg::Kind::kWords: args.AddBytes(a.words.data(), a.words.size() * sizeof(int32_t), 4); break;
        case KernelArg::Kind::kTensorMap: {
          const backend::DeviceBuffer* b = BufferFor(buffers, a.role);
          if (b == nullptr) {
            return absl::InvalidArgumentError(absl::StrCat("no ", RoleName(a.role), " buffer"));
          }
          auto& cached = tensor_maps_[{li, ai}];
          if (cached.first != b->address()) {
            absl::StatusOr<backend::TensorMapBytes> map =
                device_.EncodeTensorMap(a.tensor_map, *b, static_cast<size_t>(a.i));
            if (!map.ok()) {
              return absl::Status(map.status().code(),
                                  absl::StrCat("tensor map of ", RoleName(a.role), ": ", map.status().message()));
            }
            cached = {b->address(), *map};
          }
          args.Add(cached.second);
          break;
        }
      }
    }
    if (absl::Status st = device_.Launch(*kernel, l.grid, l.block, l.shared_bytes, args); !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace tuna::solver

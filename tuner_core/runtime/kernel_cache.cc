#include "tuner_core/runtime/kernel_cache.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "spdlog/spdlog.h"
#include "tuner_core/backend/kernel_identity.h"
#include "tuner_core/solver/invoker.h"
#include "tuner_core/db/codec.h"
#include "tuner_core/runtime/db_files.h"

namespace tuna::runtime {
namespace {

constexpr std::string_view kMagic = "tuna-code-object 1";

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string SerializeCodeObject(const backend::CodeObject& code) {
  return absl::StrCat(std::string(kMagic), "\n", static_cast<int>(code.kind), "\n", code.arch, "\n",
                      code.compiler_version, "\n", absl::StrJoin(code.entries, ","), "\n",
                      code.bytes.size(), "\n", code.bytes);
}

absl::StatusOr<backend::CodeObject> ParseCodeObject(const std::string& data) {
  std::vector<std::string> header;
  size_t pos = 0;
  for (int i = 0; i < 6; ++i) {
    const size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) return absl::DataLossError("truncated code object header");
    header.push_back(data.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (header[0] != kMagic) return absl::DataLossError("not a tuna code object");
  int kind = 0;
  size_t size = 0;
  if (!absl::SimpleAtoi(header[1], &kind) || kind < 0 || kind > 2 || !absl::SimpleAtoi(header[5], &size) ||
      data.size() - pos != size) {
    return absl::DataLossError("bad code object header");
  }
  backend::CodeObject code;
  code.kind = static_cast<backend::BackendKind>(kind);
  code.arch = header[2];
  code.compiler_version = header[3];
  if (!header[4].empty()) code.entries = absl::StrSplit(header[4], ',');
  code.bytes = data.substr(pos);
  return code;
}

KernelCache::KernelCache(const backend::Backend& backend, std::string arch, std::string cache_dir,
                         std::vector<std::string> kdb_paths)
    : backend_(backend), arch_(std::move(arch)), cache_dir_(std::move(cache_dir)),
      kdb_paths_(std::move(kdb_paths)) {}

std::string KernelCache::KdbName(const solver::KernelBuild& build) {
  return db::MakeTunaKernelDbEntry(build.source, build.options, "", "").kernel_name;
}

std::string KernelCache::KdbArgs(const solver::KernelBuild& build, const std::string& arch) {
  return db::MakeTunaKernelDbEntry(build.source, build.options, BareArch(arch), "").kernel_args;
}


absl::StatusOr<backend::CodeObject> KernelCache::Get(const solver::KernelBuild& build) {
  absl::StatusOr<backend::CompileRequest> req = solver::CompileRequestFor(build, arch_);
  if (!req.ok()) return req.status();

  // 1. System kernel db.
  if (!kdb_opened_) {
    kdb_opened_ = true;
    for (const std::string& p : kdb_paths_) {
      std::error_code ec;
      if (p.empty() || !std::filesystem::is_regular_file(p, ec)) continue;
      absl::StatusOr<db::KernelDbReader> r = db::KernelDbReader::Open(p);
      if (r.ok()) {
        kdb_.emplace(*std::move(r));
        spdlog::debug("kernel db {}", p);
        break;
      }
      spdlog::warn("kernel db {}: {}", p, r.status().ToString());
    }
  }
  if (kdb_.has_value()) {
    absl::StatusOr<std::string> blob = kdb_->Find(KdbName(build), KdbArgs(build, arch_));
    if (blob.ok()) {
      ++stats_.kdb_hits;
      backend::CodeObject code;
      code.kind = backend_.Kind();
      code.arch = arch_;
      code.compiler_version = "kdb";
      code.entries = build.entries;
      code.bytes = *std::move(blob);
      return code;
    }
    if (!absl::IsNotFound(blob.status())) spdlog::warn("kernel db entry {}: {}", KdbName(build), blob.status().ToString());
  }

  // 2. Cache directory.
  std::string path;
  if (!cache_dir_.empty()) {
    path = absl::StrCat(cache_dir_, "/", backend::KernelIdentity(backend_, *req), ".co");
    if (std::optional<std::string> data = ReadFile(path); data.has_value()) {
      absl::StatusOr<backend::CodeObject> code = ParseCodeObject(*data);
      if (code.ok() && code->kind == backend_.Kind() && code->arch == arch_) {
        ++stats_.cache_hits;
        return code;
      }
      spdlog::warn("kernel cache {}: {}; recompiling", path,
                   code.ok() ? "another backend or arch" : code.status().ToString());
    }
  }

  // 3. Compile.
  absl::StatusOr<backend::CodeObject> code = backend_.Compile(*req);
  if (!code.ok()) return absl::Status(code.status().code(), absl::StrCat(build.source, ": ", code.status().message()));
  ++stats_.compilations;
  if (!path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(cache_dir_, ec);
    const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << SerializeCodeObject(*code);
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
      spdlog::warn("kernel cache: cannot store {}: {}", path, ec.message());
      std::filesystem::remove(tmp, ec);
    }
  }
  return code;
}

absl::StatusOr<std::vector<backend::CodeObject>> KernelCache::Get(const solver::Solution& solution) {
  std::vector<backend::CodeObject> out;
  for (const solver::KernelBuild& k : solution.kernels) {
    absl::StatusOr<backend::CodeObject> c = Get(k);
    if (!c.ok()) return c.status();
    out.push_back(*std::move(c));
  }
  return out;
}

}  // namespace tuna::runtime

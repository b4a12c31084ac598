#include "tuner_core/backend/disk_kernel_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/hash/sha256.h"

namespace tuna::backend {
namespace {

constexpr std::string_view kMagic("TUNAKC\r\n", 8);
constexpr size_t kChecksumBytes = 32;

bool IsKey(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) || absl::ascii_isupper(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PutStr(std::string& out, std::string_view s) {
  const uint64_t n = s.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out.append(s);
}

// Reads the fields of a file in order; any read past the end sets `truncated`.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  uint32_t U32() {
    uint64_t v = Uint(4);
    return static_cast<uint32_t>(v);
  }
  std::string Str() {
    const uint64_t n = Uint(8);
    if (truncated_ || n > data_.size() - pos_) {
      truncated_ = true;
      return {};
    }
    std::string s(data_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  bool truncated() const { return truncated_; }
  size_t pos() const { return pos_; }

 private:
  uint64_t Uint(int bytes) {
    if (truncated_ || data_.size() - pos_ < static_cast<size_t>(bytes)) {
      truncated_ = true;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i);
    pos_ += bytes;
    return v;
  }
  std::string_view data_;
  size_t pos_ = 0;
  bool truncated_ = false;
};

std::string RawSha256(std::string_view data) {
  return absl::HexStringToBytes(hash::Sha256Hex(data));
}

std::optional<BackendKind> KindByName(const std::string& name) {
  for (BackendKind k : {BackendKind::kCpu, BackendKind::kCuda, BackendKind::kHip}) {
    if (name == BackendKindName(k)) return k;
  }
  return std::nullopt;
}

// Makes `dir` (mode 0700 when created) and checks that only this user can write it.
absl::Status MakePrivateDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(absl::StrCat("kernel cache: cannot create ", dir, ": ", std::strerror(errno)));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("kernel cache: ", dir, " is not a directory"));
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kernel cache: ", dir, " must be owned by this user and not writable by group or others "
        "(its kernels are loaded as code; `chmod 700` it or choose another directory)"));
  }
  return absl::OkStatus();
}

std::optional<std::string> ReadWhole(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

absl::Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::InternalError(absl::StrCat("kernel cache: write ", path, ": ", std::strerror(errno)));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<DiskKernelCache>> DiskKernelCache::Open(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("kernel cache: empty directory name");
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(dir, ec).lexically_normal();
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::string normal = p.string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  if (absl::Status st = MakePrivateDir(normal); !st.ok()) return st;
  return std::unique_ptr<DiskKernelCache>(new DiskKernelCache(normal));
}

std::string DiskKernelCache::PathOf(const std::string& key) const {
  return absl::StrCat(dir_, "/", key.substr(0, 2), "/", key);
}

std::string DiskKernelCache::Serialize(const std::string& key, const CodeObject& code) {
  std::string out(kMagic);
  PutU32(out, kFormatVersion);
  PutStr(out, key);
  PutStr(out, BackendKindName(code.kind));
  PutStr(out, code.arch);
  PutStr(out, code.compiler_version);
  PutU32(out, static_cast<uint32_t>(code.entries.size()));
  for (const std::string& e : code.entries) PutStr(out, e);
  PutStr(out, code.bytes);
  out += RawSha256(out);
  return out;
}

absl::StatusOr<CodeObject> DiskKernelCache::Parse(const std::string& key, const std::string& data) {
  if (data.size() < kMagic.size() || std::string_view(data).substr(0, kMagic.size()) != kMagic) {
    return absl::DataLossError("not a tuna kernel cache file (bad magic)");
  }
  if (data.size() < kMagic.size() + 4 + kChecksumBytes) return absl::DataLossError("truncated file");
  Reader r(std::string_view(data).substr(kMagic.size()));
  const uint32_t version = r.U32();
  if (version != kFormatVersion) {
    return absl::DataLossError(absl::StrCat("format version ", version, ", this build reads ", kFormatVersion));
  }
  const std::string_view body(data.data(), data.size() - kChecksumBytes);
  if (RawSha256(body) != std::string_view(data).substr(body.size())) {
    return absl::DataLossError("checksum mismatch (truncated or damaged file)");
  }
  Reader f(body.substr(kMagic.size() + 4));
  const std::string stored_key = f.Str();
  const std::string kind = f.Str();
  CodeObject code;
  code.arch = f.Str();
  code.compiler_version = f.Str();
  const uint32_t entries = f.U32();
  for (uint32_t i = 0; i < entries && !f.truncated(); ++i) code.entries.push_back(f.Str());
  code.bytes = f.Str();
  if (f.truncated()) return absl::DataLossError("a field runs past the end of the file");
  if (f.pos() != body.size() - kMagic.size() - 4) return absl::DataLossError("trailing bytes after the code object");
  if (stored_key != key) return absl::DataLossError(absl::StrCat("the file holds key ", stored_key));
  std::optional<BackendKind> k = KindByName(kind);
  if (!k) return absl::DataLossError(absl::StrCat("unknown backend kind '", absl::CEscape(kind), "'"));
  code.kind = *k;
  return code;
}

std::optional<CodeObject> DiskKernelCache::Get(const std::string& key) const {
  if (!IsKey(key)) return std::nullopt;
  const std::string path = PathOf(key);
  std::optional<std::string> data = ReadWhole(path);
  if (!data) return std::nullopt;
  absl::StatusOr<CodeObject> code = Parse(key, *data);
  if (code.ok()) return *std::move(code);
  std::lock_guard<std::mutex> lock(mu_);
  if (reported_.insert(key).second) {
    spdlog::warn("kernel cache: {}: {}; treated as a miss (the next build replaces it)", path,
                 std::string(code.status().message()));
  }
  return std::nullopt;
}

absl::Status DiskKernelCache::Put(const std::string& key, const CodeObject& code) const {
  if (!IsKey(key)) return absl::InvalidArgumentError(absl::StrCat("kernel cache: bad key '", absl::CEscape(key), "'"));
  const std::string sub = absl::StrCat(dir_, "/", key.substr(0, 2));
  if (::mkdir(sub.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("kernel cache: cannot create ", sub, ": ", std::strerror(errno)));
  }
  const std::string path = PathOf(key);
  std::string tmp = absl::StrCat(path, ".tmp.XXXXXX");
  const int fd = ::mkstemp(tmp.data());  // mode 0600, a name no other writer has
  if (fd < 0) return absl::InternalError(absl::StrCat("kernel cache: cannot create a file in ", sub, ": ", std::strerror(errno)));
  absl::Status st = WriteAll(fd, Serialize(key, code), tmp);
  if (::close(fd) != 0 && st.ok()) {
    st = absl::InternalError(absl::StrCat("kernel cache: close ", tmp, ": ", std::strerror(errno)));
  }
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    st = absl::InternalError(absl::StrCat("kernel cache: rename to ", path, ": ", std::strerror(errno)));
  }
  if (!st.ok()) ::unlink(tmp.c_str());
  return st;
}

}  // namespace tuna::backend

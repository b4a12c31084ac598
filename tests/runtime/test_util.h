// Shared helpers of the runtime tests: temp dirs, a CPU handle with an explicit config, buffers.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/fixtures/read_file.h"
#include "tuner_core/backend/cpu/cpu_backend.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/transpose.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"
#include "tuner_core/runtime/convolution.h"
#include "tuner_core/runtime/handle.h"
#include "tuner_core/solver/solution.h"

namespace tuna::testing {

// A fresh directory under TEST_TMPDIR (or /tmp), removed at destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    const char* base = std::getenv("TEST_TMPDIR");
    path_ = std::filesystem::path(base != nullptr ? base : "/tmp") / ("rt_" + name + "_" + std::to_string(counter()++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& s) const { return (path_ / s).string(); }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::filesystem::path path_;
};

inline bool FileExists(const std::string& p) { return std::filesystem::exists(p); }

inline Problem ParseOne(const std::string& line) {
  auto v = ParseDriverLine(line);
  if (!v.ok() || v->size() != 1) std::abort();
  return v->front();
}

// A config with every directory explicit (nothing from the environment).
inline runtime::RuntimeConfig CpuConfig(const std::string& user, const std::string& system, const std::string& cache) {
  runtime::RuntimeConfig c;
  c.backend = "cpu";
  c.user_db_dir = user;
  c.system_db_dir = system;
  c.kernel_cache_dir = cache;
  c.search_budget = 1;
  return c;
}

inline absl::StatusOr<std::unique_ptr<runtime::Handle>> CpuHandle(const runtime::RuntimeConfig& c,
                                                                  std::vector<std::string>* log = nullptr) {
  runtime::HandleOptions o;
  o.config = c;
  if (log != nullptr) o.log_sink = [log](const std::string& l) { log->push_back(l); };
  return runtime::Handle::Create(std::move(o));
}

// Runs `solver_id` through Immediate on random inputs and verifies against the reference. A
// transposed problem runs as its convolution, its buffers passed as it names them (x and y swapped).
inline absl::StatusOr<reference::VerifyReport> RunAndVerify(runtime::Handle& h, const Problem& given,
                                                            uint64_t solver_id) {
  absl::StatusOr<Problem> conv = AsConvolution(given);
  if (!conv.ok()) return conv.status();
  const Problem& p = *conv;
  backend::Device& dev = h.device();
  const int written = static_cast<int>(solver::WrittenRole(p.direction));
  const int64_t counts[3] = {p.XDesc().ElementCount(), p.WDesc().ElementCount(), p.YDesc().ElementCount()};
  std::vector<std::byte> host[3];
  backend::DeviceBuffer buf[3];
  for (int i = 0; i < 3; ++i) {
    const reference::ElementType t = i == written ? reference::OutputType(p, p.direction) : reference::StorageType(p.data_type);
    host[i] = i == written ? std::vector<std::byte>(counts[i] * reference::ElementSize(t), std::byte{0xff})
                           : reference::RandomBuffer(t, counts[i], 5 + i);
    auto b = dev.Alloc(host[i].size());
    if (!b.ok()) return b.status();
    buf[i] = *std::move(b);
    if (auto st = dev.CopyToDevice(buf[i], host[i].data(), host[i].size()); !st.ok()) return st;
  }
  auto wsz = runtime::GetSolutionWorkspaceSize(h, given, solver_id);
  if (!wsz.ok()) return wsz.status();
  backend::DeviceBuffer ws;
  if (*wsz > 0) {
    auto b = dev.Alloc(*wsz);
    if (!b.ok()) return b.status();
    ws = *std::move(b);
  }
  solver::ConvBuffers cb{&buf[0], &buf[1], &buf[2], ws.valid() ? &ws : nullptr};
  if (given.mode == ConvMode::kTrans) std::swap(cb.x, cb.y);
  if (auto st = runtime::Immediate(h, given, solver_id, cb); !st.ok()) return st;
  if (auto st = dev.Synchronize(); !st.ok()) return st;
  std::vector<std::byte> got(host[written].size()), expected(host[written].size());
  if (auto st = dev.CopyToHost(got.data(), buf[written], got.size()); !st.ok()) return st;
  reference::ConvTensors t{host[0].data(), host[1].data(), host[2].data(), expected.data()};
  if (auto st = reference::RunConv(p, t); !st.ok()) return st;
  return reference::VerifyConvOutput(p, p.direction, got.data(), expected.data());
}

}  // namespace tuna::testing

// Shared steps of the GPU solver tests: the valid configs of a space, and one config of a
// solver (any direction) run on a device against a reference output (compiled once per build, outputs and
// workspace poisoned first, every element checked). Catch2 assertions inside; test-only.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/backend/hip/hip_backend.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"
#include "tuner_core/solver/invoker.h"
#include "tuner_core/solver/solver.h"

namespace tuna::testing {

// The CUDA backend for NVRTC builds, or nullptr after a warning when this host has no NVRTC (a
// fresh Debian machine has no /usr/local/cuda: BUILDING.md), the caller then returning.
inline std::unique_ptr<backend::Backend> NvrtcBackendOrSkip() {
  std::unique_ptr<backend::Backend> be = backend::NewCudaBackend(backend::CudaBackendOptions::FromEnv());
  if (absl::Status st = be->CompilerStatus(); !st.ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + st.ToString());
    return nullptr;
  }
  return be;
}

// The solver target of `arch` ("sm_90", "gfx90a", ...), which must exist.
inline solver::Target ArchTarget(const std::string& arch) {
  absl::StatusOr<solver::Target> t = solver::TargetForArch(arch);
  REQUIRE(t.ok());
  return *t;
}

inline std::vector<solver::PerfConfig> AllValid(const solver::Solver& s, const solver::Target& t, const Problem& p) {
  std::vector<solver::PerfConfig> out;
  const solver::SearchSpace space = s.Space(t, p);
  for (uint64_t i = 0; i < space.Size(); ++i) {
    solver::PerfConfig c = space.At(i);
    if (s.IsValid(t, p, c).ok()) out.push_back(c);
  }
  return out;
}

// One valid config of `p` per tile shape: the first of each set of valid configs that differ only in
// their STAGES (the ring depth changes no code path), for compile tests.
inline std::vector<solver::PerfConfig> OnePerTileShape(const solver::Solver& s, const solver::Target& t,
                                                       const Problem& p) {
  const int stages = s.Space(t, p).IndexOf("STAGES");
  std::set<std::vector<int64_t>> shapes;
  std::vector<solver::PerfConfig> out;
  for (const solver::PerfConfig& c : AllValid(s, t, p)) {
    std::vector<int64_t> shape = c.values;
    shape[stages] = 0;
    if (shapes.insert(shape).second) out.push_back(c);
  }
  return out;
}

// The valid configs of `p` whose value on axis index `axis` is `value`: the first `most` of them,
// the last of those replaced by the last such config when there are more (most > 1: the first and
// the last); empty when none is valid.
inline std::vector<solver::PerfConfig> FirstAndLastWith(const solver::Solver& s, const solver::Target& t,
                                                        const Problem& p, int axis, int64_t value, size_t most) {
  std::vector<solver::PerfConfig> picked;
  for (const solver::PerfConfig& c : AllValid(s, t, p)) {
    if (c.values[axis] != value) continue;
    if (picked.size() < most) {
      picked.push_back(c);
    } else if (most > 1) {
      picked.back() = c;
    }
  }
  return picked;
}

// The configs a device check runs on `p`: the default, its finishing-step build (Specialize) where
// the solver offers one, `random` valid ones drawn with `rng`, and
// the first valid config whose value on axis index `split_axis` is above 1 (a split one; -1: none).
inline std::vector<solver::PerfConfig> DeviceCheckConfigs(const solver::Solver& s, const solver::Target& t,
                                                          const Problem& p, std::mt19937_64& rng, int random,
                                                          int split_axis) {
  std::vector<solver::PerfConfig> configs = {s.DefaultConfig(t, p)};
  // The finishing step's build of the default, where the solver offers one.
  if (std::optional<solver::PerfConfig> spec = s.Specialize(t, p, configs.front())) configs.push_back(*spec);
  const std::vector<solver::PerfConfig> valid = AllValid(s, t, p);
  for (int k = 0; k < random && !valid.empty(); ++k) configs.push_back(valid[rng() % valid.size()]);
  for (const solver::PerfConfig& v : valid) {
    if (split_axis >= 0 && v.values[split_axis] > 1) {
      configs.push_back(v);
      break;
    }
  }
  return configs;
}

// NVRTC builds of a solver's configs for sm_90 (wgmma: "sm_90a" code objects), each distinct
// option set compiled once; REQUIREs every build to succeed.
class Sm90aBuilds {
 public:
  Sm90aBuilds(const backend::Backend& backend, const solver::Solver& solver, solver::Target target)
      : backend_(backend), solver_(solver), target_(std::move(target)) {}

  void Build(const Problem& p, const solver::PerfConfig& c) {
    absl::StatusOr<solver::Solution> sol = solver_.GetSolution(target_, p, c);
    INFO(p.Canonical() << " params " << c.ToString());
    REQUIRE(sol.ok());
    std::string key;
    for (const auto& o : sol->kernels[0].options) key += o + " ";
    if (!done_.insert(key).second) return;
    absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(backend_, *sol, target_.arch);
    if (!code.ok()) std::printf("%s\n", std::string(code.status().message()).substr(0, 4000).c_str());
    REQUIRE(code.ok());
    CHECK((*code)[0].arch == "sm_90a");
  }
  size_t distinct() const { return done_.size(); }

 private:
  const backend::Backend& backend_;
  const solver::Solver& solver_;
  solver::Target target_;
  std::set<std::string> done_;
};

// NVRTC (sm_90) and hiprtc (gfx90a) builds of a solver's default configs, for the portable
// kernels: each backend whose compiler this host has builds Build(s, p)'s default config for its
// target; a failed build prints the compiler's log and fails the case (REQUIRE).
class PortableDefaultBuilds {
 public:
  PortableDefaultBuilds()
      : cuda_(backend::NewCudaBackend(backend::CudaBackendOptions::FromEnv())),
        hip_(backend::NewHipBackend(backend::HipBackendOptions::FromEnv())) {
    absl::StatusOr<solver::Target> sm90 = solver::TargetForArch("sm_90");
    absl::StatusOr<solver::Target> gfx = solver::TargetForArch("gfx90a");
    REQUIRE(sm90.ok());
    REQUIRE(gfx.ok());
    sm90_ = *sm90;
    gfx90a_ = *gfx;
    for (const backend::Backend* be : {cuda_.get(), hip_.get()}) {
      if (!be->CompilerStatus().ok()) ::tuna::testing::SkipUnlessCi("compiler unavailable: " + be->CompilerStatus().ToString());
    }
  }
  bool has_nvrtc() const { return cuda_->CompilerStatus().ok(); }
  int built() const { return built_; }

  void Build(const solver::Solver& s, const Problem& p) {
    INFO(s.Name() << " " << p.Canonical());
    for (auto [be, target] : {std::pair{cuda_.get(), &sm90_}, std::pair{hip_.get(), &gfx90a_}}) {
      if (!be->CompilerStatus().ok()) continue;
      absl::StatusOr<solver::Solution> sol = s.GetSolution(*target, p, s.DefaultConfig(*target, p));
      REQUIRE(sol.ok());
      absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(*be, *sol, target->arch);
      if (!code.ok()) std::printf("%s\n", std::string(code.status().message()).substr(0, 3000).c_str());
      REQUIRE(code.ok());
      ++built_;
    }
  }

 private:
  std::unique_ptr<backend::Backend> cuda_, hip_;
  solver::Target sm90_, gfx90a_;
  int built_ = 0;
};

// CUDA device 0 for a "[gpu]" case. nullopt after a WARN when the host has no CUDA driver, no
// device, or a device older than sm_<min_sm> (the case then returns and passes); a host whose
// driver works but whose compiler or device 0 does not fails the case (REQUIRE).
struct CudaDeviceForTest {
  std::unique_ptr<backend::Backend> backend;
  std::unique_ptr<backend::Device> device;
  solver::Target target;
};
inline std::optional<CudaDeviceForTest> OpenCudaDeviceOrSkip(int min_sm, int max_sm = 0) {
  CudaDeviceForTest d;
  d.backend = backend::NewCudaBackend(backend::CudaBackendOptions::FromEnv());
  if (absl::Status st = d.backend->DriverStatus(); !st.ok()) {
    WARN("skipping: CUDA driver unavailable: " << st.message());
    return std::nullopt;
  }
  REQUIRE(d.backend->CompilerStatus().ok());
  absl::StatusOr<std::vector<backend::DeviceInfo>> devices = d.backend->ListDevices();
  REQUIRE(devices.ok());
  if (devices->empty()) {
    WARN("skipping: no CUDA device");
    return std::nullopt;
  }
  absl::StatusOr<std::unique_ptr<backend::Device>> dev = d.backend->OpenDevice(0);
  REQUIRE(dev.ok());
  d.device = *std::move(dev);
  d.target = solver::TargetForDevice(backend::BackendKind::kCuda, d.device->Info());
  if (d.target.SmVersion() < min_sm || (max_sm > 0 && d.target.SmVersion() > max_sm)) {
    WARN("skipping: device " << d.target.arch << " is not what this case needs");
    return std::nullopt;
  }
  return d;
}

// Runs configs of solvers of any direction on one device; builds are cached by their options.
// The two inputs of the problem's direction are random, the output is poisoned before each run.
class ConvChecker {
 public:
  ConvChecker(const backend::Backend& backend, backend::Device& device, solver::Target target)
      : backend_(backend), device_(device), target_(std::move(target)) {}

  // Runs every config on one set of random inputs (seeded by the problem) against the CPU
  // reference, CHECKing each; returns how many failed.
  int CheckAll(const solver::Solver& s, const Problem& p, const std::vector<solver::PerfConfig>& configs) {
    const reference::ElementType et = reference::StorageType(p.data_type);
    const uint64_t seed = std::hash<std::string>()(p.Canonical());
    const size_t esize = DataTypeSize(p.data_type);
    std::vector<std::byte> hx = reference::RandomBuffer(et, p.XDesc().ElementCount(), seed + 1);
    std::vector<std::byte> hw = reference::RandomBuffer(et, p.WDesc().ElementCount(), seed + 2);
    std::vector<std::byte> hy = reference::RandomBuffer(et, p.YDesc().ElementCount(), seed + 3);
    std::vector<std::byte>* out = &hy;
    switch (p.direction) {
      case Direction::kForward:
        REQUIRE(reference::ConvForward(p, hx.data(), hw.data(), hy.data()).ok());
        break;
      case Direction::kBackwardData:
        out = &hx;
        REQUIRE(reference::ConvBackwardData(p, hy.data(), hw.data(), hx.data()).ok());
        break;
      case Direction::kBackwardWeights:
        out = &hw;
        REQUIRE(reference::ConvBackwardWeights(p, hx.data(), hy.data(), hw.data()).ok());
        break;
    }
    REQUIRE(out->size() % esize == 0);
    absl::StatusOr<backend::DeviceBuffer> x = device_.Alloc(hx.size()), w = device_.Alloc(hw.size()),
                                          y = device_.Alloc(hy.size());
    REQUIRE(x.ok());
    REQUIRE(w.ok());
    REQUIRE(y.ok());
    REQUIRE(device_.CopyToDevice(*x, hx.data(), hx.size()).ok());
    REQUIRE(device_.CopyToDevice(*w, hw.data(), hw.size()).ok());
    REQUIRE(device_.CopyToDevice(*y, hy.data(), hy.size()).ok());
    backend::DeviceBuffer& target_buf = out == &hx ? *x : out == &hw ? *w : *y;
    int failures = 0;
    for (const solver::PerfConfig& config : configs) {
      const bool ok = Check(s, p, config, *x, *w, *y, target_buf, *out);
      CHECK(ok);
      failures += ok ? 0 : 1;
    }
    return failures;
  }

  // Runs `config` on x, w, y with `output` (one of them) poisoned and compares it with
  // `expected`; prints one line. Returns whether the output passed.
  bool Check(const solver::Solver& s, const Problem& p, const solver::PerfConfig& config,
             backend::DeviceBuffer& x, backend::DeviceBuffer& w, backend::DeviceBuffer& y,
             backend::DeviceBuffer& output, const std::vector<std::byte>& expected) {
    INFO("params " << config.ToString());
    absl::StatusOr<solver::Solution> sol = s.GetSolution(target_, p, config);
    REQUIRE(sol.ok());
    std::string key;
    for (const auto& k : sol->kernels) {
      key += k.source;
      for (const auto& o : k.options) key += " " + o;
    }
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(backend_, *sol, target_.arch);
      if (!code.ok()) std::printf("%s\n", std::string(code.status().message()).substr(0, 3000).c_str());
      REQUIRE(code.ok());
      it = cache_.emplace(key, *std::move(code)).first;
    }
    absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = solver::Invoker::Create(device_, *sol, it->second);
    REQUIRE(inv.ok());
    REQUIRE(device_.Memset(output, 0xff, output.bytes()).ok());
    std::optional<backend::DeviceBuffer> ws;
    if (sol->workspace_bytes > 0) {
      absl::StatusOr<backend::DeviceBuffer> b = device_.Alloc(sol->workspace_bytes);
      REQUIRE(b.ok());
      ws.emplace(*std::move(b));
      REQUIRE(device_.Memset(*ws, 0xff, ws->bytes()).ok());
    }
    absl::Status run = (*inv)->Run({&x, &w, &y, ws ? &*ws : nullptr});
    if (run.ok()) run = device_.Synchronize();
    INFO(run.message());
    REQUIRE(run.ok());
    std::vector<std::byte> got(expected.size());
    REQUIRE(device_.CopyToHost(got.data(), output, got.size()).ok());
    absl::StatusOr<reference::VerifyReport> rep =
        reference::VerifyConvOutput(p, p.direction, got.data(), expected.data());
    REQUIRE(rep.ok());
    std::printf("%-4s %-15s %-4s max_rel %.3g rms %.3g params %-16s %s\n", rep->ok ? "ok" : "FAIL",
                std::string(s.Name()).c_str(), std::string(DataTypeName(p.data_type)).c_str(), rep->max_rel_error,
                rep->rms_error, config.ToString().c_str(), p.Canonical().c_str());
    if (!rep->ok) std::printf("     %s\n", rep->Summary().c_str());
    return rep->ok;
  }

 private:
  const backend::Backend& backend_;
  backend::Device& device_;
  solver::Target target_;
  std::map<std::string, std::vector<backend::CodeObject>> cache_;
};

// A device check's counts over its problems.
struct DeviceTally {
  int runs = 0, failures = 0;
};

// Runs DeviceCheckConfigs(s, t, p, rng, random, split_axis) of each problem (REQUIRE-ing that
// `s` applies) through `checker`, adding to `tally`.
inline void CheckOnDevice(ConvChecker& checker, const solver::Solver& s, const solver::Target& t,
                          const std::vector<Problem>& problems, std::mt19937_64& rng, int split_axis,
                          DeviceTally& tally, int random = 2) {
  for (const Problem& p : problems) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(t, p).ok());
    const std::vector<solver::PerfConfig> configs = DeviceCheckConfigs(s, t, p, rng, random, split_axis);
    tally.failures += checker.CheckAll(s, p, configs);
    tally.runs += static_cast<int>(configs.size());
  }
}

}  // namespace tuna::testing

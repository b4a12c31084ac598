// Shared set-up of the cpu-backend search tests: backend, device and target, or a skip.
#pragma once

#include <memory>
#include <string>

#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tuner_core/backend/cpu/cpu_backend.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/solver/target.h"

namespace tuna::search::testing {

struct CpuFixture {
  std::unique_ptr<backend::Backend> backend = backend::NewCpuBackend(backend::CpuBackendOptions::FromEnv());
  std::unique_ptr<backend::Device> device;
  solver::Target target;
  bool ok = false;

  CpuFixture() {
    if (!backend->CompilerStatus().ok()) {
      ::tuna::testing::SkipUnlessCi("no C++ compiler for the cpu backend: " +
                                    backend->CompilerStatus().ToString());
      return;
    }
    auto d = backend->OpenDevice(0);
    REQUIRE(d.ok());
    device = *std::move(d);
    target = solver::TargetForDevice(backend::BackendKind::kCpu, device->Info());
    ok = true;
  }
};

inline Problem ParseOne(const std::string& line) {
  auto p = ParseDriverLine(line);
  INFO(line << ": " << p.status().ToString());
  REQUIRE(p.ok());
  REQUIRE(p->size() == 1);
  return p->front();
}

}  // namespace tuna::search::testing

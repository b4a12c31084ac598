// HangGuard: fires once for a span that outlives its limit, never for spans that end in time or
// when the limit is off; the report names the span.
#include "bench/kernels/hang_guard.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "catch2/catch.hpp"

namespace tuna::bench {
namespace {

struct Reports {
  std::mutex mu;
  std::vector<std::string> what;
  HangGuard::OnHang Callback() {
    return [this](const std::string& w, absl::Duration) {
      std::lock_guard<std::mutex> lock(mu);
      what.push_back(w);
    };
  }
  size_t Count() {
    std::lock_guard<std::mutex> lock(mu);
    return what.size();
  }
};

TEST_CASE("hang guard reports a span that outlives its limit, once", "[bench]") {
  Reports reports;
  {
    HangGuard guard(absl::Milliseconds(50), reports.Callback());
    guard.Arm("fast 1");
    guard.Disarm();
    guard.Arm("slow");
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // 8x the limit
    guard.Disarm();
    guard.Arm("fast 2");
    guard.Disarm();
  }
  REQUIRE(reports.Count() == 1);
  CHECK(reports.what[0] == "slow");
}

TEST_CASE("hang guard stays quiet for spans that end in time and when off", "[bench]") {
  Reports reports;
  {
    HangGuard guard(absl::Seconds(5), reports.Callback());
    for (int i = 0; i < 200; ++i) {
      guard.Arm("span " + std::to_string(i));
      guard.Disarm();
    }
    guard.Arm("left armed at destruction");  // destruction does not report it
  }
  {
    HangGuard off(absl::ZeroDuration(), reports.Callback());
    off.Arm("off");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    off.Disarm();
  }
  CHECK(reports.Count() == 0);
}

TEST_CASE("hang guard times each span from its own Arm", "[bench]") {
  Reports reports;
  {
    HangGuard guard(absl::Seconds(1), reports.Callback());
    // Fifteen spans of 100 ms, back to back: 1.5 s armed in all, none near the limit.
    for (int i = 0; i < 15; ++i) {
      guard.Arm("span " + std::to_string(i));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      guard.Disarm();
    }
  }
  CHECK(reports.Count() == 0);
}

}  // namespace
}  // namespace tuna::bench

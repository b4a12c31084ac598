// --log-format json: every line a valid JSON object even when the message holds quotes,
// backslashes, newlines and other control bytes (a compiler error, a status payload).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "cli/logging.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

TEST_CASE("json logs escape the message") {
  const std::string dir = std::filesystem::temp_directory_path() / ("tuna_logging_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/log.jsonl";
  REQUIRE(tuna::cli::SetUpLogging("info", "json", file).ok());
  const std::string nasty = "kernel.cu(3): error: \"x\" undefined\n\tat C:\\path \x01\x1b[31m end";
  spdlog::info("{}", nasty);
  spdlog::warn("plain");
  spdlog::default_logger()->flush();
  std::ifstream in(file);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) {
    INFO(line);
    REQUIRE(nlohmann::json::accept(line));
    lines.push_back(nlohmann::json::parse(line));
  }
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["msg"] == nasty);  // round-trips byte for byte
  CHECK(lines[0]["level"] == "info");
  CHECK(lines[1]["msg"] == "plain");
  CHECK(tuna::cli::SetUpLogging("info", "text", "").ok());  // back to the default for other cases
  std::filesystem::remove_all(dir);
}

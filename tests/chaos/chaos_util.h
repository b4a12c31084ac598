// Helpers of the chaos tests (tests/chaos/): `tuna` processes against a test database, their
// logs, and the invariants every scenario checks.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "schema/store/connection_info.h"
#include "schema/store/database.h"

namespace tuna::testing {

// A `--db` URL for `connection` whose password is read from `option_file` (a [client] file).
std::string DbUrl(const schema::ConnectionInfo& connection, const std::string& option_file);

// The whole file ("" when missing).
std::string ReadWholeFile(const std::string& path);
// Lines of `path` containing `needle`.
int CountLines(const std::string& path, const std::string& needle);
// Waits up to `seconds` until `path` holds at least `n` lines containing `needle`.
bool WaitForLines(const std::string& path, const std::string& needle, int n, int seconds);
// The spdlog timestamps ("[YYYY-MM-DD hh:mm:ss.mmm]", this host's clock) of the lines of `path`
// containing `needle`, as seconds since the epoch.
std::vector<double> LineTimes(const std::string& path, const std::string& needle);

// The invariants of issue 15 over one session's jobs (all of them when session_id is 0).
struct Invariants {
  int64_t jobs = 0;
  int64_t evaluated = 0;
  int64_t failed = 0;                // healthy jobs: must be 0
  int64_t retries = 0;               // charged retries: must be 0 without a worker fault
  int64_t leased = 0;                // leases left behind: must be 0 at the end
  int64_t results = 0;               // perf_result + find_result rows
  int64_t sampled_attempts = 0;      // distinct (job, attempt) with eval samples
  int64_t doubled = 0;               // jobs with samples from two attempts: must be 0
  int64_t forgiven = 0;              // jobs whose last error says a lease expiry was forgiven
  std::string Summary() const;
};
Invariants CheckInvariants(schema::Database& db, int64_t session_id = 0);

}  // namespace tuna::testing

// What the MariaDB server says about the SQL it ran (bench/queue: the SQL work one lease costs):
// its global status counters, and statement shapes through the slow-query log table.
// Threads: as Database (any thread).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schema/store/database.h"

namespace tuna::schema {

// information_schema.GLOBAL_STATUS values by name (matched case-insensitively, as given); names the
// server does not know are absent.
absl::StatusOr<std::map<std::string, double>> GlobalStatus(Database& db, const std::vector<std::string>& names);

// Every statement to the slow log table from now on: log_output TABLE, long_query_time 0 (read
// when a connection opens: call before the connections to profile are made), the table emptied.
absl::Status StartSlowLog(Database& db);
absl::Status SetSlowLog(Database& db, bool on);

// A statement shape of the slow log (digits replaced by N, the first 110 characters).
struct StatementShape {
  std::string text;
  double count = 0;
  double seconds = 0;        // server time, summed
  double rows_examined = 0;  // summed
};
// The `limit` shapes of most server time, most first.
absl::StatusOr<std::vector<StatementShape>> SlowLogTop(Database& db, int limit);

}  // namespace tuna::schema

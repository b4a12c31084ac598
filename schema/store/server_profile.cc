#include "schema/store/server_profile.h"

#include <cstdlib>

#include "absl/strings/ascii.h"

namespace tuna::schema {
namespace {

absl::Status Unprepared(Database& db, const char* sql) {
  return db.WithConnection([&](Connection& c) { return c.ExecuteUnprepared(sql); });
}

}  // namespace

absl::StatusOr<std::map<std::string, double>> GlobalStatus(Database& db, const std::vector<std::string>& names) {
  std::map<std::string, double> out;
  for (const std::string& name : names) {
    auto rows = db.Query("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = ?",
                         {absl::AsciiStrToUpper(name)});
    if (!rows.ok()) return rows.status();
    if (!rows->empty()) out[name] = std::atof((*rows)[0].String(0).c_str());
  }
  return out;
}

absl::Status StartSlowLog(Database& db) {
  for (const char* sql : {"SET GLOBAL log_output = 'TABLE'", "SET GLOBAL long_query_time = 0",
                          "TRUNCATE TABLE mysql.slow_log"}) {
    if (absl::Status st = Unprepared(db, sql); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status SetSlowLog(Database& db, bool on) {
  return Unprepared(db, on ? "SET GLOBAL slow_query_log = 1" : "SET GLOBAL slow_query_log = 0");
}

absl::StatusOr<std::vector<StatementShape>> SlowLogTop(Database& db, int limit) {
  auto rows = db.Query(
      "SELECT LEFT(REGEXP_REPLACE(CONVERT(sql_text USING utf8mb4), '[0-9]+', 'N'), 110) AS q, COUNT(*), "
      "SUM(TIME_TO_SEC(query_time)), SUM(rows_examined) FROM mysql.slow_log GROUP BY q "
      "ORDER BY SUM(TIME_TO_SEC(query_time)) DESC LIMIT ?",
      {static_cast<int64_t>(limit)});
  if (!rows.ok()) return rows.status();
  std::vector<StatementShape> out;
  for (const auto& r : *rows) {
    out.push_back({r.String(0), std::atof(r.String(1).c_str()), std::atof(r.String(2).c_str()),
                   std::atof(r.String(3).c_str())});
  }
  return out;
}

}  // namespace tuna::schema

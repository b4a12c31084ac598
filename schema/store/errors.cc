#include "schema/store/errors.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tuna::schema {
namespace {
absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }
}  // namespace

bool IsConnectionError(int code, std::string_view sql_state, std::string_view message) {
  switch (code) {
    case 1040:  // ER_CON_COUNT_ERROR: too many connections
    case 1053:  // ER_SERVER_SHUTDOWN
    case 1927:  // ER_CONNECTION_KILLED (MariaDB)
    case 2002:  // CR_CONNECTION_ERROR (socket)
    case 2003:  // CR_CONN_HOST_ERROR (tcp)
    case 2006:  // CR_SERVER_GONE_ERROR
    case 2013:  // CR_SERVER_LOST
    case 2055:  // CR_SERVER_LOST_EXTENDED
    case 4031:  // ER_CLIENT_INTERACTION_TIMEOUT
      return true;
    default:
      break;
  }
  if (absl::StartsWith(AV(sql_state), "08")) return true;
  // Connector/C++ reports use of a dead connection object with error code 0.
  return code == 0 && (absl::StrContains(AV(message), "Connection has been closed") ||
                       absl::StrContains(AV(message), "connection is closed") ||
                       absl::StrContains(AV(message), "gone away") ||
                       absl::StrContains(AV(message), "Lost connection"));
}

bool IsTransientLockError(int code) { return code == 1213 || code == 1205; }

absl::Status StatusFromSqlError(int code, std::string_view sql_state, std::string_view message,
                                std::string_view context) {
  std::string text = absl::StrCat(AV(context), context.empty() ? "" : ": ", AV(message),
                                  " (mysql error ", code, ", SQLSTATE ",
                                  sql_state.empty() ? absl::string_view("-") : AV(sql_state), ")");
  if (IsConnectionError(code, sql_state, message)) return absl::UnavailableError(text);
  if (IsTransientLockError(code)) return absl::AbortedError(text);
  switch (code) {
    case 1062:
    case 1586:
      return absl::AlreadyExistsError(text);
    case 1451:
    case 1452:
    case 1146:
      return absl::FailedPreconditionError(text);
    case 1049:
      return absl::NotFoundError(text);
    case 1044:
    case 1045:
    case 1142:
    case 1143:
    case 1227:
    case 1698:
      return absl::PermissionDeniedError(text);
    case 1969:
    case 3024:
      return absl::DeadlineExceededError(text);
    case 1048:  // column cannot be null
    case 1054:  // unknown column
    case 1064:  // syntax
    case 1210:  // wrong arguments to prepared statement
    case 1264:  // out of range
    case 1292:  // truncated incorrect value
    case 1364:  // field has no default
    case 1365:  // division by 0
    case 1366:  // incorrect value
    case 1406:  // data too long
    case 1630:  // function does not exist
    case 4025:  // CHECK constraint failed
      return absl::InvalidArgumentError(text);
    default:
      return absl::InternalError(text);
  }
}

}  // namespace tuna::schema

// How MariaDB/MySQL errors become absl::Status codes. Callers branch on the code, so the
// mapping is part of the store's contract:
//   Unavailable       connection lost or refused, server gone or shutting down, too many
//                     connections (2002, 2003, 2006, 2013, 2055, 1040, 1053, 1927, 4031,
//                     SQLSTATE 08xxx) - retried with a fresh connection by Database
//   Aborted           deadlock (1213), lock wait timeout (1205) - the transaction was rolled
//                     back and is retried by Database
//   AlreadyExists     duplicate key (1062, 1586)
//   FailedPrecondition  foreign key violation (1451, 1452), table missing (1146: schema not
//                     migrated)
//   NotFound          unknown database (1049)
//   PermissionDenied  access denied (1044, 1045, 1142, 1143, 1227, 1698)
//   InvalidArgument   bad SQL or data (1048, 1054, 1064, 1264, 1292, 1364, 1366, 1406, ...)
//   DeadlineExceeded  statement time limit (1969, 3024)
//   Internal          everything else
// Messages read "<context>: <server message> (mysql error N, SQLSTATE S)" and never contain
// bound parameter values or passwords.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace tuna::schema {

absl::Status StatusFromSqlError(int error_code, std::string_view sql_state,
                                std::string_view message, std::string_view context);

// True for the codes above that mean "the connection is unusable; open a new one".
bool IsConnectionError(int error_code, std::string_view sql_state, std::string_view message);

// True for deadlock / lock wait timeout: the statement's transaction can be re-run as a whole.
bool IsTransientLockError(int error_code);

}  // namespace tuna::schema

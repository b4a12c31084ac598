// Where a MariaDB/MySQL server is and how to log in to it.
//
// The `--db` URL form is `mysql://user@host[:port]/database[?option_file=PATH][&socket=PATH]`.
// Passwords never travel in the URL (it would show in process lists, shell history and logs):
// a URL with `user:password@` is rejected. The password comes from, in this order:
//   1. the `[client]` section of the option file named by `?option_file=`,
//   2. the environment variable TUNA_DB_PASSWORD,
//   3. the `[client]` section of the option file named by TUNA_DB_OPTION_FILE.
// Parsing is pure (ParseDbUrl); reading files and the environment is ResolvePassword.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tuna::schema {

struct ConnectionInfo {
  std::string host = "127.0.0.1";
  int port = 3306;
  std::string socket;       // unix socket path; when set it is used instead of host:port
  std::string user;
  std::string password;     // never logged; see Redacted()
  std::string database;
  std::string option_file;  // where the password came from / should come from, if any

  // "mysql://user@host:port/db" (or "...@unix(/path)/db"): safe to log, never has the password.
  std::string Redacted() const;
  // The Connector/C++ host string: "tcp://host:port" or "unix:///path".
  std::string ConnectorHost() const;
};

// Parses a `--db` URL. InvalidArgument names what is wrong (scheme, user, port, password in the
// URL, unknown query parameter, ...). Does not read any file or environment variable.
absl::StatusOr<ConnectionInfo> ParseDbUrl(std::string_view url);

// Options read from the `[client]` (and `[tuna]`) sections of a MySQL-style option file.
struct OptionFileValues {
  std::optional<std::string> user, password, host, socket, database;
  std::optional<int> port;
};

// Reads a MySQL option file. NotFound when missing, PermissionDenied when unreadable,
// InvalidArgument for a malformed line (the message names the line number, never its value).
absl::StatusOr<OptionFileValues> ReadOptionFile(const std::string& path);

// Fills info->password following the order in the header comment. `getenv` is injectable for
// tests (default: std::getenv). Errors from a named option file are returned; no password at all
// is not an error (the server may allow it).
absl::Status ResolvePassword(ConnectionInfo* info,
                             const std::function<const char*(const char*)>& getenv = nullptr);

// ParseDbUrl + ResolvePassword.
absl::StatusOr<ConnectionInfo> ConnectionInfoFromUrl(std::string_view url);

// Which database the CLI uses, first match wins:
//   1. `flag_url` (--db URL);
//   2. TUNA_DB: a URL of the same form;
//   3. MITuna's variables: TUNA_DB_HOSTNAME (required for this source), TUNA_DB_NAME (required),
//      TUNA_DB_USER_NAME (required), TUNA_DB_USER_PASSWORD, TUNA_DB_PORT (default 3306);
//   4. `my_cnf` (the caller passes $HOME/.my.cnf) when it exists and its [client] or [tuna]
//      section names a `database` (host default 127.0.0.1, port 3306, or `socket`; user, else
//      $USER; password);
//   5. none: nullopt, the embedded server.
// Without a password of its own, 1-3 fall back to ResolvePassword's order. `getenv` is
// injectable for tests. InvalidArgument names the variable or file at fault (never a password);
// `source` (optional) receives where the answer came from ("--db", "TUNA_DB", "TUNA_DB_HOSTNAME",
// the option file's path, "embedded").
struct ResolvedDatabase {
  std::optional<ConnectionInfo> external;  // nullopt: the embedded server
  std::string source;
};
absl::StatusOr<ResolvedDatabase> ResolveDatabase(
    std::string_view flag_url, const std::string& my_cnf,
    const std::function<const char*(const char*)>& getenv = nullptr);

}  // namespace tuna::schema

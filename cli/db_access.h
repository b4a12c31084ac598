// How a subcommand gets its database from the global options (DESIGN §10): `--db URL` names an
// external server; otherwise the embedded server of `--data-dir` (default state dir) is started
// when it is not running. Either way the embedded migrations are applied first (a no-op when the
// schema is current; concurrent runners are serialised by the migrator's named lock) unless the
// caller asks for the schema as it is.
#pragma once

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "cli/command.h"
#include "schema/store/database.h"

namespace tuna::cli {

struct DbAccessOptions {
  int pool_size = 4;
  // false: the schema is left as it is (a reader such as export checks what it needs with
  // schema::RequireMigration instead of changing a production database's schema).
  bool migrate = true;
};

// Errors: the URL's InvalidArgument, the embedded server's start errors, connection errors,
// migration errors (e.g. FailedPrecondition for a database newer than this binary).
absl::StatusOr<std::unique_ptr<schema::Database>> OpenCommandDatabase(const GlobalOptions& global,
                                                                      DbAccessOptions options);
inline absl::StatusOr<std::unique_ptr<schema::Database>> OpenCommandDatabase(
    const GlobalOptions& global, int pool_size = 4) {
  return OpenCommandDatabase(global, DbAccessOptions{pool_size, true});
}

// The rows `Store::List()` reads from the command's database (a list subcommand's input): the
// errors of OpenCommandDatabase, then the store's.
template <typename Store>
auto ListRows(const GlobalOptions& global) -> decltype(std::declval<Store&>().List()) {
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) return db.status();
  Store store(**db);
  return store.List();
}

}  // namespace tuna::cli

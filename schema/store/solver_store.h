// The `solver` table: the registry's solvers (DESIGN §4), plus placeholder rows for solvers that
// only appear in imported MIOpen files.
//
// Registry solvers keep their registry id. A solver that leaves the registry is marked valid=0,
// never deleted (results refer to it). A solver name that `tuna import-db` finds in a MIOpen file
// but the registry does not know gets a placeholder row: valid=0, id >= kImportedSolverIdBase
// (far above the registry's ids, which start at 1 and 1000), so its results can be stored and
// exported again. If a later registry gains a solver of that name, Sync moves the placeholder's
// rows to the registry id and deletes the placeholder.
// Threads: as thread-safe as the Database. Errors: the store's codes (errors.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"

namespace tuna::schema {

inline constexpr int64_t kImportedSolverIdBase = 1'000'000;

struct SolverRecord {
  int64_t id = 0;
  std::string name;
  bool tunable = false;
  std::string directions;  // subset of "FBW" in that order
  bool is_dynamic = false;
  bool valid = true;
  bool operator==(const SolverRecord&) const = default;
};

struct SolverSyncCounts {
  int64_t added = 0;        // registry solvers new to the table
  int64_t updated = 0;      // rows changed (metadata, revalidated, placeholder replaced)
  int64_t unchanged = 0;
  int64_t invalidated = 0;  // rows no longer in the registry, now valid=0
};

class SolverStore {
 public:
  explicit SolverStore(Database& db) : db_(db) {}

  // Makes the table match `registry` in one transaction (idempotent). InvalidArgument when two
  // records share an id or a name, or an id is not in [1, kImportedSolverIdBase).
  absl::StatusOr<SolverSyncCounts> Sync(const std::vector<SolverRecord>& registry);

  // Every row, by id.
  absl::StatusOr<std::vector<SolverRecord>> List();

  // Ids for solver names, inside the caller's transaction. A name already in the table keeps its
  // row; a name found in `known` (the registry) is inserted with its registry record; any other
  // name gets a placeholder row (see above). *added counts inserted rows.
  absl::StatusOr<std::map<std::string, int64_t>> EnsureNames(
      Connection& c, const std::vector<std::string>& names, const std::vector<SolverRecord>& known,
      int64_t* added);

 private:
  Database& db_;
};

}  // namespace tuna::schema

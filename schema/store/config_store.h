// conv_config and config_tag: the imported convolution problems and their tags (DESIGN §4).
//
// A config is identified by ConfigHash(problem): the SHA-256 of Problem::Canonical(), the
// canonical MIOpenDriver line of one direction. Two lines that spell the same problem
// differently (flag order, long/short flags, defaults written out) are one config.
//
// Methods taking a Connection& run inside the caller's transaction (Database::Transaction), so
// an import can put configs, tags and results into one atomic unit; they may be re-run by the
// transaction's retry loop and are idempotent. Errors are the store's codes (errors.h).
// Threads: a ConfigStore is as thread-safe as its Database (fully); Connection& methods follow
// Connection's rule (one thread at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"
#include "tuner_core/problem/problem.h"

namespace tuna::schema {

// Lowercase hex SHA-256 of p.Canonical(): the conv_config.config_hash unique key.
std::string ConfigHash(const Problem& p);

// Longest tag the schema holds (config_tag.tag is VARCHAR(191) characters).
inline constexpr size_t kMaxTagChars = 191;

struct StoredConfig {
  int64_t id = 0;
  Problem problem;
  std::string driver;  // canonical MIOpenDriver line
};

struct TagCount {
  std::string tag;
  int64_t configs = 0;
  int64_t recurrent = 0;
};

// (done, total) progress reports from long operations; may be empty.
using ProgressFn = std::function<void(int64_t done, int64_t total)>;

class ConfigStore {
 public:
  explicit ConfigStore(Database& db) : db_(db) {}

  // Inserts the problems that are not stored yet (multi-row INSERTs in chunks) and returns the
  // config id of every input problem, in input order (duplicates in the input get the same id).
  // *inserted receives how many rows were new. `progress` is called after each chunk.
  absl::StatusOr<std::vector<int64_t>> Upsert(Connection& c, const std::vector<Problem>& problems,
                                              int64_t* inserted,
                                              const ProgressFn& progress = nullptr);

  // Tags the configs (duplicates ignored); an existing (config, tag) keeps its row and becomes
  // recurrent when `recurrent`. Returns the number of (config, tag) rows added. InvalidArgument
  // for an empty tag or one longer than kMaxTagChars characters.
  absl::StatusOr<int64_t> AddTag(Connection& c, const std::vector<int64_t>& config_ids,
                                 const std::string& tag, bool recurrent);

  // All configs, or those with `tag`, ordered by id. Internal when a stored line no longer parses.
  absl::StatusOr<std::vector<StoredConfig>> List(const std::optional<std::string>& tag);
  absl::StatusOr<std::vector<TagCount>> Tags();
  absl::StatusOr<int64_t> Count();

 private:
  Database& db_;
};

// The Problem of a stored canonical driver line (exposed for other stores).
absl::StatusOr<Problem> ProblemFromDriver(const std::string& driver);

}  // namespace tuna::schema

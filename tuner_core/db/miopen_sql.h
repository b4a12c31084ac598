// The SQL of MIOpen's SQLite database files (perf db, kernel db): the exact CREATE statements
// and every statement tuner_core/db reads and writes them with, in one place. This is the file
// format's SQL; the MariaDB store's lives in schema/store, which the tuner core never sees (nor
// the worker, which reaches this module through the runtime: tests/layering).
//
// We use MIOpen's own variant (the strings SQLiteSerializable::CreateQuery / KernelConfig::CreateQuery
// in MIOpen src/include/miopen/sqlite_db.hpp and kern_db.hpp pass to sqlite3_exec), not MITuna's
// slightly different text found in the shipped system files: MIOpen creates user dbs with these,
// and validates any db only by column names (PRAGMA table_info), so both are accepted at run time.
// Keep these byte-identical to research/create_{config,perfdb,kerndb}.sql (tests/db checks it),
// including the two spaces after `CREATE TABLE` in the perf_db statement and ", " before
// spatial_dim in idx_config.
#pragma once

#include <string>
#include <string_view>

namespace tuna::db {

inline constexpr const char kCreateConfigSql[] =
    "CREATE TABLE IF NOT EXISTS `config` (`id` INTEGER PRIMARY KEY ASC,`layout` TEXT NOT NULL,"
    "`data_type` TEXT NOT NULL,`direction` TEXT NOT NULL,`spatial_dim` INT NOT NULL,"
    "`in_channels` INT NOT NULL,`in_h` INT NOT NULL,`in_w` INT NOT NULL,`in_d` INT NOT NULL,"
    "`fil_h` INT NOT NULL,`fil_w` INT NOT NULL,`fil_d` INT NOT NULL,`out_channels` INT NOT NULL,"
    "`batchsize` INT NOT NULL,`pad_h` INT NOT NULL,`pad_w` INT NOT NULL,`pad_d` INT NOT NULL,"
    "`conv_stride_h` INT NOT NULL,`conv_stride_w` INT NOT NULL,`conv_stride_d` INT NOT NULL,"
    "`dilation_h` INT NOT NULL,`dilation_w` INT NOT NULL,`dilation_d` INT NOT NULL,"
    "`bias` INT NOT NULL,`group_count` INT NOT NULL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS `idx_config` ON config( layout,data_type,direction, "
    "spatial_dim,in_channels,in_h,in_w,in_d,fil_h,fil_w,fil_d,out_channels,batchsize,pad_h,pad_w,"
    "pad_d,conv_stride_h,conv_stride_w,conv_stride_d,dilation_h,dilation_w,dilation_d,bias,"
    "group_count );";

inline constexpr const char kCreatePerfDbSql[] =
    "CREATE TABLE  IF NOT EXISTS `perf_db` (`id` INTEGER PRIMARY KEY ASC,`solver` TEXT NOT NULL,"
    "`config` INTEGER NOT NULL,`params` TEXT NOT NULL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS `idx_perf_db` ON perf_db(solver, config);";

inline constexpr const char kCreateKernDbSql[] =
    "CREATE TABLE IF NOT EXISTS `kern_db` (`id` INTEGER PRIMARY KEY ASC,`kernel_name` TEXT NOT NULL,"
    "`kernel_args` TEXT NOT NULL,`kernel_blob` BLOB NOT NULL,`kernel_hash` TEXT NOT NULL,"
    "`uncompressed_size` INT NOT NULL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS `idx_kern_db` ON kern_db(kernel_name, kernel_args);";

// Columns MIOpen requires on open (SQLitePerfDb / KernDb constructors); anything else is ignored.
inline constexpr const char* kConfigColumns[] = {
    "layout",        "data_type",     "direction",     "spatial_dim", "in_channels", "in_h",
    "in_w",          "in_d",          "fil_h",         "fil_w",       "fil_d",       "out_channels",
    "batchsize",     "pad_h",         "pad_w",         "pad_d",       "conv_stride_h",
    "conv_stride_w", "conv_stride_d", "dilation_h",    "dilation_w",  "dilation_d",  "bias",
    "group_count"};
inline constexpr const char* kPerfDbColumns[] = {"solver", "config", "params"};
inline constexpr const char* kKernDbColumns[] = {"kernel_name", "kernel_args", "kernel_blob"};

// Reading and writing (`?`: bound parameters).
namespace sql {

// kConfigColumns joined by ",".
inline std::string ConfigColumnList() {
  std::string out;
  for (const char* c : kConfigColumns) out += std::string(out.empty() ? "" : ",") + c;
  return out;
}

// A config row by all of kConfigColumns, in order (MIOpen's lookup form).
inline std::string PerfDbLookup() {
  std::string where;
  for (const char* c : kConfigColumns) where += std::string(where.empty() ? "" : " AND ") + "(" + c + " = ? )";
  return "SELECT solver, params FROM perf_db INNER JOIN config ON perf_db.config = config.id WHERE ( " + where +
         " );";
}

// Every perf_db row with its config's id and columns, ordered by `order` ("perf_db.id", ...).
inline std::string PerfDbRows(std::string_view order) {
  return "SELECT perf_db.solver, perf_db.params, config.id, " + ConfigColumnList() +
         " FROM perf_db INNER JOIN config ON perf_db.config = config.id ORDER BY " + std::string(order) + ";";
}

// A config row with an explicit id, then kConfigColumns.
inline std::string InsertConfig() {
  std::string placeholders = "?";
  for (size_t i = 0; i < std::size(kConfigColumns); ++i) placeholders += ",?";
  return "INSERT INTO config(id," + ConfigColumnList() + ") VALUES(" + placeholders + ");";
}

inline constexpr const char kInsertPerfDb[] =
    "INSERT OR REPLACE INTO perf_db(id, config, solver, params) VALUES(?, ?, ?, ?);";
inline constexpr const char kCountConfigs[] = "SELECT count(*) FROM config;";
inline constexpr const char kCountPerfDb[] = "SELECT count(*) FROM perf_db;";

inline constexpr const char kInsertKernDb[] =
    "INSERT OR REPLACE INTO kern_db(id, kernel_name, kernel_args, kernel_blob, kernel_hash, uncompressed_size) "
    "VALUES(?, ?, ?, ?, ?, ?);";
inline constexpr const char kKernDbRows[] =
    "SELECT kernel_name, kernel_args, kernel_blob, kernel_hash, uncompressed_size FROM kern_db ORDER BY id;";
// Bound rather than embedded as literals (MIOpen's form), so quotes in args are safe.
inline constexpr const char kKernDbFind[] =
    "SELECT kernel_blob, kernel_hash, uncompressed_size FROM kern_db WHERE (kernel_name = ?) AND (kernel_args = ?);";

// Any file that is not SQLite fails this.
inline constexpr const char kProbe[] = "SELECT count(*) FROM sqlite_master;";
inline std::string TableInfo(std::string_view table) { return "PRAGMA table_info(" + std::string(table) + ");"; }
inline constexpr const char kNewFilePragmas[] = "PRAGMA page_size=4096; PRAGMA journal_mode=DELETE;";

}  // namespace sql

}  // namespace tuna::db

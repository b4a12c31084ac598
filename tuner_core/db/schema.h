// The exact CREATE statements of MIOpen's SQLite databases: the one place they live.
//
// We use MIOpen's own variant (the strings SQLiteSerializable::CreateQuery / KernelConfig::CreateQuery
// in MIOpen src/include/miopen/sqlite_db.hpp and kern_db.hpp pass to sqlite3_exec), not MITuna's
// slightly different text found in the shipped system files: MIOpen creates user dbs with these,
// and validates any db only by column names (PRAGMA table_info), so both are accepted at run time.
// Keep these byte-identical to research/create_{config,perfdb,kerndb}.sql (tests/db checks it),
// including the two spaces after `CREATE TABLE` in the perf_db statement and ", " before
// spatial_dim in idx_config.
#pragma once

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

}  // namespace tuna::db

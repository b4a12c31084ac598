// The migration files compiled into the binary (generated from schema/migrations/*.sql by
// embed_sql.sh), sorted by file name.
#pragma once

#include <vector>

namespace tuna::schema {

struct EmbeddedSqlFile {
  const char* file_name;  // e.g. "001_initial.sql"
  const char* sql;
};

const std::vector<EmbeddedSqlFile>& EmbeddedMigrationFiles();

}  // namespace tuna::schema

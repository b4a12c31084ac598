#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "catch2/catch.hpp"
#include "schema/store/connection_info.h"

using tuna::schema::ConnectionInfo;
using tuna::schema::ParseDbUrl;

namespace {

std::string TempFile(const std::string& name, const std::string& content) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/" + name;
  std::ofstream(path) << content;
  return path;
}

}  // namespace

TEST_CASE("ParseDbUrl reads user, host, port and database", "[db_url]") {
  auto info = ParseDbUrl("mysql://tuna@db.example:3307/tuning");
  REQUIRE(info.ok());
  CHECK(info->user == "tuna");
  CHECK(info->host == "db.example");
  CHECK(info->port == 3307);
  CHECK(info->database == "tuning");
  CHECK(info->socket.empty());
  CHECK(info->password.empty());
  CHECK(info->ConnectorHost() == "tcp://db.example:3307");
  CHECK(info->Redacted() == "mysql://tuna@db.example:3307/tuning");
}

TEST_CASE("ParseDbUrl defaults the port, decodes escapes, takes IPv6 and options", "[db_url]") {
  auto a = ParseDbUrl("mysql://some%40user@localhost/my%5Fdb");
  REQUIRE(a.ok());
  CHECK(a->port == 3306);
  CHECK(a->user == "some@user");
  CHECK(a->database == "my_db");

  auto b = ParseDbUrl("mysql://tuna@[::1]:3310/t?option_file=/etc/tuna.cnf");
  REQUIRE(b.ok());
  CHECK(b->host == "::1");
  CHECK(b->port == 3310);
  CHECK(b->option_file == "/etc/tuna.cnf");
  CHECK(b->ConnectorHost() == "tcp://[::1]:3310");

  auto c = ParseDbUrl("mysql://tuna@/t?socket=/run/mysqld/mysqld.sock");
  REQUIRE(c.ok());
  CHECK(c->socket == "/run/mysqld/mysqld.sock");
  CHECK(c->ConnectorHost() == "unix:///run/mysqld/mysqld.sock");
  CHECK(c->Redacted() == "mysql://tuna@unix(/run/mysqld/mysqld.sock)/t");
}

TEST_CASE("ParseDbUrl errors name the problem", "[db_url]") {
  struct Case {
    const char* url;
    const char* needle;
  };
  for (const Case& c : {
           Case{"postgres://u@h/db", "mysql://"},
           Case{"mysql://u@h", "missing /database"},
           Case{"mysql://h:3306/db", "missing user@"},
           Case{"mysql://u:secret@h/db", "password in the URL"},
           Case{"mysql://u@h:0/db", "port"},
           Case{"mysql://u@h:99999/db", "port"},
           Case{"mysql://u@h:abc/db", "port"},
           Case{"mysql://u@h:/db", "empty port"},
           Case{"mysql://u@h/", "empty database"},
           Case{"mysql://@h/db", "empty user"},
           Case{"mysql://u@h/db?password=x", "password= is not accepted"},
           Case{"mysql://u@h/db?colour=blue", "unknown parameter 'colour'"},
           Case{"mysql://u@h/db?option_file", "has no value"},
           Case{"mysql://u@h/d%zzb", "%-escape"},
           Case{"mysql://u@[::1/db", "unterminated"},
       }) {
    INFO(c.url);
    auto r = ParseDbUrl(c.url);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(r.status().message()).find(c.needle) != std::string::npos);
    // Never echo a password back.
    CHECK(std::string(r.status().message()).find("secret") == std::string::npos);
  }
}

TEST_CASE("Passwords come from the option file, then TUNA_DB_PASSWORD, then TUNA_DB_OPTION_FILE",
          "[db_url]") {
  std::string url_file = TempFile("url.cnf",
                                  "# comment\n[mysqld]\npassword=not-this\n[client]\n"
                                  "user = x\npassword = \"from-url-file\"\nport=3309\n");
  std::string env_file = TempFile("env.cnf", "[client]\npassword=from-env-file\n");
  std::map<std::string, std::string> env;
  auto getenv = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };

  auto info = ParseDbUrl("mysql://u@h/db?option_file=" + url_file);
  REQUIRE(info.ok());
  env["TUNA_DB_PASSWORD"] = "from-env";
  env["TUNA_DB_OPTION_FILE"] = env_file;
  REQUIRE(tuna::schema::ResolvePassword(&*info, getenv).ok());
  CHECK(info->password == "from-url-file");

  auto plain = ParseDbUrl("mysql://u@h/db");
  REQUIRE(plain.ok());
  REQUIRE(tuna::schema::ResolvePassword(&*plain, getenv).ok());
  CHECK(plain->password == "from-env");

  env.erase("TUNA_DB_PASSWORD");
  auto plain2 = ParseDbUrl("mysql://u@h/db");
  REQUIRE(tuna::schema::ResolvePassword(&*plain2, getenv).ok());
  CHECK(plain2->password == "from-env-file");
  CHECK(plain2->option_file == env_file);
  // The password never shows in the loggable form.
  CHECK(plain2->Redacted().find("from-env-file") == std::string::npos);

  auto missing = ParseDbUrl("mysql://u@h/db?option_file=/nonexistent/tuna.cnf");
  REQUIRE(missing.ok());
  auto st = tuna::schema::ResolvePassword(&*missing, getenv);
  CHECK(st.code() == absl::StatusCode::kNotFound);
}

TEST_CASE("ReadOptionFile reads the client section and rejects a bad port", "[db_url]") {
  auto values = tuna::schema::ReadOptionFile(
      TempFile("full.cnf", "[client]\nuser=tuna\npassword=pw\nhost=127.0.0.1\nport=4000\n"
                           "socket=/tmp/s.sock\ndatabase=tuna\n"));
  REQUIRE(values.ok());
  CHECK(values->user == "tuna");
  CHECK(values->password == "pw");
  CHECK(values->port == 4000);
  CHECK(values->socket == "/tmp/s.sock");
  CHECK(values->database == "tuna");

  auto bad = tuna::schema::ReadOptionFile(TempFile("bad.cnf", "[client]\nport=http\n"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()).find(":2:") != std::string::npos);
}

TEST_CASE("ResolveDatabase: --db > TUNA_DB > TUNA_DB_* > ~/.my.cnf > embedded", "[db_url]") {
  using tuna::schema::ResolveDatabase;
  std::map<std::string, std::string> env;
  auto getenv = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  const std::string cnf = TempFile(
      "resolve_my.cnf", "[client]\nuser=cnfuser\npassword=cnfpw\nhost=cnf.example\n"
                        "port=3310\ndatabase=cnfdb\n");
  const std::string no_db_cnf = TempFile("resolve_nodb.cnf", "[client]\nuser=u\npassword=p\n");

  // Nothing set: the embedded server, also with a ~/.my.cnf that names no database.
  auto none = ResolveDatabase("", no_db_cnf, getenv);
  REQUIRE(none.ok());
  CHECK_FALSE(none->external.has_value());
  CHECK(none->source == "embedded");
  CHECK_FALSE(ResolveDatabase("", "/nonexistent/.my.cnf", getenv)->external.has_value());

  // ~/.my.cnf naming a database.
  auto from_cnf = ResolveDatabase("", cnf, getenv);
  REQUIRE(from_cnf.ok());
  REQUIRE(from_cnf->external.has_value());
  CHECK(from_cnf->external->host == "cnf.example");
  CHECK(from_cnf->external->port == 3310);
  CHECK(from_cnf->external->user == "cnfuser");
  CHECK(from_cnf->external->password == "cnfpw");
  CHECK(from_cnf->external->database == "cnfdb");
  CHECK(from_cnf->source == cnf);

  // MITuna's variables win over ~/.my.cnf.
  env = {{"TUNA_DB_HOSTNAME", "mituna.example"},
         {"TUNA_DB_NAME", "mituna"},
         {"TUNA_DB_USER_NAME", "tunauser"},
         {"TUNA_DB_USER_PASSWORD", "secret"}};
  auto mituna = ResolveDatabase("", cnf, getenv);
  REQUIRE(mituna.ok());
  REQUIRE(mituna->external.has_value());
  CHECK(mituna->external->host == "mituna.example");
  CHECK(mituna->external->port == 3306);
  CHECK(mituna->external->database == "mituna");
  CHECK(mituna->external->user == "tunauser");
  CHECK(mituna->external->password == "secret");
  CHECK(mituna->source == "TUNA_DB_HOSTNAME");
  env["TUNA_DB_PORT"] = "33x";
  CHECK_THAT(std::string(ResolveDatabase("", cnf, getenv).status().message()),
             Catch::Contains("TUNA_DB_PORT"));
  env.erase("TUNA_DB_PORT");
  env.erase("TUNA_DB_NAME");
  auto missing = ResolveDatabase("", cnf, getenv);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("TUNA_DB_NAME"));
  CHECK_THAT(std::string(missing.status().message()), !Catch::Contains("secret"));
  env["TUNA_DB_NAME"] = "mituna";

  // TUNA_DB wins over MITuna's variables; the password from TUNA_DB_PASSWORD.
  env["TUNA_DB"] = "mysql://urluser@url.example:3400/urldb";
  env["TUNA_DB_PASSWORD"] = "urlpw";
  auto url = ResolveDatabase("", cnf, getenv);
  REQUIRE(url.ok());
  CHECK(url->external->host == "url.example");
  CHECK(url->external->password == "urlpw");
  CHECK(url->source == "TUNA_DB");
  env["TUNA_DB"] = "postgres://x@y/z";
  CHECK_THAT(std::string(ResolveDatabase("", cnf, getenv).status().message()),
             Catch::Contains("TUNA_DB"));

  // --db wins over everything.
  auto flag = ResolveDatabase("mysql://flaguser@flag.example/flagdb", cnf, getenv);
  REQUIRE(flag.ok());
  CHECK(flag->external->host == "flag.example");
  CHECK(flag->external->user == "flaguser");
  CHECK(flag->source == "--db");
}

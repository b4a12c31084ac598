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

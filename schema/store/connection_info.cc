#include "schema/store/connection_info.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tuna::schema {
namespace {

absl::StatusOr<std::string> PercentDecode(absl::string_view s, absl::string_view what) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      c = absl::ascii_tolower(c);
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    if (i + 2 >= s.size() || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) {
      return absl::InvalidArgumentError(absl::StrCat("db URL: bad %-escape in ", what));
    }
    int v = hex(s[i + 1]) * 16 + hex(s[i + 2]);
    out.push_back(static_cast<char>(v));
    i += 2;
  }
  return out;
}

absl::StatusOr<int> ParsePort(absl::string_view s) {
  int port = 0;
  if (s.empty() || !absl::SimpleAtoi(s, &port) || port < 1 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("db URL: port must be a number in 1..65535, got '", s, "'"));
  }
  return port;
}

}  // namespace

std::string ConnectionInfo::Redacted() const {
  std::string where = socket.empty() ? absl::StrCat(host.find(':') != std::string::npos
                                                        ? absl::StrCat("[", host, "]")
                                                        : host,
                                                    ":", port)
                                     : absl::StrCat("unix(", socket, ")");
  return absl::StrCat("mysql://", user, "@", where, "/", database);
}

std::string ConnectionInfo::ConnectorHost() const {
  if (!socket.empty()) return absl::StrCat("unix://", socket);
  if (host.find(':') != std::string::npos) return absl::StrCat("tcp://[", host, "]:", port);
  return absl::StrCat("tcp://", host, ":", port);
}

absl::StatusOr<ConnectionInfo> ParseDbUrl(std::string_view url_in) {
  const absl::string_view url(url_in.data(), url_in.size());
  constexpr absl::string_view kScheme = "mysql://";
  if (!absl::StartsWith(url, kScheme)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "db URL must start with mysql:// (form mysql://user@host:port/database), got '",
        url.substr(0, url.find("://") == absl::string_view::npos ? 0 : url.find("://") + 3), "...'"));
  }
  absl::string_view rest = url.substr(kScheme.size());
  absl::string_view query;
  if (size_t q = rest.find('?'); q != absl::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  size_t slash = rest.find('/');
  if (slash == absl::string_view::npos) {
    return absl::InvalidArgumentError("db URL: missing /database after the host");
  }
  absl::string_view authority = rest.substr(0, slash);
  absl::string_view db = rest.substr(slash + 1);
  size_t at = authority.rfind('@');
  if (at == absl::string_view::npos) {
    return absl::InvalidArgumentError("db URL: missing user@ before the host");
  }
  absl::string_view userinfo = authority.substr(0, at);
  absl::string_view hostport = authority.substr(at + 1);
  if (userinfo.find(':') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "db URL: a password in the URL is not accepted (it would show in process lists and "
        "logs); use TUNA_DB_PASSWORD or an option file (?option_file=PATH or "
        "TUNA_DB_OPTION_FILE)");
  }
  ConnectionInfo info;
  auto user = PercentDecode(userinfo, "user");
  if (!user.ok()) return user.status();
  if (user->empty()) return absl::InvalidArgumentError("db URL: empty user name");
  info.user = *user;

  if (!hostport.empty()) {
    absl::string_view host = hostport, port;
    if (hostport.front() == '[') {
      size_t close = hostport.find(']');
      if (close == absl::string_view::npos) {
        return absl::InvalidArgumentError("db URL: unterminated [ in IPv6 host");
      }
      host = hostport.substr(1, close - 1);
      absl::string_view after = hostport.substr(close + 1);
      if (!after.empty()) {
        if (after.front() != ':') return absl::InvalidArgumentError("db URL: junk after ]");
        port = after.substr(1);
        if (port.empty()) return absl::InvalidArgumentError("db URL: empty port after ':'");
      }
    } else if (size_t colon = hostport.find(':'); colon != absl::string_view::npos) {
      host = hostport.substr(0, colon);
      port = hostport.substr(colon + 1);
      if (port.empty()) return absl::InvalidArgumentError("db URL: empty port after ':'");
    }
    if (host.empty()) return absl::InvalidArgumentError("db URL: empty host");
    info.host = std::string(host);
    if (!port.empty()) {
      auto p = ParsePort(port);
      if (!p.ok()) return p.status();
      info.port = *p;
    }
  }

  auto dbname = PercentDecode(db, "database");
  if (!dbname.ok()) return dbname.status();
  if (dbname->empty()) return absl::InvalidArgumentError("db URL: empty database name");
  if (dbname->find('/') != std::string::npos || dbname->find('`') != std::string::npos) {
    return absl::InvalidArgumentError("db URL: database name may not contain '/' or '`'");
  }
  info.database = *dbname;

  if (!query.empty()) {
    for (absl::string_view kv : absl::StrSplit(query, '&')) {
      size_t eq = kv.find('=');
      if (eq == absl::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat("db URL: parameter '", kv, "' has no value"));
      }
      absl::string_view key = kv.substr(0, eq);
      auto value = PercentDecode(kv.substr(eq + 1), key);
      if (!value.ok()) return value.status();
      if (value->empty()) {
        return absl::InvalidArgumentError(absl::StrCat("db URL: empty value for '", key, "'"));
      }
      if (key == "option_file") {
        info.option_file = *value;
      } else if (key == "socket") {
        info.socket = *value;
      } else if (key == "password") {
        return absl::InvalidArgumentError(
            "db URL: password= is not accepted; use TUNA_DB_PASSWORD or an option file");
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "db URL: unknown parameter '", key, "' (known: option_file, socket)"));
      }
    }
  }
  if (hostport.empty() && info.socket.empty()) {
    return absl::InvalidArgumentError("db URL: missing host (or ?socket=PATH)");
  }
  return info;
}

absl::StatusOr<OptionFileValues> ReadOptionFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    int err = errno;
    if (err == ENOENT) return absl::NotFoundError(absl::StrCat("option file ", path, " does not exist"));
    if (err == EACCES) {
      return absl::PermissionDeniedError(absl::StrCat("option file ", path, " is not readable"));
    }
    return absl::UnavailableError(
        absl::StrCat("cannot open option file ", path, ": ", std::strerror(err)));
  }
  OptionFileValues values;
  std::string line;
  std::string section;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    absl::string_view s = absl::StripAsciiWhitespace(line);
    if (s.empty() || s.front() == '#' || s.front() == ';') continue;
    if (s.front() == '[') {
      if (s.back() != ']') {
        return absl::InvalidArgumentError(absl::StrCat(path, ":", lineno, ": malformed section header"));
      }
      section = std::string(absl::StripAsciiWhitespace(s.substr(1, s.size() - 2)));
      continue;
    }
    if (section != "client" && section != "tuna") continue;
    size_t eq = s.find('=');
    if (eq == absl::string_view::npos) continue;  // flags like `skip-ssl` carry no value we use
    std::string key(absl::StripAsciiWhitespace(s.substr(0, eq)));
    absl::string_view value = absl::StripAsciiWhitespace(s.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    std::replace(key.begin(), key.end(), '-', '_');
    if (key == "password") {
      values.password = std::string(value);
    } else if (key == "user") {
      values.user = std::string(value);
    } else if (key == "host") {
      values.host = std::string(value);
    } else if (key == "socket") {
      values.socket = std::string(value);
    } else if (key == "database") {
      values.database = std::string(value);
    } else if (key == "port") {
      int port = 0;
      if (!absl::SimpleAtoi(value, &port) || port < 1 || port > 65535) {
        return absl::InvalidArgumentError(absl::StrCat(path, ":", lineno, ": bad port"));
      }
      values.port = port;
    }
  }
  return values;
}

absl::Status ResolvePassword(ConnectionInfo* info,
                             const std::function<const char*(const char*)>& getenv_fn) {
  auto env = [&](const char* name) -> const char* {
    return getenv_fn ? getenv_fn(name) : std::getenv(name);
  };
  if (!info->option_file.empty()) {
    auto values = ReadOptionFile(info->option_file);
    if (!values.ok()) return values.status();
    if (values->password) {
      info->password = *values->password;
      return absl::OkStatus();
    }
  }
  if (const char* pw = env("TUNA_DB_PASSWORD"); pw != nullptr) {
    info->password = pw;
    return absl::OkStatus();
  }
  if (const char* file = env("TUNA_DB_OPTION_FILE"); file != nullptr && *file != '\0') {
    auto values = ReadOptionFile(file);
    if (!values.ok()) return values.status();
    if (info->option_file.empty()) info->option_file = file;
    if (values->password) info->password = *values->password;
  }
  return absl::OkStatus();
}

absl::StatusOr<ConnectionInfo> ConnectionInfoFromUrl(std::string_view url) {
  auto info = ParseDbUrl(url);
  if (!info.ok()) return info.status();
  if (auto st = ResolvePassword(&*info); !st.ok()) return st;
  return info;
}

namespace {

// MITuna's TUNA_DB_HOSTNAME / TUNA_DB_NAME / TUNA_DB_USER_NAME / TUNA_DB_USER_PASSWORD.
absl::StatusOr<ConnectionInfo> FromMitunaEnv(const std::function<const char*(const char*)>& env) {
  ConnectionInfo info;
  info.host = env("TUNA_DB_HOSTNAME");
  auto required = [&](const char* name, std::string* out) -> absl::Status {
    const char* v = env(name);
    if (v == nullptr || *v == '\0') {
      return absl::InvalidArgumentError(
          absl::StrCat("TUNA_DB_HOSTNAME is set but ", name, " is not (MITuna's variables: ",
                       "TUNA_DB_HOSTNAME, TUNA_DB_NAME, TUNA_DB_USER_NAME, TUNA_DB_USER_PASSWORD)"));
    }
    *out = v;
    return absl::OkStatus();
  };
  if (auto st = required("TUNA_DB_NAME", &info.database); !st.ok()) return st;
  if (auto st = required("TUNA_DB_USER_NAME", &info.user); !st.ok()) return st;
  if (const char* port = env("TUNA_DB_PORT"); port != nullptr && *port != '\0') {
    if (!absl::SimpleAtoi(port, &info.port) || info.port <= 0 || info.port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("TUNA_DB_PORT '", port, "' is not a port number"));
    }
  }
  if (const char* pw = env("TUNA_DB_USER_PASSWORD"); pw != nullptr) {
    info.password = pw;
    return info;
  }
  if (auto st = ResolvePassword(&info, env); !st.ok()) return st;
  return info;
}

// ~/.my.cnf when it names a database; nullopt otherwise.
absl::StatusOr<std::optional<ConnectionInfo>> FromMyCnf(
    const std::string& path, const std::function<const char*(const char*)>& env) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return std::nullopt;
  auto values = ReadOptionFile(path);
  if (!values.ok()) return values.status();
  if (!values->database || values->database->empty()) return std::nullopt;
  ConnectionInfo info;
  info.database = *values->database;
  if (values->host) info.host = *values->host;
  if (values->port) info.port = *values->port;
  if (values->socket) info.socket = *values->socket;
  if (values->user) {
    info.user = *values->user;
  } else if (const char* user = env("USER"); user != nullptr) {
    info.user = user;
  }
  if (info.user.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " names a database but no user"));
  }
  if (values->password) info.password = *values->password;
  info.option_file = path;
  return info;
}

}  // namespace

absl::StatusOr<ResolvedDatabase> ResolveDatabase(
    std::string_view flag_url, const std::string& my_cnf,
    const std::function<const char*(const char*)>& getenv_fn) {
  auto env = [&](const char* name) -> const char* {
    return getenv_fn ? getenv_fn(name) : std::getenv(name);
  };
  auto from_url = [&](std::string_view url, std::string source) -> absl::StatusOr<ResolvedDatabase> {
    auto info = ParseDbUrl(url);
    if (!info.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": ", info.status().message()));
    }
    if (auto st = ResolvePassword(&*info, env); !st.ok()) return st;
    return ResolvedDatabase{*std::move(info), std::move(source)};
  };
  if (!flag_url.empty()) return from_url(flag_url, "--db");
  if (const char* url = env("TUNA_DB"); url != nullptr && *url != '\0') {
    return from_url(url, "TUNA_DB");
  }
  if (const char* host = env("TUNA_DB_HOSTNAME"); host != nullptr && *host != '\0') {
    auto info = FromMitunaEnv(env);
    if (!info.ok()) return info.status();
    return ResolvedDatabase{*std::move(info), "TUNA_DB_HOSTNAME"};
  }
  auto cnf = FromMyCnf(my_cnf, env);
  if (!cnf.ok()) return cnf.status();
  if (*cnf) return ResolvedDatabase{std::move(*cnf), my_cnf};
  return ResolvedDatabase{std::nullopt, "embedded"};
}

}  // namespace tuna::schema

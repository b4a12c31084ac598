#include "schema/embedded/mariadb_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "spdlog/spdlog.h"

namespace tuna::schema {
namespace fs = std::filesystem;
namespace {

constexpr char kClientConfig[] = "tuna-client.cnf";
constexpr char kPortFile[] = "tuna-port";
constexpr char kPidFile[] = "mariadbd.pid";
constexpr char kLogFile[] = "mariadbd.log";
constexpr char kSocketFile[] = "mariadbd.sock";
constexpr char kLockFile[] = "tuna.lock";
constexpr char kBootstrapLog[] = "bootstrap.log";
constexpr char kIncomplete[] = "tuna-bootstrap.incomplete";
// The server's private temp dir: MariaDB names temp files by pid, and servers in separate pid
// namespaces (sandboxed tests, containers) sharing /tmp collide on them.
constexpr char kTmpDir[] = "tuna-tmp";

std::string ErrnoText(int err) { return std::strerror(err); }

bool IsFile(const std::string& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, " does not exist"));
    return absl::UnavailableError(absl::StrCat("cannot read ", path, ": ", ErrnoText(errno)));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes via a temporary file + rename so readers never see half a file.
absl::Status WriteFileAtomic(const std::string& path, const std::string& content, mode_t mode) {
  std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot write ", tmp, ": ", ErrnoText(errno)));
  ::fchmod(fd, mode);  // umask must not widen or narrow it
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return absl::UnavailableError(absl::StrCat("cannot write ", tmp, ": ", ErrnoText(err)));
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot rename ", tmp, ": ", ErrnoText(err)));
  }
  return absl::OkStatus();
}

std::string ExePath() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool ShareDirOk(const std::string& dir) {
  return IsFile(dir + "/mysql_system_tables.sql") &&
         IsFile(dir + "/mysql_system_tables_data.sql") && IsFile(dir + "/english/errmsg.sys");
}

bool IsExecutable(const std::string& p) { return IsFile(p) && ::access(p.c_str(), X_OK) == 0; }

// A process exists and is not a zombie.
bool ProcessAlive(int pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  auto stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  if (!stat.ok()) return ::kill(pid, 0) == 0;  // no /proc: trust kill
  size_t close = stat->rfind(')');
  if (close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] == 'Z') {
    return false;
  }
  return true;
}

// True when pid is a mariadbd (or mysqld) serving this data dir: a recycled pid of some other
// process must never be signalled.
bool IsOurServer(int pid, const std::string& data_dir) {
  if (!ProcessAlive(pid)) return false;
  auto comm = ReadFile(absl::StrCat("/proc/", pid, "/comm"));
  if (!comm.ok()) return false;
  std::string name(absl::StripAsciiWhitespace(*comm));
  if (name != "mariadbd" && name != "mysqld") return false;
  auto cmdline = ReadFile(absl::StrCat("/proc/", pid, "/cmdline"));
  if (!cmdline.ok()) return false;
  for (size_t start = 0; start < cmdline->size();) {
    size_t end = cmdline->find('\0', start);
    if (end == std::string::npos) end = cmdline->size();
    std::string arg = cmdline->substr(start, end - start);
    if (arg == "--datadir=" + data_dir) return true;
    start = end + 1;
  }
  return false;
}

int ReadPidFile(const std::string& path) {
  auto text = ReadFile(path);
  int pid = 0;
  if (!text.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &pid)) return 0;
  return pid;
}

std::string RandomPassword() {
  unsigned char buf[24];
  std::ifstream in("/dev/urandom", std::ios::binary);
  in.read(reinterpret_cast<char*>(buf), sizeof(buf));
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string out;
  for (unsigned char b : buf) out.push_back(kAlphabet[b % 62]);
  return out;
}

bool PortFree(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// RAII flock on <data_dir>/tuna.lock.
class DirLock {
 public:
  static absl::StatusOr<DirLock> Acquire(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      return absl::PermissionDeniedError(absl::StrCat("cannot open ", path, ": ", ErrnoText(errno)));
    }
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        int err = errno;
        ::close(fd);
        return absl::UnavailableError(absl::StrCat("cannot lock ", path, ": ", ErrnoText(err)));
      }
    }
    return DirLock(fd);
  }
  DirLock(DirLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DirLock& operator=(DirLock&&) = delete;
  ~DirLock() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_;
};

// Runs argv with stdin fed from `input`, stdout+stderr to `log_path`; returns the exit status.
absl::StatusOr<int> RunWithInput(const std::vector<std::string>& argv, const std::string& input,
                                 const std::string& log_path) {
  int in_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return absl::UnavailableError(absl::StrCat("cannot write ", log_path, ": ", ErrnoText(errno)));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork failed: ", ErrnoText(errno)));
  if (pid == 0) {
    ::dup2(in_pipe[0], 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execv(args[0], args.data());
    _exit(127);
  }
  ::close(in_pipe[0]);
  ::close(log_fd);
  // Writing to a child that died early must not kill us with SIGPIPE.
  struct sigaction ignore{}, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  size_t done = 0;
  while (done < input.size()) {
    ssize_t n = ::write(in_pipe[1], input.data() + done, input.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // the child exited; its status tells why
    }
    done += static_cast<size_t>(n);
  }
  ::close(in_pipe[1]);
  ::sigaction(SIGPIPE, &old, nullptr);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string TailOf(const std::string& path, int lines) {
  std::ifstream in(path);
  if (!in) return "(no log at " + path + ")";
  std::deque<std::string> tail;
  std::string line;
  while (std::getline(in, line)) {
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  return absl::StrJoin(tail, "\n");
}

}  // namespace

std::string DefaultDataDir() {
  std::string state = Env("XDG_STATE_HOME");
  if (state.empty() || state[0] != '/') {
    std::string home = Env("HOME");
    if (home.empty()) home = "/tmp";
    state = home + "/.local/state";
  }
  return state + "/tuna/mariadb";
}

absl::StatusOr<MariadbPaths> FindMariadb(const EmbeddedServerOptions& options,
                                         const std::string& exe_in) {
  std::string exe = exe_in.empty() ? ExePath() : exe_in;
  std::string exe_dir = exe.empty() ? std::string() : fs::path(exe).parent_path().string();
  MariadbPaths out;
  std::vector<std::string> tried;

  std::vector<std::string> bins;
  if (!options.mariadbd.empty()) {
    bins = {options.mariadbd};
  } else if (std::string env = Env("TUNA_MARIADBD"); !env.empty()) {
    bins = {env};
  } else {
    if (!exe_dir.empty()) {
      bins.push_back(exe_dir + "/../libexec/mariadbd");
      bins.push_back(exe_dir + "/../bin/mariadbd");
      bins.push_back(exe_dir + "/../sbin/mariadbd");
    }
    for (const char* p : {"/usr/sbin/mariadbd", "/usr/bin/mariadbd", "/usr/local/sbin/mariadbd",
                          "/usr/local/bin/mariadbd", "/usr/sbin/mysqld"}) {
      bins.push_back(p);
    }
  }
  for (const auto& b : bins) {
    tried.push_back(b);
    if (IsExecutable(b)) {
      out.mariadbd = fs::weakly_canonical(b).string();
      break;
    }
  }
  if (out.mariadbd.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "mariadbd not found (tried ", absl::StrJoin(tried, ", "),
        "); install MariaDB, use a tuna bundle, or set TUNA_MARIADBD"));
  }

  tried.clear();
  std::vector<std::string> shares;
  if (!options.share_dir.empty()) {
    shares = {options.share_dir};
  } else if (std::string env = Env("TUNA_MARIADB_SHARE"); !env.empty()) {
    shares = {env};
  } else {
    if (!exe_dir.empty()) {
      shares.push_back(exe_dir + "/../share/mariadb");
      shares.push_back(exe_dir + "/../share/mysql");
    }
    // Next to the mariadbd that was found (a bundle named by TUNA_MARIADBD).
    std::string bin_dir = fs::path(out.mariadbd).parent_path().string();
    shares.push_back(bin_dir + "/../share/mariadb");
    shares.push_back(bin_dir + "/../share/mysql");
    shares.push_back("/usr/share/mysql");
    shares.push_back("/usr/share/mariadb");
  }
  for (const auto& s : shares) {
    tried.push_back(s);
    if (ShareDirOk(s)) {
      out.share_dir = fs::weakly_canonical(s).string();
      break;
    }
  }
  if (out.share_dir.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "MariaDB share dir not found (needs english/errmsg.sys, charsets/, "
        "mysql_system_tables.sql, mysql_system_tables_data.sql; tried ",
        absl::StrJoin(tried, ", "), "); set TUNA_MARIADB_SHARE"));
  }
  return out;
}

absl::StatusOr<int> PickFreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", ErrnoText(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("cannot bind 127.0.0.1:0: ", ErrnoText(err)));
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

absl::StatusOr<std::string> ProbeServerVersion(int port, absl::Duration timeout) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", ErrnoText(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int timeout_ms = static_cast<int>(absl::ToInt64Milliseconds(timeout));
  auto fail = [&](const std::string& why) {
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("nothing answers on 127.0.0.1:", port, ": ", why));
  };
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != EINPROGRESS) return fail(ErrnoText(errno));
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return fail("connect timed out");
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return fail(ErrnoText(err));
  }
  // Greeting: 3-byte length, sequence id, then protocol version 10 and a NUL-terminated version.
  std::string buf;
  absl::Time deadline = absl::Now() + timeout;
  while (buf.size() < 4 || buf.size() < 4 + (static_cast<unsigned char>(buf[0]) |
                                             (static_cast<unsigned char>(buf[1]) << 8) |
                                             (static_cast<unsigned char>(buf[2]) << 16))) {
    int left = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (left <= 0) return fail("no greeting");
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, left) <= 0) return fail("no greeting");
    char chunk[512];
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n <= 0) return fail("connection closed before the greeting");
    buf.append(chunk, static_cast<size_t>(n));
    if (buf.size() > 4096) break;
  }
  ::close(fd);
  if (buf.size() < 6) return absl::UnavailableError("short greeting");
  unsigned char proto = static_cast<unsigned char>(buf[4]);
  if (proto == 0xff) {
    // An error packet (e.g. too many connections): the server is up but refuses us.
    return absl::UnavailableError(absl::StrCat("server on port ", port, " refused: ",
                                               buf.substr(7, std::min<size_t>(buf.size() - 7, 200))));
  }
  if (proto != 10) return absl::UnavailableError("not a MySQL/MariaDB server");
  size_t end = buf.find('\0', 5);
  std::string version = buf.substr(5, end == std::string::npos ? std::string::npos : end - 5);
  // MariaDB prefixes its version with "5.5.5-" for old clients.
  if (version.rfind("5.5.5-", 0) == 0) version = version.substr(6);
  return version;
}

EmbeddedServer::EmbeddedServer(EmbeddedServerOptions options) : options_(std::move(options)) {
  std::string dir = options_.data_dir.empty() ? DefaultDataDir() : options_.data_dir;
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  // mariadbd and IsOurServer compare the --datadir argument literally: keep one spelling.
  data_dir_ = (ec ? fs::path(dir) : abs).lexically_normal().string();
  while (data_dir_.size() > 1 && data_dir_.back() == '/') data_dir_.pop_back();
}

std::string EmbeddedServer::Path(const std::string& name) const { return data_dir_ + "/" + name; }
std::string EmbeddedServer::LogPath() const { return Path(kLogFile); }
std::string EmbeddedServer::LogTail(int lines) const { return TailOf(LogPath(), lines); }

std::string EmbeddedServer::SocketPath() const {
  if (!options_.socket_path.empty()) return options_.socket_path;
  std::string p = Path(kSocketFile);
  if (p.size() < 100) return p;  // sun_path holds 108 bytes
  return absl::StrCat("/tmp/tuna-mariadb-", std::hash<std::string>{}(data_dir_) % 1000000007,
                      ".sock");
}

int EmbeddedServer::RunningPid() const {
  int pid = ReadPidFile(Path(kPidFile));
  return IsOurServer(pid, data_dir_) ? pid : 0;
}

absl::Status EmbeddedServer::PrivateTmpArgs(std::vector<std::string>& argv) const {
  std::error_code ec;
  fs::create_directories(Path(kTmpDir), ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create ", Path(kTmpDir), ": ", ec.message()));
  }
  argv.push_back("--tmpdir=" + Path(kTmpDir));
  argv.push_back(absl::StrCat("--ignore-db-dirs=", kTmpDir));  // not a database
  argv.push_back(absl::StrCat("--ignore-db-dirs=", kKernelCacheDirName));
  return absl::OkStatus();
}

absl::Status EmbeddedServer::Bootstrap(const MariadbPaths& paths) {
  // A bootstrap that was interrupted leaves the marker: wipe and start over.
  if (IsFile(Path(kIncomplete))) {
    spdlog::warn("{}: removing an incomplete bootstrap", data_dir_);
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(data_dir_, ec)) {
      std::string name = entry.path().filename().string();
      if (name == kLockFile) continue;
      fs::remove_all(entry.path(), ec);
    }
  } else {
    std::error_code ec;
    if (fs::exists(Path("mysql"), ec) || fs::exists(Path("ibdata1"), ec)) {
      return absl::FailedPreconditionError(absl::StrCat(
          data_dir_, " holds a MariaDB data directory that tuna did not create (no ",
          kClientConfig, "); use an empty or new --data-dir, or --db for an existing server"));
    }
  }
  if (auto st = WriteFileAtomic(Path(kIncomplete), "", 0600); !st.ok()) return st;

  const std::string password = RandomPassword();
  std::string sql = "create database if not exists mysql;\nuse mysql;\n";
  for (const char* f : {"/mysql_system_tables.sql", "/mysql_system_tables_data.sql"}) {
    auto text = ReadFile(paths.share_dir + f);
    if (!text.ok()) return text.status();
    sql += *text;
    sql += "\n";
  }
  // The grant tables are not loaded in bootstrap mode until FLUSH PRIVILEGES.
  sql += "FLUSH PRIVILEGES;\n";
  sql += "CREATE DATABASE IF NOT EXISTS tuna CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;\n";
  for (const char* host : {"localhost", "127.0.0.1"}) {
    sql += absl::StrCat("CREATE USER 'tuna'@'", host, "' IDENTIFIED BY '", password, "';\n");
    sql += absl::StrCat("GRANT ALL PRIVILEGES ON *.* TO 'tuna'@'", host, "';\n");
  }

  std::vector<std::string> argv = {paths.mariadbd,
                                   "--no-defaults",
                                   "--bootstrap",
                                   "--datadir=" + data_dir_,
                                   "--lc-messages-dir=" + paths.share_dir,
                                   "--character-sets-dir=" + paths.share_dir + "/charsets",
                                   "--log-warnings=0",
                                   absl::StrCat("--innodb-buffer-pool-size=",
                                                options_.buffer_pool_mb, "M")};
  if (auto st = PrivateTmpArgs(argv); !st.ok()) return st;
  if (::geteuid() == 0) argv.push_back("--user=root");
  spdlog::info("bootstrapping MariaDB data dir {} with {}", data_dir_, paths.mariadbd);
  auto rc = RunWithInput(argv, sql, Path(kBootstrapLog));
  if (!rc.ok()) return rc.status();
  if (*rc != 0) {
    return absl::InternalError(absl::StrCat("bootstrap of ", data_dir_, " failed (exit ", *rc,
                                            "); ", Path(kBootstrapLog), " ends with:\n",
                                            TailOf(Path(kBootstrapLog), 20)));
  }
  // Password file first, then drop the marker: a crash in between re-bootstraps.
  std::string cnf = absl::StrCat(
      "# Written by tuna: the embedded MariaDB's login. Keep private (mode 0600).\n"
      "[client]\nuser=tuna\npassword=",
      password, "\nhost=127.0.0.1\ndatabase=tuna\n");
  if (auto st = WriteFileAtomic(Path(kClientConfig), cnf, 0600); !st.ok()) return st;
  ::unlink(Path(kIncomplete).c_str());
  return absl::OkStatus();
}

absl::Status EmbeddedServer::WriteClientConfig(int port) {
  auto values = ReadOptionFile(Path(kClientConfig));
  if (!values.ok()) return values.status();
  if (!values->password) {
    return absl::FailedPreconditionError(absl::StrCat(Path(kClientConfig), " has no password"));
  }
  std::string cnf = absl::StrCat(
      "# Written by tuna: the embedded MariaDB's login. Keep private (mode 0600).\n"
      "[client]\nuser=tuna\npassword=",
      *values->password, "\nhost=127.0.0.1\nport=", port, "\nsocket=", SocketPath(),
      "\ndatabase=tuna\n");
  return WriteFileAtomic(Path(kClientConfig), cnf, 0600);
}

absl::StatusOr<int> EmbeddedServer::ChoosePort() {
  if (options_.port != 0) {
    if (!PortFree(options_.port)) {
      return absl::FailedPreconditionError(
          absl::StrCat("port ", options_.port, " on 127.0.0.1 is in use by another program"));
    }
    if (auto st = WriteFileAtomic(Path(kPortFile), absl::StrCat(options_.port, "\n"), 0600);
        !st.ok()) {
      return st;
    }
    return options_.port;
  }
  int remembered = ReadPidFile(Path(kPortFile));  // same format: one integer
  if (remembered > 0 && PortFree(remembered)) return remembered;
  auto port = PickFreeLoopbackPort();
  if (!port.ok()) return port.status();
  if (remembered > 0) {
    spdlog::warn("port {} remembered for {} is taken; moving to port {}", remembered, data_dir_,
                 *port);
  }
  if (auto st = WriteFileAtomic(Path(kPortFile), absl::StrCat(*port, "\n"), 0600); !st.ok()) {
    return st;
  }
  return *port;
}

absl::StatusOr<std::string> EmbeddedServer::WaitReady(int pid, int port) {
  absl::Time deadline = absl::Now() + options_.start_timeout;
  absl::Status last;
  while (absl::Now() < deadline) {
    if (!ProcessAlive(pid)) {
      return absl::InternalError(absl::StrCat("mariadbd (pid ", pid, ") exited during start; ",
                                              LogPath(), " ends with:\n", LogTail()));
    }
    auto version = ProbeServerVersion(port, absl::Milliseconds(500));
    if (version.ok()) return version;
    last = version.status();
    absl::SleepFor(absl::Milliseconds(100));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "mariadbd (pid ", pid, ") did not answer on port ", port, " within ",
      absl::FormatDuration(options_.start_timeout), " (", last.message(), "); ", LogPath(),
      " ends with:\n", LogTail()));
}

absl::StatusOr<StartResult> EmbeddedServer::Start() {
  std::error_code ec;
  fs::create_directories(data_dir_, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create data dir ", data_dir_, ": ", ec.message()));
  }
  ::chmod(data_dir_.c_str(), 0700);
  auto lock = DirLock::Acquire(Path(kLockFile));
  if (!lock.ok()) return lock.status();

  StartResult result;
  if (int pid = RunningPid(); pid != 0) {
    auto status = Status();
    if (!status.ok()) return status.status();
    if (status->version.empty()) {
      // Started by someone else a moment ago and still initialising: wait for it.
      auto version = WaitReady(pid, status->port);
      if (!version.ok()) return version.status();
      status->version = *version;
    }
    result.already_running = true;
    result.status = *status;
    return result;
  }

  // Stale leftovers of a killed server.
  if (IsFile(Path(kPidFile))) {
    spdlog::info("removing stale pid file {} (pid {} is not running)", Path(kPidFile),
                 ReadPidFile(Path(kPidFile)));
    ::unlink(Path(kPidFile).c_str());
  }
  const std::string socket = SocketPath();
  if (fs::is_socket(socket, ec)) ::unlink(socket.c_str());

  auto paths = FindMariadb(options_);
  if (!paths.ok()) return paths.status();
  if (!IsFile(Path(kClientConfig)) || IsFile(Path(kIncomplete))) {
    if (auto st = Bootstrap(*paths); !st.ok()) return st;
    result.bootstrapped = true;
  }
  auto port = ChoosePort();
  if (!port.ok()) return port.status();
  if (auto st = WriteClientConfig(*port); !st.ok()) return st;

  std::vector<std::string> argv = {
      paths->mariadbd,
      "--no-defaults",
      "--datadir=" + data_dir_,
      "--socket=" + socket,
      absl::StrCat("--port=", *port),
      "--bind-address=127.0.0.1",
      "--pid-file=" + Path(kPidFile),
      "--lc-messages-dir=" + paths->share_dir,
      "--character-sets-dir=" + paths->share_dir + "/charsets",
      "--character-set-server=utf8mb4",
      "--collation-server=utf8mb4_unicode_ci",
      "--skip-name-resolve",
      "--performance-schema=OFF",
      "--max-connections=256",
      "--max-allowed-packet=256M",  // kernel code objects travel as blobs
      absl::StrCat("--innodb-buffer-pool-size=", options_.buffer_pool_mb, "M"),
      "--innodb-log-file-size=96M",
      "--innodb-file-per-table=ON",
      "--key-buffer-size=8M",
      "--log-warnings=1",
  };
  if (auto st = PrivateTmpArgs(argv); !st.ok()) return st;
  if (::geteuid() == 0) argv.push_back("--user=root");
  for (const auto& a : options_.extra_args) argv.push_back(a);

  // Everything the child needs is prepared before fork (only async-signal-safe calls after it).
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string log_path = LogPath();
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  spdlog::info("starting mariadbd: data dir {}, port {}, socket {}", data_dir_, *port, socket);
  pid_t child = ::fork();
  if (child < 0) return absl::InternalError(absl::StrCat("fork failed: ", ErrnoText(errno)));
  if (child == 0) {
    // Detach: new session, then fork again so the server is nobody's child here and never
    // gets a terminal or our signals.
    ::setsid();
    pid_t grandchild = ::fork();
    if (grandchild != 0) _exit(grandchild < 0 ? 1 : 0);
    int self = static_cast<int>(::getpid());
    int null_fd = ::open("/dev/null", O_RDONLY);
    int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    if (log_fd >= 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
    }
    for (int fd = 3; fd < 1024; ++fd) {
      if (fd != report[1]) ::close(fd);
    }
    ::signal(SIGPIPE, SIG_DFL);
    (void)!::write(report[1], &self, sizeof(self));
    ::execv(args[0], args.data());
    int err = errno;
    (void)!::write(report[1], &err, sizeof(err));
    _exit(127);
  }
  ::close(report[1]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  int pid = 0, exec_errno = 0;
  ssize_t n = ::read(report[0], &pid, sizeof(pid));
  ssize_t m = ::read(report[0], &exec_errno, sizeof(exec_errno));  // EOF when exec succeeded
  ::close(report[0]);
  if (n != sizeof(pid) || pid <= 0) return absl::InternalError("could not start mariadbd");
  if (m == sizeof(exec_errno)) {
    return absl::InternalError(
        absl::StrCat("cannot execute ", paths->mariadbd, ": ", ErrnoText(exec_errno)));
  }
  auto version = WaitReady(pid, *port);
  if (!version.ok()) {
    if (ProcessAlive(pid)) ::kill(pid, SIGKILL);
    return version.status();
  }
  auto st = Status();
  if (!st.ok()) return st.status();
  result.status = *st;
  result.status.running = true;
  result.status.pid = pid;
  result.status.version = *version;
  spdlog::info("mariadbd {} running: pid {}, port {}", *version, pid, *port);
  return result;
}

absl::StatusOr<bool> EmbeddedServer::Stop() {
  std::error_code ec;
  if (!fs::is_directory(data_dir_, ec)) return false;
  auto lock = DirLock::Acquire(Path(kLockFile));
  if (!lock.ok()) return lock.status();
  int pid = RunningPid();
  if (pid == 0) {
    if (IsFile(Path(kPidFile))) ::unlink(Path(kPidFile).c_str());
    return false;
  }
  spdlog::info("stopping mariadbd (pid {})", pid);
  ::kill(pid, SIGTERM);
  absl::Time deadline = absl::Now() + options_.stop_timeout;
  while (ProcessAlive(pid) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(50));
  if (ProcessAlive(pid)) {
    spdlog::warn("mariadbd (pid {}) did not stop within {}; killing it", pid,
                 absl::FormatDuration(options_.stop_timeout));
    ::kill(pid, SIGKILL);
    absl::Time kill_deadline = absl::Now() + absl::Seconds(10);
    while (ProcessAlive(pid) && absl::Now() < kill_deadline) absl::SleepFor(absl::Milliseconds(50));
    if (ProcessAlive(pid)) {
      return absl::InternalError(absl::StrCat("mariadbd (pid ", pid, ") survived SIGKILL"));
    }
  }
  if (IsFile(Path(kPidFile))) ::unlink(Path(kPidFile).c_str());
  return true;
}

absl::StatusOr<ServerStatus> EmbeddedServer::Status() {
  ServerStatus st;
  st.data_dir = data_dir_;
  st.log_path = LogPath();
  st.socket_path = SocketPath();
  st.client_config = Path(kClientConfig);
  st.bootstrapped = IsFile(Path(kClientConfig)) && !IsFile(Path(kIncomplete));
  st.port = options_.port != 0 ? options_.port : ReadPidFile(Path(kPortFile));
  st.pid = RunningPid();
  st.running = st.pid != 0;
  if (st.running && st.port > 0) {
    auto version = ProbeServerVersion(st.port, absl::Seconds(2));
    if (version.ok()) st.version = *version;
  }
  return st;
}

absl::StatusOr<ConnectionInfo> EmbeddedServer::Connection() {
  auto values = ReadOptionFile(Path(kClientConfig));
  if (absl::IsNotFound(values.status())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the embedded database in ", data_dir_, " has not been created yet (run tuna db start)"));
  }
  if (!values.ok()) return values.status();
  ConnectionInfo info;
  info.host = "127.0.0.1";
  info.port = values->port.value_or(ReadPidFile(Path(kPortFile)));
  info.user = values->user.value_or("tuna");
  info.password = values->password.value_or("");
  info.database = values->database.value_or("tuna");
  info.option_file = Path(kClientConfig);
  if (info.port <= 0) {
    return absl::FailedPreconditionError(absl::StrCat("no port recorded in ", data_dir_));
  }
  return info;
}

}  // namespace tuna::schema
